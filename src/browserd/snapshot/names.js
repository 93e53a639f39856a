// Snapshot walker, part of one function body with walker.js (see there):
// nameOf(el, role, tag), an element's accessible name (aria-labelledby,
// aria-label, labels, alt, legends, captions, content, title), lineName (what
// a snapshot line shows of it), describe(el),
// and the per-walk label index (withLabels).

// ---- names ------------------------------------------------------------
// Text of root's subtree without skip's subtree and without script/style.
function textExcept(root, skip) {
  return T.gather(root, skip, gatherCap, false);
}

function textOfIds(el, ids) {
  const root = el.getRootNode();
  const byId = root.getElementById ? root : el.ownerDocument;
  const parts = [];
  for (const id of ids.trim().split(WS)) {
    const t = byId.getElementById(id);
    if (!t) continue;
    const label = t.getAttribute('aria-label');
    parts.push(label && label.trim() ? label : textExcept(t, null));
  }
  return collapse(parts.join(' '));
}

// Per-call index root -> (id -> [label[for=id]]), set while a whole-page
// walk runs (withLabels). el.labels is avoided: Chromium answers it by
// scanning the whole tree on first use, which is quadratic over a form-heavy
// page.
let labelIndex = null;

// fn() with a fresh label index, dropped afterwards (also when fn throws).
function withLabels(fn) {
  labelIndex = new Map();
  try {
    return fn();
  } finally {
    labelIndex = null;
  }
}

function labelsWithFor(el, id) {
  const root = el.getRootNode();
  if (!labelIndex) {
    return root.querySelectorAll ? root.querySelectorAll('label[for="' + CSS.escape(id) + '"]') : [];
  }
  let idx = labelIndex.get(root);
  if (!idx) {
    idx = new Map();
    if (root.querySelectorAll) {
      for (const lab of root.querySelectorAll('label[for]')) {
        const k = lab.getAttribute('for');
        const list = idx.get(k);
        if (list) list.push(lab); else idx.set(k, [lab]);
      }
    }
    labelIndex.set(root, idx);
  }
  return idx.get(id) || [];
}

function labelText(el) {
  const parts = [];
  const wrap = el.parentElement && el.parentElement.closest('label');
  if (wrap && wrap.control === el) parts.push(textExcept(wrap, el));
  const id = el.id;
  if (id) {
    for (const lab of labelsWithFor(el, id)) {
      if (lab !== wrap) parts.push(textExcept(lab, el));
    }
  }
  return parts.length ? collapse(parts.join(' ')) : '';
}

// A name from content: a space where a <br> or a block boundary was; the
// rendered (flat) tree inside shadow trees and shadow hosts.
function contentText(el) {
  let t;
  if (el.shadowRoot || el.getRootNode() !== el.ownerDocument) {
    t = T.gather(el, null, gatherCap, true);
  } else if (el.firstElementChild === null || el.querySelector(T.BREAKS) === null) {
    // Nothing to keep apart: the cheaper native text.
    t = el.textContent;
    if (t.length > gatherCap * 2) t = t.slice(0, gatherCap * 2);
    t = collapse(t);
    if (!t && el.firstElementChild) t = T.gather(el, null, gatherCap, true);  // shadow hosts
  } else {
    t = T.gather(el, null, gatherCap, false);
    if (!t) t = T.gather(el, null, gatherCap, true);  // text inside shadow hosts
  }
  if (t) return cap(t, nameCap);
  // Icon-only content: an image's alt, an aria-label, an svg <title>.
  const icon = el.querySelector('img[alt]:not([alt=""]), [aria-label], svg title');
  if (icon) {
    const s = icon.getAttribute('aria-label') || icon.getAttribute('alt') || icon.textContent;
    if (s) return cap(collapse(s), nameCap);
  }
  return '';
}

function attrName(el, attr) {
  const v = el.getAttribute(attr);
  return v ? cap(collapse(v), nameCap) : '';
}

function childText(el, selector) {
  const c = el.querySelector(selector);
  return c ? cap(textExcept(c, null), nameCap) : '';
}

function nameOf(el, role, tag) {
  let v = el.getAttribute('aria-labelledby');
  if (v) {
    v = textOfIds(el, v);
    if (v) return cap(v, nameCap);
  }
  v = el.getAttribute('aria-label');
  if (v && (v = collapse(v))) return cap(v, nameCap);
  switch (tag) {
    case 'input': {
      const type = el.type;
      if (type === 'submit' || type === 'reset' || type === 'button') {
        const val = collapse(el.value);
        if (val) return cap(val, nameCap);
        if (type === 'submit') return 'Submit';
        if (type === 'reset') return 'Reset';
        return attrName(el, 'title');
      }
      if (type === 'image') {
        return attrName(el, 'alt') || attrName(el, 'value') || attrName(el, 'title') || 'Submit';
      }
    }
    // falls through: other inputs are named like select and textarea
    case 'textarea': case 'select': {
      const t = labelText(el);
      if (t) return cap(t, nameCap);
      return attrName(el, 'placeholder') || attrName(el, 'aria-placeholder') ||
        attrName(el, 'title');
    }
    case 'img': case 'area':
      return attrName(el, 'alt') || attrName(el, 'title');
    case 'fieldset':
      return childText(el, ':scope > legend') || attrName(el, 'title');
    case 'table':
      return childText(el, ':scope > caption') || attrName(el, 'title');
    case 'figure':
      return childText(el, ':scope > figcaption') || attrName(el, 'title');
    case 'svg':
      return childText(el, ':scope > title');
    case 'option': case 'optgroup':
      return cap(collapse(el.label || ''), nameCap) || attrName(el, 'title');
    default:
      break;
  }
  if (CONTENT_ROLES.has(role) || NAMED_BY_CELLS.has(role)) {
    const t = contentText(el);
    if (t) return t;
  }
  return attrName(el, 'title');
}

// The name a snapshot line shows: a row's words from its cells are left to
// the cells' own lines (an author's name is shown).
function lineName(el, role, name) {
  if (!NAMED_BY_CELLS.has(role)) return name;
  return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? name : '';
}

function describe(el) {
  if (!el || el.nodeType !== 1) return { role: '', name: '' };
  if (isDocRoot(el)) {
    return { role: 'RootWebArea', name: cap(collapse(el.ownerDocument.title || ''), ID_NAME) };
  }
  const tag = el.localName;
  const role = roleOf(el, tag);
  return { role: role || 'generic', name: cap(nameOf(el, role, tag), ID_NAME) };
}
