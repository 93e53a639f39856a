"""A scratch page: reach an origin's web storage without opening it for real.

``localStorage`` is reachable (DOMStorage domain) only through a frame of
its origin, so for an origin no tab has open browserd opens a *hidden*
target (``Target.createTarget {hidden: true}``: not a tab, type "other", so
the TabRegistry never lists it) and navigates it to ``<origin>/``. Every
request of that page is paused by the ``Fetch`` domain: the document is
answered by browserd with an empty page, anything else is failed, and the
page may not run scripts or use a service worker. The page never reaches
the network and nothing of the real site runs.

Cancellation and errors: leaving :func:`open_scratch_page` (normally, on
error or on cancellation) closes the target under a short shielded
deadline; a navigation that does not finish raises Timeout (the caller's
deadline bounds everything else).
"""

from __future__ import annotations

import base64
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio

from ..cdp import CdpConnection, CdpSession
from ..cdp.protocol import Subscription
from ..errors import BrowserdError, Timeout, unwrap_group

__all__ = ["NAVIGATION_DEADLINE_S", "ScratchPage", "open_scratch_page"]

log = logging.getLogger(__name__)

NAVIGATION_DEADLINE_S = 10.0
_EMPTY_PAGE = base64.b64encode(b"<!doctype html><title></title>").decode()
_EVENTS = frozenset({"Fetch.requestPaused", "Page.loadEventFired"})


class ScratchPage:
    """Handle to one hidden page; use :meth:`visit`, then DOMStorage on :attr:`session`."""

    def __init__(self, session: CdpSession, events: Subscription) -> None:
        self.session = session
        self._events = events
        self._loaded = trio.Event()
        self._document_url: str | None = None
        self.requests_answered = 0
        self.requests_failed = 0

    async def visit(self, origin: str) -> None:
        """Make the page's document ``<origin>/`` (an empty page served by browserd).

        Raises Timeout if it does not load within 10 s, CdpError if Chromium
        refuses the navigation.
        """
        self._loaded = trio.Event()
        self._document_url = origin + "/"
        with trio.move_on_after(NAVIGATION_DEADLINE_S) as scope:
            result = await self.session.send("Page.navigate", {"url": origin + "/"})
            if result.get("errorText"):
                raise Timeout(f"the scratch page could not open {origin}: {result['errorText']}")
            await self._loaded.wait()
        if scope.cancelled_caught:
            raise Timeout(f"the scratch page did not load {origin} in time")

    async def run(self) -> None:
        """Answer the page's paused requests and note its loads (until cancelled)."""
        async for event in self._events:
            if event.method == "Page.loadEventFired":
                self._loaded.set()
                continue
            await self._answer(event.params)

    async def _answer(self, params: dict[str, Any]) -> None:
        request_id = params.get("requestId")
        url = str(params.get("request", {}).get("url", ""))
        try:
            if params.get("resourceType") == "Document" and url == self._document_url:
                self.requests_answered += 1
                await self.session.send("Fetch.fulfillRequest", {
                    "requestId": request_id, "responseCode": 200,
                    "responseHeaders": [
                        {"name": "Content-Type", "value": "text/html; charset=utf-8"},
                        {"name": "Content-Security-Policy", "value": "default-src 'none'"},
                        {"name": "Cache-Control", "value": "no-store"}],
                    "body": _EMPTY_PAGE})
            else:
                self.requests_failed += 1
                await self.session.send("Fetch.failRequest", {
                    "requestId": request_id, "errorReason": "BlockedByClient"})
        except BrowserdError as exc:  # the request went away meanwhile
            log.debug("scratch page: request not answered: %s", exc.code)


@asynccontextmanager
async def open_scratch_page(connection: CdpConnection, context: str | None = None
                            ) -> AsyncIterator[ScratchPage]:
    """Open a hidden page whose requests browserd answers itself; closed on exit.

    It is made in browser context ``context`` (a session's; None: the
    default), so it reaches that context's storage and no other.

    Raises CdpError if Chromium cannot make a hidden target (it needs
    ``Target.createTarget {hidden}``, a recent Chromium), TooSlowError if it
    does not answer within 10 s (creating it is not cancellable meanwhile).
    """
    # Shielded (bounded): a cancellation between Chromium making the target and
    # us learning its id would leak it.
    with trio.CancelScope(shield=True), trio.fail_after(10):
        params: dict[str, Any] = {"url": "about:blank", "hidden": True, "background": True}
        if context is not None:
            params["browserContextId"] = context
        created = await connection.send("Target.createTarget", params)
    target_id = str(created["targetId"])
    try:
        attached = await connection.send("Target.attachToTarget",
                                         {"targetId": target_id, "flatten": True})
        session = connection.session(attached["sessionId"])
        events = session.subscribe(_EVENTS, buffer=1000)
        try:
            for method, params in (
                ("Page.enable", {}),
                ("Emulation.setScriptExecutionDisabled", {"value": True}),
                ("Network.enable", {}),
                ("Network.setBypassServiceWorker", {"bypass": True}),
                ("Fetch.enable", {"patterns": [{"urlPattern": "*"}]}),
            ):
                await session.send(method, params)
            page = ScratchPage(session, events)
            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(page.run)
                    yield page
                    nursery.cancel_scope.cancel()
            except BaseExceptionGroup as group:
                raise unwrap_group(group) from None
        finally:
            connection.unsubscribe(events)
    finally:
        with trio.CancelScope(shield=True), trio.move_on_after(5):
            try:
                await connection.send("Target.closeTarget", {"targetId": target_id})
            except BrowserdError as exc:
                log.info("scratch page %s not closed: %s", target_id, exc.code)
