// Page functions of settling (tabs/settle.py), in the main frame's `browserd` world.

/**
 * A promise that resolves (true) once the page is quiet: neither its DOM changed nor a
 * response it draws from arrived for `quietMs` ms (fetch, XHR, scripts, frames, as the
 * requests still in flight are followed from outside, by the tab's Network events: an
 * image, a style sheet, a font or the favicon arriving does not change what the page
 * says), and its load event is `youngMs` ms old (0: just past). The first call in a
 * document installs a mutation observer of the whole DOM, kept in
 * `globalThis.__browserdQuiet` (of the world) for every later call; a document still
 * loading then counts as changing then.
 */
function domQuiet(quietMs, youngMs) {
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
