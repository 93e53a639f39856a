"""TabActor: one per page target. Owns the tab's session, event state and work queue.

Work on one tab is serialised through :meth:`TabActor.work` (a bounded queue:
when ``queue_limit`` requests already wait, the next gets 429 TAB_BUSY at
once); different tabs run in parallel. The actor's event task keeps the tab's
state current (:class:`~browserd.tabs.tabevents.TabEvents`, its base): frames,
documents, load state and the commit feed
(:class:`~browserd.tabs.frames.FrameTracker`), the open JavaScript dialog, a
console ring buffer and crash status; as frames navigate or detach it prunes
the refs and isolated worlds of documents that went away from the tab's
:class:`~browserd.tabs.state.RefMap`. What is in flight
(:class:`~browserd.tabs.inflight.InFlight`) and the network ring are fed by a CDP sink
straight from the connection's reader. Child targets (OOPIFs, workers) start
paused; :class:`~browserd.tabs.children.ChildTargets` sets each up and resumes
it, so an OOPIF records and obeys the tab's network controls from its first
request.

The state is the actor's own. Others read a frozen
:class:`~browserd.tabs.tabview.TabView` (:meth:`TabActor.view`), ask
:meth:`TabActor.halted` / :meth:`TabActor.check_usable`, follow the commit
feed (:meth:`TabActor.commits_since`, :meth:`TabActor.wait_commit`: ordered as
:mod:`browserd.tabs.feed` guarantees) and change only what the ``note_*`` /
``mark_*`` methods allow; the objects it hands out (``refs``, ``console``,
``input``, ``network``, ``children``) change only through their own methods.

Floods (F18): console events (:data:`DROPPABLE_EVENTS`) queue apart from the
others; an actor behind by more than 1000 of them loses the oldest, counted in
the console's ``dropped``, while navigations, lifecycle, dialogs, crashes and
detaches keep their own room. An actor that ends other than by
:meth:`TabActor.close` leaves its tab TAB_BROKEN (closable), never BROWSER_GONE.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

import trio

from ..cdp import CdpConnection, CdpSession
from ..cdp.connection import PendingReply
from ..errors import (
    BrowserdError,
    BrowserGone,
    BrowserUnresponsive,
    DialogOpen,
    TabBroken,
    TargetCrashed,
)
from ..events import EventSink
from . import tabrun
from .children import ChildTargets
from .feed import CommitRecord
from .inflight import InFlight
from .inputstate import InputState
from .netlog import NETWORK_EVENTS, NetworkLog
from .remote import DialogInfo
from .state import NO_EMULATION, ConsoleLog, Emulation, RefMap
from .tabevents import TabEvents
from .tabinfo import TabInfo
from .tabrun import DROPPABLE_EVENTS, DROPPABLE_QUEUE, EVENT_BUFFER
from .tabview import Halt, TabView
from .workslot import WorkSlot, race_event

__all__ = ["DROPPABLE_EVENTS", "DROPPABLE_QUEUE", "EVENT_BUFFER", "DialogInfo", "TabActor",
           "TabInfo"]

if TYPE_CHECKING:
    from .navguard import NavGuard

log = logging.getLogger(__name__)
T = TypeVar("T")

#: What may still be sent to a crashed tab: a navigation brings its renderer back.
_CRASH_RECOVERY = frozenset({"Page.navigate", "Page.reload"})


class TabActor(TabEvents):
    """Handle to one tab. Created and started by the TabRegistry."""

    __slots__ = ("_broken", "_cancel_scope", "_closed", "_emulation", "_enabled",
                 "_headless_viewport", "_last_focused_at", "_navguard", "_network_capture",
                 "_slot")

    def __init__(
        self,
        connection: CdpConnection,
        target_id: str,
        *,
        title: str = "",
        url: str = "",
        queue_limit: int = 8,
        headless_viewport: tuple[int, int] | None = None,
        navguard: NavGuard | None = None,
        network_capture: bool = False,
        events: EventSink | None = None,
    ) -> None:
        super().__init__(connection, target_id, title=title, url=url, events=events)
        self._last_focused_at: float | None = None
        self._closed = False
        self._broken: str | None = None  # why the actor ended on its own: TAB_BROKEN
        self._emulation: Emulation = NO_EMULATION  # replaced through note_emulation
        self._network_capture = network_capture
        self._slot = WorkSlot(target_id, queue_limit=queue_limit)
        self._headless_viewport = headless_viewport
        self._cancel_scope = trio.CancelScope()
        self._enabled = trio.Event()
        self._navguard = navguard  # the connection's guard: its blocks on this tab

    # -- what others may read ------------------------------------------------------------

    @property
    def target_id(self) -> str:
        return self._target_id

    @property
    def connection(self) -> CdpConnection:
        return self._connection

    @property
    def session(self) -> CdpSession:
        """The tab's own CDP session (the connection's browser session until attached)."""
        return self._session

    @property
    def navguard(self) -> NavGuard | None:
        """The connection's navigation guard (what it blocked on this tab), if any."""
        return self._navguard

    @property
    def main_frame_id(self) -> str:
        return self._frames.main_frame_id

    @property
    def refs(self) -> RefMap:
        """The tab's refs and isolated worlds (recorded by the ref engine, pruned here)."""
        return self._refs

    @property
    def console(self) -> ConsoleLog:
        return self._console

    @property
    def input(self) -> InputState:
        return self._input

    @property
    def network(self) -> NetworkLog:
        return self._network

    @property
    def inflight(self) -> InFlight:
        """The requests the page still waits for (reads settle on it; read-only here)."""
        return self._inflight

    @property
    def children(self) -> ChildTargets:
        return self._children

    @property
    def child_sessions(self) -> Mapping[str, str]:
        """OOPIF frame/target id -> its session id (a live, read-only view)."""
        return MappingProxyType(self._children.sessions)

    @property
    def emulation(self) -> Emulation:
        return self._emulation

    @property
    def headless_viewport(self) -> tuple[int, int] | None:
        return self._headless_viewport

    def view(self) -> TabView:
        """The tab's state now, frozen (see :class:`~browserd.tabs.tabview.TabView`)."""
        frames = self._frames
        return TabView(
            target_id=self._target_id, url=frames.url, title=self._title,
            load_state=frames.load_state, main_frame_id=frames.main_frame_id,
            loader_id=frames.loader_id, navigations=frames.navigations,
            commit_seq=frames.feed.seq, dialog=self._dialog, crashed=self._crashed,
            closed=self._closed, broken=self._broken, last_focused_at=self._last_focused_at)

    def halted(self) -> Halt | None:
        """Why the page makes no progress on its own now (closed, crashed, a dialog), or None."""
        return self.view().halted

    def frame_loader(self, frame_id: str) -> str | None:
        """The loaderId of an in-process frame's current document; None for a frame unknown."""
        return self._frames.loaders.get(frame_id)

    def holds_frame(self, frame_id: str) -> bool:
        """True when ``frame_id`` is this page or a frame of it that this actor has seen."""
        return (frame_id in (self._target_id, self._frames.main_frame_id)
                or frame_id in self._frames.loaders or frame_id in self._children.sessions)

    def commits_since(self, seq: int) -> tuple[CommitRecord, ...]:
        """The commit feed's records after number ``seq`` (a :attr:`TabView.commit_seq`),
        oldest first; ordering as :mod:`browserd.tabs.feed` guarantees."""
        return self._frames.feed.since(seq)

    async def wait_commit(self, *, after: int) -> CommitRecord:
        """The first commit record after number ``after``, once there is one. Unbounded (the
        caller's deadline ends it); a tab that ended publishes no more."""
        return await self._frames.feed.wait(after=after)

    def device_metrics(self) -> dict[str, Any] | None:
        """The ``Emulation.setDeviceMetricsOverride`` params the tab should have, or None
        (:meth:`~browserd.tabs.state.Emulation.device_metrics`)."""
        return self._emulation.device_metrics(self._headless_viewport)

    def info(self, *, active: bool) -> TabInfo:
        """What ``GET /tabs`` lists of this tab (``active``: it is its scope's current tab)."""
        return self.view().info(active=active)

    # -- what others may change ----------------------------------------------------------

    def note_target_info(self, *, title: str | None = None, url: str | None = None) -> None:
        """Take the title/URL Chromium reported for this target (None: keep the current)."""
        if title is not None:
            self._title = title
        if url is not None:
            self._frames.note_url(url)

    def mark_focused(self) -> None:
        """Record that this tab was just brought to the front."""
        self._last_focused_at = time.time()

    def note_emulation(self, emulation: Emulation) -> None:
        """Record the emulation the tab now has (sent by :mod:`browserd.tabs.emulation`)."""
        self._emulation = emulation

    def close(self) -> None:
        """End the actor: pending calls on its session fail, its event task stops."""
        self._closed = True
        if self._session.session_id is not None:
            self._connection.fail_session(self._session.session_id,
                                          BrowserGone("the tab was closed", hint=""))
        self._cancel_scope.cancel()
        self._notify()

    # -- lifecycle -----------------------------------------------------------------------

    async def run(
        self, *, task_status: trio.TaskStatus[TabActor] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Attach, enable the domains we need, then follow the tab's events.

        Ready (``started``) once attached and the enable commands are written:
        their replies are awaited in the background, and :meth:`work` waits
        for them, so the enables overlap with whatever the client does next.
        Returns when the actor is closed (or cancelled, or the browser goes);
        raises BrowserGone if attach fails. Once started it never raises: an
        end of any other kind is logged and makes the tab broken (:meth:`_broke`).
        """
        with self._cancel_scope:
            result = await self._connection.send(
                "Target.attachToTarget", {"targetId": self._target_id, "flatten": True})
            self._session = self._connection.session(result["sessionId"])
            events = tabrun.subscribe(self._session)
            # Network events come in bursts (~5 per request): they update the ring
            # straight from the reader, with no channel or task switch per event.
            network = self._connection.add_sink(self._session.session_id, NETWORK_EVENTS,
                                                self._on_network_event)
            try:
                pending = await tabrun.post_enables(
                    self._session, network=self._network if self._network_capture else None,
                    device_metrics=self.device_metrics())
                task_status.started(self)
                try:
                    async with trio.open_nursery() as nursery:
                        self._nursery = nursery
                        nursery.start_soon(self._finish_enable, pending)
                        await tabrun.follow(events, self._on_event, self._console)
                        nursery.cancel_scope.cancel()
                    self._broke(None)
                except* Exception as group:
                    # One tab's failure (e.g. its essential events overflowed) ends
                    # that tab's actor only, never the browser's subtree.
                    self._broke(group.exceptions[0])
            finally:
                self._connection.unsubscribe(events)
                self._nursery = None
                self._connection.remove_sink(network)
                self._children.close()
                self._closed = True
                self._enabled.set()
                self._notify()
            if self._broken is not None and self._session.session_id is not None:
                # No more events for a broken tab; its calls in flight fail TAB_BROKEN.
                await self._connection.detach_session(self._session.session_id,
                                                      self._broken_error())

    async def _finish_enable(self, pending: dict[str, PendingReply]) -> None:
        frame, ready_state = await tabrun.finish_enable(pending, self._target_id)
        if frame is not None:
            # The current document's lifecycle events fired before we listened.
            self._frames.adopt(frame, ready_state)
        self._enabled.set()
        self._notify()

    async def wait_enabled(self) -> None:
        """Wait until the tab's domains are enabled (bounded by the enable itself)."""
        await self._enabled.wait()

    def _broke(self, error: BaseException | None) -> None:
        """Record why the actor ended on its own (None: its event stream ended): TAB_BROKEN.

        Not when :meth:`close` ended it or the connection is gone (BROWSER_GONE, truly).
        """
        if self._closed or self._connection.is_closed:
            return
        self._broken = ("its event stream ended" if error is None else error.message
                        if isinstance(error, BrowserdError)
                        else f"{type(error).__name__}: {error}")
        log.warning("tab %s: actor ended, the tab is broken: %s", self._target_id, self._broken,
                    exc_info=None if error is None or isinstance(error, BrowserdError) else error)

    def _broken_error(self) -> TabBroken:
        return TabBroken(f"tab {self._target_id} stopped following its page ({self._broken}); "
                         "it can only be closed",
                         hint=f"close it (DELETE /tabs/{self._target_id}) and open a new one")

    # -- work ----------------------------------------------------------------------------

    @asynccontextmanager
    async def work(self, *, allow_crashed: bool = False, allow_dialog: bool = True
                   ) -> AsyncIterator[TabActor]:
        """Hold this tab's single work slot (once its domains are enabled).

        Raises TabBusy at once when ``queue_limit`` callers already wait,
        then as :meth:`check_usable` (e.g. TargetCrashed unless allowed,
        DialogOpen when the work cannot run beside a dialog). Cancellation
        while waiting leaves the queue cleanly.
        """
        async with self._slot.hold(self._enabled):
            self.check_usable(allow_crashed=allow_crashed, allow_dialog=allow_dialog)
            yield self

    def check_usable(self, *, allow_crashed: bool = False, allow_dialog: bool = True) -> None:
        """Raise why no work can run on the tab now: TabBroken when its actor ended on its
        own, BrowserUnresponsive when the browser hung (for a call that was still queued),
        BrowserGone when the tab was closed, TargetCrashed (unless allowed), DialogOpen
        (unless allowed)."""
        if self._closed:
            if self._broken is not None and not self._connection.is_closed:
                raise self._broken_error()
            if isinstance(cause := self._connection.close_reason, BrowserUnresponsive):
                raise BrowserUnresponsive(cause.message)  # a call queued behind a hang
            raise BrowserGone("the tab was closed", hint="list tabs with GET /tabs")
        if self._crashed and not allow_crashed:
            raise TargetCrashed("the tab's renderer crashed")
        if self._dialog is not None and not allow_dialog:
            raise DialogOpen(
                f"a {self._dialog.type} dialog is open: {self._dialog.message[:200]}",
                dialog=self._dialog.to_json(),
            )

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """One command on the tab's session; fails fast once broken, or crashed (bar navigation)."""
        if self._broken is not None or (self._crashed and method not in _CRASH_RECOVERY):
            self.check_usable()  # TabBroken (the actor ended on its own), TargetCrashed
        return await self._session.send(method, params)

    async def race_dialog(
        self, fn: Callable[[], Awaitable[T]]
    ) -> tuple[T | None, DialogInfo | None]:
        """Run ``fn`` unless a JavaScript dialog opens first.

        A dialog blocks the renderer, so a command that triggered it would
        not answer until it is closed; here the command is abandoned and the
        dialog returned instead. Returns (result, None) or (None, dialog).
        Errors of ``fn`` come out as themselves, not in an exception group;
        BrowserGone (or TabBroken) when the tab went away meanwhile.
        """
        if self._dialog is not None:
            return None, self._dialog
        finished, result = await race_event(fn, self._dialog_opened)
        if finished:
            return result, None
        if self._dialog is not None:
            return None, self._dialog
        self.check_usable(allow_crashed=True)  # TabBroken if the actor ended meanwhile
        raise BrowserGone("the tab went away during the action")

    async def refusing_dialog(self, fn: Callable[[], Awaitable[T]]) -> T:
        """Run ``fn`` (read-only work), abandoned with DialogOpen if a JavaScript dialog
        opens first or is open (it cannot go on beside one); errors as :meth:`race_dialog`."""
        result, dialog = await self.race_dialog(fn)
        if dialog is not None:
            raise DialogOpen(f"a {dialog.type} dialog is open: {dialog.message[:200]}",
                             dialog=dialog.to_json())
        assert result is not None
        return result
