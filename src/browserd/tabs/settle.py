"""Settling: answers about a page wait until its document has been parsed.

Two waits, both bounded and both reporting where the document got to
(``loadState``: ``"loading"``, ``"domcontentloaded"`` or ``"load"``) instead
of failing when their time runs out:

- :func:`settle_read` — before a snapshot, find, query or DOM read: a
  document still ``loading`` is waited for up to ``settleMs`` until
  ``domcontentloaded``, and then until its DOM has been quiet (no mutation
  for :data:`QUIET_MS`) — a page that draws its UI after load (an app that
  fetches, then renders) is read whole; the answer's ``settled: false`` says
  when the time ran out first. A page that has been quiet for a while costs
  nothing: a mutation observer in browserd's world remembers the last change;
  :func:`settle_document` is the load-state part alone;
- :func:`settle_after_input` — after an input action whose effects show a
  navigation: the new document is waited for until ``waitUntil``
  (``domcontentloaded`` by default; ``load``; ``commit`` and ``none`` do not
  wait), and ``effects.loadState`` says where it got to.

Both wait through the one navigation waiter (:mod:`browserd.tabs.navwait`):
the state comes from the tab's lifecycle events and, where those may lag
behind a navigation that has just committed, from ``document.readyState``
of the current document (read in the tab's ``browserd`` world, so page
scripts cannot fake it). Nothing here raises on a slow page: the deadline
ends the wait and the answer says ``"loading"``. A JavaScript dialog ends the
wait at once (it blocks the renderer). Cancellation ends the wait; nothing
is changed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import trio

from ..errors import BrowserdError
from .actor import TabActor
from .navwait import WAIT_UNTIL, Probe, wait_load_state, wait_navigation
from .routing import send_in
from .state import LoadState
from .worlds import world_context

__all__ = ["DEFAULT_SETTLE_MS", "QUIET_MS", "WAIT_UNTIL", "after_settling",
           "settle_after_input", "settle_document", "settle_read"]

DEFAULT_SETTLE_MS = 5000
"""How long a read waits for a loading document by default (``settleMs``)."""
QUIET_MS = 150
"""A DOM without a mutation for this long is drawn (``settleMs`` bounds the wait)."""
YOUNG_MS = 500
"""A document read within this long of its load event waits until then at least."""
#: In browserd's world: install (once per document) an observer of the page's DOM, then
#: resolve when neither the DOM changed nor a response arrived for Q ms (a response is
#: what an app draws from; requests still in flight are not visible from here). Before
#: the observer existed, the document is taken as changing until Q ms after its load
#: event, and a young one until Y ms after it (a page read later is quiet at once).
_QUIET_JS = """((Q, Y) => {
  const S = globalThis.__browserdQuiet || (globalThis.__browserdQuiet = (() => {
    const nav = performance.getEntriesByType('navigation')[0];
    // A young document (its load event < Y ms ago) counts as changing until Y ms after
    // it: an app typically fetches right after load, and draws from the answers.
    const loaded = nav && nav.loadEventEnd || 0;
    const s = {last: Math.max(loaded + Y - Q, performance.now() - 10 * Q)};
    if (document.readyState !== 'complete') s.last = performance.now();
    new MutationObserver(() => { s.last = performance.now(); }).observe(document,
      {subtree: true, childList: true, attributes: true, characterData: true});
    return s;
  })());
  const lastResponse = () => {
    let end = 0;
    for (const e of performance.getEntriesByType('resource')) end = Math.max(end, e.responseEnd);
    return end;
  };
  return new Promise(resolve => {
    const check = () => {
      const idle = performance.now() - Math.max(S.last, lastResponse());
      if (idle >= Q) resolve(true); else setTimeout(check, Math.max(10, Q - idle));
    };
    check();
  });
})(%d, %d)"""


async def settle_document(tab: TabActor, *, settle_ms: int = DEFAULT_SETTLE_MS) -> LoadState:
    """Before reading a page: wait up to ``settle_ms`` for ``domcontentloaded``; the state.

    Returns at once (no CDP call) when the tab's events say the document is
    parsed, or when ``settle_ms`` is 0. LOADING in the result means the
    time ran out first: the caller reports it so that a partial read is never
    silent.
    """
    state = tab.view().load_state
    if settle_ms <= 0 or state.rank >= LoadState.DOMCONTENTLOADED.rank:
        return state
    return await wait_load_state(tab, LoadState.DOMCONTENTLOADED,
                                 until=trio.current_time() + settle_ms / 1000,
                                 probe=Probe.WHILE_LOADING)


async def settle_read(tab: TabActor, *, settle_ms: int = DEFAULT_SETTLE_MS
                      ) -> tuple[LoadState, bool]:
    """Before a read: the load state (as :func:`settle_document`), then DOM quiet.

    Answers ``(load_state, settled)``: ``settled`` is False when ``settle_ms``
    ran out before the document was parsed and quiet (or the page could not
    say: a dialog, a busy renderer). ``settle_ms`` 0 reads at once (settled).
    Never raises for a slow page; cancellation ends the wait.
    """
    if settle_ms <= 0:
        return tab.view().load_state, True
    until = trio.current_time() + settle_ms / 1000
    state = await settle_document(tab, settle_ms=settle_ms)
    if state.rank < LoadState.DOMCONTENTLOADED.rank or tab.view().dialog is not None:
        return state, False
    with trio.move_on_after(max(0.0, until - trio.current_time())):
        try:
            context_id = await world_context(tab, tab.session, tab.main_frame_id)
            await send_in(tab, tab.session, "Runtime.evaluate",
                          {"expression": _QUIET_JS % (QUIET_MS, YOUNG_MS),
                           "contextId": context_id,
                           "awaitPromise": True, "returnByValue": True})
            return tab.view().load_state, True
        except BrowserdError:
            return tab.view().load_state, False  # the document changed under us: read what is
    return tab.view().load_state, False


async def after_settling(tab: TabActor, settle_ms: int,
                         read: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """Settle the document (up to ``settle_ms``), then ``read``; its answer with
    ``loadState`` and ``settled``. Errors and cancellation of ``read`` pass through."""
    load_state, settled = await settle_read(tab, settle_ms=settle_ms)
    return {**await read(), "loadState": load_state.value, "settled": settled}


async def settle_after_input(tab: TabActor, result: MutableMapping[str, Any], *,
                             wait_until: str, until: float) -> None:
    """After an input action: if it navigated, wait for ``wait_until``; set ``effects.loadState``.

    ``result`` is the action's answer; its ``effects`` dict is updated in
    place (nothing is added when the action did not navigate: the effects
    Observer saw the commit, so only the load state is waited for). The
    wait ends at trio time ``until`` at the latest — the action's own
    deadline — and then reports the state reached (e.g. ``"loading"``),
    never an error.
    """
    effects = result.get("effects")
    if not isinstance(effects, dict) or "navigated" not in effects:
        return
    arrival = await wait_navigation(tab, wait_until=wait_until, until=until, after=None,
                                    probe=Probe.ALWAYS)
    effects["loadState"] = arrival.load_state.value
