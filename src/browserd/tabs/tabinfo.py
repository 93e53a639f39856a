"""TabInfo: one tab as ``GET /tabs`` lists it (a snapshot of its actor's state).

:meth:`~browserd.tabs.actor.TabActor.info` makes one; the registry lists them
per scope. Plain data, no I/O.
"""

from __future__ import annotations

from typing import Any

import attrs

__all__ = ["TabInfo"]


@attrs.frozen(kw_only=True)
class TabInfo:
    target_id: str
    title: str
    url: str
    type: str
    is_active: bool
    last_focused_at: float | None
    crashed: bool
    broken: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "targetId": self.target_id, "title": self.title, "url": self.url,
            "type": self.type, "isActive": self.is_active, "lastFocusedAt": self.last_focused_at,
        }
        if self.crashed:
            out["crashed"] = True
        if self.broken:
            out["broken"] = True
        return out
