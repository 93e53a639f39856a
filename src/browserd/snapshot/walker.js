// browserd page snapshot walker.
//
// Evaluated once per (tab, frame, document) inside a CDP isolated world named
// "browserd" (Page.createIsolatedWorld). The world shares the DOM with the
// page but none of its JavaScript globals, so page scripts can neither see nor
// patch anything here. Evaluating the walker defines globalThis.__browserd;
// evaluating it again keeps the existing ref state (globalThis.__browserdState)
// and returns "present". text.js (names from content, link targets,
// placeholders) is evaluated just before it.
//
// The walker is one function body in several files, by concern. script.py
// joins them, in this order, between "(() => {" and "})()"; they share that
// one scope (a file uses what the others declare) and add no globals:
//   walker.js   this file: version check, ref state, per-call caps, quote()
//   tree.js     the walks' shared rules: visibility, descent into frames,
//               shadow roots, slots and closed <details>
//   roles.js    roleOf: the role of an element
//   names.js    nameOf, describe: accessible names
//   states.js   states, extras: the " level=2 checked → /path" end of a line
//   refs.js     ref allocation, lookup, resolve, scopeRoot
//   lines.js    snapshot: the snapshot's lines
//   find.js     find, findByText
//   reading.js  readView
//   dom.js      domSnapshot
//   install.js  publishes the entry points (last: every const above is set)
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
// Page text may hold lone UTF-16 surrogates; a quoted line shows U+FFFD for them.
const wellFormed = (s) => String(s).toWellFormed();

// Shared with text.js, evaluated just before this file.
const T = G.__browserdText;
const { SKIP_TAGS, INLINE_TAGS, collapse, cap } = T;
const WS = /\s+/g;

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
