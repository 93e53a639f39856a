"""The event side of a tab's actor: the state its session's events change, and how.

:class:`TabEvents` is the base of :class:`~browserd.tabs.actor.TabActor` (its own
helper: nothing else subclasses or calls into it). Its event task hands each event
of the tab's session here in wire order (:meth:`TabEvents._on_event`, quick, no
I/O): frames, documents, load state and the commit feed go to the
:class:`~browserd.tabs.frames.FrameTracker`, which publishes each record in the
same step; refs and isolated worlds of documents that went away (a frame
navigated or detached) are pruned from the tab's
:class:`~browserd.tabs.state.RefMap` in that step too, so a reader that sees a
commit record sees the refs it made stale already forgotten. Dialogs, console
messages, file choosers, crashes and child targets are kept here as well, and
``tab.navigated``, ``tab.crashed``, ``dialog.*`` and ``console.error`` events go
out to the hub.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

import trio

from ..cdp import CdpConnection, CdpEvent, CdpSession
from ..errors import TargetCrashed
from ..events import EventSink, EventType
from .children import ChildTargets
from .feed import CommitKind
from .frames import FRAME_EVENTS, FrameTracker
from .inflight import InFlight
from .inputstate import InputState
from .netlog import NetworkLog
from .remote import CONSOLE_EVENTS, DialogInfo, console_entry, dialog_info
from .state import ConsoleEntry, ConsoleLog, RefMap

__all__ = ["CONSOLE_EVENT_CHARS", "TabEvents"]

log = logging.getLogger("browserd.tabs.actor")

CONSOLE_EVENT_CHARS = 1000
"""Characters of a console error's text in its ``console.error`` event."""
#: Commit kinds after which a frame's earlier documents (their refs, worlds) are gone.
_REPLACES = frozenset({CommitKind.NEW_DOCUMENT, CommitKind.ERROR_PAGE, CommitKind.RESTORED,
                       CommitKind.DETACHED})


class TabEvents:
    """The state a tab's session events change (see the module docstring)."""

    __slots__ = ("_changed", "_children", "_connection", "_console", "_crashed", "_dialog",
                 "_dialog_opened", "_events", "_frames", "_inflight", "_input", "_network",
                 "_nursery", "_refs", "_session", "_target_id", "_title")

    def __init__(self, connection: CdpConnection, target_id: str, *, title: str, url: str,
                 events: EventSink | None) -> None:
        self._connection = connection
        self._events = events  # tab.navigated/crashed, dialog.*, console.error of this tab
        self._target_id = target_id
        self._title = title
        self._session: CdpSession = connection.session(None)
        self._crashed = False
        self._dialog: DialogInfo | None = None
        self._dialog_opened = trio.Event()
        self._frames = FrameTracker(target_id, url=url)
        self._console = ConsoleLog()
        self._nursery: trio.Nursery | None = None  # the actor's, while it follows events
        self._network = NetworkLog()  # fed by CDP sinks; controls set in the work slot
        self._inflight = InFlight()  # the requests the page waits for (reads settle on it)
        self._children = ChildTargets(connection, target_id=target_id, network=self._network,
                                      on_chooser=self._note_chooser)
        # Recorded into by the ref engine in the work slot; pruned here, on events.
        self._refs = RefMap(alive=self._document_alive)
        self._input = InputState()  # file chooser (events), held keys/buttons (work slot)
        self._changed = trio.Event()

    def mark_crashed(self) -> None:
        """The renderer crashed: calls in flight fail TARGET_CRASHED, ``tab.crashed`` goes out."""
        if self._crashed:
            return
        self._crashed = True
        log.warning("tab %s crashed", self._target_id)
        self._publish(EventType.TAB_CRASHED, url=self._frames.url)
        if self._session.session_id is not None:
            # The session survives a renderer crash (a navigation revives the
            # tab), so only the calls in flight fail; events keep flowing.
            self._connection.fail_calls(self._session.session_id,
                                        TargetCrashed("the tab's renderer crashed"))
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    def _on_network_event(self, event: CdpEvent) -> None:
        """Feed what is in flight and, once capture is on, the network ring (called by the
        connection's reader: quick, never blocks)."""
        if self._inflight.on_event(event.method, event.params, trio.current_time()):
            self._notify()  # nothing in flight any more: reads waiting for it go on
        if self._network.recording:
            self._network.on_event(event.method, event.params)

    async def wait_changed(self) -> None:
        """Wait for the next change of this tab's event state."""
        await self._changed.wait()

    def _on_event(self, event: CdpEvent) -> None:
        """Apply one event of the tab's session (in wire order; quick, no I/O)."""
        method, p = event.method, event.params
        if method in FRAME_EVENTS:
            self._on_frame_event(method, p)
        elif method == "Page.javascriptDialogOpening":
            self._dialog = dialog_info(p)
            self._dialog_opened.set()
            self._publish(EventType.DIALOG_OPENED, dialogType=self._dialog.type,
                          message=self._dialog.message,
                          defaultPrompt=self._dialog.default_prompt)
        elif method == "Page.javascriptDialogClosed":
            self._dialog = None
            self._dialog_opened = trio.Event()
            self._publish(EventType.DIALOG_CLOSED, accepted=bool(p.get("result")))
        elif method in CONSOLE_EVENTS:
            entry = console_entry(method, p, timestamp=time.time())
            if entry is not None:
                self._console.append(entry)
                if entry.level == "error":
                    self._publish_console_error(entry)
        elif method == "Page.fileChooserOpened":
            self._note_chooser(p, None)
        elif method == "Inspector.targetCrashed":
            self.mark_crashed()
        elif method == "Inspector.targetReloadedAfterCrash":
            self._crashed = False
        elif method == "Target.attachedToTarget":
            self._children.attached(p, self._nursery)
        elif method == "Target.detachedFromTarget":
            self._child_detached(str(p.get("sessionId", "")))
        self._notify()

    def _on_frame_event(self, method: str, p: Mapping[str, Any]) -> None:
        frames = self._frames
        navigations = frames.navigations
        record = frames.apply(method, p)
        if record is None:
            return
        if record.kind in _REPLACES:
            self._refs.prune([(None, record.frame_id)] if not record.main_frame else None)
        if not record.main_frame or not record.kind.commits:
            return
        if frames.navigations != navigations:
            self._input.forget_chooser()
            self._publish(EventType.TAB_NAVIGATED, url=frames.url)
        elif record.same_document:
            self._publish(EventType.TAB_NAVIGATED, url=frames.url, sameDocument=True)

    def _child_detached(self, session_id: str) -> None:
        """A child target's session ended: its frame's documents, refs and worlds are gone."""
        frames = [f for f, sid in self._children.sessions.items() if sid == session_id]
        self._children.detached(session_id)
        self._input.forget_session(session_id)
        for frame_id in frames:
            self._frames.child_detached(frame_id)
        if frames:
            self._refs.prune()  # (every frame the session held: rare enough to check all)

    def _document_alive(self, session_id: str | None, frame_id: str, loader_id: str) -> bool:
        """Is this the frame's current document? (in-process: its loaderId; an OOPIF: its
        session is still attached)."""
        if session_id is None:
            return self._frames.loaders.get(frame_id) == loader_id
        return session_id in self._children.sessions.values()

    def _note_chooser(self, p: dict[str, Any], session_id: str | None) -> None:
        if self._input.note_opened(p, session_id):
            self._notify()

    def _publish(self, event_type: EventType, **data: Any) -> None:
        if self._events is not None:
            self._events.publish(event_type, target_id=self._target_id, **data)

    def _publish_console_error(self, entry: ConsoleEntry) -> None:
        self._publish(EventType.CONSOLE_ERROR, text=entry.text[:CONSOLE_EVENT_CHARS],
                      source=entry.source, url=entry.url, line=entry.line)
