// Snapshot walker, part of one function body with walker.js (see there):
// readView(opts), the visible text in reading order.

// Block elements that start a new line in readView.
const BLOCK_TAGS = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'dd', 'details', 'dialog',
  'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure', 'footer', 'form', 'h1',
  'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p',
  'pre', 'section', 'summary', 'table', 'tr', 'ul', 'caption', 'legend',
  'option', 'select', 'textarea', 'iframe', 'body', 'menu', 'search',
]);

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
    // Images contribute nothing to the reading text; form values (OPAQUE_TAGS)
    // are in the snapshot, not the reading text.
    if (tag !== 'img') descend(el, tag, tag === 'iframe' || tag === 'frame', below, selfVis);
    if (block) add('\n');
    else if (tag === 'td' || tag === 'th') add(' ');
  }

  function kids(parent, vis) {
    for (let c = parent.firstChild; c && !full; c = c.nextSibling) {
      if (c.nodeType === 1) visit(c, vis);
      else if (c.nodeType === 3 && vis) add(c.data.replace(WS, ' '));
    }
  }

  const below = {
    frame: (root) => kids(root, true), visit, kids,
    text: (s, vis) => { if (vis) add(s); }, stopped: () => full,
  };

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
