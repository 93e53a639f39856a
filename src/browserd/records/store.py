"""RecordStore: session records on disk, one directory each, bounded by retention.

A record lives in ``<data_dir>/records/<id>/``: ``meta.json`` (its
:class:`~browserd.records.model.RecordInfo`, written when it starts and
when it stops), ``steps.jsonl`` (one :class:`~browserd.records.model.Step`
a line, appended as calls finish) and the steps' screenshots
(``0003-before.jpeg``). Files are private (directories 0700, files 0600).
Ids are ``rec-{YYYYmmdd-HHMMSS}-{16 hex}``: unguessable, and :meth:`RecordStore.path_of`
accepts nothing else (one and the same 404 for a bad and an unknown id).

At most one record is being recorded per (profile, session, principal): a
record holds the calls of the token that started it and no other's. Its
header and step counter are held here (:class:`ActiveRecord`); one ends when
it is stopped, deleted, or its session ends (:meth:`RecordStore.end_session`),
and one left ``recording`` on disk by an earlier run of the service reads as
ended (at its files' last change). A record stops taking
steps at :data:`MAX_STEPS` (``truncated``). Retention (count, total bytes,
age; :mod:`browserd.retention`, as the media store) runs when a record
starts and when one stops, over whole records, oldest first; a record being
recorded is never removed.

A record may have a video (``start(video=…)``: a task that records one tab
into ``video.webm`` in the record's directory, :mod:`browserd.records.video`).
It runs in the store's own nursery (:meth:`RecordStore.run`, a child of the
service), beside the record and bounded by it: stopping or deleting the
record stops the video first (waiting at most :data:`VIDEO_STOP_S`), the
service stopping cancels it (its own stop is shielded and bounded), and a
video that ends by itself (a limit, the tab closed, ffmpeg crashed) leaves
its state and reason in the header while the record goes on.

File work runs in worker threads; a record's header is written whole or
not at all (not abandoned on cancellation), while a step write is abandoned
when its deadline expires (a stuck disk cannot hold the record's lock; a cut
line is skipped when read). An ``OSError``
writing is 507 INSUFFICIENT_STORAGE; reading a damaged record skips its
unreadable lines.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import shutil
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import trio

from ..errors import Conflict, InsufficientStorage, NotFound, Overloaded, Unavailable
from ..retention import RetainedFile, Retention, apply_retention
from .model import RecordInfo, Shot, Step

__all__ = ["DEFAULT_RETENTION", "MAX_STEPS", "MAX_VIDEOS", "VIDEO_FILE", "VIDEO_STOP_S",
           "ActiveRecord", "RecordStore", "ShotData", "VideoRun", "record_not_found"]

log = logging.getLogger(__name__)

MiB = 1024 * 1024
#: Steps one record takes; later calls are not recorded (the record says ``truncated``).
MAX_STEPS = 500
#: How long the header write of a video's end may take (then it is left to the next one).
SIDE_WRITE_S = 5.0
#: Records kept: 50, 200 MiB in all, none older than 7 days.
DEFAULT_RETENTION = Retention(max_files=50, max_bytes=200 * MiB, max_age_s=7 * 86400.0)

_ID_RE = re.compile(r"rec-[0-9]{8}-[0-9]{6}-[0-9a-f]{16}")
_SHOT_RE = re.compile(r"[0-9]{4}-(before|after)\.jpeg")
_META = "meta.json"
_STEPS = "steps.jsonl"
#: A record's video, in its directory.
VIDEO_FILE = "video.webm"
#: Videos recorded at once in the service (each is an ffmpeg process encoding in real time).
MAX_VIDEOS = 4
#: How long stopping (or deleting) a record waits for its video to finish its file.
VIDEO_STOP_S = 10.0

#: A record's video as the store runs it: ``(file, stop) → its outcome`` (JSON for the
#: header's ``video``); ends when ``stop`` is set (or by itself), never raises but on
#: cancellation.
VideoRun = Callable[[Path, trio.Event], Awaitable[Mapping[str, Any]]]


@attrs.frozen(kw_only=True)
class ShotData:
    """A screenshot the recorder took, before it has a name in the store."""

    data: bytes = attrs.field(repr=lambda d: f"<{len(d)} bytes>")
    width: int
    height: int


@attrs.define(kw_only=True)
class ActiveRecord:
    """A record being recorded: its header (replaced as it grows), its append lock and, with
    a video, the video's stop signal and its end."""

    info: RecordInfo
    lock: trio.Lock = attrs.field(factory=trio.Lock)
    video_stop: trio.Event | None = None
    video_done: trio.Event | None = None
    deleted: bool = False

    async def end_video(self) -> None:
        """Stop the video (if any) and wait for its end, at most :data:`VIDEO_STOP_S`."""
        if self.video_stop is None or self.video_done is None:
            return
        self.video_stop.set()
        with trio.move_on_after(VIDEO_STOP_S):
            await self.video_done.wait()


class RecordStore:
    """The service's session records (one per directory under ``directory``).

    The directory is created (0700) when the first record starts.
    """

    def __init__(self, directory: Path, retention: Retention = DEFAULT_RETENTION, *,
                 max_steps: int = MAX_STEPS) -> None:
        self._directory = Path(directory).absolute()
        self._retention = retention
        self._max_steps = max_steps
        self._active: dict[tuple[str, str | None, str], ActiveRecord] = {}
        self._prune_lock = trio.Lock()
        self._videos: trio.Nursery | None = None
        self._running_videos = 0

    @property
    def directory(self) -> Path:
        return self._directory

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """Host the records' videos until cancelled (the service stopping: each video's own
        stop is shielded and bounded). Without it, a video cannot start (503)."""
        async with trio.open_nursery() as nursery:
            self._videos = nursery
            task_status.started()
            try:
                await trio.sleep_forever()
            finally:
                self._videos = None

    # -- recording ----------------------------------------------------------------------------

    def active_for(self, profile: str, session: str | None, principal: str
                   ) -> ActiveRecord | None:
        """The record ``principal`` is recording in ``profile``/``session``, if any (no I/O)."""
        return self._active.get((profile, session, principal))

    async def start(self, profile: str, session: str | None, principal: str,
                    target_id: str | None, *, video: VideoRun | None = None,
                    video_target: str | None = None) -> RecordInfo:
        """Begin a record of ``principal``'s calls in ``profile``/``session`` (only
        ``target_id``'s if given), with ``video`` (of tab ``video_target``) beside it.

        409 CONFLICT (``recordId``) when it already records there; 507 when its
        directory cannot be written; 503 for a video when :meth:`run` is not running
        (UNAVAILABLE) or :data:`MAX_VIDEOS` run already (OVERLOADED).
        """
        key = (profile, session, principal)
        current = self._active.get(key)
        if current is not None:
            raise Conflict("a record is already being recorded for this session",
                           recordId=current.info.id, hint="POST /record/stop first")
        videos = self._videos
        if video is not None and videos is None:
            raise Unavailable("records cannot take videos now (the service is stopping)")
        if video is not None and self._running_videos >= MAX_VIDEOS:
            raise Overloaded(f"{MAX_VIDEOS} record videos are being recorded already",
                             hint="stop one of them, or record without video")
        now = time.time()
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))
        record_id = f"rec-{stamp}-{secrets.token_hex(8)}"
        info = RecordInfo(id=record_id, principal=principal, profile=profile,
                          session=session, target_id=target_id, started_at=now,
                          video=None if video is None else {
                              "state": "recording", "targetId": video_target,
                              "mime": "video/webm", "url": f"/records/{record_id}/video"})
        active = ActiveRecord(info=info)
        self._active[key] = active  # before the write: a second start is refused at once
        try:
            await self._run(self._write_meta, info)
        except BaseException:
            del self._active[key]
            raise
        if video is not None and videos is not None:
            active.video_stop, active.video_done = trio.Event(), trio.Event()
            self._running_videos += 1
            videos.start_soon(self._run_video, active, video)
        await self.prune()
        return info

    async def _run_video(self, active: ActiveRecord, video: VideoRun) -> None:
        """Run ``active``'s video; its outcome goes into the header (written, bounded and
        shielded), then ``video_done`` is set. A failure of the video is logged, never
        the record's."""
        assert active.video_stop is not None and active.video_done is not None
        outcome: dict[str, Any] = {"state": "failed",
                                   "reason": "the service stopped while recording"}
        try:
            outcome = dict(await video(self._directory / active.info.id / VIDEO_FILE,
                                       active.video_stop))
        except Exception as exc:
            log.exception("record %s: the video failed", active.info.id)
            outcome = {"state": "failed", "reason": f"internal error: {type(exc).__name__}"}
        finally:
            self._running_videos -= 1
            with trio.CancelScope(shield=True), trio.move_on_after(SIDE_WRITE_S):
                await self._note_video(active, outcome)
            active.video_done.set()

    async def _note_video(self, active: ActiveRecord, outcome: Mapping[str, Any]) -> None:
        """The video's outcome into ``active``'s header, written (unless deleted)."""
        async with active.lock:
            info = active.info
            video = {**(info.video or {}), **outcome}
            active.info = attrs.evolve(info, video=video,
                                       bytes=info.bytes + int(outcome.get("bytes") or 0))
            if not active.deleted:
                try:
                    await self._run(self._write_meta, active.info)
                except InsufficientStorage as exc:
                    log.warning("record %s: the video's end was not written: %s",
                                info.id, exc)

    async def stop(self, profile: str, session: str | None, principal: str) -> RecordInfo:
        """End ``principal``'s record of ``profile``/``session``; its header. 404 when none
        records."""
        key = (profile, session, principal)
        active = self._active.get(key)
        if active is None:
            raise NotFound("no record is being recorded for this session",
                           hint="POST /record/start begins one")
        stopped_at = time.time()
        await active.end_video()  # (bounded) the file finished, its outcome in the header
        async with active.lock:  # a step being written goes in first
            info = active.info = attrs.evolve(active.info, stopped_at=stopped_at)
            self._active.pop(key, None)
            await self._run(self._write_meta, info)
        await self.prune()
        return info

    def recorded_sessions(self) -> set[tuple[str, str]]:
        """The (profile, session) pairs being recorded (the default context's left out:
        it does not end)."""
        return {(p, s) for p, s, _ in self._active if s is not None}

    async def end_session(self, profile: str, session: str) -> None:
        """Stop every record of ``profile``/``session`` (the session ended); errors are
        logged (the session closes anyway)."""
        for key in [k for k in self._active if k[:2] == (profile, session)]:
            try:
                await self.stop(*key)
            except (NotFound, InsufficientStorage) as exc:
                log.warning("records: ending a record of session %s: %s", session, exc)

    async def append(self, active: ActiveRecord, step: Step,
                     shots: Mapping[str, ShotData | None]) -> Step | None:
        """Store ``step`` (its index assigned here) and its ``before``/``after`` shots.

        None when the record was stopped meanwhile or is full (then it is
        marked ``truncated``). Raises 507 when the files cannot be written.
        """
        async with active.lock:
            info = active.info
            if self._active.get((info.profile, info.session, info.principal)) is not active:
                return None
            if info.steps >= self._max_steps:
                active.info = attrs.evolve(info, truncated=True)
                return None
            index = info.steps
            named = {which: (f"{index:04d}-{which}.jpeg", shot)
                     for which, shot in shots.items() if shot is not None}
            shot_of = {which: Shot(name=name, width=shot.width, height=shot.height,
                                   bytes=len(shot.data)) for which, (name, shot) in named.items()}
            stored = attrs.evolve(step, index=index, before=shot_of.get("before"),
                                  after=shot_of.get("after"))
            line = json.dumps(stored.to_json(), ensure_ascii=False) + "\n"
            files = {name: shot.data for name, shot in named.values()}
            await self._run(self._write_step, info.id, files, line.encode(), abandon=True)
            written = len(line) + sum(len(d) for d in files.values())
            active.info = attrs.evolve(info, steps=index + 1, bytes=info.bytes + written)
            return stored

    # -- reading ------------------------------------------------------------------------------

    def path_of(self, record_id: str) -> Path:
        """The directory of record ``record_id``; 404 for a bad or unknown id (no awaits)."""
        if not _ID_RE.fullmatch(record_id):
            raise record_not_found()
        path = self._directory / record_id
        if not (path / _META).is_file():
            raise record_not_found()
        return path

    async def infos(self) -> list[RecordInfo]:
        """Every stored record's header, newest first (active ones as they are now)."""
        infos = await trio.to_thread.run_sync(self._read_all)
        live = {a.info.id: a.info for a in self._active.values()}
        return [live.get(i.id, i) for i in infos]

    async def load(self, record_id: str) -> tuple[RecordInfo, list[Step]]:
        """A record's header and its steps in order; 404 for a bad or unknown id."""
        path = self.path_of(record_id)
        info, steps = await trio.to_thread.run_sync(_read_record, path)
        for active in self._active.values():
            if active.info.id == record_id:
                info = active.info
        return info, steps

    async def shot(self, record_id: str, name: str) -> bytes:
        """The bytes of one of the record's screenshots; 404 for a bad or unknown name."""
        path = self.path_of(record_id)
        if not _SHOT_RE.fullmatch(name):
            raise record_not_found()
        try:
            return await trio.to_thread.run_sync((path / name).read_bytes)
        except OSError:
            raise record_not_found() from None

    async def delete(self, record_id: str) -> None:
        """Remove a record (one being recorded stops first); 404 for a bad or unknown id."""
        path = self.path_of(record_id)
        for key, active in list(self._active.items()):
            if active.info.id == record_id:
                await active.end_video()
                async with active.lock:
                    active.deleted = True
                    self._active.pop(key, None)
        await self._run(shutil.rmtree, path)

    def video_path(self, record_id: str) -> Path:
        """Where record ``record_id``'s video is (it may not exist); 404 for a bad or
        unknown id (no awaits)."""
        return self.path_of(record_id) / VIDEO_FILE

    # -- retention ----------------------------------------------------------------------------

    async def prune(self) -> int:
        """Apply retention now over whole records; how many went (errors are logged)."""
        keep = frozenset(a.info.id for a in self._active.values())
        async with self._prune_lock:
            return await trio.to_thread.run_sync(self._prune_pass, keep,
                                                 abandon_on_cancel=False)

    def _prune_pass(self, keep: frozenset[str]) -> int:
        try:
            entries = [_retained(p) for p in self._record_dirs()]
        except OSError as exc:
            log.warning("records retention: cannot list %s: %s", self._directory, exc)
            return 0
        removed, _ = apply_retention(entries, self._retention, now=time.time(), keep=keep,
                                     remove=self._remove)
        return removed

    def _remove(self, name: str) -> bool:
        try:
            shutil.rmtree(self._directory / name)
        except FileNotFoundError:
            return True
        except OSError as exc:
            log.warning("records retention: cannot remove %s: %s", name, exc)
            return False
        return True

    # -- files (worker threads) ---------------------------------------------------------------

    async def _run(self, fn: Callable[..., object], *args: object, abandon: bool = False
                   ) -> None:
        """``fn(*args)`` in a worker thread; abandoned on cancellation when ``abandon``."""
        try:
            await trio.to_thread.run_sync(fn, *args, abandon_on_cancel=abandon)
        except OSError as exc:
            raise InsufficientStorage(f"could not write the record: {exc.strerror or exc}",
                                      hint="free disk space, or delete records") from exc

    def _record_dirs(self) -> list[Path]:
        if not self._directory.is_dir():
            return []
        return [p for p in self._directory.iterdir()
                if _ID_RE.fullmatch(p.name) and p.is_dir() and not p.is_symlink()]

    def _write_meta(self, info: RecordInfo) -> None:
        path = self._directory / info.id
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path / f".{_META}.tmp"
        _write_private(tmp, json.dumps(info.to_json()).encode(), append=False)
        os.replace(tmp, path / _META)

    def _write_step(self, record_id: str, files: Mapping[str, bytes], line: bytes) -> None:
        path = self._directory / record_id
        for name, data in files.items():
            _write_private(path / name, data, append=False)
        _write_private(path / _STEPS, line, append=True)

    def _read_all(self) -> list[RecordInfo]:
        infos = []
        for path in self._record_dirs():
            try:
                infos.append(_ended(path, RecordInfo.from_json(
                    json.loads((path / _META).read_bytes()))))
            except (OSError, ValueError, KeyError, TypeError):
                continue  # being written or damaged: not listed
        return sorted(infos, key=lambda i: i.started_at, reverse=True)


def _write_private(path: Path, data: bytes, *, append: bool) -> None:
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    flags |= os.O_APPEND if append else os.O_TRUNC
    fd = os.open(path, flags, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _read_record(path: Path) -> tuple[RecordInfo, list[Step]]:
    try:
        info = RecordInfo.from_json(json.loads((path / _META).read_bytes()))
    except (OSError, ValueError, KeyError, TypeError):
        raise record_not_found() from None
    info = _ended(path, info)
    steps = []
    try:
        lines = (path / _STEPS).read_bytes().splitlines()
    except FileNotFoundError:
        lines = []
    for line in lines:
        try:
            steps.append(Step.from_json(json.loads(line)))
        except (ValueError, KeyError, TypeError):
            continue  # a line cut by a crash: the others stand
    steps.sort(key=lambda s: s.index)
    return attrs.evolve(info, steps=len(steps)), steps


def _ended(path: Path, info: RecordInfo) -> RecordInfo:
    """``info`` as stored; one left recording (an earlier run) as ended at its last change.

    The store puts the header of a record it is recording over this one.
    """
    if not info.recording:
        return info
    video = info.video
    if video is not None and video.get("state") == "recording":
        video = {**video, "state": "failed", "reason": "the service stopped while recording"}
    try:
        return attrs.evolve(info, stopped_at=_retained(path).mtime, video=video)
    except OSError:
        return attrs.evolve(info, stopped_at=info.started_at, video=video)


def _retained(path: Path) -> RetainedFile:
    size, mtime = 0, 0.0
    for child in path.iterdir():
        st = child.stat(follow_symlinks=False)
        size += st.st_size
        mtime = max(mtime, st.st_mtime)
    return RetainedFile(name=path.name, mtime=mtime, size=size)


def record_not_found() -> NotFound:
    """The one 404 of every record lookup (a bad id, an unknown one, one not the caller's)."""
    return NotFound("record not found",
                    hint="GET /records lists them; old records are removed by retention")
