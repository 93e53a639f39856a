// browserd page snapshot walker.
//
// Evaluated once per (tab, frame, document) inside a CDP isolated world named
// "browserd" (Page.createIsolatedWorld). The world shares the DOM with the
// page but none of its JavaScript globals, so page scripts can neither see nor
// patch anything here. Evaluating this expression defines
// globalThis.__browserd; evaluating it again keeps the existing ref state
// (globalThis.__browserdState) and returns "present". text.js (names from
// content, link targets, placeholders) is evaluated just before it.
//
// Public functions (all synchronous, all JSON in / JSON out except resolve,
// describe's and findByText's element arguments and results):
//   snapshot(opts)            accessibility-style text + nodes with refs
//   resolve(ref, role, name)  Element, or {stale: "detached"|"changed"|"unknown"}
//   describe(el)              {role, name}
//   findByText(text)          best visible actionable Element matching text, or null
//   readView(opts)            {title, url, text, truncated}: visible text in reading order
//                             (headings start with "#"s; scoped by rootRef / rootSelector)
//   domSnapshot(opts)         bounded DOM walk {nodes, truncated, nextRef}
//   find(opts)                elements matching role / name / text, with refs
//
// Refs: one WeakMap element -> ref, one Map ref -> {w: WeakRef, role, name}.
// New refs are "e" + n with n taken from the caller's per-tab counter
// (opts.nextRef) and never below anything this world has issued before.
(() => {
  'use strict';
  const VERSION = 1;
  const G = globalThis;
  if (G.__browserd && G.__browserd.version === VERSION) return 'present';

  const S = G.__browserdState || (G.__browserdState = {
    refOf: new WeakMap(),   // Element -> "eN"
    byRef: new Map(),       // "eN" -> {w: WeakRef<Element>, role, name}
    gone: new Set(),        // refs whose elements were garbage-collected
    maxRef: 0,              // highest N issued in this world
    sweepAt: 20000,         // sweep dead byRef entries above this size
  });

  const MAX_VALUE = 100;
  const DEFAULT_LINE = 300;  // lineChars when the caller gives none
  const WHOLE_LINE = 1000000;  // lineChars 0: "whole" (still bounded)
  const NAME_GATHER_MAX = 10000;  // names are never built from more text than this
  const ID_NAME = 100;  // how much of a name identifies a ref's element (resolve)
  // Per call: the longest name or text line shown, and how much text a name
  // is built from. Set by snapshot/find, back to the default afterwards.
  let lineCap = DEFAULT_LINE;
  // Names are computed to at least ID_NAME characters whatever lineCap is,
  // and cut to lineCap only where they are shown.
  let nameCap = DEFAULT_LINE;
  let gatherCap = 1000;
  // The longest link target or placeholder shown (whole with lineChars 0).
  const SHORT = 80;
  let shortCap = SHORT;
  const VIS_OPTS = { visibilityProperty: true };
  // Page text may hold lone UTF-16 surrogates; a quoted line shows U+FFFD for them.
  const wellFormed = (s) => String(s).toWellFormed();

  // Shared with text.js, evaluated just before this file.
  const T = G.__browserdText;
  const { SKIP_TAGS, INLINE_TAGS, collapse, cap } = T;
  // Block elements that start a new line in readView.
  const BLOCK_TAGS = new Set([
    'address', 'article', 'aside', 'blockquote', 'br', 'dd', 'details', 'dialog',
    'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure', 'footer', 'form', 'h1',
    'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p',
    'pre', 'section', 'summary', 'table', 'tr', 'ul', 'caption', 'legend',
    'option', 'select', 'textarea', 'iframe', 'body', 'menu', 'search',
  ]);
  const TAG_ROLES = new Map([
    ['article', 'article'], ['aside', 'complementary'], ['blockquote', 'blockquote'],
    ['p', 'paragraph'], ['pre', 'code'], ['dl', 'list'], ['dt', 'term'], ['dd', 'definition'],
    ['button', 'button'], ['details', 'group'], ['dialog', 'dialog'],
    ['fieldset', 'group'], ['figure', 'figure'], ['h1', 'heading'], ['h2', 'heading'],
    ['h3', 'heading'], ['h4', 'heading'], ['h5', 'heading'], ['h6', 'heading'],
    ['hr', 'separator'], ['iframe', 'iframe'], ['frame', 'iframe'], ['li', 'listitem'],
    ['main', 'main'], ['math', 'math'], ['menu', 'list'], ['meter', 'meter'],
    ['nav', 'navigation'], ['ol', 'list'], ['ul', 'list'], ['optgroup', 'group'],
    ['option', 'option'], ['output', 'status'], ['progress', 'progressbar'],
    ['search', 'search'], ['summary', 'button'], ['table', 'table'],
    ['td', 'cell'], ['textarea', 'textbox'], ['tr', 'row'],
  ]);
  // Roles an agent can act on: listed in interactive mode.
  const ACTION_ROLES = new Set([
    'link', 'button', 'textbox', 'searchbox', 'checkbox', 'radio', 'combobox',
    'listbox', 'slider', 'spinbutton', 'switch', 'tab', 'menuitem',
    'menuitemcheckbox', 'menuitemradio', 'option', 'treeitem', 'generic',
  ]);
  // Roles named from their content (text descendants are not repeated).
  const CONTENT_ROLES = new Set([
    'button', 'cell', 'checkbox', 'columnheader', 'gridcell', 'heading', 'link',
    'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'radio',
    'rowheader', 'switch', 'tab', 'tooltip', 'treeitem', 'generic', 'term',
  ]);
  const CHECKABLE = new Set([
    'checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio',
  ]);
  const VALUE_ROLES = new Set([
    'textbox', 'searchbox', 'combobox', 'spinbutton', 'slider', 'listbox',
  ]);
  const FORM_TAGS = new Set([
    'button', 'input', 'select', 'textarea', 'option', 'optgroup', 'fieldset',
  ]);
  const SECTIONING = 'article,aside,main,nav,section';
  // Roles find names as a match's context when no heading precedes it.
  const LANDMARKS = new Set([
    'banner', 'complementary', 'contentinfo', 'form', 'main', 'navigation', 'region',
    'search', 'dialog', 'article',
  ]);
  const WS = /\s+/g;
  const TRAILING_WS = /\s+$/;
  const TABS = /\t/g;
  const NONSPACE = /\S/;

  const IND = [''];
  function indent(d) {
    while (IND.length <= d) IND.push(IND[IND.length - 1] + '  ');
    return IND[d];
  }

  // A name or text in double quotes: only '"' is escaped (backslashes stay
  // single), control characters become spaces (the text stays one line), lone
  // surrogates U+FFFD.
  const CONTROL = /[\u0000-\u001f\u007f\u2028\u2029]/g;
  const QUOTE = /"/g;
  function quote(s) {
    return '"' + wellFormed(s).replace(CONTROL, ' ').replace(QUOTE, '\\"') + '"';
  }

  // Sets lineCap/gatherCap from opts.lineChars (0: whole) for one call of fn.
  function withLineCap(opts, fn) {
    const n = opts.lineChars == null ? DEFAULT_LINE : Math.max(0, +opts.lineChars | 0);
    lineCap = n === 0 ? WHOLE_LINE : n;
    nameCap = Math.max(lineCap, ID_NAME);
    gatherCap = Math.min(NAME_GATHER_MAX, Math.max(1000, lineCap + 100));
    shortCap = n === 0 ? WHOLE_LINE : Math.min(SHORT, lineCap);
    try {
      return fn();
    } finally {
      lineCap = DEFAULT_LINE;
      nameCap = DEFAULT_LINE;
      gatherCap = 1000;
      shortCap = SHORT;
    }
  }

  // ---- visibility -------------------------------------------------------
  // 0: pruned with its subtree, 1: rendered but invisible (children may be
  // visible), 2: visible.
  const HAS_CHECK_VISIBILITY = typeof Element.prototype.checkVisibility === 'function';

  function visState(el) {
    if (el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('inert')) return 0;
    if (!HAS_CHECK_VISIBILITY) {  // Chromium < 105 (attach mode): slower, coarser
      const view = el.ownerDocument.defaultView;
      if (!view) return 0;
      const cs = view.getComputedStyle(el);
      if (cs.display === 'none') return 0;
      return cs.visibility === 'visible' ? 2 : 1;
    }
    if (el.checkVisibility(VIS_OPTS)) return 2;
    if (el.checkVisibility()) return 1;  // visibility:hidden / collapse
    // No box: display:none (or inside it), a closed <details>, content-visibility
    // hidden ... or display:contents, whose children are still rendered.
    const view = el.ownerDocument.defaultView;
    if (!view) return 0;
    const cs = view.getComputedStyle(el);
    if (cs.display !== 'contents') return 0;
    return cs.visibility === 'visible' ? 2 : 1;
  }

  // ---- roles ------------------------------------------------------------
  function hasAuthorName(el) {
    return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ||
      el.hasAttribute('title');
  }

  // '' for plain containers (lifted), 'textbox' for an editing host,
  // 'generic' for clickable / focusable containers (kept and listed).
  function genericRole(el) {
    if (!el.hasAttributes()) return '';
    const ce = el.getAttribute('contenteditable');
    if (ce !== null && ce !== 'false') {
      const p = el.parentElement;
      return p && p.isContentEditable ? '' : 'textbox';
    }
    if (el.hasAttribute('onclick')) return 'generic';
    const ti = el.getAttribute('tabindex');
    if (ti !== null && ti.trim() !== '' && +ti >= 0) return 'generic';
    return '';
  }

  function inputRole(el) {
    switch (el.type) {
      case 'button': case 'submit': case 'reset': case 'image': case 'file':
      case 'color':
        return 'button';
      case 'checkbox': return 'checkbox';
      case 'radio': return 'radio';
      case 'range': return 'slider';
      case 'number': return 'spinbutton';
      case 'hidden': return '';
      case 'search': return el.hasAttribute('list') ? 'combobox' : 'searchbox';
      default: return el.hasAttribute('list') ? 'combobox' : 'textbox';
    }
  }

  function roleOf(el, tag) {
    if (tag === 'iframe' || tag === 'frame') return 'iframe';  // whatever role= says
    const explicit = el.getAttribute('role');
    if (explicit) {
      const r = explicit.trim().split(WS)[0].toLowerCase();
      if (r === 'none' || r === 'presentation' || r === 'generic') return genericRole(el);
      if (r) return r;
    }
    const r = TAG_ROLES.get(tag);
    if (r !== undefined) return r;
    switch (tag) {
      case 'a': case 'area':
        return el.hasAttribute('href') ? 'link' : genericRole(el);
      case 'input': return inputRole(el);
      case 'select': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'img':
        return el.getAttribute('alt') === '' && !hasAuthorName(el) ? genericRole(el) : 'img';
      case 'header': case 'footer': {
        const p = el.parentElement;
        if (p && p.closest(SECTIONING)) return genericRole(el);
        return tag === 'header' ? 'banner' : 'contentinfo';
      }
      case 'form': return hasAuthorName(el) ? 'form' : genericRole(el);
      case 'section': return hasAuthorName(el) ? 'region' : genericRole(el);
      case 'th': return el.getAttribute('scope') === 'row' ? 'rowheader' : 'columnheader';
      case 'svg':
        return hasAuthorName(el) || el.querySelector(':scope > title') ? 'img' : '';
      default: return genericRole(el);
    }
  }

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
  // walk runs. el.labels is avoided: Chromium answers it by scanning the
  // whole tree on first use, which is quadratic over a form-heavy page.
  let labelIndex = null;

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
    if (CONTENT_ROLES.has(role)) {
      const t = contentText(el);
      if (t) return t;
    }
    return attrName(el, 'title');
  }

  function isDocRoot(el) {
    return el === el.ownerDocument.documentElement;
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

  // ---- refs -------------------------------------------------------------
  function sweep() {
    if (S.byRef.size < S.sweepAt) return;
    for (const [ref, rec] of S.byRef) {
      if (!rec.w.deref()) { S.byRef.delete(ref); S.gone.add(ref); }
    }
    S.sweepAt = Math.max(20000, S.byRef.size * 2);
  }

  // Connected, and (for elements of same-origin subframes) every frame
  // element up to this world's document still connected too.
  function isLive(el) {
    for (let e = el; e;) {
      if (!e.isConnected) return false;
      const doc = e.ownerDocument;
      if (doc === document) return true;
      const view = doc.defaultView;
      if (!view) return false;
      let fe = null;
      try { fe = view.frameElement; } catch (_) { return false; }
      e = fe;
    }
    return false;
  }

  function frameIndex(frameEl) {
    try {
      const w = frameEl.contentWindow;
      const pw = frameEl.ownerDocument.defaultView;
      if (!w || !pw) return -1;
      for (let i = 0; i < pw.frames.length; i++) if (pw.frames[i] === w) return i;
    } catch (_) { /* fall through */ }
    return -1;
  }

  // The record of a ref: the live element, or why there is none.
  function lookup(ref) {
    const rec = typeof ref === 'string' ? S.byRef.get(ref) : undefined;
    if (!rec) return { stale: S.gone.has(ref) ? 'detached' : 'unknown' };
    const el = rec.w.deref();
    if (!el || !isLive(el)) return { stale: 'detached' };
    return { el, rec };
  }

  function resolve(ref, expectRole, expectName) {
    const r = lookup(ref);
    if (!r.el) return { stale: r.stale };
    const d = describe(r.el);
    const role = expectRole == null ? r.rec.role : expectRole;
    const name = expectName == null ? r.rec.name : expectName;
    if (d.role !== role || d.name !== name) return { stale: 'changed', role: d.role, name: d.name };
    return r.el;
  }

  function scopeRoot(opts) {
    if (opts.rootRef) {
      const r = lookup(opts.rootRef);
      if (!r.el) return { error: { code: 'STALE_REF', reason: r.stale, ref: opts.rootRef } };
      return { el: r.el };
    }
    if (opts.rootSelector) {
      let el = null;
      try {
        el = document.querySelector(opts.rootSelector);
      } catch (e) {
        return { error: { code: 'BAD_SELECTOR', message: String(e && e.message) } };
      }
      if (!el) return { error: { code: 'NO_MATCH', selector: opts.rootSelector } };
      return { el };
    }
    return { el: null };
  }

  // Ref allocation shared by snapshot and domSnapshot.
  function makeRefs(opts) {
    let next = Math.max(opts.nextRef | 0, S.maxRef + 1, 1);
    const self = {
      issued: 0,
      get next() { return next; },
      refFor(el, role, name) {
        let ref = S.refOf.get(el);
        if (ref === undefined) {
          S.maxRef = next;
          ref = 'e' + next++;
          S.refOf.set(el, ref);
          S.byRef.set(ref, { w: new WeakRef(el), role, name: cap(name, ID_NAME) });
          self.issued++;
        } else {
          const rec = S.byRef.get(ref);
          if (rec) { rec.role = role; rec.name = cap(name, ID_NAME); }
          else S.byRef.set(ref, { w: new WeakRef(el), role, name: cap(name, ID_NAME) });
        }
        return ref;
      },
    };
    return self;
  }

  // ---- snapshot ---------------------------------------------------------
  function snapshot(opts) {
    opts = opts || {};
    const t0 = performance.now();
    const scope = scopeRoot(opts);
    if (scope.error) return { error: scope.error };
    sweep();
    const refs = makeRefs(opts);
    labelIndex = new Map();
    try {
      return withLineCap(opts, () => walkPage(opts, scope, refs, t0));
    } finally {
      labelIndex = null;
    }
  }

  function walkPage(opts, scope, refs, t0) {
    const interactive = !!opts.interactive;
    const maxChars = opts.maxChars == null ? Infinity : +opts.maxChars;
    const limit = opts.limit == null ? Infinity : +opts.limit;
    const lines = [];
    const nodes = [];
    const frames = [];
    let chars = 0;
    let textLines = 0;
    let stop = false;
    let truncated = false;
    let inSelect = false;
    let tbuf = '';
    let tdepth = -1;
    let inPre = 0;       // > 0 inside a <pre>: text keeps its line breaks
    let tpre = false;    // the pending text run started inside a <pre>
    let tover = false;   // the pending text run was longer than it keeps
    const TEXT_RUN_MAX = lineCap * 2 + 100;
    const PRE_RUN_MAX = Math.max(200000, lineCap);

    function push(line, node) {
      const len = line.length + 1;
      if (chars + len > maxChars) { stop = true; truncated = true; return; }
      chars += len;
      lines.push(line);
      if (node) nodes.push(node); else textLines++;
    }

    function flush() {
      if (tdepth < 0) return;
      const d = tdepth;
      tdepth = -1;
      let t = tbuf;
      const over = tover;
      tbuf = '';
      tover = false;
      if (!NONSPACE.test(t)) return;
      if (tpre) {
        // Code keeps its lines and their indentation.
        for (const raw of t.split('\n')) {
          const line = raw.replace(TRAILING_WS, '').replace(TABS, '    ');
          if (!NONSPACE.test(line)) continue;
          push(indent(d) + 'text ' + quote(cap(line, lineCap)), null);
          if (stop) return;
        }
        return;
      }
      t = collapse(t);
      // A run cut while it was gathered is marked like one cut at lineCap.
      push(indent(d) + 'text ' + quote(over && t.length <= lineCap ? t + '\u2026' : cap(t, lineCap)), null);
    }

    function addText(s, depth) {
      if (tdepth !== depth) {
        if (tdepth >= 0) flush();
        if (!NONSPACE.test(s)) return;
        tdepth = depth;
        tpre = inPre > 0;
      }
      if (tbuf.length < (tpre ? PRE_RUN_MAX : TEXT_RUN_MAX)) tbuf += s;
      else tover = true;
    }

    // Emits the line and node of el; returns false when a cap was hit.
    function emit(el, role, tag, depth) {
      if (nodes.length >= limit) { stop = true; truncated = true; return false; }
      let name;
      if (role === 'RootWebArea') name = cap(collapse(el.ownerDocument.title || ''), nameCap);
      else name = nameOf(el, role, tag);
      const r = role || 'generic';
      const ref = refs.refFor(el, r, name);
      name = cap(name, lineCap);
      const node = { ref, role: r, name, depth };
      const st = role === 'RootWebArea' ? '' : states(el, role, tag, node);
      push(indent(depth) + '[' + ref + '] ' + r + (name ? ' ' + quote(name) : '') + st, node);
      return !stop;
    }

    function walkKids(parent, depth, quiet, vis) {
      if (interactive || quiet || !vis) {
        // Text is not wanted here: visit elements only (no wrappers for the
        // text nodes in between).
        for (let c = parent.firstElementChild; c && !stop; c = c.nextElementSibling) {
          walkEl(c, depth, quiet, vis);
        }
        return;
      }
      if (parent.firstElementChild === null) {
        addText(parent.textContent, depth);
        return;
      }
      for (let c = parent.firstChild; c && !stop; c = c.nextSibling) {
        const t = c.nodeType;
        if (t === 1) walkEl(c, depth, quiet, vis);
        else if (t === 3) addText(c.data, depth);
      }
    }

    function walkFrame(el, depth, vis) {
      let doc = null;
      try { doc = el.contentDocument; } catch (_) { doc = null; }
      const d = interactive ? 0 : depth;
      if (doc && doc.documentElement) {
        if (!interactive) {
          flush();
          if (vis && !emit(el, 'iframe', 'iframe', d)) return;
          walkKids(doc.documentElement, vis ? d + 1 : d, false, true);
          flush();
        } else {
          walkKids(doc.documentElement, 0, false, true);
        }
        return;
      }
      if (!vis) return;
      flush();
      const n = nodes.length;
      if (!emit(el, 'iframe', 'iframe', d)) return;
      if (nodes.length > n) frames.push({ ref: nodes[n].ref, index: frameIndex(el), depth: d });
    }

    function walkEl(el, depth, quiet, vis) {
      const tag = el.localName;
      if (SKIP_TAGS.has(tag)) return;
      const role = roleOf(el, tag);
      // An empty plain container shows nothing: skip it before asking for
      // its visibility (icons, spacers, wrappers of CSS-only content).
      if (role === '' && el.firstChild === null && tag !== 'br' && el.shadowRoot === null) return;
      // Likewise a leaf that could only contribute text where no text is
      // wanted (interactive mode, or inside an element named by its content).
      if ((interactive ? !ACTION_ROLES.has(role) : quiet && role === '') &&
          el.firstElementChild === null && el.shadowRoot === null &&
          tag !== 'slot' && role !== 'iframe') {
        return;
      }
      let selfVis;
      if (inSelect) {
        selfVis = vis;
      } else {
        const v = visState(el);
        if (v === 0) return;
        selfVis = v === 2;
      }
      if (role === 'iframe') { walkFrame(el, depth, selfVis); return; }
      let childDepth = depth;
      let childQuiet = quiet;
      const block = !interactive && !INLINE_TAGS.has(tag);
      if (interactive) {
        if (selfVis && ACTION_ROLES.has(role) && !inSelect) {
          if (!emit(el, role, tag, 0)) return;
        }
      } else if (role !== '' && selfVis) {
        flush();
        if (role === 'img' && !nameOf(el, role, tag)) {
          // unnamed images carry nothing: not listed
        } else {
          if (!emit(el, role, tag, depth)) return;
          childDepth = depth + 1;
        }
        if (CONTENT_ROLES.has(role) || (role === 'textbox' && el.isContentEditable)) {
          childQuiet = true;  // their text is already the name or the value
        }
      } else {
        if (block) flush();
        if (tag === 'label' && el.control) childQuiet = true;
        else if (tag === 'br' && !quiet && selfVis) addText(inPre ? '\n' : ' ', depth);
      }
      const pre = tag === 'pre';
      if (pre) inPre++;
      if (tag === 'details' && !el.open) {
        // Only the summary of a closed <details> is rendered (its other text
        // nodes have no element to ask for visibility).
        for (let c = el.firstElementChild; c; c = c.nextElementSibling) {
          if (c.localName === 'summary') { walkEl(c, childDepth, childQuiet, selfVis); break; }
        }
      } else if (tag === 'select') {
        if (!interactive) {
          inSelect = true;
          walkKids(el, childDepth, true, selfVis);
          inSelect = false;
        }
      } else if (tag !== 'textarea' && tag !== 'svg' && tag !== 'input') {
        const sr = el.shadowRoot;
        if (sr) {
          walkKids(sr, childDepth, childQuiet, selfVis);
        } else if (tag === 'slot') {
          const assigned = el.assignedNodes();
          if (assigned.length) {
            for (const n of assigned) {
              if (stop) break;
              if (n.nodeType === 1) walkEl(n, childDepth, childQuiet, selfVis);
              else if (n.nodeType === 3 && !childQuiet && selfVis && !interactive) {
                addText(n.data, childDepth);
              }
            }
          } else {
            walkKids(el, childDepth, childQuiet, selfVis);
          }
        } else if (el.firstChild) {
          walkKids(el, childDepth, childQuiet, selfVis);
        }
      }
      if (pre) { flush(); inPre--; }
      if (block || childDepth !== depth) flush();
    }

    const root = scope.el;
    try {
      if (root) {
        if (interactive) {
          walkEl(root, 0, false, true);
        } else {
          const tag = root.localName;
          const role = isDocRoot(root) ? 'RootWebArea' : roleOf(root, tag);
          if (emit(root, role, tag, 0)) {
            const sr = root.shadowRoot;
            if (tag === 'pre') inPre++;
            walkKids(sr || root, 1, CONTENT_ROLES.has(role), true);
          }
        }
      } else {
        const de = document.documentElement;
        if (de) {
          if (interactive) walkKids(de, 0, false, true);
          else if (emit(de, 'RootWebArea', 'html', 0)) walkKids(de, 1, false, true);
        }
      }
      flush();
    } catch (e) {
      // A DOM nested deeper than the JS stack allows: keep what was walked.
      if (!(e instanceof RangeError)) throw e;
      truncated = true;
      tbuf = '';
    }
    const text = lines.length ? lines.join('\n') + '\n' : '';
    return {
      text,
      nodes,
      nextRef: refs.next,
      truncated,
      frames,
      stats: {
        nodes: nodes.length + textLines,
        refs: nodes.length,
        newRefs: refs.issued,
        chars: text.length,
        ms: Math.round((performance.now() - t0) * 100) / 100,
      },
    };
  }

  // ---- findByText -------------------------------------------------------
  // Tiers (lower is better): 0 exact name, 1 case-insensitive exact name,
  // 2 element whose own text run equals it, 3 name contains it, 4 own text
  // contains it. Within a tier buttons and links come first, then document
  // order. Only visible elements count.
  function findByText(text) {
    const want = collapse(String(text == null ? '' : text));
    if (!want) return null;
    const low = want.toLowerCase();
    let best = null;
    let bestScore = Infinity;

    function consider(el, score, role) {
      const s = score * 2 + (role === 'button' || role === 'link' ? 0 : 1);
      if (s < bestScore) { bestScore = s; best = el; }
    }

    function visit(el, vis) {
      const tag = el.localName;
      if (SKIP_TAGS.has(tag)) return;
      const v = visState(el);
      if (v === 0) return;
      const selfVis = v === 2;
      const role = roleOf(el, tag);
      let quietKids = false;
      if (selfVis && ACTION_ROLES.has(role)) {
        const name = nameOf(el, role, tag);
        const nl = name.toLowerCase();
        if (name === want) consider(el, 0, role);
        else if (nl === low) consider(el, 1, role);
        else if (nl.includes(low)) consider(el, 3, role);
        quietKids = CONTENT_ROLES.has(role);
      }
      if (bestScore === 0) return;
      if (role === 'iframe') {
        let doc = null;
        try { doc = el.contentDocument; } catch (_) { doc = null; }
        if (doc && doc.documentElement) kids(doc.documentElement, true, false);
        return;
      }
      if (tag === 'select' || tag === 'textarea' || tag === 'svg' || tag === 'input') return;
      if (tag === 'details' && !el.open) {
        const summary = el.querySelector(':scope > summary');
        if (summary) visit(summary, selfVis);
        return;
      }
      const sr = el.shadowRoot;
      if (sr) kids(sr, selfVis, quietKids);
      else if (tag === 'slot' && el.assignedNodes().length) {
        for (const n of el.assignedNodes()) if (n.nodeType === 1) visit(n, selfVis);
      } else kids(el, selfVis, quietKids);
    }

    function kids(parent, vis, quiet) {
      let own = '';
      for (let c = parent.firstChild; c && bestScore !== 0; c = c.nextSibling) {
        if (c.nodeType === 1) visit(c, vis);
        else if (c.nodeType === 3 && vis && !quiet && own.length < 400) own += c.data;
      }
      if (!own || parent.nodeType !== 1) return;
      own = collapse(own).toLowerCase();
      if (own === low) consider(parent, 2, '');
      else if (own.includes(low)) consider(parent, 4, '');
    }

    const de = document.documentElement;
    labelIndex = new Map();
    try {
      if (de) kids(de, true, false);
    } finally {
      labelIndex = null;
    }
    return best;
  }

  // ---- readView ---------------------------------------------------------
  function readView(opts) {
    opts = opts || {};
    const budget = opts.textBudget == null ? 4000 : Math.max(0, +opts.textBudget);
    const parts = [];
    let len = 0;
    let full = false;

    function add(s) {
      parts.push(s);
      len += s.length;
      if (len > budget * 1.5 + 200) full = true;
    }

    function visit(el, vis) {
      const tag = el.localName;
      if (SKIP_TAGS.has(tag)) return;
      const v = visState(el);
      if (v === 0) return;
      const selfVis = v === 2;
      const block = BLOCK_TAGS.has(tag);
      if (block) add('\n');
      if (tag.length === 2 && tag[0] === 'h' && tag[1] >= '1' && tag[1] <= '6') {
        add('#'.repeat(+tag[1]) + ' ');
      }
      if (tag === 'iframe' || tag === 'frame') {
        let doc = null;
        try { doc = el.contentDocument; } catch (_) { doc = null; }
        if (doc && doc.documentElement) kids(doc.documentElement, true);
      } else if (tag === 'img') {
        // images contribute nothing to the reading text
      } else if (tag === 'input' || tag === 'textarea' || tag === 'select' || tag === 'svg') {
        // form values are in the snapshot, not the reading text
      } else if (tag === 'details' && !el.open) {
        const summary = el.querySelector(':scope > summary');
        if (summary) visit(summary, selfVis);
      } else {
        const sr = el.shadowRoot;
        if (sr) kids(sr, selfVis);
        else if (tag === 'slot' && el.assignedNodes().length) {
          for (const n of el.assignedNodes()) {
            if (full) break;
            if (n.nodeType === 1) visit(n, selfVis);
            else if (n.nodeType === 3 && selfVis) add(n.data);
          }
        } else kids(el, selfVis);
      }
      if (block) add('\n');
      else if (tag === 'td' || tag === 'th') add(' ');
    }

    function kids(parent, vis) {
      for (let c = parent.firstChild; c && !full; c = c.nextSibling) {
        if (c.nodeType === 1) visit(c, vis);
        else if (c.nodeType === 3 && vis) add(c.data.replace(WS, ' '));
      }
    }

    const scope = scopeRoot(opts);
    if (scope.error) return { error: scope.error };
    if (scope.el) visit(scope.el, true);
    else if (document.documentElement) kids(document.documentElement, true);
    let text = parts.join('').replace(/[ \t\f\r\u00a0]+/g, ' ').replace(/ ?\n[\n ]*/g, '\n').trim();
    let truncated = full;
    if (text.length > budget) {
      let cut = text.lastIndexOf(' ', budget);
      if (cut < budget * 0.8) cut = budget;
      text = text.slice(0, cut).trimEnd() + '\u2026';
      truncated = true;
    }
    return { title: document.title, url: location.href, text, truncated };
  }


  // ---- find -------------------------------------------------------------
  // Elements whose role, accessible name or own visible text match, in
  // document order. opts: {role?, name?, text?, exact?, limit?, lineChars?,
  // rootRef?/rootSelector?, nextRef}. Matching is case-insensitive, on
  // substrings unless exact; every given criterion must hold (text matches
  // the name or the element's own text). Refs are issued for the first
  // `limit` matches (and the headings named as their context) only; the walk
  // counts all matches. Returns {matches, count, nodes, nextRef, stats}.
  function find(opts) {
    opts = opts || {};
    const t0 = performance.now();
    const scope = scopeRoot(opts);
    if (scope.error) return { error: scope.error };
    sweep();
    const refs = makeRefs(opts);
    labelIndex = new Map();
    try {
      return withLineCap(opts, () => findIn(opts, scope, refs, t0));
    } finally {
      labelIndex = null;
    }
  }

  function findIn(opts, scope, refs, t0) {
    const exact = !!opts.exact;
    const limit = opts.limit == null ? 20 : Math.max(1, +opts.limit | 0);
    const wantRole = opts.role ? String(opts.role).trim().toLowerCase() : '';
    const wantName = opts.name != null && opts.name !== '' ? collapse(String(opts.name)).toLowerCase() : null;
    const wantText = opts.text != null && opts.text !== '' ? collapse(String(opts.text)).toLowerCase() : null;
    const matches = [];
    const nodes = [];
    let count = 0;
    let visited = 0;
    let heading = null;   // {el, role} of the last heading walked past
    const landmarks = []; // enclosing landmarks {el, role}, innermost last

    function hit(s, want) {
      if (want === null) return true;
      const low = s.toLowerCase();
      return exact ? low === want : low.includes(want);
    }

    function refOf(el, role, name) {
      const ref = refs.refFor(el, role, name);
      nodes.push({ ref, role, name: cap(name, lineCap) });
      return ref;
    }

    function contextOf() {
      const c = heading || landmarks[landmarks.length - 1];
      if (!c) return null;
      const name = nameOf(c.el, c.role, c.el.localName);
      const ref = refOf(c.el, c.role, name);
      return '[' + ref + '] ' + c.role + (name ? ' ' + quote(cap(name, lineCap)) : '');
    }

    function consider(el, role, tag, own) {
      if (wantRole && role !== wantRole) return;
      // Names are only computed for elements the role filter lets through.
      const name = role ? nameOf(el, role, tag) : '';
      if (!hit(name, wantName)) return;
      let byText = false;
      if (wantText !== null) {
        if (hit(name, wantText)) byText = false;
        else if (own && hit(own, wantText)) byText = true;
        else return;
      }
      count++;
      if (matches.length >= limit) return;
      const m = { ref: refOf(el, role || 'generic', name), role: role || 'generic',
        name: cap(name, lineCap) };
      if (byText) m.text = cap(own, lineCap);
      extras(el, role, tag, m.name, m);
      const ctx = contextOf();
      if (ctx) m.context = ctx;
      matches.push(m);
    }

    // The text an element shows itself: its text nodes and those of its inline
    // descendants, in reading order (what a person reads as one sentence).
    function ownText(el) {
      let own = '';
      const stack = [];
      for (let c = el.lastChild; c; c = c.previousSibling) stack.push(c);
      while (stack.length && own.length < gatherCap) {
        const n = stack.pop();
        if (n.nodeType === 3) { own += n.data; continue; }
        if (n.nodeType !== 1) continue;
        const t = n.localName;
        if (t === 'br') { own += ' '; continue; }
        // (inline elements with a role of their own — a link in a sentence — keep
        // their words in the sentence too: text is read in order)
        if (!INLINE_TAGS.has(t) || SKIP_TAGS.has(t)) continue;
        for (let c = n.lastChild; c; c = c.previousSibling) stack.push(c);
      }
      return collapse(own);
    }

    function visit(el, quiet) {
      const tag = el.localName;
      if (SKIP_TAGS.has(tag)) return;
      visited++;
      const v = visState(el);
      if (v === 0) return;
      const selfVis = v === 2;
      const role = roleOf(el, tag);
      let kidsQuiet = quiet;
      let landmark = false;
      // Under an element named by its content (a cell, a term, a link) the text is
      // already that element's name, but elements with roles of their own are still
      // listed, as the snapshot lists them.
      if (selfVis && (!quiet || role)) {
        // Inline elements without a role show their text as part of their parent's.
        const holder = role !== '' || !INLINE_TAGS.has(tag);
        const own = wantText !== null && holder && !quiet && tag !== 'textarea'
          ? ownText(el) : '';
        if (role || own) consider(el, role, tag, own);
        if (role === 'heading') heading = { el, role };
        else if (LANDMARKS.has(role)) { landmarks.push({ el, role }); landmark = true; }
        if (CONTENT_ROLES.has(role)) kidsQuiet = true;
      }
      if (role === 'iframe') {
        let doc = null;
        try { doc = el.contentDocument; } catch (_) { doc = null; }
        if (doc && doc.documentElement) kids(doc.documentElement, false);
      } else if (tag === 'select' || tag === 'textarea' || tag === 'svg' || tag === 'input') {
        // their options and values are not page text
      } else if (tag === 'details' && !el.open) {
        const summary = el.querySelector(':scope > summary');
        if (summary) visit(summary, kidsQuiet);
      } else {
        const sr = el.shadowRoot;
        if (sr) kids(sr, kidsQuiet);
        else if (tag === 'slot' && el.assignedNodes().length) {
          for (const n of el.assignedNodes()) if (n.nodeType === 1) visit(n, kidsQuiet);
        } else kids(el, kidsQuiet);
      }
      if (landmark) landmarks.pop();
    }

    function kids(parent, quiet) {
      for (let c = parent.firstElementChild; c; c = c.nextElementSibling) visit(c, quiet);
    }

    const start = scope.el || document.documentElement;
    if (start) {
      if (scope.el) visit(start, false);
      else kids(start, false);
    }
    return {
      matches, count, nodes, nextRef: refs.next, truncated: count > matches.length,
      stats: { elements: visited, ms: Math.round((performance.now() - t0) * 100) / 100 },
    };
  }

  // ---- domSnapshot ------------------------------------------------------
  function domSnapshot(opts) {
    opts = opts || {};
    const limit = opts.limit == null ? 2000 : Math.max(0, +opts.limit);
    const scope = scopeRoot(opts);
    if (scope.error) return { error: scope.error };
    sweep();
    const refs = makeRefs(opts);
    const nodes = [];
    let truncated = false;

    function visit(el, parentRef, depth) {
      if (truncated) return;
      const tag = el.localName;
      if (SKIP_TAGS.has(tag)) return;
      if (visState(el) === 0) return;
      if (nodes.length >= limit) { truncated = true; return; }
      const root = isDocRoot(el);
      const role = root ? 'RootWebArea' : roleOf(el, tag);
      const name = root ? cap(collapse(el.ownerDocument.title || ''), lineCap)
        : role ? nameOf(el, role, tag) : '';
      const ref = refs.refFor(el, role || 'generic', role ? name : nameOf(el, '', tag));
      const node = { ref, parentRef, depth, tag };
      if (el.id) node.id = el.id;
      const cls = el.getAttribute('class');
      if (cls && cls.trim()) node.className = cap(collapse(cls), lineCap);
      if (role) node.role = role;
      if (name) node.name = name;
      let own = '';
      for (let c = el.firstChild; c && own.length < 400; c = c.nextSibling) {
        if (c.nodeType === 3) own += c.data;
      }
      own = collapse(own);
      if (own && tag !== 'textarea') node.text = cap(own, lineCap);
      if (tag === 'a' || tag === 'area') {
        const href = T.hrefOf(el);
        if (href) node.href = href;
      }
      if (tag === 'input' || tag === 'button') node.type = el.type;
      if (tag === 'input' || tag === 'textarea' || tag === 'select') {
        const v = valueOf(el, tag);
        if (v !== undefined) node.value = v;
      }
      nodes.push(node);
      if (tag === 'select' || tag === 'textarea' || tag === 'svg') return;
      if (tag === 'iframe' || tag === 'frame') {
        let doc = null;
        try { doc = el.contentDocument; } catch (_) { doc = null; }
        if (doc && doc.documentElement) visit(doc.documentElement, ref, depth + 1);
        return;
      }
      const sr = el.shadowRoot;
      const parent = sr || el;
      for (let c = parent.firstChild; c && !truncated; c = c.nextSibling) {
        if (c.nodeType === 1) visit(c, ref, depth + 1);
      }
    }

    const start = scope.el || document.documentElement;
    labelIndex = new Map();
    try {
      if (start) visit(start, null, 0);
    } finally {
      labelIndex = null;
    }
    return { nodes, truncated, nextRef: refs.next };
  }

  G.__browserd = Object.freeze({
    version: VERSION,
    snapshot,
    resolve,
    describe,
    findByText,
    readView,
    domSnapshot,
    find,
  });
  return 'installed';
})()
