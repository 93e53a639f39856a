"""DownloadFollower: keeps one browser connection's downloads inside browserd.

Per browser connection (started by the supervisor's attempt, before the
tab registry): every browser context gets ``Browser.setDownloadBehavior
{behavior: "allowAndName", downloadPath: <data>/downloads/<profile>/,
eventsEnabled: true}`` — the default context at start, a context a gateway
client creates before the client learns its id
(:meth:`DownloadFollower.confine_context`), any other context the first time
one of its pages appears (the navigation guard calls
:meth:`DownloadFollower.ensure_context` before it resumes a new page, so a
page cannot start a download first). With ``downloads_enabled = false`` the
behavior is ``deny``. Without this, Chromium writes downloads to
``~/Downloads`` under the page's filename.

Chromium keeps one behavior per context (the last one set wins) and resets
a context to its default — ``~/Downloads`` — when the CDP session that last
set it detaches. A gateway client may set it too (into this directory only,
see :mod:`browserd.gateway.client`); when such a session goes,
:meth:`DownloadFollower.restore` sets browserd's behavior again on every
context it knows.

``allowAndName`` names each file by its GUID, so a suggested name like
``../.bashrc`` is only data. ``Browser.downloadWillBegin`` /
``Browser.downloadProgress`` (browser-level events) update the
:class:`~browserd.downloads.store.DownloadStore`:

- larger than ``download_max_bytes`` (by ``totalBytes``, or by
  ``receivedBytes`` when the size is unknown, or at completion):
  ``Browser.cancelDownload``, the partial file deleted, ``canceled`` /
  ``too_large``;
- ``totalBytes`` larger than the free space of the downloads directory, or
  a download the browser ended while the disk was (nearly) full (see
  :meth:`DownloadFollower._canceled_by_browser`): ``canceled`` /
  ``no_space``, partial file deleted;
- completed: the file is ``<dir>/<guid>``; retention runs.

Every CDP call has a deadline; a failure is logged and the download is still
marked (a cancel that failed leaves the record ``canceled`` and the file
deleted when the browser reports its end). Cancellation of :meth:`run` stops
following; the store keeps what it has.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

import trio

from ..cdp import CdpConnection
from ..errors import BrowserdError, CdpError, Timeout
from .store import GUID_RE, CancelReason, DownloadState, DownloadStore

__all__ = ["CALL_DEADLINE_S", "CONTEXTS_KEPT", "DownloadFollower", "free_bytes"]

log = logging.getLogger(__name__)

CALL_DEADLINE_S = 5.0
#: Browser contexts whose behavior the follower remembers (and restores).
CONTEXTS_KEPT = 1000
NO_SPACE_MARGIN = 1024 * 1024
_EVENTS = frozenset({"Browser.downloadWillBegin", "Browser.downloadProgress"})


def free_bytes(directory: os.PathLike[str] | str) -> int:
    """Bytes an unprivileged writer may still use on ``directory``'s filesystem."""
    st = os.statvfs(directory)
    return st.f_bavail * st.f_frsize


class DownloadFollower:
    """Handle to one connection's download follower; run :meth:`run` in a nursery."""

    def __init__(
        self, connection: CdpConnection, store: DownloadStore, *,
        locate: Callable[[str], str | None] | None = None,
        free_space: Callable[[], int] | None = None,
    ) -> None:
        self.connection = connection
        self.store = store
        self._locate = locate
        self._session_of: Callable[[str], str | None] | None = None
        self._free_space = free_space or (lambda: free_bytes(store.directory))
        self._contexts: set[str | None] = set()
        self._context_of_target: dict[str, str] = {}
        self._cancelling: set[str] = set()
        self._free_at_begin: dict[str, int] = {}
        self._nursery: trio.Nursery | None = None

    @property
    def _behavior(self) -> dict[str, Any]:
        if not self.store.enabled:
            return {"behavior": "deny"}
        return {"behavior": "allowAndName", "downloadPath": str(self.store.directory),
                "eventsEnabled": True}

    def locate_tabs_with(self, locate: Callable[[str], str | None], *,
                         session_of: Callable[[str], str | None] | None = None) -> None:
        """Name the tab of each new download by ``locate(frameId)`` (the tab registry's),
        and its session by ``session_of(targetId)`` (None: the tab is in no session)."""
        self._locate = locate
        self._session_of = session_of

    async def ensure_context(self, target_info: dict[str, Any]) -> None:
        """Set the download behavior of ``target_info``'s browser context once (bounded).

        Raises BrowserdError (Timeout after 5 s) if the browser refuses or does not
        answer; the navigation guard then closes the new page rather than let
        it download into ``~/Downloads``.
        """
        context = target_info.get("browserContextId") or None
        target_id = target_info.get("targetId")
        if context and target_id:
            self._context_of_target[str(target_id)] = str(context)
            if len(self._context_of_target) > 10000:
                self._context_of_target.clear()
        if context in self._contexts:
            return
        await self._set_behavior(None if context is None else str(context))

    async def confine_context(self, context_id: str) -> None:
        """Set the behavior of a context just created (a gateway client's), before its use.

        Raises BrowserdError (Timeout after 5 s) like :meth:`ensure_context`.
        """
        await self._set_behavior(context_id)

    async def restore(self) -> None:
        """Set browserd's behavior again on every context it set (bounded, never raises).

        For after a CDP session that also set a behavior detached (Chromium
        then resets the contexts that session set to ``~/Downloads``). A
        context the browser no longer knows is forgotten.
        """
        for context in list(self._contexts):
            try:
                await self._set_behavior(context)
            except CdpError as exc:
                log.debug("downloads: context %s is gone (%s)", context, exc.message)
                self._contexts.discard(context)
            except BrowserdError as exc:  # the browser is gone or not answering
                log.warning("downloads: could not restore the behavior of context %s: %s",
                            context or "default", exc.message)
                return

    async def _set_behavior(self, context: str | None) -> None:
        params = dict(self._behavior)
        if context:
            params["browserContextId"] = context
        try:
            with trio.fail_after(CALL_DEADLINE_S):
                await self.connection.send("Browser.setDownloadBehavior", params)
        except trio.TooSlowError:
            raise Timeout("Browser.setDownloadBehavior got no answer") from None
        if context not in self._contexts and len(self._contexts) >= CONTEXTS_KEPT:
            self._contexts.discard(next(c for c in self._contexts if c is not None))
        self._contexts.add(context)

    async def run(self, *, task_status: trio.TaskStatus[DownloadFollower]
                  = trio.TASK_STATUS_IGNORED) -> None:
        """Set the default context's behavior, then follow download events until cancelled.

        Raises BrowserdError if the default context's behavior cannot be set
        (downloads would otherwise land in ``~/Downloads``).
        """
        events = self.connection.subscribe(None, _EVENTS, buffer=10000)
        try:
            # The default context: the one a target without browserContextId is in.
            await self.ensure_context({})
            if self.store.enabled:
                await self.store.prune()
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                task_status.started(self)
                async for event in events:
                    self._on_event(event.method, event.params)
        finally:
            self.connection.unsubscribe(events)

    def _on_event(self, method: str, p: dict[str, Any]) -> None:
        guid = str(p.get("guid", ""))
        if not GUID_RE.fullmatch(guid):
            return
        if method == "Browser.downloadWillBegin":
            frame_id = str(p.get("frameId", ""))
            if len(self._free_at_begin) > 10000:
                self._free_at_begin.clear()
            self._free_at_begin[guid] = self._safe_free_space()
            target_id = (self._locate(frame_id) if frame_id and self._locate is not None
                         else None)
            self.store.began(guid, url=str(p.get("url", "")),
                             suggested_filename=str(p.get("suggestedFilename", ""))[:1000],
                             target_id=target_id,
                             session_id=self._session_of(target_id)
                             if target_id is not None and self._session_of is not None
                             else None)
            return
        received = _int(p.get("receivedBytes"))
        total = _int(p.get("totalBytes"))
        record = self.store.progressed(guid, received=received, total=total)
        if record is None:
            return
        state = p.get("state")
        limit = self.store.max_bytes
        if total > limit or received > limit:
            self._start(self._cancel, guid, CancelReason.TOO_LARGE)
        elif state == "inProgress" and total > 0 and received == 0 and (
            total - received + NO_SPACE_MARGIN > self._safe_free_space()
        ):
            self._start(self._cancel, guid, CancelReason.NO_SPACE)
        elif state == "completed":
            self._start(self._completed, guid)
        elif state == "canceled":
            self._start(self._canceled_by_browser, guid, total, received)

    def _start(self, fn: Any, *args: Any) -> None:
        if self._nursery is not None:
            self._nursery.start_soon(fn, *args)

    def _safe_free_space(self) -> int:
        try:
            return self._free_space()
        except OSError:
            return 1 << 62

    async def _cancel(self, guid: str, reason: CancelReason) -> None:
        """Cancel in the browser (bounded), mark the record, delete what was written."""
        record = self.store.finish(guid, DownloadState.CANCELED, reason=reason)
        if guid in self._cancelling:
            # Canceled already; the browser may have finished writing meanwhile.
            await self.store.discard(guid)
            return
        self._cancelling.add(guid)
        log.warning("download %s canceled: %s (%d of %d bytes)", guid, reason.value,
                    record.received_bytes if record else 0, record.total_bytes if record else 0)
        params: dict[str, Any] = {"guid": guid}
        context = self._context_of_target.get(record.target_id or "") if record else None
        if context:
            params["browserContextId"] = context
        try:
            with trio.fail_after(CALL_DEADLINE_S):
                await self.connection.send("Browser.cancelDownload", params)
        except (BrowserdError, trio.TooSlowError) as exc:
            log.warning("download %s: cancel failed: %s", guid, exc)
        await self.store.discard(guid)

    async def _completed(self, guid: str) -> None:
        self._free_at_begin.pop(guid, None)
        record = self.store.get(guid)
        if record.finished:
            # Canceled by us while the browser finished: nothing may remain.
            await self.store.discard(guid)
            return
        path = self.store.directory / guid
        self.store.finish(guid, DownloadState.COMPLETED, path=path)
        await self.store.prune()

    async def _canceled_by_browser(self, guid: str, total: int, received: int) -> None:
        """The browser ended a download: ``no_space`` when the disk was (nearly) full.

        Chromium reports a write error (ENOSPC) only as ``canceled`` and may
        delete the partial file first, so the disk counts as full when it is
        now, or when the download's size was unknown and the free space at
        its start could not hold ``download_max_bytes``.
        """
        record = self.store.get(guid)
        if not record.finished:
            free_now = self._safe_free_space()
            free_then = self._free_at_begin.get(guid, free_now)
            full = free_now < max(total - received, 0) + NO_SPACE_MARGIN or (
                total == 0 and free_then < self.store.max_bytes + NO_SPACE_MARGIN)
            self.store.finish(guid, DownloadState.CANCELED,
                              reason=CancelReason.NO_SPACE if full else CancelReason.INTERRUPTED)
        self._free_at_begin.pop(guid, None)
        await self.store.discard(guid)


def _int(value: Any) -> int:
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        return 0
