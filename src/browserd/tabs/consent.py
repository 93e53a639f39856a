"""ConsentScope: which pages of the user's own browser are tabs (the live driver).

Only pages the user offered and pages browserd opened on this connection
are attached; the user's other pages are remembered here (their title and
URL: untrusted page data) so that the user can offer one, and never reach
the agent. A new connection gets a new, empty scope: nothing is restored
silently. Plain state, no I/O; :class:`~browserd.tabs.registry.TabRegistry`
owns it and does the attaching: it asks :meth:`ConsentScope.admits` of every
page discovered, :meth:`ConsentScope.take_offered` when the user offers one
and :meth:`ConsentScope.check_closable` before closing a tab.
"""

from __future__ import annotations

from typing import Any

from ..errors import NotAgentTab, TabNotFound

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

    def admits(self, info: dict[str, Any]) -> bool:
        """Whether a discovered page may be attached; a page of the user's is hidden instead."""
        target_id = str(info["targetId"])
        if target_id in self.allowed:
            return True
        self.hidden[target_id] = info  # the user's: never attached unless offered
        return False

    def take_offered(self, target_id: str) -> dict[str, Any]:
        """The user offered a hidden page: allow it; its targetInfo, to attach.

        Raises TabNotFound when no such page is waiting to be offered.
        """
        info = self.hidden.pop(target_id, None)
        if info is None:
            raise TabNotFound(f"no page {target_id!r} of the user's is open",
                              hint="`browserd offer` lists the pages that can be offered")
        self.allowed.add(target_id)
        return info

    def take_opened(self, target_id: str) -> dict[str, Any] | None:
        """browserd's own new page, if discovery reported (and hid) it before the reply."""
        return self.hidden.pop(target_id, None)

    def note_info(self, info: dict[str, Any]) -> bool:
        """Keep a hidden page's new title and URL; False when the page is not hidden."""
        target_id = info.get("targetId")
        if target_id not in self.hidden:
            return False
        self.hidden[str(target_id)] = info
        return True

    def check_closable(self, target_id: str) -> None:
        """Raises NotAgentTab unless browserd opened the page (the user's are never closed)."""
        if target_id not in self.agent_opened:
            raise NotAgentTab(f"tab {target_id} is the user's: browserd never closes it")

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
