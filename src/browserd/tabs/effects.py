"""What an action causes: navigation, new tabs, a dialog, a file chooser, downloads, blocks.

Events are collected from just before the input until a short settle time
after it (:data:`SETTLE_S`, or longer while a main-frame navigation the
action requested has not committed yet, up to :data:`COMMIT_WAIT_S`). New
tabs are page targets created with this tab as their opener.
``downloads`` are the tab's own ``Page.downloadWillBegin`` events (a
navigation that ends without committing waits :data:`DOWNLOAD_GRACE_S` for
its download); ``blocked`` the requests the navigation guard
(:mod:`browserd.tabs.navguard`) stopped on this tab or on a popup it opened
(a new popup's first request is waited for, ≤ :data:`POPUP_DECIDE_S`).
A popup the guard closed is not in ``newTabs``. ``fileChooser`` is a file
chooser the page opened since the Observer was created and that is still
unanswered (:class:`browserd.tabs.inputstate.FileChooser`).

Navigation comes from the tab's commit feed (:mod:`browserd.tabs.feed`),
read from the mark the Observer took when it was created: the main frame's
requests, commits (a new document, an error page, one restored from the
back/forward cache, or a same-document entry) and stops. The feed's
ordering guarantee means the tab's own state already includes every commit
the Observer reports. ``/navigate`` and history moves
(:mod:`browserd.tabs.history`) watch with :meth:`Observer.watching` while
they wait (:func:`browserd.tabs.navwait.wait_navigation`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

import attrs
import trio

from ..cdp import CdpSession
from ..errors import CdpError, unwrap_group
from .actor import TabActor
from .feed import CommitKind, CommitRecord
from .inputstate import FileChooser
from .pagejs import page_function
from .routing import send_in, session_by_id
from .worlds import world_context

__all__ = [
    "COMMIT_WAIT_S",
    "CONTAIN_GRACE_S",
    "DOWNLOADS_KEPT",
    "DOWNLOAD_GRACE_S",
    "POPUP_DECIDE_S",
    "SETTLE_S",
    "MainFrameSeen",
    "Observer",
    "observing",
    "race",
]

T = TypeVar("T")

SETTLE_S = 0.15
"""How long to watch for effects after an input."""
COMMIT_WAIT_S = 5.0
"""How long to wait, after the settle time, for a requested navigation to commit."""
DOWNLOAD_GRACE_S = 0.5
"""How long effects wait for a download after a navigation ended without committing."""
POPUP_DECIDE_S = 1.0
"""How long effects wait for the navigation guard to judge a new popup's first request."""
CONTAIN_GRACE_S = 0.1
"""On a contained tab (``allowed_origins``), how long effects wait after the page turned
for the requests it made to reach the guard: a request the renderer issued is judged
when the network service pauses it, which no reply on the tab's session is ordered with."""
DOWNLOADS_KEPT = 100
"""At most this many downloads are listed in one action's effects."""

# -- effects ---------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class MainFrameSeen:
    """What the main frame did since an Observer's mark, folded from the commit feed."""

    requested: str | None = None
    """URL of a navigation of the tab that was asked for and has not committed (yet)."""
    commit: CommitRecord | None = None
    """The main frame's last commit."""
    uncommitted: bool = False
    """A requested navigation ended without committing (it may have become a download)."""

    @classmethod
    def fold(cls, records: tuple[CommitRecord, ...]) -> MainFrameSeen:
        requested: str | None = None
        commit: CommitRecord | None = None
        uncommitted = False
        for record in records:
            if not record.main_frame:
                continue
            if record.kind is CommitKind.REQUESTED:
                requested = record.url
            elif record.kind.commits:
                commit, requested = record, None
            elif record.kind is CommitKind.STOPPED:
                if requested is not None and commit is None:
                    uncommitted = True
                requested = None
        return cls(requested=requested, commit=commit, uncommitted=uncommitted)


class Observer:
    """Collects what an action causes: navigation, new tabs, a dialog, a file chooser,
    downloads, blocked requests.

    Created before the input is sent, so nothing is missed: it marks the
    tab's commit feed, and its subscriptions (new targets, downloads) hold
    events in bounded buffers until :meth:`watching` or :meth:`settle` reads them.
    """

    def __init__(self, tab: TabActor) -> None:
        self._tab = tab
        self.mark = tab.view().commit_seq
        """The commit feed's number when the Observer was made: it reports what follows."""
        self._before_choosers = tab.input.choosers_seen
        self.new_tabs: list[str] = []
        self._changed = trio.Event()
        self._targets = tab.connection.subscribe(None, frozenset({"Target.targetCreated"}),
                                                 buffer=256)
        self.downloads: list[dict[str, Any]] = []
        self._download_events = tab.session.subscribe(
            frozenset({"Page.downloadWillBegin"}), buffer=64)
        self._guard_mark = tab.navguard.mark() if tab.navguard is not None else 0

    def seen(self) -> MainFrameSeen:
        """The main frame's requests, commits and stops since :attr:`mark`."""
        return MainFrameSeen.fold(self._tab.commits_since(self.mark))

    @property
    def commit(self) -> CommitRecord | None:
        """The main frame's last commit since :attr:`mark` (None: none yet)."""
        return self.seen().commit

    @property
    def requested(self) -> str | None:
        """URL of a main-frame navigation asked for since :attr:`mark`, not committed yet."""
        return self.seen().requested

    @property
    def uncommitted(self) -> bool:
        """A requested navigation ended without committing (maybe it became a download)."""
        return self.seen().uncommitted

    def close(self) -> None:
        self._tab.connection.unsubscribe(self._targets)
        self._tab.connection.unsubscribe(self._download_events)

    def _poke(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def _pump_targets(self) -> None:
        try:
            async for event in self._targets:
                info = event.params.get("targetInfo", {})
                if (info.get("type") == "page" and info.get("openerId") == self._tab.target_id
                        and info.get("targetId") not in self.new_tabs):
                    self.new_tabs.append(str(info.get("targetId")))
                    self._poke()
        except CdpError:
            return  # fell behind: report what we saw

    async def _pump_downloads(self) -> None:
        try:
            async for event in self._download_events:
                p = event.params
                if len(self.downloads) < DOWNLOADS_KEPT:
                    self.downloads.append({
                        "id": str(p.get("guid", "")), "url": str(p.get("url", "")),
                        "suggestedFilename": str(p.get("suggestedFilename", ""))})
                self._poke()
        except CdpError:
            return

    async def _pump_tab(self) -> None:
        while True:
            await self._tab.wait_changed()
            self._poke()

    async def _until(self, done: Callable[[], bool]) -> None:
        while not done():
            await self._changed.wait()

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator[None]:
        """Read the tab's events into this Observer for the duration of the block.

        Outside such a block (or :meth:`settle`) events wait in their
        bounded buffers. Leaving the block stops reading (nothing is lost:
        the subscriptions stay until :meth:`close`). An error raised in the
        block comes out as itself, not in an exception group.
        """
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._pump_targets)
                nursery.start_soon(self._pump_tab)
                nursery.start_soon(self._pump_downloads)
                try:
                    yield
                finally:
                    nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            raise unwrap_group(group) from None

    async def wait_for(self, done: Callable[[], bool]) -> None:
        """Inside :meth:`watching`: wait until ``done()`` holds (checked at every event
        and tab change). Unbounded: the caller's deadline ends it."""
        await self._until(done)

    async def wait_changed(self) -> None:
        """Inside :meth:`watching`: wait for the next event this Observer reads or the
        next change of the tab's state."""
        await self._changed.wait()

    async def settle(self, quiet_s: float = SETTLE_S) -> dict[str, Any]:
        """Watch until the page turned (:func:`page_turned`: tens of ms) or a commit or
        dialog — at most ``quiet_s`` — then for a pending commit.

        Returns the effects dict. Bounded (``quiet_s`` + :data:`COMMIT_WAIT_S` +
        :data:`DOWNLOAD_GRACE_S` + :data:`CONTAIN_GRACE_S` + :data:`POPUP_DECIDE_S`); cancellation
        simply ends the watch.
        """
        tab = self._tab
        async with self.watching():
            with trio.move_on_after(quiet_s):
                async with trio.open_nursery() as race:
                    async def ended() -> None:
                        await self._until(lambda: self.commit is not None
                                          or tab.halted() is not None)
                        race.cancel_scope.cancel()

                    async def quiet() -> None:
                        # The page has run what the input set off (its handlers, their
                        # microtasks, zero-delay timers): a navigation it started has
                        # been requested by now. A page that never answers (busy) is
                        # waited on for all of quiet_s instead.
                        if await page_turned(tab):
                            race.cancel_scope.cancel()

                    race.start_soon(ended)
                    race.start_soon(quiet)
            if self.requested is not None and tab.view().dialog is None:
                with trio.move_on_after(COMMIT_WAIT_S):
                    await self._until(lambda: self.requested is None or bool(self.downloads)
                                      or tab.halted() is not None)
            if self.uncommitted and not self.downloads and tab.view().dialog is None:
                await self.download_grace()
            if (tab.navguard is not None and self.commit is None and tab.view().dialog is None
                    and tab.navguard.is_contained(tab.target_id)):
                await trio.sleep(CONTAIN_GRACE_S)
            if self.new_tabs and tab.navguard is not None:
                # A popup's first request is judged just after it opens.
                with trio.move_on_after(POPUP_DECIDE_S):
                    await tab.navguard.wait_decided(self.new_tabs)
        return self.effects()

    async def download_grace(self) -> None:
        """Inside :meth:`watching`: a navigation ended without committing; an attachment
        response ends it so, and its download may be reported just after: wait for that
        (≤ :data:`DOWNLOAD_GRACE_S`) or a commit after all."""
        with trio.move_on_after(DOWNLOAD_GRACE_S):
            await self._until(lambda: bool(self.downloads) or self.commit is not None)

    def effects(self) -> dict[str, Any]:
        """The effects seen so far: ``navigated`` (the main frame's last commit since the
        mark) or ``navigationPending``, ``newTabs``, ``dialog``, ``fileChooser``,
        ``downloads``, ``blocked``."""
        tab = self._tab
        view = tab.view()
        seen = self.seen()
        out: dict[str, Any] = {}
        if seen.commit is not None:
            out["navigated"] = seen.commit.url
        elif seen.requested is not None:
            out["navigationPending"] = seen.requested
        guard = tab.navguard
        new_tabs = [t for t in self.new_tabs if guard is None or t not in guard.closed_popups]
        if new_tabs:
            out["newTabs"] = new_tabs
        if view.dialog is not None:
            out["dialog"] = {"type": view.dialog.type, "message": view.dialog.message}
        chooser = self.new_chooser()
        if chooser is not None:
            out["fileChooser"] = chooser.to_json()
        if self.downloads:
            out["downloads"] = list(self.downloads)
        if guard is not None:
            blocked = guard.blocks_since(self._guard_mark, target_id=tab.target_id,
                                         opened_by=self.new_tabs)
            if blocked:
                out["blocked"] = [b.to_json() for b in blocked]
        return out

    def new_chooser(self) -> FileChooser | None:
        """The file chooser opened since the observer was created, if still pending."""
        chooser = self._tab.input.chooser
        if chooser is None or chooser.serial <= self._before_choosers:
            return None
        return chooser


@contextlib.contextmanager
def observing(tab: TabActor) -> Iterator[Observer]:
    """An :class:`Observer` for the duration of the block (unsubscribed on exit)."""
    observer = Observer(tab)
    try:
        yield observer
    finally:
        observer.close()


async def race(tab: TabActor, fn: Callable[[], Awaitable[T]]) -> tuple[T | None, bool]:
    """Run ``fn`` unless a dialog opens first: (result, False) or (None, True).

    Errors from ``fn`` come out as themselves (not in an exception group).
    """
    result, dialog = await tab.race_dialog(fn)
    return result, dialog is not None


_TASK_QUEUE_TURNED = page_function("taskQueueTurned").call()
"""Twice round the page's task queue: handlers, their microtasks and 0 ms timers have run."""


async def page_turned(tab: TabActor) -> bool:
    """Wait until the tab's page — its main frame and every out-of-process frame — has run
    its queued work twice round; False if the main frame cannot say.

    Evaluated in browserd's isolated worlds (the page cannot replace its timers
    there; they share the page's event loop). A CDP error (the document went
    away: a navigation) is False for the main frame, and ignored for a child
    frame that went: the caller keeps watching.
    """
    turned = True

    async def turn(session: CdpSession, frame_id: str, main: bool) -> None:
        nonlocal turned
        try:
            context_id = await world_context(tab, session, frame_id)
            await send_in(tab, session, "Runtime.evaluate",
                          {"expression": _TASK_QUEUE_TURNED, "contextId": context_id,
                           "awaitPromise": True, "returnByValue": True})
        except Exception:  # (any: a best-effort barrier never fails the action)
            if main:
                turned = False

    async with trio.open_nursery() as nursery:
        nursery.start_soon(turn, tab.session, tab.main_frame_id, True)
        for frame_id, session_id in list(tab.child_sessions.items()):
            nursery.start_soon(turn, session_by_id(tab, session_id), frame_id, False)
    return turned
