"""ConsentScope: which pages of the user's own browser are tabs (the live driver).

Only pages the user offered and pages browserd opened on this connection
are attached; the user's other pages are remembered here (their title and
URL: untrusted page data) so that the user can offer one, and never reach
the agent. A new connection gets a new, empty scope: nothing is restored
silently. Plain state, no I/O; :class:`~browserd.tabs.registry.TabRegistry`
owns it and does the attaching.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ConsentScope"]


class ConsentScope:
    """The allowed, browserd-opened and hidden pages of one connection."""

    def __init__(self) -> None:
        #: Offered by the user or opened by browserd: the only pages attached.
        self.allowed: set[str] = set()
        #: Opened by browserd on this connection (the agent may close them).
        self.agent_opened: set[str] = set()
        #: The user's other pages: targetId → targetInfo (untrusted title and URL).
        self.hidden: dict[str, dict[str, Any]] = {}

    def note_opened(self, target_id: str) -> None:
        """browserd opened this page: it is the agent's."""
        self.allowed.add(target_id)
        self.agent_opened.add(target_id)

    def hide(self, info: dict[str, Any]) -> None:
        """File a page as the user's (not attached; listed by :meth:`offerable`)."""
        target_id = str(info["targetId"])
        self.allowed.discard(target_id)
        self.agent_opened.discard(target_id)
        self.hidden[target_id] = info

    def forget(self, target_id: str) -> None:
        """The page is gone from the agent's view (closed, or about to be re-hidden)."""
        self.allowed.discard(target_id)
        self.agent_opened.discard(target_id)
        self.hidden.pop(target_id, None)

    def offerable(self) -> list[dict[str, str]]:
        """The hidden pages as ``{targetId, title, url}``, in the order they were seen."""
        return [{"targetId": target_id, "title": str(info.get("title", "")),
                 "url": str(info.get("url", ""))} for target_id, info in self.hidden.items()]
