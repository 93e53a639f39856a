"""DownloadStore: the records of the browser's downloads and their files, with retention.

The browser writes every download itself, into ``<data>/downloads/<profile>/``
under the download's GUID as its name (``Browser.setDownloadBehavior
allowAndName``, see :mod:`browserd.downloads.follower`): a page chooses the
*suggested* filename only, which is data in the record and never a path.
This store outlives browser restarts (one per service): it keeps the records
(newest :data:`RECORDS_KEPT`), serves lookups by id (the GUID) and applies
retention — count, total bytes, age, oldest first, with the media store's
:func:`~browserd.retention.apply_retention` — to completed files. Files of
downloads in progress are never pruned; leftovers of an earlier run (partial
``.crdownload`` files and names no record knows that are older than
:data:`STALE_PARTIAL_AGE_S`) are removed by :meth:`DownloadStore.prune`.

State is changed only by trio tasks (the follower, the routes); file work
runs in worker threads that are never abandoned. Errors deleting files are
logged, never raised.
"""

from __future__ import annotations

import enum
import logging
import os
import re
import stat
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

import attrs
import trio

from ..errors import NotFound
from ..events import EventSink, EventType
from ..redact import loggable_url
from ..retention import RetainedFile, Retention, apply_retention

__all__ = ["GUID_RE", "RECORDS_KEPT", "STALE_PARTIAL_AGE_S", "CancelReason", "DownloadRecord",
           "DownloadState", "DownloadStatistics", "DownloadStore", "download_url",
           "remove_downloads"]

log = logging.getLogger(__name__)

RECORDS_KEPT = 1000
STALE_PARTIAL_AGE_S = 300.0
GUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_PARTIAL_RE = re.compile(GUID_RE.pattern + r"\.crdownload")


class DownloadState(enum.Enum):
    IN_PROGRESS = "inProgress"
    COMPLETED = "completed"
    CANCELED = "canceled"


class CancelReason(enum.Enum):
    TOO_LARGE = "too_large"
    NO_SPACE = "no_space"
    INTERRUPTED = "interrupted"  # the browser or the page ended it
    PRUNED = "pruned"  # the file was removed by retention


@attrs.frozen(kw_only=True)
class DownloadRecord:
    """One download as the API shows it. ``url`` is page data (never logged whole).

    ``profile`` and ``session_id`` say whose browser and session made it.
    """

    id: str
    seq: int
    target_id: str | None
    profile: str | None = None
    session_id: str | None = None  # the session whose tab began it (None: no session)
    url: str
    suggested_filename: str
    state: DownloadState
    received_bytes: int = 0
    total_bytes: int = 0
    path: Path | None = None
    reason: CancelReason | None = None
    started_at: float

    @property
    def finished(self) -> bool:
        return self.state is not DownloadState.IN_PROGRESS

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id, "targetId": self.target_id, "profile": self.profile,
            "session": self.session_id, "url": self.url,
            "suggestedFilename": self.suggested_filename, "state": self.state.value,
            "receivedBytes": self.received_bytes, "totalBytes": self.total_bytes,
            "startedAt": self.started_at,
        }
        if self.path is not None:
            out["path"] = str(self.path)
            out["mediaUrl"] = download_url(self.id)
        if self.reason is not None:
            out["reason"] = self.reason.value
        return out

    def brief(self) -> dict[str, Any]:
        """The ``effects.downloads`` entry."""
        return {"id": self.id, "url": self.url, "suggestedFilename": self.suggested_filename}


def download_url(download_id: str) -> str:
    """The API path that serves a completed download."""
    return f"/downloads/{download_id}"


@attrs.frozen(kw_only=True)
class DownloadStatistics:
    records: int
    in_progress: int
    completed: int
    canceled: int
    pruned: int
    directory: Path


class DownloadStore:
    """Records and files of downloads in one directory (created 0700 if missing)."""

    def __init__(self, directory: Path, retention: Retention, *, max_bytes: int,
                 enabled: bool = True, profile: str | None = None,
                 events: EventSink | None = None) -> None:
        self._directory = Path(directory).absolute()
        self.profile = profile
        self._events = events  # download.started / download.finished
        self.retention = retention
        self.max_bytes = max_bytes
        self.enabled = enabled
        self._records: OrderedDict[str, DownloadRecord] = OrderedDict()
        self._seq = 0
        self._pruned = 0
        self._changed = trio.Event()
        self._prune_lock = trio.Lock()
        self._directory.mkdir(parents=True, exist_ok=True, mode=0o700)

    @property
    def directory(self) -> Path:
        return self._directory

    # -- changes (the follower) ------------------------------------------------------------

    def began(self, download_id: str, *, url: str, suggested_filename: str,
              target_id: str | None, session_id: str | None = None) -> DownloadRecord:
        """Record a download that just began (a repeated id keeps its first record).

        ``session_id``: the session whose tab began it (None: no session).
        """
        if download_id in self._records:
            return self._records[download_id]
        self._seq += 1
        record = DownloadRecord(
            id=download_id, seq=self._seq, target_id=target_id, profile=self.profile,
            session_id=session_id, url=url,
            suggested_filename=suggested_filename, state=DownloadState.IN_PROGRESS,
            started_at=time.time(),
        )
        self._records[download_id] = record
        self._trim()
        log.info("download %s began from %s (profile %s, session %s)", download_id,
                 loggable_url(url), self.profile or "-", session_id or "-")
        if self._events is not None:
            self._events.publish(EventType.DOWNLOAD_STARTED, target_id=target_id,
                                 downloadId=download_id, url=url,
                                 suggestedFilename=suggested_filename)
        self._notify()
        return record

    def progressed(self, download_id: str, *, received: int, total: int) -> DownloadRecord | None:
        record = self._records.get(download_id)
        if record is None or record.finished:
            return record
        record = attrs.evolve(record, received_bytes=received, total_bytes=total)
        self._records[download_id] = record
        self._notify()
        return record

    def finish(self, download_id: str, state: DownloadState, *, path: Path | None = None,
               reason: CancelReason | None = None) -> DownloadRecord | None:
        """Mark a download completed (with its file) or canceled (with why); first call wins."""
        record = self._records.get(download_id)
        if record is None or record.finished:
            return record
        record = attrs.evolve(record, state=state, path=path, reason=reason)
        self._records[download_id] = record
        log.info("download %s %s%s (%d bytes)", download_id, state.value,
                 f" ({reason.value})" if reason else "", record.received_bytes)
        if self._events is not None:
            body = record.to_json()
            self._events.publish(EventType.DOWNLOAD_FINISHED, target_id=record.target_id,
                                 downloadId=record.id,
                                 **{k: body[k] for k in ("state", "reason", "url",
                                                         "suggestedFilename", "receivedBytes",
                                                         "totalBytes", "mediaUrl") if k in body})
        self._notify()
        return record

    def claim(self, download_id: str, target_id: str, session_id: str | None = None) -> None:
        """Name the tab (and session) a download came from, when the follower could not tell."""
        record = self._records.get(download_id)
        if record is not None and record.target_id is None:
            self._records[download_id] = attrs.evolve(record, target_id=target_id,
                                                      session_id=session_id)
            self._notify()

    def _trim(self) -> None:
        while len(self._records) > RECORDS_KEPT:
            oldest = next((k for k, r in self._records.items() if r.finished), None)
            if oldest is None:
                return
            del self._records[oldest]

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    # -- queries ---------------------------------------------------------------------------

    def mark(self) -> int:
        """A position: downloads that begin later have a larger ``seq``."""
        return self._seq

    async def wait_changed(self) -> None:
        await self._changed.wait()

    async def wait_listed(self, download_ids: list[str], *, timeout_s: float = 2.0) -> None:
        """Wait (at most ``timeout_s``) until every id is in :meth:`records`.

        A tab reports a download (``Page.downloadWillBegin``) on its own session
        and the follower records it from the browser's event a moment later:
        an action's answer that names a download waits for it here, so the id
        is listed by the time the answer arrives. Returns quietly at the
        deadline (an id that never came is not an error of the action).
        """
        with trio.move_on_after(timeout_s):
            while any(i not in self._records for i in download_ids):
                await self.wait_changed()

    def records(self) -> list[DownloadRecord]:
        return list(self._records.values())

    def get(self, download_id: str) -> DownloadRecord:
        """The record ``download_id``; NotFound (one message for any bad or unknown id)."""
        record = self._records.get(download_id) if isinstance(download_id, str) else None
        if record is None:
            raise _not_found()
        return record

    def resolve_file(self, download_id: str) -> tuple[DownloadRecord, Path]:
        """A completed download's record and file (a regular file in our directory)."""
        record = self.get(download_id)
        if record.state is not DownloadState.COMPLETED or not GUID_RE.fullmatch(record.id):
            raise NotFound(f"download {download_id} is {record.state.value}, not completed",
                           hint="wait for it with POST /wait {download: true}")
        path = self._directory / record.id
        try:
            st = os.lstat(path)
        except OSError:
            raise _not_found() from None
        if not stat.S_ISREG(st.st_mode):
            raise _not_found()
        return record, path

    def statistics(self) -> DownloadStatistics:
        counts = {s: 0 for s in DownloadState}
        for record in self._records.values():
            counts[record.state] += 1
        return DownloadStatistics(
            records=len(self._records), in_progress=counts[DownloadState.IN_PROGRESS],
            completed=counts[DownloadState.COMPLETED], canceled=counts[DownloadState.CANCELED],
            pruned=self._pruned, directory=self._directory)

    # -- files -----------------------------------------------------------------------------

    async def discard(self, download_id: str) -> None:
        """Delete whatever the browser wrote for ``download_id`` (final name and partial)."""
        if not GUID_RE.fullmatch(download_id):
            return
        paths = [self._directory / download_id, self._directory / f"{download_id}.crdownload"]
        await trio.to_thread.run_sync(_unlink_all, paths, abandon_on_cancel=False)

    async def prune(self) -> int:
        """Apply retention to completed files and drop stale leftovers; how many went.

        Records whose file was removed become ``canceled`` with reason
        ``pruned``. Never raises for file errors (they are logged).
        """
        active = frozenset(r.id for r in self._records.values() if not r.finished)
        async with self._prune_lock:
            removed = await trio.to_thread.run_sync(self._prune_pass, active,
                                                    abandon_on_cancel=False)
        for name in removed:
            record = self._records.get(name)
            if record is not None and record.state is DownloadState.COMPLETED:
                self._records[name] = attrs.evolve(record, state=DownloadState.CANCELED,
                                                   path=None, reason=CancelReason.PRUNED)
        if removed:
            self._pruned += len(removed)
            self._notify()
        return len(removed)

    def _prune_pass(self, active: frozenset[str]) -> list[str]:
        """Worker thread. Returns the GUID names removed by retention."""
        now = time.time()
        entries: list[RetainedFile] = []
        try:
            with os.scandir(self._directory) as it:
                for dirent in it:
                    try:
                        st = dirent.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if not stat.S_ISREG(st.st_mode):
                        continue
                    name = dirent.name
                    if GUID_RE.fullmatch(name):
                        entries.append(RetainedFile(name=name, mtime=st.st_mtime,
                                                    size=st.st_size))
                    elif (_PARTIAL_RE.fullmatch(name) and name[:36] not in active
                          and now - st.st_mtime > STALE_PARTIAL_AGE_S):
                        _unlink_all([self._directory / name])
        except OSError as exc:
            log.warning("download retention: cannot list %s: %s", self._directory, exc)
            return []
        gone: list[str] = []

        def remove(name: str) -> bool:
            try:
                (self._directory / name).unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                log.warning("download retention: cannot remove %s: %s", name, exc)
                return False
            gone.append(name)
            return True

        apply_retention(entries, self.retention, now=now, keep=active, remove=remove)
        return gone


def remove_downloads(directory: Path) -> int:
    """Remove the download files in ``directory`` (blocking; for a deleted profile).

    Only names browserd gives downloads (GUIDs and their ``.crdownload``
    partials) are removed, then the directory itself if that left it empty;
    anything else, and a directory that is a symlink, is left alone. Returns
    how many files went; errors are logged, never raised.
    """
    try:
        if directory.is_symlink() or not directory.is_dir():
            return 0
        names = [p.name for p in directory.iterdir()]
    except OSError as exc:
        log.warning("downloads: cannot list %s: %s", directory, exc)
        return 0
    mine = [directory / n for n in names if GUID_RE.fullmatch(n) or _PARTIAL_RE.fullmatch(n)]
    _unlink_all(mine)
    removed = sum(1 for path in mine if not path.exists())
    try:
        directory.rmdir()
    except OSError:  # not empty (someone else's files): left alone
        pass
    return removed


def _unlink_all(paths: list[Path]) -> None:
    for path in paths:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            log.warning("downloads: cannot remove %s: %s", path.name, exc)


def _not_found() -> NotFound:
    return NotFound("download not found",
                    hint="ids come from GET /downloads; old downloads are pruned by retention")
