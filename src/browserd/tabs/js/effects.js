// Page functions of the effects Observer (tabs/effects.py), in each frame's `browserd`
// world: the page cannot replace its timers there, and they share the page's event loop.

/**
 * A promise that resolves (undefined) once the page has gone twice round its task
 * queue: the handlers an input set off, their microtasks and 0 ms timers have run.
 */
function taskQueueTurned() {
  return new Promise(r => setTimeout(() => setTimeout(r, 0), 0));
}
