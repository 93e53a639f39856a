// Snapshot walker, part of one function body with walker.js (see there):
// domSnapshot(opts), a bounded walk over the DOM elements themselves.

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
      const sub = frameRoot(el);
      if (sub) visit(sub, ref, depth + 1);
      return;
    }
    const sr = el.shadowRoot;
    const parent = sr || el;
    for (let c = parent.firstChild; c && !truncated; c = c.nextSibling) {
      if (c.nodeType === 1) visit(c, ref, depth + 1);
    }
  }

  const start = scope.el || document.documentElement;
  withLabels(() => { if (start) visit(start, null, 0); });
  return { nodes, truncated, nextRef: refs.next };
}
