"""A tab's child targets: the one path that sets each up and then resumes it.

The tab's actor sends :data:`AUTO_ATTACH` on its page session: Chromium then
attaches the page's out-of-process iframes, workers and worklets to that
session, each *paused before it runs* (``waitForDebuggerOnStart``).
:class:`ChildTargets` handles every such attach, in wire order (the actor's
event task calls :meth:`ChildTargets.attached`):

1. an OOPIF's session is recorded (:attr:`ChildTargets.sessions`: refs,
   frames and web storage reach into the frame through it) and a CDP sink
   feeds its ``Network.*`` events into the tab's ring;
2. an OOPIF's file choosers are intercepted (``Page.fileChooserOpened``
   goes to the tab's ``on_chooser`` through a sink: no native dialog ever
   opens, uploads answer it);
3. when the tab records network, the child's Network domain is switched on
   with the tab's controls (blocked URL patterns, extra headers), so they
   apply from the frame's first request;
4. the child is resumed (:meth:`~browserd.cdp.CdpSession.run_if_waiting`),
   after at most :data:`SETUP_DEADLINE_S` whatever steps 2 and 3 did.

Pages are not children: browser-level auto-attach of page targets belongs
to the navigation guard (:mod:`browserd.tabs.navguard`), which holds and
resumes them on its own session. A page session's auto-attach reports no
page targets, so no target is held by both; each hold is released by the
session that asked for it (Chromium keeps one per session).

Only the Network domain is used here, never ``Fetch``: the guard owns
``Fetch`` on its page sessions, and a second ``Fetch.enable`` would replace
its patterns. Blocking uses ``Network.setBlockedURLs``, which Chromium
applies without pausing requests.

Errors of a set-up (the frame went away) are logged by type only and
dropped; the child is resumed all the same. Cancellation (the actor ends):
set-ups in flight stop, paused children are released by Chromium when the
tab's session detaches.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import trio

from ..cdp import CdpConnection, CdpEvent, Sink
from ..errors import BrowserdError
from .netlog import NETWORK_EVENTS, NetworkLog

__all__ = ["AUTO_ATTACH", "SETUP_DEADLINE_S", "ChildTargets"]

log = logging.getLogger(__name__)

AUTO_ATTACH: Mapping[str, bool] = {"autoAttach": True, "waitForDebuggerOnStart": True,
                                   "flatten": True}
"""``Target.setAutoAttach`` parameters of a tab's page session."""
_CHOOSER_EVENTS = frozenset({"Page.fileChooserOpened"})
SETUP_DEADLINE_S = 5.0
"""Bound on setting one child up before it is resumed anyway."""


class ChildTargets:
    """The child targets of one tab (owned by its actor; see the module docstring)."""

    def __init__(self, connection: CdpConnection, *, target_id: str, network: NetworkLog,
                 on_chooser: Callable[[dict[str, Any], str], None]) -> None:
        self.connection = connection
        self.target_id = target_id
        self.network = network
        #: Called (in the connection's reader: quick) with a frame's
        #: ``Page.fileChooserOpened`` params and its session id.
        self.on_chooser = on_chooser
        #: OOPIF frame/target id -> its session id (read by refs, frames, storage).
        self.sessions: dict[str, str] = {}
        self._sinks: dict[str, list[Sink]] = {}  # OOPIF session id -> its sinks

    def attached(self, params: Mapping[str, Any], nursery: trio.Nursery | None) -> None:
        """Handle one ``Target.attachedToTarget`` of the tab's session (quick, no I/O).

        Set-up and resume run as a task in ``nursery`` (the actor's); None
        when the actor is ending: its session's detach releases the child.
        """
        info = params.get("targetInfo") or {}
        session_id = str(params.get("sessionId") or "")
        if not session_id:
            return
        iframe = info.get("type") == "iframe"
        if iframe:
            self.sessions[str(info.get("targetId", ""))] = session_id
            self._sinks[session_id] = [
                self.connection.add_sink(session_id, NETWORK_EVENTS, self._on_network_event),
                self.connection.add_sink(session_id, _CHOOSER_EVENTS, self._on_chooser_event)]
        waiting = bool(params.get("waitingForDebugger"))
        if nursery is not None and (waiting or iframe):
            nursery.start_soon(self._start, session_id, iframe, waiting)

    def detached(self, session_id: str) -> None:
        """Forget a child whose session ended (its sink goes with it)."""
        for key, sid in list(self.sessions.items()):
            if sid == session_id:
                del self.sessions[key]
        for sink in self._sinks.pop(session_id, ()):
            self.connection.remove_sink(sink)

    def close(self) -> None:
        """Remove every child's sink (the actor ended). Idempotent."""
        for sinks in self._sinks.values():
            for sink in sinks:
                self.connection.remove_sink(sink)
        self._sinks.clear()

    def _on_network_event(self, event: CdpEvent) -> None:
        """Feed the tab's ring (runs in the connection's reader: quick, never blocks)."""
        self.network.on_event(event.method, event.params, event.session_id)

    def _on_chooser_event(self, event: CdpEvent) -> None:
        self.on_chooser(event.params, event.session_id or "")

    async def _start(self, session_id: str, iframe: bool, waiting: bool) -> None:
        try:
            if iframe:
                await self._intercept_choosers(session_id)
            if iframe and self.network.recording:
                await self.configure_network(session_id)
        finally:
            if waiting:
                await self.connection.session(session_id).run_if_waiting()

    async def _intercept_choosers(self, session_id: str) -> None:
        """Make one OOPIF report file choosers instead of opening a dialog (best effort)."""
        session = self.connection.session(session_id)
        try:
            with trio.fail_after(SETUP_DEADLINE_S):
                await session.send("Page.enable", {})
                await session.send("Page.setInterceptFileChooserDialog", {"enabled": True})
        except (BrowserdError, trio.TooSlowError) as exc:
            log.info("tab %s: chooser interception of a frame failed: %s", self.target_id,
                     type(exc).__name__)

    async def configure_network(self, session_id: str) -> None:
        """Switch recording on in one OOPIF session, with the tab's controls (best effort).

        Bounded by :data:`SETUP_DEADLINE_S`; errors (the frame went away)
        are logged without values and dropped.
        """
        session = self.connection.session(session_id)
        try:
            with trio.fail_after(SETUP_DEADLINE_S):
                for method, params in self.network.controls.commands():
                    await session.send(method, params)
        except (BrowserdError, trio.TooSlowError) as exc:
            log.info("tab %s: network set-up of a frame failed: %s", self.target_id,
                     type(exc).__name__)

    async def configure_all(self) -> None:
        """Apply the tab's recording and controls to every OOPIF attached now."""
        for session_id in list(self.sessions.values()):
            await self.configure_network(session_id)
