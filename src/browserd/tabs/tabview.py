"""TabView: a frozen view of one tab's state, and Halt: why its page cannot go on.

:meth:`browserd.tabs.actor.TabActor.view` answers a :class:`TabView` built
from the actor's state at that moment; it never changes afterwards, so a
reader that awaits in between keeps a consistent picture (ask again for a
newer one). Plain records; no I/O.
"""

from __future__ import annotations

import enum

import attrs

from .remote import DialogInfo
from .state import LoadState
from .tabinfo import TabInfo

__all__ = ["Halt", "TabView"]


class Halt(enum.StrEnum):
    """Why a tab's page will make no progress on its own (the first that holds)."""

    CLOSED = "closed"
    """The tab's actor ended: the tab was closed, broke, or the browser went."""
    CRASHED = "crashed"
    """The renderer crashed (a navigation or reload brings it back)."""
    DIALOG = "dialog"
    """A JavaScript dialog is open: it blocks the renderer until it is answered."""


@attrs.frozen(kw_only=True)
class TabView:
    """One tab's state as its actor saw it (see the module docstring)."""

    target_id: str
    url: str
    """The main frame's URL (with its fragment)."""
    title: str
    load_state: LoadState
    """How far the current main document has loaded."""
    main_frame_id: str
    loader_id: str | None
    """The current main document's loaderId (None before the first is known)."""
    navigations: int
    """Main-frame documents committed since the actor started."""
    commit_seq: int
    """The newest commit record's number (:mod:`browserd.tabs.feed`)."""
    dialog: DialogInfo | None
    crashed: bool
    closed: bool
    broken: str | None
    """Why the actor ended while its tab was not closed (TAB_BROKEN); None: it did not."""
    last_focused_at: float | None

    @property
    def halted(self) -> Halt | None:
        """Closed, crashed or a dialog open — in that order —; None when the page can go on."""
        if self.closed:
            return Halt.CLOSED
        if self.crashed:
            return Halt.CRASHED
        return Halt.DIALOG if self.dialog is not None else None

    def info(self, *, active: bool) -> TabInfo:
        """What ``GET /tabs`` lists of the tab (``active``: its scope's current tab)."""
        return TabInfo(target_id=self.target_id, title=self.title, url=self.url, type="page",
                       is_active=active, last_focused_at=self.last_focused_at,
                       crashed=self.crashed, broken=self.broken is not None)
