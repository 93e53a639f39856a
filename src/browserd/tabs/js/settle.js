// Page functions of settling (tabs/settle.py), in the main frame's `browserd` world.

/**
 * A promise that resolves (true) once the page is quiet: neither its DOM changed nor a
 * response it draws from arrived for `quietMs` ms (fetch, XHR, scripts, frames, as the
 * requests still in flight are followed from outside, by the tab's Network events: an
 * image, a style sheet, a font or the favicon arriving does not change what the page
 * says), and its load event is `youngMs` ms old (0: just past). The first call in a
 * document installs a mutation observer of the whole DOM, kept in
 * `globalThis.__browserdQuiet` (of the world) for every later call; a document still
 * loading then counts as changing then. A parsed document that runs no script of its own
 * (`runsNoScript`) cannot change itself: it is quiet at once.
 */
function domQuiet(quietMs, youngMs) {
  if (document.readyState !== 'loading') {
    // Decided once per parsed document (kept in the world): only a script could add one.
    if (globalThis.__browserdNoScript === undefined) {
      globalThis.__browserdNoScript = runsNoScript();
    }
    if (globalThis.__browserdNoScript) return Promise.resolve(true);
  }
  const drawnFrom = new Set(['fetch', 'xmlhttprequest', 'script', 'iframe', 'frame']);
  const S = globalThis.__browserdQuiet || (globalThis.__browserdQuiet = (() => {
    const s = {last: document.readyState === 'complete' ? 0 : performance.now()};
    new MutationObserver(() => { s.last = performance.now(); }).observe(document,
      {subtree: true, childList: true, attributes: true, characterData: true});
    return s;
  })());
  const changed = () => {
    const nav = performance.getEntriesByType('navigation')[0];
    let last = Math.max(S.last, (nav && nav.loadEventEnd || 0) + youngMs - quietMs);
    for (const e of performance.getEntriesByType('resource')) {
      if (drawnFrom.has(e.initiatorType)) last = Math.max(last, e.responseEnd);
    }
    return last;
  };
  return new Promise(resolve => {
    const check = () => {
      const idle = performance.now() - changed();
      if (idle >= quietMs) resolve(true); else setTimeout(check, Math.max(10, quietMs - idle));
    };
    check();
  });
}

/**
 * True when the document has nothing that runs script on its own: no script element (HTML
 * or SVG), no inline event handler attribute (`onload=`, `onerror=` …, which run without
 * a click), no frame, object or embed (whose documents could reach this one), no shadow
 * root (whose content the checks above do not see), and no script it loaded and then
 * removed (a resource entry of a script). A link's `javascript:` URL runs only when it is
 * followed. The page's DOM can then change only by a navigation, which settling follows
 * on its own (or by a script run from outside it: `/eval`, a gateway client — which a
 * read does not wait for on any page).
 */
function runsNoScript() {
  if (document.getElementsByTagNameNS('*', 'script').length) return false;
  if (document.querySelector('iframe, frame, object, embed')) return false;
  if (performance.getEntriesByType('resource').some(e => e.initiatorType === 'script')) {
    return false;
  }
  const handlers = document.evaluate("count(//@*[starts-with(local-name(), 'on')])", document,
    null, XPathResult.NUMBER_TYPE, null);
  if (handlers.numberValue !== 0) return false;
  for (const el of document.getElementsByTagName('*')) if (el.shadowRoot) return false;
  return true;
}
