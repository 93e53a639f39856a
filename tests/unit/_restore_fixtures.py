"""What the tab-restore tests share (tests/unit/test_restore*.py): the crash account
they record against, the CDP events that feed a commit log (a page attached, a
commit on its session), and a listed tab's info."""

from __future__ import annotations

from typing import Any

from browserd.cdp import CdpEvent
from browserd.tabs.actor import TabInfo
from browserd.tabs.commits import CommitLog

__all__ = ["CRASH", "attach", "commit", "feed", "info"]

CRASH = {"at": 1.0, "reason": "killed", "signal": 9, "stderrTail": "boom", "tabsAffected": 3}


def feed(commits: CommitLog, method: str, params: dict[str, Any],
         session: str | None = None) -> None:
    assert commits.wants(CdpEvent(method=method, params=params, session_id=session))
    assert commits.deliver(CdpEvent(method=method, params=params, session_id=session))


def attach(commits: CommitLog, target: str, session: str, context: str = "DEF") -> None:
    feed(commits, "Target.attachedToTarget", {"sessionId": session, "targetInfo": {
        "targetId": target, "type": "page", "browserContextId": context}})


def commit(commits: CommitLog, session: str, url: str, loader: str, *,
           parent: str | None = None, **frame: Any) -> None:
    feed(commits, "Page.frameNavigated", {"frame": {
        "id": "F", "url": url, "loaderId": loader, **({"parentId": parent} if parent else {}),
        **frame}}, session)


def info(target_id: str) -> TabInfo:
    return TabInfo(target_id=target_id, title="", url="https://a.test/", type="page",
                   is_active=False, last_focused_at=None, crashed=False)
