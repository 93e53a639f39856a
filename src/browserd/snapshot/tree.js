// Snapshot walker, part of one function body with walker.js (see there):
// the rules every walk shares. What is pruned (visState; SKIP_TAGS come from
// text.js), and what a walk goes into below an element: a frame's document,
// nothing inside form fields and svg drawings, only the summary of a closed
// <details>, the shadow root, a slot's assigned nodes, or the children.

// ---- visibility -------------------------------------------------------
// 0: pruned with its subtree, 1: rendered but invisible (children may be
// visible), 2: visible.
const HAS_CHECK_VISIBILITY = typeof Element.prototype.checkVisibility === 'function';
const VIS_OPTS = { visibilityProperty: true };

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

function isDocRoot(el) {
  return el === el.ownerDocument.documentElement;
}

// ---- descent ----------------------------------------------------------
// Elements whose content is not page text: form values and options, drawings.
const OPAQUE_TAGS = new Set(['input', 'select', 'svg', 'textarea']);

// The root element of a frame element's document, when this world can reach
// it (same origin, loaded); else null.
function frameRoot(el) {
  let doc = null;
  try { doc = el.contentDocument; } catch (_) { doc = null; }
  return doc && doc.documentElement ? doc.documentElement : null;
}

// What el's children are as rendered: its shadow root, a slot's assigned
// nodes (an Array) when it has any, or el itself.
function childScope(el, tag) {
  const sr = el.shadowRoot;
  if (sr) return sr;
  if (tag === 'slot') {
    const assigned = el.assignedNodes();
    if (assigned.length) return assigned;
  }
  return el;
}

// The walk below el (el itself already visited) of find, findByText and
// readView. isFrame: el is walked as a frame (w.frame(root of its document)).
// Nothing below OPAQUE_TAGS; a closed <details>: its summary only
// (w.visit(summary, a)); else w.kids(parent, a, b) of the shadow root or el,
// or a slot's assigned nodes one by one, elements to w.visit(n, a, b) and
// text to w.text(data, a), until w.stopped().
function descend(el, tag, isFrame, w, a, b) {
  if (isFrame) {
    const root = frameRoot(el);
    if (root) w.frame(root);
    return;
  }
  if (OPAQUE_TAGS.has(tag)) return;
  if (tag === 'details' && !el.open) {
    const summary = el.querySelector(':scope > summary');
    if (summary) w.visit(summary, a, b);
    return;
  }
  const inner = childScope(el, tag);
  if (!Array.isArray(inner)) { w.kids(inner, a, b); return; }
  for (const n of inner) {
    if (w.stopped()) break;
    if (n.nodeType === 1) w.visit(n, a, b);
    else if (n.nodeType === 3) w.text(n.data, a);
  }
}
