// browserd page text helpers, evaluated just before walker.js in the same
// isolated world (script.py joins the two sources into one expression).
//
// Defines globalThis.__browserdText, which walker.js reads:
//   SKIP_TAGS, INLINE_TAGS      element names the walks skip / keep inline
//   BREAKS                      a selector of the elements gather() keeps apart
//   collapse(s), cap(s, n)      whitespace folding, cutting with an ellipsis
//   gather(root, skip, limit, flat)
//                               the text of root's subtree (without skip's),
//                               a space where a <br> or a block (BREAKS) was
//                               (so "Alpha<br>Beta" reads "Alpha Beta"), at
//                               most about limit characters; flat: shadow
//                               roots and slot assignments as rendered
//   hrefOf(el)                  a link's absolute URL ('' without one)
//   linkTarget(el, href, max)   where a link (href: hrefOf(el)) goes, short:
//                               "/path?q" on the page's origin, "#frag" when only the fragment
//                               differs, the URL without its fragment on
//                               another origin, "javascript:" for scripts
//   placeholderOf(el, tag)      a field's placeholder text, or ''
// Everything is synchronous and reads the DOM only.
(() => {
  'use strict';
  const VERSION = 1;
  const G = globalThis;
  if (G.__browserdText && G.__browserdText.version === VERSION) return;

  const SKIP_TAGS = new Set([
    'script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title',
    'base', 'param', 'source', 'track', 'datalist',
  ]);
  // Elements that do not end a text run (their text joins their neighbours').
  const INLINE_TAGS = new Set([
    'span', 'b', 'i', 'em', 'strong', 'small', 'code', 'abbr', 'cite', 'q', 'sub',
    'sup', 'mark', 'u', 's', 'time', 'font', 'kbd', 'var', 'bdi', 'bdo', 'data',
    'label', 'br', 'wbr', 'img', 'tt', 'del', 'ins', 'dfn', 'samp', 'big',
    'strike', 'nobr', 'a',
  ]);
  // Elements whose text a name from content keeps apart from its neighbours'
  // (block boundaries; <br> too), and the same as a selector.
  const BREAK_TAGS = new Set([
    'address', 'article', 'aside', 'blockquote', 'br', 'button', 'caption', 'dd',
    'details', 'dialog', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure', 'footer',
    'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'input', 'legend', 'li',
    'main', 'menu', 'nav', 'ol', 'option', 'p', 'pre', 'search', 'section', 'select',
    'summary', 'table', 'td', 'textarea', 'th', 'tr', 'ul',
  ]);
  const BREAKS = [...BREAK_TAGS].join(',');
  const WS = /\s+/g;
  // Characters a shown target keeps percent-encoded (it stays one token).
  const UNSAFE = /[\s\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
  const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#@]*@/;
  const PARTIAL_ESCAPE = /%[0-9a-fA-F]?$/;
  const SEPARATOR = {};  // stack marker: a block element's text ended

  function collapse(s) {
    return s.replace(WS, ' ').trim();
  }

  function cap(s, n) {
    return s.length > n ? s.slice(0, n) + '\u2026' : s;
  }

  function gather(root, skip, limit, flat) {
    let out = '';
    const stack = [root];
    while (stack.length && out.length < limit) {
      const n = stack.pop();
      if (n === SEPARATOR) { out += ' '; continue; }
      if (n === skip) continue;
      const type = n.nodeType;
      if (type === 3) { out += n.data; continue; }
      if (type === 1) {
        const tag = n.localName;
        if (SKIP_TAGS.has(tag)) continue;
        if (tag === 'br') { out += ' '; continue; }
        if (n !== root && BREAK_TAGS.has(tag)) { out += ' '; stack.push(SEPARATOR); }
        if (flat) {
          if (n.shadowRoot) { stack.push(n.shadowRoot); continue; }
          if (tag === 'slot') {
            const assigned = n.assignedNodes();
            if (assigned.length) {
              for (let i = assigned.length - 1; i >= 0; i--) stack.push(assigned[i]);
              continue;
            }
          }
        }
      }
      for (let c = n.lastChild; c; c = c.previousSibling) stack.push(c);
    }
    return collapse(out);
  }

  function readable(s) {
    if (s.indexOf('%') < 0) return s;
    let d;
    try { d = decodeURI(s); } catch (_) { return s; }
    return UNSAFE.test(d) ? s : d;
  }

  function hrefOf(el) {
    const h = el.href;
    if (typeof h === 'string') return h;
    // SVG <a>: href is an SVGAnimatedString; resolve the attribute instead.
    const raw = el.getAttribute('href') || el.getAttribute('xlink:href');
    if (!raw) return '';
    try { return new URL(raw, el.baseURI).href; } catch (_) { return ''; }
  }

  // The page a link is on, parsed once per document and URL.
  const pages = new WeakMap();  // Document -> {url, origin, path}
  function pageOf(doc) {
    const url = doc.URL;
    let p = pages.get(doc);
    if (p === undefined || p.url !== url) {
      const loc = doc.location;
      p = { url, origin: loc ? loc.origin : 'null', path: loc ? loc.pathname + loc.search : '' };
      pages.set(doc, p);
    }
    return p;
  }

  // From the serialized URL alone (href is canonical: lower-case scheme and
  // host, default port dropped, as location.origin spells them): measured,
  // reading an anchor's URL parts costs 4x what reading its href does.
  function linkTarget(el, href, max) {
    if (!href) return '';
    if (href.startsWith('javascript:')) return 'javascript:';
    const p = pageOf(el.ownerDocument);
    const hashAt = href.indexOf('#');
    const bare = hashAt < 0 ? href : href.slice(0, hashAt);
    const o = p.origin;
    if (o !== 'null' && href.startsWith(o) && href.charCodeAt(o.length) === 47 /* / */) {
      const path = bare.slice(o.length);
      return shown(hashAt >= 0 && path === p.path ? href.slice(hashAt) : path, max);
    }
    // Another origin (or mailto:, data:, ...): the URL without fragment or user info.
    return shown(bare.includes('@') ? bare.replace(USERINFO, '$1') : bare, max);
  }

  // At most max characters of a URL, decoded where that keeps it one token
  // (a long data: URL is cut before it is decoded).
  function shown(s, max) {
    if (s.length > max * 3 + 3) s = s.slice(0, max * 3 + 3).replace(PARTIAL_ESCAPE, '');
    return cap(readable(s), max);
  }

  function placeholderOf(el, tag) {
    const v = tag === 'input' || tag === 'textarea'
      ? el.getAttribute('placeholder') || el.getAttribute('aria-placeholder')
      : el.getAttribute('aria-placeholder');
    return v ? collapse(v) : '';
  }

  G.__browserdText = Object.freeze({
    version: VERSION, SKIP_TAGS, INLINE_TAGS, BREAKS, collapse, cap, gather, hrefOf,
    linkTarget, placeholderOf,
  });
})();
