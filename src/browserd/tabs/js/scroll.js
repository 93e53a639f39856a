// Page functions of scrolling (tabs/actions/scroll.py).

/**
 * The scroll position of the container of `this` (an element), or of the page when
 * `this` is no element or no ancestor scrolls; `op` "by" (a, b: deltas) or "to" (a, b:
 * the position, null keeps an axis) first moves it by script, "read" does not.
 * Answers {page, x, y, maxX, maxY, vw, vh} (vw, vh: the visible size).
 */
function scrollState(op, a, b) {
  const el = (this && this.nodeType === 1) ? this : null;
  const doc = el ? el.ownerDocument : document, win = doc.defaultView;
  const box = scrollContainer(el, doc);
  const page = !box, se = doc.scrollingElement || doc.documentElement;
  const pos = () => page ? [win.scrollX, win.scrollY] : [box.scrollLeft, box.scrollTop];
  const target = page ? win : box;
  if (op === 'by') target.scrollBy({left: a, top: b, behavior: 'instant'});
  if (op === 'to') target.scrollTo({left: a === null ? pos()[0] : a,
                                    top: b === null ? pos()[1] : b, behavior: 'instant'});
  const s = page ? se : box;
  const [x, y] = pos();
  return {page, x, y, maxX: Math.max(0, s.scrollWidth - s.clientWidth),
          maxY: Math.max(0, s.scrollHeight - s.clientHeight),
          vw: page ? win.innerWidth : box.clientWidth,
          vh: page ? win.innerHeight : box.clientHeight};
}

/**
 * The nearest element from `el` up (across shadow roots, below <html> and <body> of
 * `doc`) that scrolls its own overflow; null when there is none (the page scrolls).
 */
function scrollContainer(el, doc) {
  const win = doc.defaultView;
  const scrolls = (n) => {
    const cs = win.getComputedStyle(n), re = /(auto|scroll|overlay)/;
    return (re.test(cs.overflowY) && n.scrollHeight > n.clientHeight + 1) ||
           (re.test(cs.overflowX) && n.scrollWidth > n.clientWidth + 1);
  };
  for (let n = el; n && n !== doc.documentElement && n !== doc.body;
       n = n.parentElement || (n.parentNode && n.parentNode.host) || null) {
    if (n.nodeType === 1 && scrolls(n)) return n;
  }
  return null;
}

/**
 * The page's scroll state (scrollState without an element) as JSON text.
 */
function pageScrollState(op, a, b) {
  return JSON.stringify(scrollState.call(null, op, a, b));
}
