"""TabActor: one per page target. Owns the tab's session, event state and work queue.

Work on one tab is serialised through :meth:`TabActor.work` (a bounded queue: when
``queue_limit`` requests already wait, the next gets 429 TAB_BUSY at once); different
tabs run in parallel. The actor's event task keeps the tab's state current: main-frame
document (loaderId), load state, the open JavaScript dialog, a console ring buffer and
crash status. What is in flight (:class:`~browserd.tabs.inflight.InFlight`) and the
network ring (:class:`~browserd.tabs.netlog.NetworkLog`) are fed by a CDP sink straight
from the connection's reader. Child targets (OOPIFs, workers) start paused;
:class:`~browserd.tabs.children.ChildTargets` sets each up and resumes it, so an OOPIF
records and obeys the tab's network controls from its first request.

Floods (F18): console events (:data:`DROPPABLE_EVENTS`) queue apart from the others; an
actor behind by more than 1000 of them loses the oldest, counted in the console's
``dropped``, while navigations, lifecycle, dialogs, crashes and detaches keep their own
room. An actor that ends other than by :meth:`TabActor.close` leaves its tab TAB_BROKEN
(closable), never BROWSER_GONE.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import trio

from ..cdp import CdpConnection, CdpEvent, CdpSession, Subscription
from ..cdp.connection import PendingReply
from ..errors import (
    BrowserdError,
    BrowserGone,
    BrowserUnresponsive,
    DialogOpen,
    TabBroken,
    TabBusy,
    TargetCrashed,
    unwrap_group,
)
from ..events import EventSink, EventType
from .children import AUTO_ATTACH, ChildTargets
from .inflight import InFlight
from .inputstate import InputState
from .netlog import NETWORK_ENABLE, NETWORK_EVENTS, NETWORK_QUIET, NetworkLog
from .remote import CONSOLE_EVENTS, DialogInfo, console_entry, dialog_info
from .state import NO_EMULATION, ConsoleEntry, ConsoleLog, Emulation, LoadState, RefMap
from .tabinfo import TabInfo

__all__ = ["DROPPABLE_EVENTS", "DROPPABLE_QUEUE", "EVENT_BUFFER", "DialogInfo", "TabActor",
           "TabInfo"]

if TYPE_CHECKING:
    from .navguard import NavGuard

log = logging.getLogger(__name__)
T = TypeVar("T")

_EVENTS = frozenset({
    "Page.javascriptDialogOpening", "Page.javascriptDialogClosed", "Page.frameNavigated",
    "Page.navigatedWithinDocument", "Page.lifecycleEvent", "Page.loadEventFired",
    "Page.domContentEventFired", "Page.frameStartedLoading", "Page.frameDetached",
    "Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Inspector.targetCrashed",
    "Inspector.detached", "Target.attachedToTarget", "Target.detachedFromTarget",
    "Runtime.executionContextsCleared", "Log.entryAdded", "Inspector.targetReloadedAfterCrash",
    "Page.fileChooserOpened",
})
#: What an actor that is behind may lose, oldest first (counted in the console's ``dropped``):
#: at most DROPPABLE_QUEUE of them wait, apart from the EVENT_BUFFER other (essential) events.
DROPPABLE_EVENTS = CONSOLE_EVENTS | {"Log.entryAdded"}
EVENT_BUFFER, DROPPABLE_QUEUE = 5000, 1000
#: Characters of a console error's text in its ``console.error`` event.
CONSOLE_EVENT_CHARS = 1000
#: What may still be sent to a crashed tab: a navigation brings its renderer back.
_CRASH_RECOVERY = frozenset({"Page.navigate", "Page.reload"})


class TabActor:
    """Handle to one tab. Created and started by the TabRegistry."""

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
        self.connection = connection
        self._events = events  # tab.navigated/crashed, dialog.*, console.error of this tab
        self.target_id = target_id
        self.title = title
        self.url = url
        self.session: CdpSession = connection.session(None)
        self.last_focused_at: float | None = None
        self.crashed = False
        self.closed = False
        self.broken: str | None = None  # why the actor ended, its tab not closed: TAB_BROKEN
        self.dialog: DialogInfo | None = None
        self.dialog_opened = trio.Event()
        self.main_frame_id: str = target_id
        self.loader_id: str | None = None
        self._lifecycle: dict[str, LoadState] = {}  # main-frame loaderId -> its load state
        self.frame_loaders: dict[str, str] = {}
        self.console = ConsoleLog()
        self.navigations = 0
        self._nursery: trio.Nursery | None = None
        self.refs = RefMap()  # changed by the ref engine, in this tab's work slot
        self.input = InputState()  # file chooser (events), held keys/buttons (work slot)
        self.emulation: Emulation = NO_EMULATION  # replaced through note_emulation
        self.network = NetworkLog()  # fed by CDP sinks; controls set in the work slot
        self.inflight = InFlight()  # the requests the page waits for (reads settle on it)
        self.children = ChildTargets(connection, target_id=target_id, network=self.network,
                                     on_chooser=self._note_chooser)
        self.child_sessions = self.children.sessions  # OOPIF id -> session id (read-only)
        self._network_capture = network_capture
        self._queue_limit = queue_limit
        self._waiting = 0
        self._lock = trio.Lock()
        self.headless_viewport = headless_viewport
        self._changed = trio.Event()
        self._cancel_scope = trio.CancelScope()
        self._enabled = trio.Event()
        #: The connection's navigation guard (read-only here): what it blocked on this tab.
        self.navguard = navguard

    # -- lifecycle -----------------------------------------------------------

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
            result = await self.connection.send(
                "Target.attachToTarget", {"targetId": self.target_id, "flatten": True}
            )
            self.session = self.connection.session(result["sessionId"])
            events = self.session.subscribe(_EVENTS, buffer=EVENT_BUFFER,
                                            droppable=DROPPABLE_EVENTS,
                                            droppable_limit=DROPPABLE_QUEUE)
            # Network events come in bursts (~5 per request): they update the ring
            # straight from the reader, with no channel or task switch per event.
            network = self.connection.add_sink(self.session.session_id, NETWORK_EVENTS,
                                               self._on_network_event)
            try:
                pending = await self._post_enables()
                task_status.started(self)
                try:
                    async with trio.open_nursery() as nursery:
                        self._nursery = nursery
                        nursery.start_soon(self._finish_enable, pending)
                        await self._follow(events)
                        nursery.cancel_scope.cancel()
                    self._broke(None)
                except* Exception as group:
                    # One tab's failure (e.g. its essential events overflowed) ends
                    # that tab's actor only, never the browser's subtree.
                    self._broke(group.exceptions[0])
            finally:
                self.connection.unsubscribe(events)
                self._nursery = None
                self.connection.remove_sink(network)
                self.children.close()
                self.closed = True
                self._enabled.set()
                self._notify()
            if self.broken is not None and self.session.session_id is not None:
                # No more events for a broken tab; its calls in flight fail TAB_BROKEN.
                await self.connection.detach_session(self.session.session_id,
                                                     self._broken_error())

    async def _post_enables(self) -> dict[str, PendingReply]:
        calls: list[tuple[str, dict[str, Any]]] = [
            ("Page.enable", {}),
            ("Page.setLifecycleEventsEnabled", {"enabled": True}),
            ("Runtime.enable", {}),
            ("Inspector.enable", {}),
            ("Emulation.setFocusEmulationEnabled", {"enabled": True}),
            # No native file dialog ever opens: Page.fileChooserOpened instead (uploads).
            ("Page.setInterceptFileChooserDialog", {"enabled": True}),
            # Frames and workers start paused until self.children resumes them,
            # so an OOPIF's network set-up lands before its first request.
            ("Target.setAutoAttach", dict(AUTO_ATTACH)),
            ("Page.getFrameTree", {}),
            ("Runtime.evaluate", {"expression": "document.readyState", "returnByValue": True}),
            # Always on (what is in flight); the ring records once capture is on.
            ("Network.enable", dict(NETWORK_ENABLE if self._network_capture else NETWORK_QUIET)),
        ]
        if self._network_capture:
            self.network.mark_recording(time.time())
        metrics = self.device_metrics()
        if metrics is not None:
            calls.append(("Emulation.setDeviceMetricsOverride", metrics))
        return {method: await self.session.post(method, params) for method, params in calls}

    async def _finish_enable(self, pending: dict[str, PendingReply]) -> None:
        try:
            with trio.fail_after(10):
                results = {method: await reply.result() for method, reply in pending.items()}
        except (BrowserdError, trio.TooSlowError) as exc:
            log.info("tab %s: enabling failed: %s", self.target_id, exc)
            self._enabled.set()
            return
        frame = results["Page.getFrameTree"]["frameTree"]["frame"]
        self.main_frame_id = frame["id"]
        if self.loader_id is None:
            self.loader_id = frame.get("loaderId")
            self.url = frame.get("url", self.url)
        self.frame_loaders.setdefault(frame["id"], frame.get("loaderId", ""))
        # The current document's lifecycle events fired before we listened.
        ready = results["Runtime.evaluate"].get("result", {}).get("value")
        if self.loader_id and self.loader_id not in self._lifecycle:
            self._lifecycle[self.loader_id] = (LoadState.from_ready_state(ready)
                                               or LoadState.LOADING)
        self._enabled.set()
        self._notify()

    def _note_chooser(self, p: dict[str, Any], session_id: str | None) -> None:
        if self.input.note_opened(p, session_id):
            self._notify()

    async def wait_enabled(self) -> None:
        """Wait until the tab's domains are enabled (bounded by the enable itself)."""
        await self._enabled.wait()

    async def _follow(self, events: Subscription) -> None:
        """Apply the tab's events in order; what the stream dropped counts as lost console."""
        counted = 0
        async for event in events:
            self._on_event(event)
            if events.dropped != counted:
                self.console.note_lost(events.dropped - counted)
                counted = events.dropped

    def _broke(self, error: BaseException | None) -> None:
        """Record why the actor ended on its own (None: its event stream ended): TAB_BROKEN,
        unless :meth:`close` ended it or the connection is gone (BROWSER_GONE, truly)."""
        if self.closed or self.connection.is_closed:
            return
        self.broken = ("its event stream ended" if error is None else error.message
                       if isinstance(error, BrowserdError) else f"{type(error).__name__}: {error}")
        log.warning("tab %s: actor ended, the tab is broken: %s", self.target_id, self.broken,
                    exc_info=None if error is None or isinstance(error, BrowserdError) else error)

    def _broken_error(self) -> TabBroken:
        return TabBroken(f"tab {self.target_id} stopped following its page ({self.broken}); "
                         "it can only be closed",
                         hint=f"close it (DELETE /tabs/{self.target_id}) and open a new one")

    def _on_network_event(self, event: CdpEvent) -> None:
        """Feed what is in flight and the ring (from the connection's reader: never blocks)."""
        if self.inflight.on_event(event.method, event.params, trio.current_time()):
            self._notify()  # nothing in flight any more: reads waiting for it go on
        if self.network.recording:
            self.network.on_event(event.method, event.params)

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def wait_changed(self) -> None:
        """Wait for the next change of this tab's event state."""
        await self._changed.wait()

    def close(self) -> None:
        """End the actor: pending calls on its session fail, its event task stops."""
        self.closed = True
        if self.session.session_id is not None:
            self.connection.fail_session(self.session.session_id,
                                         BrowserGone("the tab was closed", hint=""))
        self._cancel_scope.cancel()
        self._notify()

    # -- events --------------------------------------------------------------

    def _on_event(self, event: CdpEvent) -> None:
        method, p = event.method, event.params
        if method == "Page.lifecycleEvent":
            # Lifecycle events of a new document can arrive before its
            # frameNavigated, so they are kept per loaderId.
            loader = p.get("loaderId")
            if p.get("frameId") == self.main_frame_id and loader:
                state = self._lifecycle.get(loader, LoadState.LOADING).after(p.get("name"))
                if state is not None:
                    self._lifecycle[loader] = state
                while len(self._lifecycle) > 16:
                    del self._lifecycle[next(iter(self._lifecycle))]
        elif method == "Page.frameNavigated":
            frame = p.get("frame", {})
            self.frame_loaders[frame.get("id", "")] = frame.get("loaderId", "")
            if not frame.get("parentId"):
                self.main_frame_id = frame.get("id", self.main_frame_id)
                navigated = frame.get("loaderId") != self.loader_id
                if navigated:
                    self.loader_id = frame.get("loaderId")
                    self.navigations += 1
                    self.input.forget_chooser()
                if p.get("type") == "BackForwardCacheRestore" and self.loader_id:
                    # A restored document was complete when cached; no lifecycle events follow.
                    self._lifecycle[self.loader_id] = LoadState.LOAD
                self.url = frame.get("url", self.url) + frame.get("urlFragment", "")
                if navigated:
                    self._publish(EventType.TAB_NAVIGATED, url=self.url)
        elif method == "Page.navigatedWithinDocument":
            if p.get("frameId") == self.main_frame_id:
                self.url = p.get("url", self.url)
                self._publish(EventType.TAB_NAVIGATED, url=self.url, sameDocument=True)
        elif method == "Page.frameDetached":
            self.frame_loaders.pop(p.get("frameId", ""), None)
        elif method == "Page.javascriptDialogOpening":
            self.dialog = dialog_info(p)
            self.dialog_opened.set()
            self._publish(EventType.DIALOG_OPENED, dialogType=self.dialog.type,
                          message=self.dialog.message, defaultPrompt=self.dialog.default_prompt)
        elif method == "Page.javascriptDialogClosed":
            self.dialog = None
            self.dialog_opened = trio.Event()
            self._publish(EventType.DIALOG_CLOSED, accepted=bool(p.get("result")))
        elif method in CONSOLE_EVENTS:
            entry = console_entry(method, p, timestamp=time.time())
            if entry is not None:
                self.console.append(entry)
                if entry.level == "error":
                    self._publish_console_error(entry)
        elif method == "Page.fileChooserOpened":
            self._note_chooser(p, None)
        elif method == "Inspector.targetCrashed":
            self.mark_crashed()
        elif method == "Inspector.targetReloadedAfterCrash":
            self.crashed = False
        elif method == "Target.attachedToTarget":
            self.children.attached(p, self._nursery)
        elif method == "Target.detachedFromTarget":
            self.children.detached(str(p.get("sessionId", "")))
            self.input.forget_session(str(p.get("sessionId", "")))
        self._notify()

    @property
    def load_state(self) -> LoadState:
        """LOADING, DOMCONTENTLOADED or LOAD of the current main document."""
        if self.loader_id is None:
            return LoadState.LOADING
        return self._lifecycle.get(self.loader_id, LoadState.LOADING)

    def _publish(self, event_type: EventType, **data: Any) -> None:
        if self._events is not None:
            self._events.publish(event_type, target_id=self.target_id, **data)

    def _publish_console_error(self, entry: ConsoleEntry) -> None:
        self._publish(EventType.CONSOLE_ERROR, text=entry.text[:CONSOLE_EVENT_CHARS],
                      source=entry.source, url=entry.url, line=entry.line)

    def mark_crashed(self) -> None:
        if self.crashed:
            return
        self.crashed = True
        log.warning("tab %s crashed", self.target_id)
        self._publish(EventType.TAB_CRASHED, url=self.url)
        if self.session.session_id is not None:
            # The session survives a renderer crash (a navigation revives the
            # tab), so only the calls in flight fail; events keep flowing.
            self.connection.fail_calls(self.session.session_id,
                                       TargetCrashed("the tab's renderer crashed"))
        self._notify()

    def note_target_info(self, *, title: str | None = None, url: str | None = None) -> None:
        """Take the title/URL Chromium reported for this target (None: keep the current)."""
        if title is not None:
            self.title = title
        if url is not None:
            self.url = url

    def mark_focused(self) -> None:
        """Record that this tab was just brought to the front."""
        self.last_focused_at = time.time()

    def holds_frame(self, frame_id: str) -> bool:
        """True when ``frame_id`` is this page or a frame of it that this actor has seen."""
        return (frame_id in (self.target_id, self.main_frame_id)
                or frame_id in self.frame_loaders or frame_id in self.child_sessions)

    def device_metrics(self) -> dict[str, Any] | None:
        """The ``Emulation.setDeviceMetricsOverride`` params the tab should have, or None
        (:meth:`~browserd.tabs.state.Emulation.device_metrics`)."""
        return self.emulation.device_metrics(self.headless_viewport)

    def note_emulation(self, emulation: Emulation) -> None:
        """Record the emulation the tab now has (sent by :mod:`browserd.tabs.emulation`)."""
        self.emulation = emulation

    def info(self, *, active: bool) -> TabInfo:
        return TabInfo(
            target_id=self.target_id, title=self.title, url=self.url, type="page",
            is_active=active, last_focused_at=self.last_focused_at, crashed=self.crashed,
            broken=self.broken is not None,
        )

    # -- work ----------------------------------------------------------------

    @asynccontextmanager
    async def work(self, *, allow_crashed: bool = False, allow_dialog: bool = True
                   ) -> AsyncIterator[TabActor]:
        """Hold this tab's single work slot.

        Raises TabBusy at once when ``queue_limit`` callers already wait,
        TargetCrashed for a crashed tab (unless allowed), DialogOpen when a
        dialog is open and the work cannot run beside it. Cancellation while
        waiting leaves the queue cleanly.
        """
        if self._waiting >= self._queue_limit:
            raise TabBusy(f"tab {self.target_id} has {self._waiting} requests queued")
        self._waiting += 1
        try:
            await self._lock.acquire()
        finally:
            self._waiting -= 1
        if not self._enabled.is_set():
            try:
                await self._enabled.wait()
            except BaseException:
                self._lock.release()
                raise
        try:
            self.check_usable(allow_crashed=allow_crashed, allow_dialog=allow_dialog)
            yield self
        finally:
            self._lock.release()

    def check_usable(self, *, allow_crashed: bool = False, allow_dialog: bool = True) -> None:
        """Raise why no work can run on the tab now: TabBroken when its actor ended on its
        own, BrowserUnresponsive when the browser hung (for a call that was still queued)."""
        if self.closed:
            if self.broken is not None and not self.connection.is_closed:
                raise self._broken_error()
            if isinstance(cause := self.connection.close_reason, BrowserUnresponsive):
                raise BrowserUnresponsive(cause.message)  # a call queued behind a hang
            raise BrowserGone("the tab was closed", hint="list tabs with GET /tabs")
        if self.crashed and not allow_crashed:
            raise TargetCrashed("the tab's renderer crashed")
        if self.dialog is not None and not allow_dialog:
            raise DialogOpen(
                f"a {self.dialog.type} dialog is open: {self.dialog.message[:200]}",
                dialog=self.dialog.to_json(),
            )

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """One command on the tab's session; fails fast once broken, or crashed (bar navigation)."""
        if self.broken is not None or (self.crashed and method not in _CRASH_RECOVERY):
            self.check_usable()  # TabBroken (the actor ended on its own), TargetCrashed
        return await self.session.send(method, params)

    async def race_dialog(
        self, fn: Callable[[], Awaitable[T]]
    ) -> tuple[T | None, DialogInfo | None]:
        """Run ``fn`` unless a JavaScript dialog opens first.

        A dialog blocks the renderer, so a command that triggered it would
        not answer until it is closed; here the command is abandoned and the
        dialog returned instead. Returns (result, None) or (None, dialog).
        Errors of ``fn`` come out as themselves, not in an exception group.
        """
        if self.dialog is not None:
            return None, self.dialog
        result: list[T] = []
        opened = self.dialog_opened
        try:
            async with trio.open_nursery() as nursery:
                async def run() -> None:
                    result.append(await fn())
                    nursery.cancel_scope.cancel()

                async def watch() -> None:
                    await opened.wait()
                    nursery.cancel_scope.cancel()

                nursery.start_soon(run)
                nursery.start_soon(watch)
        except BaseExceptionGroup as group:
            raise unwrap_group(group) from None
        if result:
            return result[0], None
        if self.dialog is not None:
            return None, self.dialog
        self.check_usable(allow_crashed=True)  # TabBroken if the actor ended meanwhile
        raise BrowserGone("the tab went away during the action")

