"""The relay's records: a tab the user shared, a request waiting for the extension."""

from __future__ import annotations

from typing import Any

import attrs

__all__ = ["PendingRequest", "PinnedTarget"]


@attrs.frozen(kw_only=True)
class PinnedTarget:
    """One tab the user pinned (or the agent created) in the extension's browser."""

    target_id: str
    tab_id: int
    title: str
    url: str
    agent_created: bool

    def target_info(self) -> dict[str, Any]:
        """The tab as a CDP ``TargetInfo``."""
        return {"targetId": self.target_id, "type": "page", "title": self.title,
                "url": self.url, "attached": True, "canAccessOpener": False}


@attrs.frozen(kw_only=True)
class PendingRequest:
    """A request to the extension whose answer becomes a CDP reply."""

    kind: str  # "send" | "create" | "close" | "activate"
    cdp_id: int
    session_id: str | None
    tab_id: int | None
    sent_at: float
