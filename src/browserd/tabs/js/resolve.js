// Page functions of resolving targets to elements (tabs/resolve.py), run in the main
// frame's `browserd` world.

/**
 * The `index`-th element matching the CSS selector `sel`; else JSON text: {count} (too
 * few match) or {bad: message} (an invalid selector).
 */
function selectorMatch(sel, index) {
  let list;
  try { list = document.querySelectorAll(sel); }
  catch (e) { return JSON.stringify({bad: String(e && e.message || e)}); }
  if (index >= list.length) return JSON.stringify({count: list.length});
  return list[index];
}
