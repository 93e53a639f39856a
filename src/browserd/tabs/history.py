"""History moves of one tab: back, forward and reload, each answered once it has settled.

:func:`go_back` / :func:`go_forward` read ``Page.getNavigationHistory`` and
move with ``Page.navigateToHistoryEntry``; :func:`reload` sends
``Page.reload``. Each then waits for ``wait_until``:

- ``none`` — nothing: the answer names the entry moved to, ``loadState: "none"``;
- ``commit`` — the main frame committed the move: ``Page.frameNavigated``
  (a new document, or one restored from the back/forward cache) or
  ``Page.navigatedWithinDocument`` (a ``pushState``/hash entry of the same
  document, which fires no load events at all);
- ``domcontentloaded`` (default) / ``load`` — after the commit, the document
  reached that state. A same-document move is complete at its commit; a
  document restored from the back/forward cache was fully loaded when it
  was cached (and Chromium sends no lifecycle events for it), so the wait
  also reads ``document.readyState`` in the ``browserd`` world.

The events are subscribed to *before* the command is sent, so a fast commit
is never missed. Answers ``{ok, targetId, url, title, status, loadState}``.

Errors: NoHistory (409) when there is no entry in that direction;
UrlBlocked (403) when ``check_url`` refuses the entry's URL (nothing is
sent); DialogOpen (409) when a dialog (``beforeunload``) opens before the
move commits — the move waits on it; answer it with ``/dialog``; Timeout
(504) when the move does not commit within ``timeout_s`` (the tab may still
be on its way). A commit whose document does not reach ``wait_until`` in
time is *not* an error: the answer says how far it got (e.g. ``"loading"``).

Called while holding the tab's work slot, under the caller's deadline;
cancellation abandons the CDP call in flight and the wait (a move already
sent goes on in the browser).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import trio

from ..errors import BrowserdError, CdpError, DialogOpen, NoHistory, Timeout
from .actor import TabActor
from .page import page_info
from .state import LoadState
from .worlds import world_evaluate

__all__ = ["WAIT_UNTIL", "go_back", "go_forward", "reload"]

WAIT_UNTIL = ("none", "commit", "domcontentloaded", "load")
"""What a history move may wait for (``waitUntil``), weakest first."""
_EVENTS = frozenset({"Page.frameNavigated", "Page.navigatedWithinDocument"})
_RECHECK_S = 0.2
"""How often readyState is re-read while no tab event arrives."""
_PROBE_S = 1.0
"""The longest one readyState probe may take."""
_READY = {"loading": LoadState.LOADING, "interactive": LoadState.DOMCONTENTLOADED,
          "complete": LoadState.LOAD}

UrlCheck = Callable[[str], object]


@attrs.frozen(kw_only=True)
class _Commit:
    """What the main frame committed: a new (or restored) document, or a same-document entry."""

    url: str
    loader_id: str | None
    same_document: bool
    restored: bool  # from the back/forward cache


async def go_back(tab: TabActor, *, wait_until: str = "domcontentloaded", timeout_s: float = 30.0,
                  check_url: UrlCheck | None = None) -> dict[str, Any]:
    """Go one entry back in the tab's history; see the module docstring."""
    return await _move(tab, -1, wait_until=wait_until, timeout_s=timeout_s, check_url=check_url)


async def go_forward(tab: TabActor, *, wait_until: str = "domcontentloaded",
                     timeout_s: float = 30.0, check_url: UrlCheck | None = None
                     ) -> dict[str, Any]:
    """Go one entry forward in the tab's history; see the module docstring."""
    return await _move(tab, +1, wait_until=wait_until, timeout_s=timeout_s, check_url=check_url)


async def reload(tab: TabActor, *, ignore_cache: bool = False,
                 wait_until: str = "domcontentloaded", timeout_s: float = 30.0
                 ) -> dict[str, Any]:
    """Reload the tab's document (``ignore_cache``: bypass the HTTP cache).

    Also revives a crashed tab. Errors and waiting as in the module docstring
    (never NoHistory).
    """
    return await _run(tab, "Page.reload", {"ignoreCache": ignore_cache}, what="the reload",
                      target_url=tab.url, target_title=tab.title, wait_until=wait_until,
                      timeout_s=timeout_s)


async def _move(tab: TabActor, step: int, *, wait_until: str, timeout_s: float,
                check_url: UrlCheck | None) -> dict[str, Any]:
    with trio.fail_after(min(timeout_s, 10.0)):
        history = await tab.send("Page.getNavigationHistory")
    entries = history.get("entries") or []
    index = int(history.get("currentIndex", 0)) + step
    word = "back" if step < 0 else "forward"
    if not 0 <= index < len(entries):
        raise NoHistory(f"no history entry {word} of this one in tab {tab.target_id} "
                        f"({len(entries)} entr{'y' if len(entries) == 1 else 'ies'}, "
                        f"at {int(history.get('currentIndex', 0)) + 1})")
    entry = entries[index]
    url = str(entry.get("url") or "")
    if check_url is not None:
        check_url(url)  # raises UrlBlocked: nothing is sent
    return await _run(tab, "Page.navigateToHistoryEntry", {"entryId": entry["id"]},
                      what=f"going {word}", target_url=url,
                      target_title=str(entry.get("title") or ""), wait_until=wait_until,
                      timeout_s=timeout_s)


async def _run(tab: TabActor, method: str, params: dict[str, Any], *, what: str,
               target_url: str, target_title: str, wait_until: str, timeout_s: float
               ) -> dict[str, Any]:
    if wait_until not in WAIT_UNTIL:
        raise ValueError(f"wait_until must be one of {WAIT_UNTIL}")
    deadline = trio.current_time() + timeout_s
    events = tab.session.subscribe(_EVENTS, buffer=256)
    try:
        commit: _Commit | None = None
        with trio.move_on_at(deadline):
            await _send(tab, method, params, what)
            if wait_until == "none":
                return {"ok": True, "targetId": tab.target_id, "url": target_url,
                        "title": target_title, "status": None, "loadState": LoadState.NONE.value}
            commit = await _wait_commit(tab, events, what)
        if commit is None:
            raise Timeout(f"{what} did not commit within {timeout_s:.1f} s",
                          hint="the tab may still be on its way; check it with GET /tabs")
    finally:
        tab.connection.unsubscribe(events)
    state = LoadState.LOADING
    with trio.move_on_at(deadline):
        state = await _settle(tab, commit, wait_until)
    info = await page_info(tab)
    return {"ok": True, "targetId": tab.target_id, **info, "loadState": state.value}


async def _send(tab: TabActor, method: str, params: dict[str, Any], what: str) -> None:
    """Send the move; a dialog (``beforeunload``) that opens first is DialogOpen."""
    _, dialog = await tab.race_dialog(lambda: tab.send(method, params))
    if dialog is not None:
        raise DialogOpen(f"a {dialog.type} dialog opened before {what} could start: "
                         f"{dialog.message[:200]}", dialog=dialog.to_json(),
                         hint="answer it with POST /dialog; the move goes on if accepted")


async def _wait_commit(tab: TabActor, events: Any, what: str) -> _Commit:
    """The main frame's next commit, or DialogOpen if a dialog opens first."""
    async def next_commit() -> _Commit:
        async for event in events:
            p = event.params
            if event.method == "Page.navigatedWithinDocument":
                if p.get("frameId") == tab.main_frame_id:
                    return _Commit(url=str(p.get("url", "")), loader_id=tab.loader_id,
                                   same_document=True, restored=False)
            else:
                frame = p.get("frame") or {}
                if not frame.get("parentId"):
                    return _Commit(url=str(frame.get("url", "")),
                                   loader_id=frame.get("loaderId"), same_document=False,
                                   restored=p.get("type") == "BackForwardCacheRestore")
        raise CdpError("the tab's event stream ended during a history move")

    commit, dialog = await tab.race_dialog(next_commit)
    if dialog is not None:
        raise DialogOpen(f"a {dialog.type} dialog opened during {what}: {dialog.message[:200]}",
                         dialog=dialog.to_json(),
                         hint="answer it with POST /dialog; the move goes on if accepted")
    assert commit is not None
    return commit


async def _settle(tab: TabActor, commit: _Commit, wait_until: str) -> LoadState:
    """Wait until the committed document reaches ``wait_until``; the state reached."""
    if commit.same_document:
        # The document stays: no load events follow a pushState/hash entry.
        return tab.load_state
    want = {"load": LoadState.LOAD, "domcontentloaded": LoadState.DOMCONTENTLOADED}.get(
        wait_until, LoadState.LOADING).rank
    while True:
        if tab.dialog is not None or tab.closed or tab.crashed:
            return tab.load_state
        if tab.loader_id == commit.loader_id:  # the actor has seen the commit too
            state = tab.load_state
            if state.rank < want:
                # A restored document sends no lifecycle events: ask the document.
                ready = await _ready_state(tab)
                if ready is not None and ready.rank > state.rank:
                    state = ready
            if state.rank >= want:
                return state
        with trio.move_on_after(_RECHECK_S):
            await tab.wait_changed()


async def _ready_state(tab: TabActor) -> LoadState | None:
    """The main document's readyState (read in the ``browserd`` world); None if unknown now."""
    with trio.move_on_after(_PROBE_S):
        try:
            remote = await world_evaluate(tab, tab.session, tab.main_frame_id,
                                          "document.readyState")
        except BrowserdError:
            return None  # between documents: ask again later
        return _READY.get(str(remote.get("value")))
    return None
