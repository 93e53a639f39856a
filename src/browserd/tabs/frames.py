"""FrameTracker: a tab's frames and documents, followed from its session's Page events.

Held by the tab's actor (:class:`~browserd.tabs.actor.TabActor`), whose event
task hands it each ``Page.*`` event in wire order (:meth:`FrameTracker.apply`).
It keeps the main frame's id, current document (loaderId), URL and load
state — lifecycle events of a new document may arrive before its
``frameNavigated``, so they are kept per loaderId — the current document of
every in-process frame, and the tab's commit feed
(:class:`~browserd.tabs.feed.CommitFeed`), to which each commit, request, stop
and detach is published as the event is applied (the feed's ordering
guarantee rests on this: one synchronous step per event).

Plain state; no I/O, no task of its own. Nothing outside the actor writes to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .feed import CommitFeed, CommitKind, CommitRecord
from .state import LoadState

__all__ = ["FRAME_EVENTS", "LIFECYCLES_KEPT", "FrameTracker"]

FRAME_EVENTS = frozenset({
    "Page.lifecycleEvent", "Page.frameNavigated", "Page.navigatedWithinDocument",
    "Page.frameDetached", "Page.frameRequestedNavigation", "Page.frameStartedNavigating",
    "Page.frameStoppedLoading",
})
"""The events :meth:`FrameTracker.apply` follows."""
LIFECYCLES_KEPT = 16
"""Main-frame documents whose load state is remembered (the newest)."""
_REQUESTS = ("Page.frameRequestedNavigation", "Page.frameStartedNavigating")


class FrameTracker:
    """The frames and documents of one tab (see the module docstring)."""

    def __init__(self, target_id: str, *, url: str = "") -> None:
        self.main_frame_id = target_id
        self.loader_id: str | None = None
        self.url = url
        self.navigations = 0
        """Main-frame documents committed (a new loaderId) since the tracker started."""
        self._lifecycle: dict[str, LoadState] = {}  # main-frame loaderId -> its load state
        self._loaders: dict[str, str] = {}  # in-process frame id -> its document's loaderId
        self.feed = CommitFeed()

    # -- questions -------------------------------------------------------------------------

    @property
    def load_state(self) -> LoadState:
        """LOADING, DOMCONTENTLOADED or LOAD of the current main document."""
        if self.loader_id is None:
            return LoadState.LOADING
        return self._lifecycle.get(self.loader_id, LoadState.LOADING)

    @property
    def loaders(self) -> Mapping[str, str]:
        """In-process frame id -> its current document's loaderId (a live, read-only view)."""
        return self._loaders

    # -- changes ---------------------------------------------------------------------------

    def adopt(self, frame: Mapping[str, Any], ready_state: object) -> None:
        """Take the main frame from ``Page.getFrameTree`` (its document unless an event
        already named a newer one) and, for its lifecycle events that fired before the tab
        listened, the document's own ``readyState``."""
        self.main_frame_id = str(frame.get("id", self.main_frame_id))
        if self.loader_id is None:
            self.loader_id = frame.get("loaderId")
            self.url = str(frame.get("url", self.url))
        self._loaders.setdefault(self.main_frame_id, str(frame.get("loaderId", "")))
        if self.loader_id and self.loader_id not in self._lifecycle:
            self._lifecycle[self.loader_id] = (LoadState.from_ready_state(ready_state)
                                               or LoadState.LOADING)

    def note_url(self, url: str) -> None:
        """Take the URL Chromium reported for the target (``Target.targetInfoChanged``)."""
        self.url = url

    def child_detached(self, frame_id: str) -> CommitRecord:
        """An out-of-process child frame's session ended: its ``detached`` record."""
        self._loaders.pop(frame_id, None)
        return self.feed.publish(CommitKind.DETACHED, frame_id=frame_id, main_frame=False,
                                 url="")

    def apply(self, method: str, p: Mapping[str, Any]) -> CommitRecord | None:
        """Apply one event of :data:`FRAME_EVENTS`; the record it published, if any."""
        if method == "Page.lifecycleEvent":
            loader = p.get("loaderId")
            if p.get("frameId") == self.main_frame_id and loader:
                state = self._lifecycle.get(loader, LoadState.LOADING).after(p.get("name"))
                if state is not None:
                    self._lifecycle[loader] = state
                while len(self._lifecycle) > LIFECYCLES_KEPT:
                    del self._lifecycle[next(iter(self._lifecycle))]
            return None
        if method == "Page.frameNavigated":
            return self._navigated(p.get("frame") or {}, p.get("type"))
        frame_id = str(p.get("frameId", ""))
        main = frame_id == self.main_frame_id
        if method == "Page.navigatedWithinDocument":
            url = str(p.get("url", ""))
            if main:
                self.url = url or self.url
            return self.feed.publish(CommitKind.SAME_DOCUMENT, frame_id=frame_id,
                                     main_frame=main, url=url,
                                     loader_id=self._loaders.get(frame_id))
        if method == "Page.frameDetached":
            self._loaders.pop(frame_id, None)
            if main:
                return None  # (the page itself: the tab is going)
            return self.feed.publish(CommitKind.DETACHED, frame_id=frame_id, main_frame=False,
                                     url="")
        if not main:
            return None
        if method in _REQUESTS:
            if p.get("disposition", "currentTab") != "currentTab":
                return None  # a new tab or window: not this frame's navigation
            return self.feed.publish(CommitKind.REQUESTED, frame_id=frame_id, main_frame=True,
                                     url=str(p.get("url", "")))
        if method == "Page.frameStoppedLoading":
            return self.feed.publish(CommitKind.STOPPED, frame_id=frame_id, main_frame=True,
                                     url=self.url)
        return None

    def _navigated(self, frame: Mapping[str, Any], how: object) -> CommitRecord:
        frame_id, loader = str(frame.get("id", "")), str(frame.get("loaderId", ""))
        url = str(frame.get("url", "")) + str(frame.get("urlFragment", ""))
        self._loaders[frame_id] = loader
        kind = (CommitKind.RESTORED if how == "BackForwardCacheRestore"
                else CommitKind.ERROR_PAGE if frame.get("unreachableUrl")
                else CommitKind.NEW_DOCUMENT)
        main = not frame.get("parentId")
        if main:
            self.main_frame_id = frame_id or self.main_frame_id
            if loader != self.loader_id:
                self.loader_id = loader
                self.navigations += 1
            if kind is CommitKind.RESTORED and self.loader_id:
                # A restored document was complete when cached; no lifecycle events follow.
                self._lifecycle[self.loader_id] = LoadState.LOAD
            self.url = url if frame.get("url") is not None else self.url
        return self.feed.publish(kind, frame_id=frame_id, main_frame=main, url=url,
                                 loader_id=loader)
