// Page functions of choosing options (tabs/actions/select.py).

/**
 * Choose the options of `this` (a <select>) named by `values` (each matched by value,
 * then by label, then by text, white space normalised), then fire input and change.
 * Answers {selected: [values]}, or without changing anything {notSelect: tag} |
 * {disabled: true} | {missing, available} (the first 50 options) | {notMultiple: n} |
 * {disabledOption: value}.
 */
function selectOptions(values) {
  const el = this;
  if (el.localName !== 'select') return {notSelect: el.localName};
  if (el.disabled) return {disabled: true};
  const opts = Array.from(el.options);
  const norm = s => String(s).replace(/\s+/g, ' ').trim();
  const chosen = [], missing = [];
  for (const v of values) {
    const o = opts.find(o => o.value === v) || opts.find(o => norm(o.label) === norm(v))
      || opts.find(o => norm(o.text) === norm(v));
    if (!o) missing.push(v); else if (!chosen.includes(o)) chosen.push(o);
  }
  const available = opts.slice(0, 50).map(o => ({value: o.value, label: norm(o.label)}));
  if (missing.length) return {missing, available};
  if (!el.multiple && chosen.length > 1) return {notMultiple: chosen.length};
  const off = chosen.find(o => o.disabled);
  if (off) return {disabledOption: off.value};
  for (const o of opts) o.selected = chosen.includes(o);
  el.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
  el.dispatchEvent(new Event('change', {bubbles: true}));
  return {selected: chosen.map(o => o.value)};
}
