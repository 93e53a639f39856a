// Page functions of rich editors (tabs/actions/editors.py): which editor an element
// belongs to, how to focus it, where to click it, what it shows. Class names are the
// page's, untrusted like everything else on it: they decide only where inside the
// element's own widget a click lands and how its text is read back.

/**
 * The editors known by their root element: kind, root selector, drawn surface, input.
 */
function editorKinds() {
  return [
    {kind: 'codemirror5', root: '.CodeMirror', surface: '.CodeMirror-scroll',
     input: ':scope > div > textarea, .CodeMirror-code[contenteditable="true"]'},
    {kind: 'monaco', root: '.monaco-editor', surface: '.view-lines',
     input: 'textarea.inputarea, .native-edit-context'},
    {kind: 'codemirror6', root: '.cm-editor', surface: '.cm-content', input: '.cm-content'},
    {kind: 'prosemirror', root: '.ProseMirror', surface: null, input: null},
  ];
}

/**
 * The outermost contenteditable editing host `n` is in (or is), else null.
 */
function editingHost(n) {
  let h = null;
  for (let e = n; e && e.nodeType === 1 && e.isContentEditable; e = e.parentElement) h = e;
  return h;
}

/**
 * The editor `el` belongs to: {k: its kind record, root}, else null. The innermost known
 * editor around `el`; without `click`, else the one editor inside `el`; else the
 * contenteditable host around it.
 */
function findEditor(el, click) {
  const kinds = editorKinds();
  let found = null;
  for (const k of kinds) {
    const r = el.closest(k.root);
    if (r && (!found || found.root.contains(r))) found = {k, root: r};
  }
  if (!found && !click) {
    for (const k of kinds) {
      const all = el.querySelectorAll(k.root);
      if (all.length === 1) { found = {k, root: all[0]}; break; }
    }
  }
  if (!found) {
    const h = editingHost(el);
    if (h) found = {k: {kind: 'contenteditable', surface: null, input: null}, root: h};
  }
  return found;
}

/**
 * Whether `a` takes typed text (contenteditable, a textarea or an input).
 */
function takesText(a) {
  return !!a && (a.isContentEditable || a.localName === 'textarea' || a.localName === 'input');
}

/**
 * One question about the editor of `this` (an element), found the same way each time.
 *
 * `mode`: "probe" answers {kind, hiddenInput, cover, platform} (null: no editor);
 * "focus" gives it focus and answers "kept" | "focused" | "refused"; "surface" answers
 * the element it draws text on; "text" answers {text} (what it shows, ≤ 200,000
 * characters). Other modes answer {none: true} when there is no editor. `click`: the
 * element is a click's target, so it must be the editor's own input or inside its drawn
 * surface, the editor no whole document, and an element merely holding an editor is not
 * that editor. A detached element answers {detached: true}.
 */
function editorQuestion(mode, click) {
  const el = this;
  if (!el.isConnected) return {detached: true};
  const none = mode === 'probe' ? null : {none: true};
  const found = findEditor(el, click);
  if (!found) return none;
  const {k, root} = found;
  const surface = (k.surface && root.querySelector(k.surface)) || root;
  const input = (k.input && root.querySelector(k.input)) || surface;
  const fields = ['input', 'textarea', 'select', 'button'];
  // A field of the widget's own (a search box inside the editor) is not the editor.
  if (fields.includes(el.localName) && el !== input) return none;
  const doc = el.ownerDocument, view = doc.defaultView;
  if (click) {
    // Class names are the page's: they may move a click only within a real widget.
    const own = k.input ? root.querySelector(k.input) : root;
    const drawn = k.surface ? root.querySelector(k.surface) : root;
    const whole = root === doc.documentElement || root === doc.body;
    if (whole || !(el === own || (drawn && drawn.contains(el)))) return none;
  }
  if (mode === 'surface') return surface;
  if (mode === 'focus') {
    const a = deepActiveElement(doc);
    if (a && root.contains(a) && takesText(a)) return 'kept';
    const to = (el !== root && !el.contains(root) && takesText(el)) ? el : input;
    to.focus({preventScroll: true});
    const now = deepActiveElement(doc);
    return now && root.contains(now) ? 'focused' : 'refused';
  }
  if (mode === 'text') return {text: editorText(k.kind, root).slice(0, 200000)};
  return {kind: k.kind, hiddenInput: el === input && el !== surface,
          cover: centreCover(el, root), platform: platformOf(view)};
}

/**
 * The text an editor of `kind` rooted at `root` shows: its drawn lines (without widgets
 * and placeholders) joined by line breaks, Monaco's ordered by position; otherwise the
 * root's innerText.
 */
function editorText(kind, root) {
  const lines = (sel, order) => {
    let all = [...root.querySelectorAll(sel)];
    const top = e => parseFloat(e.style.top) || 0;
    if (order) all.sort((a, b) => top(a) - top(b));
    return all.map(line => {
      const copy = line.cloneNode(true);
      for (const w of copy.querySelectorAll('[contenteditable="false"], .cm-placeholder'))
        w.remove();
      return copy.textContent;
    }).join('\n');
  };
  if (kind === 'codemirror5') return lines('.CodeMirror-code pre.CodeMirror-line');
  if (kind === 'monaco') return lines('.view-lines .view-line', true);
  if (kind === 'codemirror6') return lines('.cm-content .cm-line');
  return root.innerText;
}

/**
 * What the centre of `el`'s first box shows: "none" (el itself, or no visible box),
 * "inside" (another part of the editor rooted at `root`) or "outside".
 */
function centreCover(el, root) {
  const doc = el.ownerDocument, view = doc.defaultView;
  const rect = [...el.getClientRects()].find(r => r.width >= 1 && r.height >= 1);
  if (!rect) return 'none';
  const l = Math.max(0, rect.left), r = Math.min(view.innerWidth, rect.right);
  const t = Math.max(0, rect.top), b = Math.min(view.innerHeight, rect.bottom);
  if (r - l < 1 || b - t < 1) return 'none';
  const hit = doc.elementFromPoint((l + r) / 2, (t + b) / 2);
  if (!hit || el.contains(hit)) return 'none';
  return root.contains(hit) ? 'inside' : 'outside';
}

/**
 * The `navigator.platform` of the window `view`, cut to 100 characters.
 */
function platformOf(view) {
  return String(view.navigator.platform || '').slice(0, 100);
}

/**
 * The `navigator.platform` of the world's own window, cut to 100 characters.
 */
function pagePlatform() {
  return platformOf(globalThis);
}

/**
 * The main document's focused element (inside open shadow roots), or null when nothing
 * but the body or the document element has focus.
 */
function focusedElement() {
  const a = deepActiveElement(document);
  return a && a !== document.body && a !== document.documentElement ? a : null;
}
