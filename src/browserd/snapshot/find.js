// Snapshot walker, part of one function body with walker.js (see there):
// find(opts), the elements whose role / name / own text match, and
// findByText(text), the one best visible actionable element for a text.

// Roles find names as a match's context when no heading precedes it.
const LANDMARKS = new Set([
  'banner', 'complementary', 'contentinfo', 'form', 'main', 'navigation', 'region',
  'search', 'dialog', 'article',
]);

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
    descend(el, tag, role === 'iframe', below, selfVis, quietKids);
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

  const below = {
    frame: (root) => kids(root, true, false), visit, kids,
    text: () => {}, stopped: () => false,
  };
  const de = document.documentElement;
  withLabels(() => { if (de) kids(de, true, false); });
  return best;
}

// ---- find -------------------------------------------------------------
// Elements whose role, accessible name or own visible text match, in
// document order. opts: {role?, name?, text?, exact?, limit?, lineChars?,
// rootRef?/rootSelector?, around?, nextRef}. Matching is case-insensitive, on
// substrings unless exact; every given criterion must hold (text matches
// the name or the element's own text). Refs are issued for the first
// `limit` matches (and the headings named as their context) only; the walk
// counts all matches. With around, each match also carries `around`, the
// line of its row, definition group or list item (around.js).
// Returns {matches, count, nodes, nextRef, stats}.
function find(opts) {
  return refView(opts, findIn);
}

function findIn(opts, scope, refs, t0) {
  const exact = !!opts.exact;
  const around = !!opts.around;
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
    // A row's name is its cells' words: matched when rows are asked for, else
    // the cells are (a search by name or text alone does not find both).
    const named = wantRole ? name : lineName(el, role, name);
    if (!hit(named, wantName)) return;
    let byText = false;
    if (wantText !== null) {
      if (hit(named, wantText)) byText = false;
      else if (own && hit(own, wantText)) byText = true;
      else return;
    }
    count++;
    if (matches.length >= limit) return;
    const m = { ref: refOf(el, role || 'generic', name), role: role || 'generic',
      name: cap(name, lineCap) };
    if (byText) m.text = cap(own, lineCap);
    else if (!name) {
      // A match without a name (a status line, a paragraph) shows the text it holds, as
      // the snapshot shows it under the element's line.
      const shown = own || (tag !== 'textarea' ? ownText(el) : '');
      if (shown) m.text = cap(shown, lineCap);
    }
    extras(el, role, tag, m.name, m);
    const ctx = contextOf();
    if (ctx) m.context = ctx;
    if (around) {
      const line = aroundOf(el, refOf);
      if (line) m.around = line;
    }
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
    descend(el, tag, role === 'iframe', below, kidsQuiet);
    if (landmark) landmarks.pop();
  }

  function kids(parent, quiet) {
    for (let c = parent.firstElementChild; c; c = c.nextElementSibling) visit(c, quiet);
  }

  const below = {
    frame: (root) => kids(root, false), visit, kids, text: () => {}, stopped: () => false,
  };

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
