// Page functions of waits (tabs/actions/wait.py), polled in the main frame's `browserd`
// world.

/**
 * Whether a wait's condition holds: `mode` "selector" (an element matching `arg` is
 * attached and visible; an invalid selector answers the JSON text {bad: message}),
 * "text" (the body's visible text contains `arg`) or "gone" (it does not).
 */
function waitCondition(mode, arg) {
  if (mode === 'selector') {
    let el;
    try { el = document.querySelector(arg); }
    catch (e) { return JSON.stringify({bad: String(e && e.message || e)}); }
    if (!el) return false;
    if (!el.checkVisibility) return true;
    return el.checkVisibility({visibilityProperty: true});
  }
  const body = document.body;
  const has = !!body && (body.innerText || '').includes(arg);
  return mode === 'text' ? has : !has;
}

/**
 * The document's `readyState` ("loading", "interactive" or "complete").
 */
function readyState() {
  return document.readyState;
}
