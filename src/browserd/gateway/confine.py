"""browserd's own work around a gateway client's commands: downloads and first navigations.

Downloads stay confined around the client. A browser context the client
creates (``Target.createBrowserContext``) gets browserd's download behavior
*before* the reply reaches the client, so no page of it can download first
(if that fails, the context is disposed and the client gets an error).
Chromium resets a context's behavior to ``~/Downloads`` when the session
that set it detaches, so after a session on which the client set a behavior
goes (a page closed, the client disconnected) browserd sets its own again on
every context it knows (:meth:`~browserd.downloads.DownloadFollower.restore`).

Chromium does not hold the first navigation of ``Target.createTarget {url}``
for a debugger, so that request (and its redirects) would leave unjudged:
the gateway creates the page blank instead, waits (bounded) until browserd's
navigation guard holds it and then has the guard navigate it to ``url``
before the reply goes back (the client sees the same reply; the page is
loading ``url``). A page that cannot be guarded in time is closed and the
client gets an error.

Every wait here is bounded; cleanup (close, dispose) is best effort within
:data:`CLEANUP_BUDGET_S`.
"""

from __future__ import annotations

import logging
from typing import Any

import trio

from ..cdp import CdpConnection
from ..downloads import DownloadFollower
from ..errors import BrowserdError
from ..tabs.navguard import NavGuard

__all__ = ["CLEANUP_BUDGET_S", "GUARD_WAIT_S", "RESTORE_BUDGET_S", "confine_context",
           "navigate_guarded", "restore_downloads"]

log = logging.getLogger(__name__)

#: Bound on setting browserd's download behavior again after a client's session went.
RESTORE_BUDGET_S = 5.0
#: Bound on waiting for the navigation guard to hold a page the client created.
GUARD_WAIT_S = 10.0
#: Bound on closing a page / disposing a context browserd could not confine.
CLEANUP_BUDGET_S = 2.0


async def restore_downloads(downloads: DownloadFollower | None, who: str) -> None:
    """Set browserd's download behavior again on every context (≤ RESTORE_BUDGET_S, quiet)."""
    if downloads is None:
        return
    with trio.move_on_after(RESTORE_BUDGET_S) as scope:
        await downloads.restore()
    if scope.cancelled_caught:
        log.warning("%s: restoring the download behavior took over %.0f s", who,
                    RESTORE_BUDGET_S)


async def navigate_guarded(connection: CdpConnection, navguard: NavGuard,
                           result: dict[str, Any], url: str, who: str) -> None:
    """Load ``url`` in the blank page just created, once the guard holds it.

    Raises BrowserdError (and closes the page, bounded) when the guard
    does not hold it within :data:`GUARD_WAIT_S`.
    """
    target_id = result.get("targetId")
    if not isinstance(target_id, str):
        return
    guarded = False
    with trio.move_on_after(GUARD_WAIT_S):
        guarded = await navguard.wait_guarded(target_id)
    if guarded:
        try:
            await navguard.start_navigation(target_id, url)
            return
        except BrowserdError as exc:
            log.info("%s: the new page went away (%s)", who, exc.message)
    with trio.move_on_after(CLEANUP_BUDGET_S):
        try:
            await connection.send("Target.closeTarget", {"targetId": target_id})
        except BrowserdError:
            pass
    raise BrowserdError("the new page could not be put under browserd's URL policy in "
                        "time; it was closed")


async def confine_context(connection: CdpConnection, downloads: DownloadFollower | None,
                          result: dict[str, Any], who: str) -> None:
    """Give a context the client just created browserd's download behavior, first.

    Runs before the reply is queued, so the client cannot make a page in it
    before. If the behavior cannot be set the context is disposed (bounded)
    and BrowserdError raised: the client gets an error, never a context
    whose downloads would land in ``~/Downloads``.
    """
    context = result.get("browserContextId")
    if downloads is None or not isinstance(context, str):
        return
    try:
        await downloads.confine_context(context)
    except BrowserdError as exc:
        log.warning("%s: could not confine a new context's downloads (%s); disposing it",
                    who, exc.message)
        with trio.move_on_after(CLEANUP_BUDGET_S):
            try:
                await connection.send("Target.disposeBrowserContext",
                                      {"browserContextId": context})
            except BrowserdError:
                pass
        raise BrowserdError("the new context's downloads could not be kept in "
                            "browserd's downloads directory; it was disposed") from exc
