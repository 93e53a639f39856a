// Snapshot walker, part of one function body with walker.js (see there):
// aroundOf(el, refOf), what surrounds a find match as one short line — the
// table row it is in (cells between " | "), the term and definitions of a
// <dl> group, or its list item — with the links, buttons and fields in it
// as "[ref] role "name"" so the agent can act on them without a snapshot.

// Longest neighbourhood line (characters; longer ones end in "…").
const AROUND_MAX = 600;
// How far up a match's ancestors the neighbourhood is looked for.
const AROUND_DEPTH = 12;
const AROUND_CELLS = new Set(['cell', 'gridcell', 'rowheader', 'columnheader']);
const AROUND_ITEMS = new Set(['listitem', 'row']);

// The parent a person sees: across a shadow root to its host.
function shownParent(el) {
  if (el.parentElement) return el.parentElement;
  const p = el.parentNode;
  return p && p.nodeType === 11 && p.host ? p.host : null;
}

// The elements of a <dt>/<dd>'s group: its terms, then their definitions.
function definitionGroup(el) {
  let first = el;
  for (let p = el.previousElementSibling; p; p = p.previousElementSibling) {
    const tag = p.localName;
    if (tag === 'dd' && first.localName === 'dd') first = p;
    else if (tag === 'dt') first = p;
    else break;
  }
  const group = [];
  let sawDd = false;
  for (let e = first; e; e = e.nextElementSibling) {
    const tag = e.localName;
    if (tag === 'dt' && sawDd) break;
    if (tag !== 'dt' && tag !== 'dd') break;
    if (tag === 'dd') sawDd = true;
    group.push(e);
  }
  return group;
}

// The elements whose content is el's neighbourhood (nearest first: a row, a
// definition group, a list item), or null when it is in none of them.
function neighbourhood(el) {
  let e = el;
  for (let depth = 0; e && depth < AROUND_DEPTH; depth++, e = shownParent(e)) {
    const tag = e.localName;
    if (tag === 'dt' || tag === 'dd') return definitionGroup(e);
    if (AROUND_ITEMS.has(roleOf(e, tag))) return [e];
    if (tag === 'body' || tag === 'html') break;
  }
  return null;
}

// The line of a neighbourhood: visible text in reading order, " | " between
// cells and between a group's terms and definitions, and each actionable
// element as its ref, role and name (its own text not repeated).
function aroundLine(els, refOf) {
  const parts = [];
  let len = 0;
  const full = () => len > AROUND_MAX;
  function add(s) { parts.push(s); len += s.length; }

  function visit(el, vis) {
    const tag = el.localName;
    if (SKIP_TAGS.has(tag) || full()) return;
    const v = visState(el);
    if (v === 0) return;
    const selfVis = v === 2;
    const role = roleOf(el, tag);
    if (selfVis && ACTION_ROLES.has(role) && role !== 'generic') {
      const name = nameOf(el, role, tag);
      add(' [' + refOf(el, role, name) + '] ' + role + (name ? ' ' + quote(cap(name, 120)) : '') + ' ');
      return;
    }
    if (AROUND_CELLS.has(role) || tag === 'dt' || tag === 'dd') add('\u0000');
    descend(el, tag, role === 'iframe', below, selfVis);
  }

  function kids(parent, vis) {
    for (let c = parent.firstChild; c && !full(); c = c.nextSibling) {
      if (c.nodeType === 1) visit(c, vis);
      else if (c.nodeType === 3 && vis) add(c.data);
    }
  }

  const below = {
    frame: (root) => kids(root, true), visit, kids,
    text: (s, vis) => { if (vis) add(s); }, stopped: full,
  };
  for (const el of els) visit(el, true);
  // Cell starts become separators; empty cells and leading ones drop out.
  const text = parts.join('').split('\u0000').map(collapse).filter(Boolean).join(' | ');
  return cap(text, AROUND_MAX);
}

// What surrounds el, as one line, or '' (see aroundLine).
function aroundOf(el, refOf) {
  const els = neighbourhood(el);
  return els && els.length ? aroundLine(els, refOf) : '';
}
