// Snapshot walker, part of one function body with walker.js (see there):
// snapshot(opts), the accessibility-style lines with refs (and interactive
// mode, which lists only what an agent can act on).

const TRAILING_WS = /\s+$/;
const TABS = /\t/g;
const NONSPACE = /\S/;

const IND = [''];
function indent(d) {
  while (IND.length <= d) IND.push(IND[IND.length - 1] + '  ');
  return IND[d];
}

// ---- snapshot ---------------------------------------------------------
function snapshot(opts) {
  return refView(opts, walkPage);
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
    const shown = lineName(el, role, name);
    push(indent(depth) + '[' + ref + '] ' + r + (shown ? ' ' + quote(shown) : '') + st, node);
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
    const sub = frameRoot(el);
    const d = interactive ? 0 : depth;
    if (sub) {
      if (!interactive) {
        flush();
        if (vis && !emit(el, 'iframe', 'iframe', d)) return;
        walkKids(sub, vis ? d + 1 : d, false, true);
        flush();
      } else {
        walkKids(sub, 0, false, true);
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
    } else if (!OPAQUE_TAGS.has(tag)) {
      const inner = childScope(el, tag);
      if (Array.isArray(inner)) {  // a slot's assigned nodes
        for (const n of inner) {
          if (stop) break;
          if (n.nodeType === 1) walkEl(n, childDepth, childQuiet, selfVis);
          else if (n.nodeType === 3 && !childQuiet && selfVis && !interactive) {
            addText(n.data, childDepth);
          }
        }
      } else if (inner !== el || tag === 'slot' || el.firstChild) {
        // (an empty slot is walked too: walkKids may end the pending text run)
        walkKids(inner, childDepth, childQuiet, selfVis);
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
