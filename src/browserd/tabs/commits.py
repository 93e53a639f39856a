"""CommitLog: each page's last committed URL, and whether a form POST made it.

What a crashed browser's tabs are reopened at (:mod:`browserd.supervisor.restore`).
A passive tap on the connection (:meth:`CdpConnection.add_tap`): it sees the
events other subscribers asked for, in wire order, from the reader, and only
updates a few dicts (it never blocks, never queues, never raises):

- ``Page.frameNavigated`` of a main frame (no ``parentId``), on any session
  of the page: the commit (URL with its fragment; for an error page the URL
  that failed, ``unreachableUrl``). Its ``loaderId`` makes a copy of the same
  commit on another session (a CDP gateway client's) a no-op;
- ``Page.navigatedWithinDocument`` of the main frame: the URL changes, the
  document (and so its POST mark) stays;
- ``Fetch.requestPaused`` of the main frame's document, on the navigation
  guard's session (:mod:`browserd.tabs.navguard` pauses every document
  request, each redirect hop apart): the method of the last one before a
  commit says whether the committed document answered a POST. A POST
  answered by a redirect (POST → 303 → GET) ends in a GET, so it is not
  marked. Without a guard (no URL policy) nothing is marked;
- ``Target.attachedToTarget`` (which session is which page, and its browser
  context), ``Target.detachedFromTarget``, ``Target.targetDestroyed``.

A page restored from the back/forward cache commits without a request and
is never marked, even if its document once answered a POST. The default
browser context's id (:meth:`CommitLog.learn_default_context`) tells the
default context's pages from those of contexts a CDP gateway client made.
"""

from __future__ import annotations

import logging
from typing import Any

import attrs
import trio

from ..cdp import CdpConnection, CdpEvent, Subscription
from ..errors import BrowserdError

__all__ = ["COMMIT_EVENTS", "Commit", "CommitLog"]

log = logging.getLogger(__name__)

COMMIT_EVENTS = frozenset({
    "Page.frameNavigated", "Page.navigatedWithinDocument", "Fetch.requestPaused",
    "Target.attachedToTarget", "Target.detachedFromTarget", "Target.targetDestroyed",
})
#: Bound on asking the browser for its default context's id.
LEARN_DEADLINE_S = 5.0


@attrs.frozen(kw_only=True)
class Commit:
    """A page's last committed main-frame document."""

    url: str
    post: bool = False
    """Its document answered a POST (a form submission's result page)."""
    loader_id: str = ""


class CommitLog(Subscription):
    """The commits of one connection's pages (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__("commit-log", COMMIT_EVENTS, 1)
        self._page_of: dict[str, str] = {}  # sessionId -> targetId (pages only)
        self._context_of: dict[str, str] = {}  # targetId -> browserContextId
        self._method: dict[str, str] = {}  # targetId -> method of its last document request
        self._commits: dict[str, Commit] = {}
        self._targets: dict[str, None] = {}  # pages seen attached, in order
        self.default_context: str | None = None

    @classmethod
    def tapping(cls, connection: CdpConnection) -> CommitLog:
        """A log fed by ``connection`` from now on (register it before any page attaches)."""
        log_ = cls()
        connection.add_tap(log_)
        return log_

    async def learn_default_context(self, connection: CdpConnection) -> None:
        """Ask the browser its default context's id (bounded; on failure it stays unknown)."""
        with trio.move_on_after(LEARN_DEADLINE_S):
            try:
                reply = await connection.send("Target.getBrowserContexts")
            except BrowserdError as exc:
                log.info("no default browser context id: %s", exc.message)
                return
            default = reply.get("defaultBrowserContextId")
            self.default_context = default if isinstance(default, str) else None

    # -- questions -------------------------------------------------------------------------

    def targets(self) -> list[str]:
        """Every page seen attached and not destroyed, oldest first."""
        return list(self._targets)

    def commit_of(self, target_id: str) -> Commit | None:
        return self._commits.get(target_id)

    def in_default_context(self, target_id: str) -> bool:
        """False only for a page known to be of another context than the default one."""
        context = self._context_of.get(target_id)
        return self.default_context is None or context in (None, self.default_context)

    # -- the tap ---------------------------------------------------------------------------

    def wants(self, event: CdpEvent) -> bool:
        return event.method in COMMIT_EVENTS

    def deliver(self, event: CdpEvent) -> bool:
        try:
            self._apply(event.method, event.params, event.session_id)
        except Exception:  # a bug here must never break the connection's reader
            log.exception("commit log: %s", event.method)
        return True

    def _apply(self, method: str, p: dict[str, Any], session_id: str | None) -> None:
        if method == "Target.attachedToTarget":
            info = p.get("targetInfo") or {}
            if info.get("type") == "page" and isinstance(p.get("sessionId"), str):
                self._page_of[p["sessionId"]] = str(info.get("targetId", ""))
                self._targets[str(info.get("targetId", ""))] = None
                if isinstance(info.get("browserContextId"), str):
                    self._context_of[str(info.get("targetId", ""))] = info["browserContextId"]
            return
        if method == "Target.detachedFromTarget":
            self._page_of.pop(str(p.get("sessionId", "")), None)
            return
        if method == "Target.targetDestroyed":
            gone = str(p.get("targetId", ""))
            for table in (self._context_of, self._method, self._commits, self._targets):
                table.pop(gone, None)
            return
        target = self._page_of.get(session_id or "")
        if target is None:
            return
        if method == "Fetch.requestPaused":
            if p.get("resourceType") == "Document" and p.get("frameId") == target:
                self._method[target] = str((p.get("request") or {}).get("method", "GET"))
        elif method == "Page.frameNavigated":
            frame = p.get("frame") or {}
            if frame.get("parentId"):
                return
            loader = str(frame.get("loaderId", ""))
            before = self._commits.get(target)
            if before is not None and loader and before.loader_id == loader:
                return  # the same commit, seen on another session of the page
            url = str(frame.get("unreachableUrl") or (
                str(frame.get("url", "")) + str(frame.get("urlFragment", ""))))
            post = self._method.pop(target, "GET").upper() == "POST"
            self._commits[target] = Commit(url=url, post=post, loader_id=loader)
        elif method == "Page.navigatedWithinDocument":
            before = self._commits.get(target)
            if p.get("frameId") == target and before is not None:
                self._commits[target] = attrs.evolve(before, url=str(p.get("url", before.url)))
