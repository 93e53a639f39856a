"""A record's video: one tab's screencast, encoded by ffmpeg into a WebM file.

:func:`video_task` makes what :meth:`browserd.records.store.RecordStore.start`
runs beside a record (in the store's nursery) when it is started with
``video: true``. The task

- opens a CDP session of its own on the tab (``Target.attachToTarget``,
  flattened, as the ops page's live view does: the tab's own session and
  other viewers are not disturbed), brings the tab to the front under the
  browser's front lock (a background tab is not painted) and starts
  ``Page.startScreencast`` (JPEG); every frame is acknowledged
  (``Page.screencastFrameAck``) as soon as it is taken, and kept as the latest;
- on the first frame starts ffmpeg (``image2pipe`` of JPEGs at
  :attr:`VideoLimits.fps` frames a second → VP8 in WebM, the first frame's
  size, later sizes scaled and padded into it) as a child process, writing a
  0600 file in the record's directory;
- writes the latest frame to ffmpeg's stdin once per tick (a page that does
  not change sends no frames; its picture is repeated, so the video runs in
  real time);
- ends at the first of: the record stops (``stop``), a limit
  (:attr:`VideoLimits.max_s`, :attr:`VideoLimits.max_bytes`), the tab closes,
  the browser connection ends, ffmpeg exits by itself (a crash), a CDP or
  pipe error. The reason is in the outcome: the record goes on without video.

Stopping is bounded: the screencast session is detached (≤ 2 s), ffmpeg's
stdin is closed so it finishes the file, it is waited for
(:data:`FINISH_S`), then killed and reaped. ffmpeg is never left running:
that stop runs shielded on cancellation too (the service stopping), and if
browserd dies ffmpeg reads the end of its stdin and exits by itself. Errors
never propagate out of the task: the outcome says what happened
(``state: "done"`` with a playable file, or ``"failed"`` with the reason).
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import trio

from ..cdp import CdpConnection, CdpSession
from ..errors import BrowserdError, FfmpegMissing
from ..tabs.actor import TabActor
from ..tabs.imaging import decode_base64, image_size

__all__ = ["FINISH_S", "VIDEO_MIME", "VideoLimits", "VideoOutcome", "VideoTask",
           "ffmpeg_command", "find_ffmpeg", "video_task"]

log = logging.getLogger(__name__)

VIDEO_MIME = "video/webm"
#: How long ffmpeg may take to finish the file once its stdin is closed (then it is killed).
FINISH_S = 5.0
_CDP_DEADLINE_S = 5.0
_DETACH_DEADLINE_S = 2.0
#: A write to ffmpeg that takes longer than this ends the video (ffmpeg stopped reading).
_WRITE_DEADLINE_S = 5.0
_STDERR_TAIL = 2000
_FRAME_EVENTS = frozenset({"Page.screencastFrame"})

#: What the record store runs beside a record: ``(file, stop) → the video's outcome`` (JSON).
VideoTask = Callable[[Path, trio.Event], Awaitable[Mapping[str, Any]]]


@attrs.frozen(kw_only=True)
class VideoLimits:
    """How a video is taken and how far it may grow (it ends at the first limit)."""

    max_bytes: int = 50 * 1024 * 1024
    max_s: float = 600.0
    fps: int = 10
    max_width: int = 1280
    max_height: int = 720
    jpeg_quality: int = 70
    bitrate: str = "1M"


@attrs.frozen(kw_only=True)
class VideoOutcome:
    """How a video ended: ``ok`` (a playable file) or not, why, and how much it holds."""

    ok: bool
    reason: str
    frames: int = 0
    screencast_frames: int = 0
    bytes: int = 0
    width: int | None = None
    height: int | None = None
    fps: int

    def to_json(self) -> dict[str, Any]:
        return {"state": "done" if self.ok else "failed", "reason": self.reason,
                "frames": self.frames, "screencastFrames": self.screencast_frames,
                "durationS": round(self.frames / self.fps, 2), "bytes": self.bytes,
                "width": self.width, "height": self.height, "mime": VIDEO_MIME}


def find_ffmpeg(setting: str | None) -> str:
    """The ffmpeg executable: ``setting`` (a path, or a name on PATH), else ``ffmpeg`` on
    PATH. 424 FFMPEG_MISSING when there is none (no I/O beyond the lookup)."""
    wanted = setting or "ffmpeg"
    found = shutil.which(wanted)
    if found is None:
        raise FfmpegMissing(f"a record's video needs ffmpeg, and {wanted!r} was not found",
                            hint="install it: apt-get install ffmpeg (Debian, Ubuntu), "
                                 "brew install ffmpeg (macOS); or set ffmpeg to its path")
    return found


def ffmpeg_command(ffmpeg: str, out: Path, size: tuple[int, int],
                   limits: VideoLimits) -> list[str]:
    """ffmpeg reading JPEGs on stdin at ``limits.fps``, writing VP8/WebM of ``size`` to
    ``out`` (``-fs``: a hard stop a little past :attr:`VideoLimits.max_bytes`)."""
    width, height = size
    fit = (f"scale={width}:{height}:force_original_aspect_ratio=decrease,"
           f"pad={width}:{height}:(ow-iw)/2:(oh-ih)/2:color=gray")
    return [ffmpeg, "-hide_banner", "-loglevel", "error",
            "-f", "image2pipe", "-c:v", "mjpeg", "-framerate", str(limits.fps), "-i", "pipe:0",
            "-vf", fit, "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8",
            "-b:v", limits.bitrate, "-crf", "10", "-qmin", "0", "-qmax", "50",
            "-threads", "1", "-pix_fmt", "yuv420p", "-an",
            "-fs", str(limits.max_bytes + 1024 * 1024), "-f", "webm", "-y", str(out)]


def video_task(connection: CdpConnection, tab: TabActor, *, ffmpeg: str,
               front_lock: trio.Lock, limits: VideoLimits | None = None) -> VideoTask:
    """The video of ``tab`` as the store runs it (see the module docstring)."""
    chosen = limits or VideoLimits()

    async def run(out: Path, stop: trio.Event) -> Mapping[str, Any]:
        outcome = await record_video(connection, tab, ffmpeg=ffmpeg, out=out, stop=stop,
                                     front_lock=front_lock, limits=chosen)
        return outcome.to_json()

    return run


class _Video:
    """The state one video's tasks share (plain, in this task tree only)."""

    def __init__(self) -> None:
        self.latest: bytes | None = None
        self.received = 0
        self.written = 0
        self.size: tuple[int, int] | None = None
        self.first = trio.Event()
        self.ended = trio.Event()
        self.reason = ""
        self.failed = False
        self.stderr = b""

    def end(self, reason: str, *, failed: bool = False) -> None:
        """The first reason wins."""
        if not self.ended.is_set():
            self.reason, self.failed = reason, failed
            self.ended.set()


async def record_video(connection: CdpConnection, tab: TabActor, *, ffmpeg: str, out: Path,
                       stop: trio.Event, front_lock: trio.Lock,
                       limits: VideoLimits) -> VideoOutcome:
    """Record ``tab`` into ``out`` until ``stop`` or another end (module docstring).

    Never raises but Cancelled (after the bounded, shielded stop)."""
    video = _Video()
    process: trio.Process | None = None
    session: CdpSession | None = None
    frames = None
    try:
        with trio.fail_after(_CDP_DEADLINE_S):
            attached = await connection.send("Target.attachToTarget",
                                              {"targetId": tab.target_id, "flatten": True})
        session = connection.session(str(attached["sessionId"]))
        frames = session.subscribe(_FRAME_EVENTS, buffer=16)
        async with front_lock:
            with trio.fail_after(_CDP_DEADLINE_S):
                await session.send("Page.bringToFront")
        with trio.fail_after(_CDP_DEADLINE_S):
            await session.send("Page.startScreencast", {
                "format": "jpeg", "quality": limits.jpeg_quality,
                "maxWidth": limits.max_width, "maxHeight": limits.max_height,
                "everyNthFrame": 1})
        # Every task in here ends the video with its reason instead of raising.
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_take_frames, session, frames, video)
            nursery.start_soon(_watch_tab, tab, video)
            nursery.start_soon(_watch_stop, stop, video)
            if await _wait_first(video):
                try:
                    process = await _start_ffmpeg(ffmpeg, out, video, limits)
                except OSError as exc:
                    video.end(f"ffmpeg could not be started: {exc}", failed=True)
                else:
                    assert process.stdin is not None
                    nursery.start_soon(_watch_ffmpeg, process, video)
                    await _feed(process.stdin, out, video, limits)
            nursery.cancel_scope.cancel()
    except (BrowserdError, trio.TooSlowError) as exc:
        video.end(f"the screencast could not start: {_describe(exc)}", failed=True)
    finally:
        with trio.CancelScope(shield=True):
            if frames is not None:
                connection.unsubscribe(frames)
            if session is not None:
                await _detach(connection, session)
            if process is not None:
                await _finish(process, video)
    return await _outcome(out, video, limits, process is not None)


async def _wait_first(video: _Video) -> bool:
    """Wait for the first frame (True) or the end (False), whichever comes first."""
    async with trio.open_nursery() as nursery:

        async def wait(event: trio.Event) -> None:
            await event.wait()
            nursery.cancel_scope.cancel()

        nursery.start_soon(wait, video.first)
        nursery.start_soon(wait, video.ended)
    return not video.ended.is_set()


async def _take_frames(session: CdpSession, frames: Any, video: _Video) -> None:
    """Keep each frame as the latest and acknowledge it; the stream's end ends the video."""
    try:
        async for event in frames:
            params = event.params
            data = await decode_base64(params.get("data"))
            if video.size is None:
                video.size = image_size(data, "image/jpeg")
            video.latest = data
            video.received += 1
            video.first.set()
            with trio.fail_after(_CDP_DEADLINE_S):
                await session.send("Page.screencastFrameAck",
                                   {"sessionId": params.get("sessionId")})
    except (BrowserdError, trio.TooSlowError) as exc:
        video.end(f"the screencast failed: {_describe(exc)}", failed=video.written == 0)
        return
    video.end("the browser connection closed")


async def _watch_tab(tab: TabActor, video: _Video) -> None:
    while not tab.view().closed:
        await tab.wait_changed()
    video.end("the tab closed")


async def _watch_stop(stop: trio.Event, video: _Video) -> None:
    await stop.wait()
    video.end("stopped")


async def _start_ffmpeg(ffmpeg: str, out: Path, video: _Video,
                        limits: VideoLimits) -> trio.Process:
    """ffmpeg for the first frame's size (even: VP8's 4:2:0 needs it), into a new 0600
    ``out``. OSError when it cannot be started."""
    width, height = video.size or (limits.max_width, limits.max_height)
    size = (max(2, width - width % 2), max(2, height - height % 2))
    await trio.to_thread.run_sync(_create_private, out)
    return await trio.lowlevel.open_process(
        ffmpeg_command(ffmpeg, out, size, limits), stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)


def _create_private(path: Path) -> None:
    """An empty file only we may read (ffmpeg then writes it, keeping its mode)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0),
                 0o600)
    os.close(fd)


async def _feed(stdin: trio.abc.SendStream, out: Path, video: _Video,
                limits: VideoLimits) -> None:
    """The latest frame, once per tick, until the video ends (between two writes)."""
    start = trio.current_time()
    ticks = 0
    while not video.ended.is_set():
        elapsed = trio.current_time() - start
        if elapsed >= limits.max_s:
            video.end(f"limit: {limits.max_s:g} s")
            return
        if ticks % limits.fps == 0 and ticks:
            try:
                size = await trio.to_thread.run_sync(os.path.getsize, out)
            except OSError as exc:
                video.end(f"the video file went away: {exc.strerror}", failed=True)
                return
            if size >= limits.max_bytes:
                video.end(f"limit: {limits.max_bytes // (1024 * 1024)} MiB")
                return
        due = int(elapsed * limits.fps) + 1
        if due - ticks > limits.fps:  # more than a second behind (a busy machine): skip
            ticks = due - 1
        frame = video.latest
        assert frame is not None
        try:
            with trio.move_on_after(_WRITE_DEADLINE_S) as write:
                await stdin.send_all(frame)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            await trio.sleep(0.1)  # ffmpeg's own exit, when it is one, says more
            video.end("ffmpeg closed its input", failed=True)
            return
        if write.cancelled_caught:
            video.end("ffmpeg stopped taking frames", failed=True)
            return
        ticks += 1
        video.written = ticks
        with trio.move_on_at(start + ticks / limits.fps):
            await video.ended.wait()


async def _read_stderr(stderr: trio.abc.ReceiveStream, video: _Video) -> None:
    """Keep the last :data:`_STDERR_TAIL` bytes ffmpeg wrote (so its pipe never fills)."""
    try:
        while data := await stderr.receive_some(4096):
            video.stderr = (video.stderr + data)[-_STDERR_TAIL:]
    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
        return


async def _watch_ffmpeg(process: trio.Process, video: _Video) -> None:
    """ffmpeg exiting before its input ended: a crash (or its own size stop, code 0)."""
    assert process.stderr is not None
    await _read_stderr(process.stderr, video)  # until ffmpeg closes it: it is exiting
    code = await process.wait()
    if code == 0:
        video.end("ffmpeg ended the file by itself (its size limit)")
    else:
        video.end(f"ffmpeg exited by itself (code {code}): {_tail(video)}", failed=True)


async def _detach(connection: CdpConnection, session: CdpSession) -> None:
    """Detach the video's session (its screencast stops with it); bounded, errors ignored."""
    with trio.move_on_after(_DETACH_DEADLINE_S):
        try:
            await connection.send("Target.detachFromTarget", {"sessionId": session.session_id})
        except BrowserdError:
            pass  # the tab or the browser is gone: so is the session


async def _finish(process: trio.Process, video: _Video) -> None:
    """Close ffmpeg's stdin, wait :data:`FINISH_S` for it to finish the file (reading its
    stderr meanwhile), else kill it; always reaped (the caller shields this)."""
    video.end("cancelled: the service is stopping")  # (when nothing ended it first)
    if process.stdin is not None:
        try:
            await process.stdin.aclose()
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
    async with trio.open_nursery() as nursery:
        if process.stderr is not None:
            nursery.start_soon(_read_stderr, process.stderr, video)
        with trio.move_on_after(FINISH_S):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()
            video.reason += f"; ffmpeg did not finish within {FINISH_S:g} s and was killed"
            video.failed = True
        elif process.returncode != 0 and not video.failed:
            video.reason += f"; ffmpeg failed (code {process.returncode}): {_tail(video)}"
            video.failed = True
        nursery.cancel_scope.cancel()


async def _outcome(out: Path, video: _Video, limits: VideoLimits, started: bool
                   ) -> VideoOutcome:
    size = 0
    if started:
        try:
            size = await trio.to_thread.run_sync(os.path.getsize, out)
        except OSError:
            size = 0
    ok = started and not video.failed and size > 0
    reason = video.reason
    if not started:
        reason += "; no frame came from the tab (a background tab is not painted)"
    if started and size == 0 and not video.failed:
        reason += "; ffmpeg wrote nothing"
    log.info("record video: %s (%d frames, %d bytes)", reason, video.written, size)
    width, height = video.size or (None, None)
    return VideoOutcome(ok=ok, reason=reason, frames=video.written,
                        screencast_frames=video.received, bytes=size, width=width,
                        height=height, fps=limits.fps)


def _tail(video: _Video) -> str:
    text = video.stderr.decode("utf-8", errors="replace").strip().splitlines()
    return " / ".join(text[-3:])[-500:] or "no message"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BrowserdError):
        return f"{exc.code}: {exc.message}"
    if isinstance(exc, trio.TooSlowError):
        return "the browser did not answer in time"
    return f"{type(exc).__name__}: {exc}"
