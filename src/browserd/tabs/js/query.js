// Page functions of read-only inspection (tabs/query.py), run in the main frame's
// `browserd` world. Password values are never returned.

/**
 * The outerHTML of `el` with the value attribute of password inputs blanked. The copy is
 * made in an inert document, so no custom element constructor (page code) runs for it.
 */
function redactedHtml(el) {
  const PWD = 'input[type="password" i][value]';
  const hit = (el.matches && el.matches(PWD)) || el.querySelector(PWD);
  if (!hit) return el.outerHTML;
  const doc = document.implementation.createHTMLDocument('');
  const copy = doc.importNode(el, true);
  if (copy.matches(PWD)) copy.setAttribute('value', '');
  for (const p of copy.querySelectorAll(PWD)) p.setAttribute('value', '');
  return copy.outerHTML;
}

/**
 * The elements matching the CSS selector `sel` (at most `limit`), as JSON text:
 * {count, matches: [{index, tag, id, className, text, value, href, outerHTML,
 * truncated}]} with text and value cut to `tmax`, outerHTML to `hmax` characters (a
 * password input's value is null); {bad: message} for an invalid selector.
 */
function queryMatches(sel, limit, tmax, hmax) {
  let list;
  try { list = document.querySelectorAll(sel); }
  catch (e) { return JSON.stringify({bad: String(e && e.message || e)}); }
  const matches = [];
  for (let i = 0; i < list.length && matches.length < limit; i++) {
    const el = list[i];
    const tag = el.localName;
    const secret = tag === 'input' && el.type === 'password';
    let text = typeof el.innerText === 'string' ? el.innerText : (el.textContent || '');
    text = text.replace(/\s+/g, ' ').trim();
    let value = null;
    if (!secret && typeof el.value === 'string') value = el.value.slice(0, tmax);
    let cls = typeof el.className === 'string' ? el.className : el.getAttribute('class');
    const href = typeof el.href === 'string' ? el.href : el.getAttribute('href');
    let outer = redactedHtml(el);
    matches.push({
      index: i, tag, id: el.id || '', className: cls || '',
      text: text.slice(0, tmax), value, href: href || null,
      outerHTML: outer.length > hmax ? outer.slice(0, hmax) : outer,
      truncated: text.length > tmax || outer.length > hmax,
    });
  }
  return JSON.stringify({count: list.length, matches});
}

/**
 * The document's (or the first match of `sel`'s) HTML (`fmt` "html", with the doctype
 * for the whole document) or rendered text ("text"), cut to `max` characters, as JSON
 * text: {text, length}; {none: true} when nothing matches, {bad: message} for an invalid
 * selector. `sel` null: the whole document.
 */
function documentText(sel, fmt, max) {
  let el;
  if (sel === null) el = null;
  else {
    try { el = document.querySelector(sel); }
    catch (e) { return JSON.stringify({bad: String(e && e.message || e)}); }
    if (!el) return JSON.stringify({none: true});
  }
  let text;
  if (fmt === 'html') {
    const root = el || document.documentElement;
    text = root ? redactedHtml(root) : '';
    if (!el && document.doctype) text = '<!DOCTYPE ' + document.doctype.name + '>\n' + text;
  } else {
    const root = el || document.body || document.documentElement;
    text = !root ? '' : typeof root.innerText === 'string' ? root.innerText : root.textContent;
  }
  const length = text.length;
  return JSON.stringify({text: length > max ? text.slice(0, max) : text, length});
}
