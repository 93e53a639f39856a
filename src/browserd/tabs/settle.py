"""Settling: answers about a page wait until its document has been parsed.

Two waits, both bounded and both reporting where the document got to
(``loadState``: ``"loading"``, ``"domcontentloaded"`` or ``"load"``) instead
of failing when their time runs out:

- :func:`settle_read` — before a snapshot, find, query or DOM read: a
  document still ``loading`` is waited for up to ``settleMs`` until
  ``domcontentloaded``, and then until nothing it draws from is in flight
  (no document, fetch, XHR or script request open, long polls excepted:
  :mod:`browserd.tabs.inflight`) and its DOM and the responses it draws from
  have been quiet for :data:`QUIET_MS` — a page that draws its UI after load (an app that
  fetches, then renders) is read whole; a parsed document that runs no script of its
  own cannot change itself and is read at once; the answer's ``settled: false``
  says when the time ran out first. A page that has been quiet for a while
  costs one round trip: a mutation observer in browserd's world remembers
  the last change; :func:`settle_document` is the load-state part alone;
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
from .pagejs import page_function
from .routing import send_in
from .state import LoadState
from .worlds import world_context

__all__ = ["DEFAULT_SETTLE_MS", "QUIET_MS", "WAIT_UNTIL", "YOUNG_MS", "after_settling",
           "settle_after_input", "settle_document", "settle_read"]

DEFAULT_SETTLE_MS = 5000
"""How long a read waits for a loading document by default (``settleMs``)."""
QUIET_MS = 150
"""A DOM without a mutation (and a page without a response) for this long is drawn."""
YOUNG_MS = 500
"""How long after its load event a young document counts as still drawing, for an action
whose target matched nothing yet (:mod:`browserd.tabs.locate`): an app may draw on
timers, with no request in flight to say so. Reads do not wait for it."""
_DOM_QUIET = page_function("domQuiet")
"""Resolves once the DOM and the responses were quiet for ``quietMs`` and the load event
is ``youngMs`` old (an observer installed once per document, in browserd's world)."""


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


async def settle_read(tab: TabActor, *, settle_ms: int = DEFAULT_SETTLE_MS,
                      young_ms: int = 0) -> tuple[LoadState, bool]:
    """Before a read: the load state (as :func:`settle_document`), then nothing in flight
    and the DOM quiet.

    Answers ``(load_state, settled)``: ``settled`` is False when ``settle_ms``
    ran out before the document was parsed, its requests answered and its DOM
    quiet (or the page could not say: a dialog, a busy renderer). ``settle_ms`` 0
    reads at once (settled). ``young_ms``: the document also counts as drawing until
    that long after its load event (:data:`YOUNG_MS`; reads pass 0).
    Never raises for a slow page; cancellation ends the wait.
    """
    if settle_ms <= 0:
        return tab.view().load_state, True
    until = trio.current_time() + settle_ms / 1000
    state = await settle_document(tab, settle_ms=settle_ms)
    if state.rank < LoadState.DOMCONTENTLOADED.rank or tab.view().dialog is not None:
        return state, False
    with trio.move_on_at(until):
        try:
            while True:
                await _wait_nothing_in_flight(tab)
                context_id = await world_context(tab, tab.session, tab.main_frame_id)
                await send_in(tab, tab.session, "Runtime.evaluate",
                              {"expression": _DOM_QUIET.call(QUIET_MS, young_ms),
                               "contextId": context_id,
                               "awaitPromise": True, "returnByValue": True})
                # A request the page started while its DOM was quiet: wait for it too.
                if not tab.inflight.busy(trio.current_time()):
                    return tab.view().load_state, True
        except BrowserdError:
            return tab.view().load_state, False  # the document changed under us: read what is
    return tab.view().load_state, False


async def _wait_nothing_in_flight(tab: TabActor) -> None:
    """Wait until no request the page draws from is in flight (long ones do not count),
    or a dialog, a crash or the tab's end makes waiting pointless. The caller's deadline
    bounds it; cancellation ends it; never raises."""
    while tab.halted() is None:
        turns_long = tab.inflight.next_change(trio.current_time())
        if turns_long is None:
            return
        with trio.move_on_at(turns_long):
            await tab.wait_changed()


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
