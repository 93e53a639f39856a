"""Typed tab state: the load state of a tab's main document.

Changed only by :class:`browserd.tabs.actor.TabActor` (from its event stream);
everyone else reads it.
"""

from __future__ import annotations

import enum

__all__ = ["LoadState"]


class LoadState(enum.StrEnum):
    """How far the main document has loaded; ordered by :attr:`rank`."""

    NONE = "none"
    LOADING = "loading"
    DOMCONTENTLOADED = "domcontentloaded"
    LOAD = "load"

    @property
    def rank(self) -> int:
        """-1 none, 0 loading, 1 DOMContentLoaded, 2 load: "at least X" is ``rank >= X.rank``."""
        return _RANK[self]


_RANK = {LoadState.NONE: -1, LoadState.LOADING: 0, LoadState.DOMCONTENTLOADED: 1,
         LoadState.LOAD: 2}
