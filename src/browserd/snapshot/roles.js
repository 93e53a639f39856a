// Snapshot walker, part of one function body with walker.js (see there):
// roleOf(el, tag), the role an element is listed with ('' for a plain
// container, which the walks lift out), and the role sets the views share.

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
// Roles also named from their content (ARIA: a row's name is its cells' words)
// whose children keep lines of their own: a snapshot line does not repeat it.
const NAMED_BY_CELLS = new Set(['row']);
const SECTIONING = 'article,aside,main,nav,section';

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
