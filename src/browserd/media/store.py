"""MediaStore: screenshots and PDFs on disk, written atomically, pruned by retention.

A saved file is either complete at its final path or absent: bytes go to a
private temp file (``.{name}.tmp``, 0600, ``O_EXCL``) in the same directory,
are fsynced, renamed over the final name, and the directory is fsynced. Any
``OSError`` on the way (ENOSPC, EDQUOT, EIO, ...) removes the temp file and
surfaces as :class:`~browserd.errors.InsufficientStorage` (507); files saved
earlier are never touched by a failed save.

Names are ``{kind}-{YYYYmmdd-HHMMSS}-{24 hex}.{ext}`` (UTC timestamp, 96
random bits), so they cannot be guessed; :meth:`MediaStore.resolve` accepts
nothing but that exact shape and answers one and the same 404 for a bad name
and for a missing file, so names cannot be probed.

Retention (count, total bytes, age) runs after every save and on
:meth:`MediaStore.prune`, oldest first by (mtime, name), serialised by a lock;
it never deletes the file its own save just wrote. Temp files younger than
:data:`STALE_TEMP_AGE_S` belong to saves in flight and are left alone; older
ones were left by a killed process and are removed (at open and on each prune).
Only files whose names have our shape are ever deleted.

A screenshot may be saved with its :class:`CaptureOrigin` (whose tab, which
region, its CSS size); the store remembers the origins of its newest
:data:`ORIGINS_KEPT` saves in memory (:meth:`MediaStore.origin_of`), so a
later capture can be compared with it (``/screenshot {since}``). They are
not written to disk: after a restart an earlier file has no known origin.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import secrets
import stat
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import attrs
import trio

from browserd.errors import InsufficientStorage, NotFound
from browserd.retention import RetainedFile, Retention, apply_retention

__all__ = [
    "MAX_NAME_LENGTH",
    "ORIGINS_KEPT",
    "STALE_TEMP_AGE_S",
    "CaptureOrigin",
    "MediaFile",
    "MediaStatistics",
    "MediaStore",
    "Retention",
    "media_token",
    "media_url",
    "mime_for_extension",
    "open_media_store",
]

log = logging.getLogger(__name__)

MiB = 1024 * 1024

#: A temp file older than this (seconds, by mtime) is a leftover of a killed process.
STALE_TEMP_AGE_S = 60.0

#: Saves whose :class:`CaptureOrigin` the store remembers (the newest).
ORIGINS_KEPT = 1000

#: No valid media name is longer than this; longer names are refused before any regex work.
MAX_NAME_LENGTH = 96

_MAX_KIND_LENGTH = 32
_MAX_EXT_LENGTH = 8
_TOKEN_BYTES = 12

_TOKEN_RE = re.compile(r"[a-z0-9]+")
_NAME_RE = re.compile(
    rf"[a-z0-9]{{1,{_MAX_KIND_LENGTH}}}-[0-9]{{8}}-[0-9]{{6}}-[0-9a-f]{{{_TOKEN_BYTES * 2}}}"
    rf"\.[a-z0-9]{{1,{_MAX_EXT_LENGTH}}}"
)
_TEMP_RE = re.compile(rf"\.({_NAME_RE.pattern})\.tmp")

_MIME_BY_EXT = {
    "png": "image/png",
    "jpeg": "image/jpeg",
    "jpg": "image/jpeg",
    "pdf": "application/pdf",
    "har": "application/json",
}


def mime_for_extension(ext: str) -> str:
    """The MIME type served for a file extension (``application/octet-stream`` if unknown)."""
    return _MIME_BY_EXT.get(ext.lower(), "application/octet-stream")


def media_url(name: str) -> str:
    """The URL path under which the HTTP API serves a stored file."""
    return f"/media/{name}"


def media_token(path: Path | str) -> str:
    """The ``MEDIA:<path>`` token that API responses carry for a stored file."""
    return f"MEDIA:{path}"


@attrs.frozen(kw_only=True)
class MediaFile:
    """One stored file. ``created_at`` is wall-clock seconds (``time.time()``)."""

    name: str
    path: Path
    mime: str
    bytes: int
    created_at: float


@attrs.frozen(kw_only=True)
class CaptureOrigin:
    """What a stored screenshot shows: whose tab (profile, session, targetId), which
    ``region`` (``viewport``, ``page``, ``element``) and its size in CSS pixels."""

    target_id: str
    profile: str
    session: str | None
    region: str
    css_width: float
    css_height: float


@attrs.frozen(kw_only=True)
class MediaStatistics:
    """A snapshot of the store.

    ``files``/``bytes`` are as of the last retention pass plus saves completed
    since; ``saves``/``failures`` count :meth:`MediaStore.save` outcomes and
    ``pruned`` counts media files removed by retention, all since construction.
    """

    files: int
    bytes: int
    directory: Path
    saves: int
    failures: int
    pruned: int


@attrs.frozen(kw_only=True)
class _PassOutcome:
    removed: int
    files: int
    bytes: int


class MediaStore:
    """Atomic, retention-bounded storage for screenshots and PDFs in one directory.

    Construct directly or through :func:`open_media_store` (which also removes
    stale temp files). The directory is created with mode 0700 if missing.
    Concurrent saves are fine: each has its own unique temp file; retention
    passes are serialised by a :class:`trio.Lock`.
    """

    def __init__(self, directory: Path, retention: Retention) -> None:
        self._directory = Path(directory).absolute()
        self._retention = retention
        self._lock = trio.Lock()
        self._saves = 0
        self._failures = 0
        self._pruned = 0
        self._files = 0
        self._bytes = 0
        self._origins: OrderedDict[str, CaptureOrigin] = OrderedDict()
        self._directory.mkdir(parents=True, exist_ok=True, mode=0o700)

    @property
    def directory(self) -> Path:
        return self._directory

    @property
    def retention(self) -> Retention:
        return self._retention

    # -- saving -------------------------------------------------------------------------------

    async def save(self, data: bytes, *, kind: str, ext: str, mime: str,
                   origin: CaptureOrigin | None = None) -> MediaFile:
        """Store ``data`` under a fresh unguessable name and apply retention.

        ``origin``: what the file shows, remembered for :meth:`origin_of`.

        ``kind`` (e.g. ``screenshot``) and ``ext`` (e.g. ``png``) must match
        ``[a-z0-9]+`` (ValueError otherwise: a programming error).

        On error: any ``OSError`` while writing raises
        :class:`~browserd.errors.InsufficientStorage` (507) with details
        ``{"errno": "<ENAME>", "bytes": len(data)}``; the temp file is removed,
        nothing appears at the final path, earlier files are untouched.

        On cancellation: the write runs in a worker thread that is never
        abandoned, so a cancel delivered before the thread starts writes
        nothing, and one delivered during the write takes effect right after
        it: the file is then complete on disk (and will be counted by the next
        retention pass) but the caller sees ``Cancelled``. Retention is skipped
        in that case and done by the next save or :meth:`prune`.
        """
        _check_token("kind", kind, _MAX_KIND_LENGTH)
        _check_token("ext", ext, _MAX_EXT_LENGTH)
        created_at = time.time()
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(created_at))
        name = f"{kind}-{stamp}-{secrets.token_hex(_TOKEN_BYTES)}.{ext}"
        final = self._directory / name
        try:
            await trio.to_thread.run_sync(
                self._write_atomically, final, data, abandon_on_cancel=False
            )
        except OSError as exc:
            self._failures += 1
            ename = errno.errorcode.get(exc.errno or 0, str(exc.errno))
            log.warning("media save of %d bytes failed: %s", len(data), exc)
            raise InsufficientStorage(
                f"could not write {kind} ({len(data)} bytes) to the media directory: "
                f"{ename} ({exc.strerror or exc})",
                errno=ename,
                bytes=len(data),
            ) from exc
        # No checkpoint between the thread's return and these updates.
        self._saves += 1
        self._files += 1
        self._bytes += len(data)
        record = MediaFile(name=name, path=final, mime=mime, bytes=len(data), created_at=created_at)
        if origin is not None:
            self._origins[name] = origin
            while len(self._origins) > ORIGINS_KEPT:
                self._origins.popitem(last=False)
        await self._apply_retention(keep=name)
        return record

    def _write_atomically(self, final: Path, data: bytes) -> None:
        """Worker thread: temp file, fsync, rename, fsync dir. Raises OSError, leaving nothing."""
        tmp = final.with_name(f".{final.name}.tmp")
        self._directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            self._write_file(tmp, data)
        except OSError as exc:
            if exc.errno != errno.EEXIST:  # EEXIST: the temp is not ours to remove
                _unlink_quietly(tmp)
            raise
        try:
            os.replace(tmp, final)
        except OSError:
            _unlink_quietly(tmp)
            raise
        try:
            _fsync_directory(self._directory)
        except OSError:
            # The rename may not be durable; report failure and keep the promise
            # that a failed save leaves nothing at the final path.
            _unlink_quietly(final)
            raise

    def _write_file(self, tmp_path: Path, data: bytes) -> None:
        """Create ``tmp_path`` (O_EXCL, 0600), write all of ``data``, fsync, close.

        The low-level seam tests replace to inject faults. Raises OSError.
        """
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        flags |= getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(tmp_path, flags, 0o600)
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)

    # -- retention ----------------------------------------------------------------------------

    async def prune(self) -> int:
        """Apply retention now and remove stale temp files; return how many media files went.

        Errors reading the directory or deleting a file are logged, not raised.
        On cancellation: a pass already running in its worker thread finishes;
        a pass not yet started is skipped.
        """
        return await self._apply_retention(keep=None)

    async def _apply_retention(self, *, keep: str | None) -> int:
        async with self._lock:
            outcome = await trio.to_thread.run_sync(
                self._retention_pass, keep, abandon_on_cancel=False
            )
        if outcome is None:
            return 0
        # Counters are only touched from trio tasks, never from the worker thread.
        self._pruned += outcome.removed
        self._files = outcome.files
        self._bytes = outcome.bytes
        return outcome.removed

    def _retention_pass(self, keep: str | None) -> _PassOutcome | None:
        """Worker thread, under the lock. Never raises OSError (None if unreadable)."""
        now = time.time()
        try:
            entries = self._scan(now)
        except OSError as exc:
            log.warning("media retention: cannot list %s: %s", self._directory, exc)
            return None
        removed, kept = apply_retention(
            entries, self._retention, now=now,
            keep=frozenset() if keep is None else frozenset({keep}), remove=self._remove)
        return _PassOutcome(removed=removed, files=len(kept), bytes=sum(e.size for e in kept))

    def _scan(self, now: float) -> list[RetainedFile]:
        """List our media files; remove temp files older than STALE_TEMP_AGE_S on the way."""
        entries: list[RetainedFile] = []
        with os.scandir(self._directory) as it:
            for dirent in it:
                name = dirent.name
                try:
                    st = dirent.stat(follow_symlinks=False)
                except OSError:
                    continue  # vanished meanwhile
                if not stat.S_ISREG(st.st_mode):
                    continue
                if _NAME_RE.fullmatch(name):
                    entries.append(RetainedFile(name=name, mtime=st.st_mtime, size=st.st_size))
                elif _TEMP_RE.fullmatch(name) and now - st.st_mtime > STALE_TEMP_AGE_S:
                    log.info("media: removing stale temp file %s", name)
                    _unlink_quietly(self._directory / name)
        return entries

    def _remove(self, name: str) -> bool:
        try:
            (self._directory / name).unlink()
        except FileNotFoundError:
            return True
        except OSError as exc:
            log.warning("media retention: cannot remove %s: %s", name, exc)
            return False
        return True

    # -- lookup -------------------------------------------------------------------------------

    def resolve(self, name: str) -> MediaFile:
        """The stored file called ``name`` (for ``GET /media/{name}``).

        Raises :class:`~browserd.errors.NotFound` (404), with one and the same
        message, for a name that is not exactly of our shape (so no ``/``, no
        ``..``, no leading dot, bounded length) and for a file that does not
        exist or is not a regular file. A stat call; no awaits.
        """
        if len(name) > MAX_NAME_LENGTH or not _NAME_RE.fullmatch(name):
            raise _not_found()
        path = self._directory / name
        try:
            st = os.lstat(path)
        except OSError:
            raise _not_found() from None
        if not stat.S_ISREG(st.st_mode):
            raise _not_found()
        ext = name.rsplit(".", 1)[1]
        return MediaFile(
            name=name,
            path=path,
            mime=mime_for_extension(ext),
            bytes=st.st_size,
            created_at=st.st_mtime,
        )

    def origin_of(self, name: str) -> CaptureOrigin | None:
        """What the file ``name`` shows, if it was saved with an origin since the store
        opened (and is among the newest :data:`ORIGINS_KEPT`); no I/O."""
        return self._origins.get(name)

    def statistics(self) -> MediaStatistics:
        """A frozen snapshot of counters (see :class:`MediaStatistics`); no I/O."""
        return MediaStatistics(
            files=self._files,
            bytes=self._bytes,
            directory=self._directory,
            saves=self._saves,
            failures=self._failures,
            pruned=self._pruned,
        )


@asynccontextmanager
async def open_media_store(directory: Path, retention: Retention) -> AsyncIterator[MediaStore]:
    """Open the store: create the directory, remove stale temps, apply retention once.

    Errors listing or cleaning the directory are logged, not raised (an
    OSError creating the directory is raised). On cancellation during the
    initial pass, the pass either finishes or is skipped; nothing is left
    half-done. Leaving the context does nothing: files stay on disk.
    """
    store = MediaStore(directory, retention)
    await store.prune()
    yield store


def _check_token(what: str, value: str, max_length: int) -> None:
    if len(value) > max_length or not _TOKEN_RE.fullmatch(value):
        raise ValueError(f"{what} must match [a-z0-9]{{1,{max_length}}}, got {value!r}")


def _not_found() -> NotFound:
    return NotFound(
        "media not found",
        hint="media names come from /screenshot responses; old files are pruned by retention",
    )


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
