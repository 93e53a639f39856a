"""ScopeBook: which scope each tab is in, each scope's current tab and the origins it saw.

A scope is a session's browser context (:meth:`ScopeBook.add`), or None for
everything else (the default context, and contexts a CDP gateway client
made). The book remembers each tab's browser context, so a tab of a
session's context is never the default scope's, even after the context was
disposed; each scope's last used tab (the default-tab rule's first choice);
and, per scope, the origins of pages and out-of-process frames seen since the
browser started (GET /state exports their localStorage).

Plain state, no I/O; :class:`~browserd.tabs.registry.TabRegistry` owns one
per connection.
"""

from __future__ import annotations

from typing import Any

from .origins import RecentOrigins, origin_of

__all__ = ["ScopeBook"]


class ScopeBook:
    """The scopes of one browser connection (module docstring)."""

    def __init__(self) -> None:
        # Browser contexts of sessions → the session's id (a label for records).
        self._labels: dict[str, str | None] = {}
        self._context_of: dict[str, str] = {}  # targetId → browserContextId
        self._last_used: dict[str | None, str] = {}
        self._origins: dict[str | None, RecentOrigins] = {}

    # -- scopes ----------------------------------------------------------------

    def add(self, context_id: str, label: str | None = None) -> None:
        """Make ``context_id`` a scope of its own; ``label`` is what :meth:`label_of` says."""
        self._labels[context_id] = label

    def remove(self, context_id: str) -> None:
        """Forget a scope's current tab and origins (its context was disposed).

        The context stays known as a session's, so a tab of it that outlives
        the dispose is never shown to the default scope.
        """
        self._last_used.pop(context_id, None)
        self._origins.pop(context_id, None)

    def scope_of_context(self, context_id: object) -> str | None:
        """The scope of a browser context: itself for a session's, else None (default)."""
        return context_id if isinstance(context_id, str) and context_id in self._labels else None

    def scope_of(self, target_id: str) -> str | None:
        """The scope a tab belongs to (None: the default scope)."""
        return self.scope_of_context(self._context_of.get(target_id))

    def label_of(self, target_id: str) -> str | None:
        """The label (session id) of the scope a tab belongs to; None for the default."""
        scope = self.scope_of(target_id)
        return None if scope is None else self._labels[scope]

    # -- tabs ------------------------------------------------------------------

    def note_context(self, target_id: str, context_id: object) -> None:
        """Record the browser context a tab was created in (ignored unless a string)."""
        if isinstance(context_id, str):
            self._context_of[target_id] = context_id

    def last_used(self, scope: str | None) -> str | None:
        return self._last_used.get(scope)

    def set_last_used(self, scope: str | None, target_id: str | None) -> None:
        if target_id is None:
            self._last_used.pop(scope, None)
        else:
            self._last_used[scope] = target_id

    def forget(self, target_id: str) -> None:
        """The tab is gone: it is no longer its scope's current tab, nor in any context."""
        scope = self.scope_of(target_id)
        if self._last_used.get(scope) == target_id:
            self._last_used.pop(scope, None)
        self._context_of.pop(target_id, None)

    # -- origins ---------------------------------------------------------------

    def remember_origin(self, origin: str, scope: str | None = None) -> None:
        """Note ``origin`` as ``scope``'s most recently used (ignored for a scope not known)."""
        if scope is not None and scope not in self._labels:
            return  # a session's context that is gone
        self._origins.setdefault(scope, RecentOrigins()).remember(origin)

    def note_origin_of(self, info: dict[str, Any]) -> None:
        """Remember the origin of a page's or frame's targetInfo, in its context's scope."""
        if info.get("type") not in ("page", "iframe"):
            return
        origin = origin_of(str(info.get("url", "")))
        if origin is not None:
            self.remember_origin(origin, self.scope_of_context(info.get("browserContextId")))

    def origins_seen(self, scope: str | None = None) -> list[str]:
        """Origins ``scope``'s pages and frames showed or were written, most recent last."""
        seen = self._origins.get(scope)
        return [] if seen is None else seen.listed()
