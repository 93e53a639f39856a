"""Egress containment of one guarded page: its own session and its child targets'.

The navigation guard (:mod:`browserd.tabs.navguard`) owns the one ``Fetch``
of each page (a second ``Fetch.enable`` on the same session would replace
its patterns). For a page whose browser context has an egress policy
(:mod:`browserd.egress`) the guard enables Fetch for *every* request
(:data:`~browserd.egress.FETCH_ALL`) and, through :class:`Containment`
(its :data:`~browserd.egress.ContainmentFactory`), before the page runs:

1. switches the Network domain on (no buffers: nothing is recorded here)
   with ``Network.emulateNetworkConditionsByRule``: WebSocket handshakes to
   origins the policy does not allow are taken offline (Chromium 156's
   Fetch does not pause them; the rule also covers the page's dedicated
   workers). Each ``Network.webSocketCreated`` to such an origin is
   recorded as a block (a CDP sink, in wire order, so the tab's ring can
   label it before Chromium reports the failure);
2. adds a script to every new document of the page that removes the APIs
   whose traffic the Fetch domain cannot hold: service-worker
   registration, ``SharedWorker``, ``WebTransport`` and
   ``RTCPeerConnection`` (:data:`NO_UNHELD_APIS`);
3. auto-attaches to the page's child targets, each held at start:
   out-of-process iframes get the same treatment (Fetch for every request,
   switched on by the guard's ``enable_fetch`` and judged by its ``judge``;
   the rules; the script; their own children), dedicated workers the rules
   (their requests go through their frame's Fetch), any other kind Fetch
   too; a service worker (registered before
   containment, or by a page this missed) is resumed *first* and then
   contained, because Chromium does not answer ``Fetch.enable`` or
   ``Network.enable`` on a service worker held at start.

Every CDP call is bounded (:data:`SETUP_DEADLINE_S`, ``ANSWER_DEADLINE_S``).
A child whose set-up failed is left held (it never runs, so it sends
nothing) and logged; a paused request whose judging failed is failed
(containment fails closed). Cancellation (the page's guard ends) stops
following children; Chromium releases held targets and paused requests
when the guard's session detaches.
"""

from __future__ import annotations

import logging
from typing import Any

import trio

from ..cdp import CdpConnection, CdpEvent, CdpSession, Sink, Subscription
from ..egress import EGRESS, EgressPolicy, FetchEnabler, Judge, Recorder, note_blocked
from ..errors import BrowserdError
from .children import AUTO_ATTACH
from .netlog import NETWORK_QUIET
from .pagejs import page_function

__all__ = ["ANSWER_DEADLINE_S", "NO_UNHELD_APIS", "SETUP_DEADLINE_S",
           "Containment"]

log = logging.getLogger(__name__)

SETUP_DEADLINE_S = 5.0
"""Bound on containing one child target."""
ANSWER_DEADLINE_S = 5.0
"""Bound on answering one paused request of a child."""
NO_UNHELD_APIS = page_function("removeUnheldApis").call()
"""Run in every document of a contained page before its own scripts."""
_CHILD_EVENTS = frozenset({"Target.attachedToTarget", "Target.detachedFromTarget"})
_WS_EVENTS = frozenset({"Network.webSocketCreated"})
_FRAME_TYPES = frozenset({"iframe", "page"})
_FRAME_LOADED = frozenset({"worker", "worklet"})


async def _contain(session: CdpSession, policy: EgressPolicy, *, frames: bool) -> None:
    """Steps 1-3 of the module docstring on one session (BrowserdError if refused)."""
    await session.send("Network.enable", dict(NETWORK_QUIET))
    await session.send("Network.emulateNetworkConditionsByRule", policy.websocket_rules())
    if frames:
        await session.send("Page.enable")
        await session.send("Page.addScriptToEvaluateOnNewDocument",
                           {"source": NO_UNHELD_APIS, "runImmediately": True})
    try:
        # The same hold as a tab's children: each child paused until contained.
        await session.send("Target.setAutoAttach", dict(AUTO_ATTACH))
    except BrowserdError:
        if frames:
            raise  # a frame's children must be held; a worker may have none to hold


class Containment:
    """Containment of one guarded page; made by the guard, which runs :meth:`run`.

    ``judge`` decides paused requests of child frames; ``record`` is told
    every block (a child's request, a WebSocket of any contained session).
    """

    def __init__(self, connection: CdpConnection, session_id: str, policy: EgressPolicy,
                 judge: Judge, record: Recorder, enable_fetch: FetchEnabler) -> None:
        self.connection = connection
        self.policy = policy
        self._session = connection.session(session_id)
        self._judge = judge
        self._record = record
        self._enable_fetch = enable_fetch
        self._sinks: list[Sink] = []
        self._nursery: trio.Nursery | None = None
        # Subscribed now: children attach as soon as auto-attach is on.
        self._children = self._session.subscribe(_CHILD_EVENTS, buffer=1000)
        self._scopes: dict[str, trio.CancelScope] = {}

    async def set_up(self) -> None:
        """Contain the page's own session (call before it is resumed; BrowserdError if refused)."""
        self._sinks.append(self._watch_websockets(self._session.session_id))
        await _contain(self._session, self.policy, frames=True)

    def close(self) -> None:
        """Stop listening (sinks and the children's subscription); idempotent."""
        for sink in self._sinks:
            self.connection.remove_sink(sink)
        self._sinks.clear()
        self.connection.unsubscribe(self._children)

    async def run(self) -> None:
        """Contain each child target as it attaches, until cancelled (then :meth:`close`)."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                await self._follow(self._children)
        finally:
            self.close()

    async def _follow(self, children: Subscription) -> None:
        """Handle one session's child attaches and detaches (children nest: frames, workers)."""
        assert self._nursery is not None
        async for event in children:
            p = event.params
            child = str(p.get("sessionId") or "")
            if event.method == "Target.detachedFromTarget":
                scope = self._scopes.pop(child, None)
                if scope is not None:
                    scope.cancel()
            elif child:
                self._scopes[child] = scope = trio.CancelScope()
                self._nursery.start_soon(self._child, scope, child, p.get("targetInfo") or {},
                                         bool(p.get("waitingForDebugger")))

    def _watch_websockets(self, session_id: str | None) -> Sink:
        return self.connection.add_sink(session_id, _WS_EVENTS, self._on_websocket)

    def _on_websocket(self, event: CdpEvent) -> None:
        """A WebSocket is being opened: record it when the rules take it offline (sync)."""
        url = str(event.params.get("url") or "")
        if self.policy.verdict(url) is not None:
            request_id = event.params.get("requestId")
            note_blocked(request_id)
            self._record(url, EGRESS, "websocket",
                         request_id if isinstance(request_id, str) else None)

    async def _child(self, scope: trio.CancelScope, session_id: str, info: dict[str, Any],
                     waiting: bool) -> None:
        kind = str(info.get("type") or "")
        session = self.connection.session(session_id)
        paused = session.subscribe(frozenset({"Fetch.requestPaused"}), buffer=10000)
        children = session.subscribe(_CHILD_EVENTS, buffer=1000)
        sink = self._watch_websockets(session_id)
        try:
            with scope:
                try:
                    with trio.fail_after(SETUP_DEADLINE_S):
                        await self._set_up_child(session, kind, waiting)
                except (BrowserdError, trio.TooSlowError) as exc:
                    # A held child never runs: left held, it sends nothing.
                    log.warning("egress: cannot contain a %s target (%s); it stays held",
                                kind, getattr(exc, "message", "timeout"))
                    return
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._follow, children)
                    async for event in paused:
                        nursery.start_soon(self._answer, session, event.params)
        finally:
            self.connection.unsubscribe(paused)
            self.connection.unsubscribe(children)
            self.connection.remove_sink(sink)

    async def _set_up_child(self, session: CdpSession, kind: str, waiting: bool) -> None:
        """Contain one child (BrowserdError if refused); resumed only once contained.

        Dedicated workers and worklets load through their frame (its Fetch judges
        them); every other kind must take Fetch or it stays held.
        """
        if kind == "service_worker":
            # Chromium answers Fetch/Network.enable on a held service worker only
            # once it runs: resumed first, contained right after (a short window).
            if waiting:
                await session.run_if_waiting()
            waiting = False
        if kind not in _FRAME_LOADED:
            await self._enable_fetch(session)
        await _contain(session, self.policy, frames=kind in _FRAME_TYPES)
        if waiting:
            await session.run_if_waiting()

    async def _answer(self, session: CdpSession, p: dict[str, Any]) -> None:
        """Judge one paused request of a child and continue or fail it (bounded)."""
        request_id = str(p.get("requestId", ""))
        url = str((p.get("request") or {}).get("url", ""))
        kind = str(p.get("resourceType") or "Other")
        try:
            verdict = self._judge(url, kind)
        except Exception:  # containment fails closed
            log.exception("egress: judging a request failed; stopping it")
            verdict = EGRESS
        try:
            with trio.move_on_after(ANSWER_DEADLINE_S):
                if verdict is None:
                    await session.send("Fetch.continueRequest", {"requestId": request_id})
                    return
                if verdict == EGRESS:
                    note_blocked(p.get("networkId"))
                self._record(url, verdict, kind.lower(), p.get("networkId"))
                await session.send("Fetch.failRequest", {"requestId": request_id,
                                                         "errorReason": "BlockedByClient"})
        except BrowserdError as exc:
            log.info("egress: answering a paused request failed: %s", exc.message)
