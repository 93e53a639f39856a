"""History moves of one tab: back, forward and reload, each answered once it has settled.

:func:`go_back` / :func:`go_forward` read ``Page.getNavigationHistory`` and
move with ``Page.navigateToHistoryEntry``; :func:`reload` sends
``Page.reload``. The move is watched by the effects
:class:`~browserd.tabs.effects.Observer` (made before the command is
sent: it marks the tab's commit feed, so a fast commit is never missed),
which collects what else the move caused, and waited for by the one
navigation waiter (:func:`browserd.tabs.navwait.wait_navigation`), with the
same ``waitUntil`` words as ``/navigate`` and input actions:

- ``none`` — no wait: the answer names the entry moved to, ``loadState: "none"``;
- ``commit`` — the main frame committed the move: a new document, one
  restored from the back/forward cache, or a ``pushState``/hash entry of
  the same document (``Page.navigatedWithinDocument``; no load events follow
  it); ``loadState`` is what the document itself says;
- ``domcontentloaded`` (default) / ``load`` — after the commit, the document
  reached that state. A restored document was fully loaded when it was
  cached and Chromium sends no lifecycle events for it, so the wait reads
  ``document.readyState`` in the ``browserd`` world too.

Answers ``{ok, targetId, url, title, status, loadState, effects}``;
``effects`` as for input actions: ``navigated``, ``downloads`` (a reload whose
response became a download), ``blocked`` (the navigation guard stopped the
move's document request, e.g. a server redirect to a blocked URL),
``newTabs``, ``dialog`` (one that opened while the new document loaded). A
move that ended without committing (it became a download) answers with the
page it stayed on, once the download is reported (at most
:data:`~browserd.tabs.effects.DOWNLOAD_GRACE_S` after the end).

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

import trio

from ..errors import DialogOpen, NoHistory, Timeout
from .actor import TabActor
from .effects import observing
from .navwait import WAIT_UNTIL, Probe, wait_navigation
from .page import page_info
from .state import LoadState

__all__ = ["go_back", "go_forward", "reload"]

UrlCheck = Callable[[str], object]


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
    view = tab.view()
    return await _run(tab, "Page.reload", {"ignoreCache": ignore_cache}, what="the reload",
                      target_url=view.url, target_title=view.title, wait_until=wait_until,
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
    crashed_before = tab.view().crashed  # a reload revives a crashed tab: wait for its commit
    with observing(tab) as observer:
        async with observer.watching():
            with trio.move_on_at(deadline) as scope:
                await _send(tab, method, params, what)
            if scope.cancelled_caught:
                raise _timeout(what, timeout_s)
            if wait_until == "none":
                return {"ok": True, "targetId": tab.target_id, "url": target_url,
                        "title": target_title, "status": None,
                        "loadState": LoadState.NONE.value, "effects": observer.effects()}
            # The move ends uncommitted when it became a download or was blocked.
            arrival = await wait_navigation(
                tab, wait_until=wait_until, until=deadline, after=observer.mark,
                probe=Probe.ALWAYS, allow_crashed=crashed_before, changed=observer.wait_changed,
                ended=lambda: observer.uncommitted or bool(observer.downloads))
            if arrival.commit is None and observer.uncommitted and not observer.downloads:
                with trio.move_on_at(deadline):
                    await observer.download_grace()
            if arrival.timed_out:
                raise _timeout(what, timeout_s)
            dialog = tab.view().dialog
            if arrival.commit is None and dialog is not None:
                raise DialogOpen(f"a {dialog.type} dialog opened before {what} could "
                                 f"commit: {dialog.message[:200]}", dialog=dialog.to_json(),
                                 hint="answer it with POST /dialog; the move goes on if "
                                      "accepted")
    info = await page_info(tab)
    return {"ok": True, "targetId": tab.target_id, **info,
            "loadState": arrival.load_state.value, "effects": observer.effects()}


def _timeout(what: str, timeout_s: float) -> Timeout:
    return Timeout(f"{what} did not commit within {timeout_s:.1f} s",
                   hint="the tab may still be on its way; check it with GET /tabs")


async def _send(tab: TabActor, method: str, params: dict[str, Any], what: str) -> None:
    """Send the move; a dialog (``beforeunload``) that opens first is DialogOpen."""
    _, dialog = await tab.race_dialog(lambda: tab.send(method, params))
    if dialog is not None:
        raise DialogOpen(f"a {dialog.type} dialog opened before {what} could start: "
                         f"{dialog.message[:200]}", dialog=dialog.to_json(),
                         hint="answer it with POST /dialog; the move goes on if accepted")
