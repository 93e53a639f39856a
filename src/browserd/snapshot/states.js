// Snapshot walker, part of one function body with walker.js (see there):
// the state fields of a node and the end of its line — level, value,
// checked, selected, expanded, pressed, disabled, required (states), a
// field's placeholder and a link's target (extras).

const MAX_VALUE = 100;
const CHECKABLE = new Set([
  'checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio',
]);
const VALUE_ROLES = new Set([
  'textbox', 'searchbox', 'combobox', 'spinbutton', 'slider', 'listbox',
]);
const FORM_TAGS = new Set([
  'button', 'input', 'select', 'textarea', 'option', 'optgroup', 'fieldset',
]);

// ---- states -----------------------------------------------------------
function headingLevel(el, tag) {
  const a = parseInt(el.getAttribute('aria-level'), 10);
  if (a > 0) return a;
  if (tag.length === 2 && tag[0] === 'h') {
    const n = +tag[1];
    if (n >= 1 && n <= 6) return n;
  }
  return 2;
}

function valueOf(el, tag) {
  let v;
  if (tag === 'input') {
    if (el.type === 'password') return el.value ? '\u2022\u2022\u2022\u2022' : '';
    v = el.value;
  } else if (tag === 'textarea') {
    v = el.value;
  } else if (tag === 'select') {
    const parts = [];
    for (const o of el.selectedOptions) parts.push(o.label);
    v = parts.join(', ');
  } else if (el.isContentEditable) {
    v = collapse(el.textContent.slice(0, 2000));
  } else {
    v = el.getAttribute('aria-valuetext') || el.getAttribute('aria-valuenow');
    if (v === null) return undefined;
  }
  return cap(v, MAX_VALUE);
}

// Adds state fields to node; returns the " key=value" suffix of the line.
function states(el, role, tag, node) {
  let s = '';
  if (role === 'heading') {
    const lv = headingLevel(el, tag);
    node.level = lv;
    s += ' level=' + lv;
  }
  if (VALUE_ROLES.has(role) && role !== 'listbox') {
    const v = valueOf(el, tag);
    if (v !== undefined) {
      node.value = v;
      if (v) s += ' value=' + quote(v);
    }
  }
  if (CHECKABLE.has(role)) {
    let c;
    if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
      c = el.indeterminate ? 'mixed' : el.checked;
    } else {
      const a = el.getAttribute('aria-checked');
      c = a === 'true' ? true : a === 'mixed' ? 'mixed' : false;
    }
    node.checked = c;
    if (c === true) s += ' checked';
    else if (c === 'mixed') s += ' checked=mixed';
  }
  if (tag === 'option') {
    if (el.selected) { node.selected = true; s += ' selected'; }
  } else if (el.getAttribute('aria-selected') === 'true') {
    node.selected = true;
    s += ' selected';
  }
  let ex = el.getAttribute('aria-expanded');
  if (ex === null && tag === 'summary' && el.parentElement &&
      el.parentElement.localName === 'details') {
    ex = el.parentElement.open ? 'true' : 'false';
  }
  if (ex === 'true') { node.expanded = true; s += ' expanded'; }
  else if (ex === 'false') { node.expanded = false; s += ' expanded=false'; }
  const pr = el.getAttribute('aria-pressed');
  if (pr === 'true') { node.pressed = true; s += ' pressed'; }
  else if (pr === 'mixed') { node.pressed = 'mixed'; s += ' pressed=mixed'; }
  if (FORM_TAGS.has(tag) ? el.matches(':disabled') : el.getAttribute('aria-disabled') === 'true') {
    node.disabled = true;
    s += ' disabled';
  }
  if ((tag === 'input' || tag === 'select' || tag === 'textarea') ? el.required
    : el.getAttribute('aria-required') === 'true') {
    node.required = true;
    s += ' required';
  }
  return s + extras(el, role, tag, node.name, node);
}

// A field's placeholder (unless it is the name) and a link's target, as
// the " placeholder=\"…\" → target" end of a line; recorded in into.
function extras(el, role, tag, name, into) {
  let s = '';
  if (VALUE_ROLES.has(role)) {
    const p = T.placeholderOf(el, tag);
    if (p && cap(p, lineCap) !== name) {
      into.placeholder = cap(p, shortCap);
      s += ' placeholder=' + quote(into.placeholder);
    }
  }
  if (tag === 'a' || tag === 'area') {
    const href = T.hrefOf(el);
    if (href) into.href = href;
    const target = href && role === 'link' ? T.linkTarget(el, href, shortCap) : '';
    if (target) {
      into.target = target;
      s += ' \u2192 ' + target;
    }
  }
  return s;
}
