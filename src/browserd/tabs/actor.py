"""TabActor: one per page target. Owns the tab's session, event state and work queue.

Work on one tab is serialised through :meth:`TabActor.work` (a bounded
queue: when ``queue_limit`` requests already wait, the next gets 429
TAB_BUSY at once); different tabs run in parallel. The actor's event task
keeps the tab's state current: main-frame document (loaderId), load state,
the open JavaScript dialog, a console ring buffer and crash status. The
network ring (:class:`~browserd.tabs.netlog.NetworkLog`) is fed by a CDP
sink straight from the connection's reader. Child targets (OOPIFs, workers)
start paused; :class:`~browserd.tabs.children.ChildTargets` sets each up and
resumes it, so an OOPIF records and obeys the tab's network controls from
its first request.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
import trio

from ..cdp import CdpConnection, CdpEvent, CdpSession
from ..cdp.connection import PendingReply
from ..errors import (
    BrowserdError,
    BrowserGone,
    DialogOpen,
    TabBusy,
    TargetCrashed,
    unwrap_group,
)
from ..events import EventSink, EventType
from .children import AUTO_ATTACH, ChildTargets
from .inputstate import InputState
from .netlog import NETWORK_ENABLE, NETWORK_EVENTS, NetworkLog
from .remote import exception_text, remote_text
from .state import NO_EMULATION, ConsoleEntry, ConsoleLog, Emulation, LoadState, RefMap

__all__ = ["DialogInfo", "TabActor", "TabInfo"]

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
#: Characters of a console error's text in its ``console.error`` event.
CONSOLE_EVENT_CHARS = 1000
#: What may still be sent to a crashed tab: a navigation brings its renderer back.
_CRASH_RECOVERY = frozenset({"Page.navigate", "Page.reload"})


@attrs.frozen(kw_only=True)
class TabInfo:
    target_id: str
    title: str
    url: str
    type: str
    is_active: bool
    last_focused_at: float | None
    crashed: bool

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "targetId": self.target_id, "title": self.title, "url": self.url,
            "type": self.type, "isActive": self.is_active, "lastFocusedAt": self.last_focused_at,
        }
        if self.crashed:
            out["crashed"] = True
        return out


@attrs.frozen(kw_only=True)
class DialogInfo:
    type: str
    message: str
    default_prompt: str
    url: str

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "message": self.message, "defaultPrompt": self.default_prompt}


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
        self.children = ChildTargets(connection, target_id=target_id, network=self.network,
                                     on_chooser=self._note_chooser)
        #: OOPIF frame/target id -> session id (kept by ``children``; read-only here).
        self.child_sessions = self.children.sessions
        self._network_capture = network_capture
        self._queue_limit = queue_limit
        self._waiting = 0
        self._lock = trio.Lock()
        self.headless_viewport = headless_viewport
        self._changed = trio.Event()
        self._cancel_scope = trio.CancelScope()
        self._enabled = trio.Event()
        #: The connection's navigation guard (read-only here): what it blocked
        #: on this tab, for /navigate's 403 and the effects of input.
        self.navguard = navguard

    # -- lifecycle -----------------------------------------------------------

    async def run(
        self, *, task_status: trio.TaskStatus[TabActor] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Attach, enable the domains we need, then follow the tab's events.

        Ready (``started``) once attached and the enable commands are written:
        their replies are awaited in the background, and :meth:`work` waits
        for them, so the enables overlap with whatever the client does next.
        Returns when the tab goes away or the actor is closed; raises
        BrowserGone if attach fails.
        """
        with self._cancel_scope:
            result = await self.connection.send(
                "Target.attachToTarget", {"targetId": self.target_id, "flatten": True}
            )
            self.session = self.connection.session(result["sessionId"])
            events = self.session.subscribe(_EVENTS, buffer=5000)
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
                except* BrowserdError as group:
                    # One tab's failure (e.g. its event stream overflowed) ends
                    # that tab's actor only, never the browser's subtree.
                    log.warning("tab %s: actor ended: %s", self.target_id, group.exceptions[0])
            finally:
                self.connection.unsubscribe(events)
                self._nursery = None
                self.connection.remove_sink(network)
                self.children.close()
                self.closed = True
                self._enabled.set()
                self._notify()

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
        ]
        if self._network_capture:
            calls.append(("Network.enable", dict(NETWORK_ENABLE)))
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

    async def _follow(self, events: Any) -> None:
        async for event in events:
            self._on_event(event)

    def _on_network_event(self, event: CdpEvent) -> None:
        """Feed the network ring (called by the connection's reader: quick, never blocks)."""
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
            self.connection.fail_session(
                self.session.session_id, BrowserGone("the tab was closed", hint="")
            )
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
                name = p.get("name")
                current = self._lifecycle.get(loader, LoadState.LOADING)
                if name == "DOMContentLoaded" and current != LoadState.LOAD:
                    self._lifecycle[loader] = LoadState.DOMCONTENTLOADED
                elif name == "load":
                    self._lifecycle[loader] = LoadState.LOAD
                elif name == "init":
                    self._lifecycle[loader] = LoadState.LOADING
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
            self.dialog = DialogInfo(
                type=p.get("type", "alert"), message=str(p.get("message", ""))[:2000],
                default_prompt=str(p.get("defaultPrompt", ""))[:2000], url=p.get("url", ""),
            )
            self.dialog_opened.set()
            self._publish(EventType.DIALOG_OPENED, dialogType=self.dialog.type,
                          message=self.dialog.message, defaultPrompt=self.dialog.default_prompt)
        elif method == "Page.javascriptDialogClosed":
            self.dialog = None
            self.dialog_opened = trio.Event()
            self._publish(EventType.DIALOG_CLOSED, accepted=bool(p.get("result")))
        elif method == "Runtime.consoleAPICalled":
            args = p.get("args", [])
            text = " ".join(remote_text(a) for a in args)[:4000]
            frame = (p.get("stackTrace") or {}).get("callFrames") or [{}]
            entry = ConsoleEntry(
                level=_console_level(p.get("type", "log")), text=text,
                url=frame[0].get("url"), line=frame[0].get("lineNumber"),
                timestamp=time.time(), source="console",
            )
            self.console.append(entry)
            if entry.level == "error":
                self._publish_console_error(entry)
        elif method == "Runtime.exceptionThrown":
            details = p.get("exceptionDetails", {})
            text = exception_text(details, limit=4000, fallback="exception")
            entry = ConsoleEntry(
                level="error", text=text, url=details.get("url"),
                line=details.get("lineNumber"), timestamp=time.time(), source="exception",
            )
            self.console.append(entry)
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
            self.connection.fail_calls(
                self.session.session_id,
                TargetCrashed("the tab's renderer crashed"),
            )
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
        """The ``Emulation.setDeviceMetricsOverride`` params the tab should have, or None.

        The emulated viewport when ``/emulate`` set one, else browserd's own
        headless viewport; None (no override) for a headed tab without one.
        """
        viewport = self.emulation.viewport
        if viewport is not None:
            return {"width": viewport.width, "height": viewport.height,
                    "deviceScaleFactor": viewport.device_scale_factor,
                    "mobile": viewport.mobile}
        if self.headless_viewport is not None:
            width, height = self.headless_viewport
            return {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
        return None

    def note_emulation(self, emulation: Emulation) -> None:
        """Record the emulation the tab now has (sent by :mod:`browserd.tabs.emulation`)."""
        self.emulation = emulation

    def info(self, *, active: bool) -> TabInfo:
        return TabInfo(
            target_id=self.target_id, title=self.title, url=self.url, type="page",
            is_active=active, last_focused_at=self.last_focused_at, crashed=self.crashed,
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
        if self.closed:
            raise BrowserGone("the tab was closed", hint="list tabs with GET /tabs")
        if self.crashed and not allow_crashed:
            raise TargetCrashed("the tab's renderer crashed")
        if self.dialog is not None and not allow_dialog:
            raise DialogOpen(
                f"a {self.dialog.type} dialog is open: {self.dialog.message[:200]}",
                dialog=self.dialog.to_json(),
            )

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """One command on this tab's session, failing fast on crash (navigation excepted)."""
        if self.crashed and method not in _CRASH_RECOVERY:
            raise TargetCrashed("the tab's renderer crashed")
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
        raise BrowserGone("the tab went away during the action")


def _console_level(kind: str) -> str:
    return {"warning": "warn", "assert": "error", "trace": "debug", "dir": "log",
            "table": "log", "count": "log", "timeEnd": "log"}.get(kind, kind)
