"""A record's video without Chromium: the fake CDP peer sends screencast frames, small
Python scripts stand in for ffmpeg (one that copies its input, one that crashes, one that
never finishes), and the store runs the video beside its record."""

from __future__ import annotations

import base64
import io
import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import trio
from PIL import Image

from browserd.errors import FfmpegMissing, Overloaded, Unavailable
from browserd.records import RecordStore
from browserd.records import video as video_module
from browserd.records.video import VideoLimits, find_ffmpeg, record_video
from tests.fakecdp import running_tab, tab_peer

#: ffmpeg stand-ins: the last argument is the output file (as ffmpeg_command puts it).
COPY = ("import sys\nout = open(sys.argv[-1], 'ab', buffering=0)\n"
        "while chunk := sys.stdin.buffer.read1(65536):\n    out.write(chunk)\n")
CRASH = ("import sys\nsys.stdin.buffer.read(10)\nsys.stderr.write('boom: bad frame\\n')\n"
         "sys.exit(3)\n")
STUCK = ("import signal, sys, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
         "open(sys.argv[-1] + '.pid', 'w').write(str(__import__('os').getpid()))\n"
         "sys.stdin.buffer.read()\ntime.sleep(60)\n")


def _script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _jpeg() -> str:
    out = io.BytesIO()
    Image.new("RGB", (64, 48), "red").save(out, format="JPEG")
    return base64.b64encode(out.getvalue()).decode()


FRAME = _jpeg()


async def _record(tmp_path: Path, ffmpeg: str, *, frames: int = 3, stop_after: float | None,
                  limits: VideoLimits | None = None) -> tuple[video_module.VideoOutcome, Any]:
    """Run a video of a fake tab: ``frames`` frames, then ``stop`` after ``stop_after`` s."""
    peer = tab_peer()
    async with running_tab(peer) as tab:
        peer.on("Target.attachToTarget", lambda p, s: {"sessionId": "V1"})
        stop = trio.Event()
        outcome: list[video_module.VideoOutcome] = []

        async def run() -> None:
            outcome.append(await record_video(
                tab.connection, tab, ffmpeg=ffmpeg, out=tmp_path / "video.webm", stop=stop,
                front_lock=trio.Lock(), limits=limits or VideoLimits(fps=10)))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(run)
            while not peer.sent("Page.startScreencast"):
                await trio.sleep(0.01)
            for n in range(frames):
                await peer.emit("Page.screencastFrame", {"data": FRAME, "sessionId": n + 1,
                                                         "metadata": {}}, session_id="V1")
            if stop_after is not None:
                await trio.sleep(stop_after)
                stop.set()
        return outcome[0], peer


async def test_frames_are_acked_and_written_once_per_tick_until_stopped(tmp_path: Path
                                                                        ) -> None:
    copy = _script(tmp_path, "ffmpeg", COPY)
    outcome, peer = await _record(tmp_path, copy, stop_after=0.55)
    assert outcome.ok and outcome.reason == "stopped", outcome
    assert [p["sessionId"] for p in peer.sent("Page.screencastFrameAck")] == [1, 2, 3]
    assert peer.sent("Page.startScreencast")[0]["format"] == "jpeg"
    assert peer.sent("Target.detachFromTarget") == [{"sessionId": "V1"}]
    assert outcome.screencast_frames == 3 and (outcome.width, outcome.height) == (64, 48)
    # ~0.55 s at 10 fps: the latest frame, repeated (a page that does not change).
    assert 3 <= outcome.frames <= 8, outcome
    written = (tmp_path / "video.webm").read_bytes()
    assert written == base64.b64decode(FRAME) * outcome.frames
    assert outcome.bytes == len(written)
    assert stat.S_IMODE((tmp_path / "video.webm").stat().st_mode) == 0o600
    assert outcome.to_json()["durationS"] == outcome.frames / 10


async def test_the_duration_limit_ends_the_video(tmp_path: Path) -> None:
    copy = _script(tmp_path, "ffmpeg", COPY)
    outcome, _ = await _record(tmp_path, copy, stop_after=None,
                               limits=VideoLimits(fps=10, max_s=0.3))
    assert outcome.ok and outcome.reason == "limit: 0.3 s", outcome
    assert 2 <= outcome.frames <= 4


async def test_the_size_limit_ends_the_video(tmp_path: Path) -> None:
    copy = _script(tmp_path, "ffmpeg", COPY)
    limit = len(base64.b64decode(FRAME)) * 12  # about a second of frames
    outcome, _ = await _record(tmp_path, copy, stop_after=None,
                               limits=VideoLimits(fps=10, max_bytes=limit))
    assert outcome.ok and outcome.reason.startswith("limit: "), outcome
    assert outcome.bytes >= limit


async def test_an_ffmpeg_crash_ends_the_video_with_its_words(tmp_path: Path) -> None:
    crash = _script(tmp_path, "ffmpeg", CRASH)
    outcome, _ = await _record(tmp_path, crash, stop_after=None)
    assert not outcome.ok, outcome
    assert "code 3" in outcome.reason and "boom: bad frame" in outcome.reason, outcome


async def test_an_ffmpeg_that_never_finishes_is_killed(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(video_module, "FINISH_S", 0.3)
    stuck = _script(tmp_path, "ffmpeg", STUCK)
    outcome, _ = await _record(tmp_path, stuck, stop_after=0.2)
    assert not outcome.ok and "killed" in outcome.reason, outcome
    pid = int((tmp_path / "video.webm.pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # reaped: no such process any more


async def test_cancellation_still_stops_ffmpeg(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(video_module, "FINISH_S", 0.3)
    stuck = _script(tmp_path, "ffmpeg", STUCK)
    peer = tab_peer()
    async with running_tab(peer) as tab:
        peer.on("Target.attachToTarget", lambda p, s: {"sessionId": "V1"})
        with trio.move_on_after(0.5):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(lambda: record_video(
                    tab.connection, tab, ffmpeg=stuck, out=tmp_path / "video.webm",
                    stop=trio.Event(), front_lock=trio.Lock(), limits=VideoLimits()))
                while not peer.sent("Page.startScreencast"):
                    await trio.sleep(0.01)
                await peer.emit("Page.screencastFrame", {"data": FRAME, "sessionId": 1},
                                session_id="V1")
    pid = int((tmp_path / "video.webm.pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_no_frame_no_ffmpeg(tmp_path: Path) -> None:
    outcome, _ = await _record(tmp_path, "/nonexistent/ffmpeg", frames=0, stop_after=0.1)
    assert not outcome.ok and "no frame came from the tab" in outcome.reason
    assert not (tmp_path / "video.webm").exists()


def test_ffmpeg_is_found_or_424(tmp_path: Path) -> None:
    with pytest.raises(FfmpegMissing) as caught:
        find_ffmpeg(str(tmp_path / "nothing"))
    assert caught.value.status == 424 and "apt-get install ffmpeg" in caught.value.hint
    copy = _script(tmp_path, "ffmpeg", COPY)
    assert find_ffmpeg(copy) == copy


# -- the store runs it beside the record -------------------------------------------------------


async def test_the_store_runs_the_video_and_stop_waits_for_its_end(tmp_path: Path) -> None:
    store = RecordStore(tmp_path / "records")
    seen: list[Path] = []

    async def video(out: Path, stop: trio.Event) -> Mapping[str, Any]:
        seen.append(out)
        await stop.wait()
        await trio.sleep(0.05)  # finishing the file
        out.write_bytes(b"webm")
        return {"state": "done", "reason": "stopped", "bytes": 4}

    with pytest.raises(Unavailable):
        await store.start("p", None, "agent", None, video=video)
    async with trio.open_nursery() as nursery:
        await nursery.start(store.run)
        info = await store.start("p", None, "agent", None, video=video, video_target="T1")
        assert info.video is not None and info.video["state"] == "recording"
        stopped = await store.stop("p", None, "agent")
        assert stopped.video is not None
        assert (stopped.video["state"], stopped.video["targetId"]) == ("done", "T1")
        assert seen == [store.video_path(info.id)]
        assert store.video_path(info.id).read_bytes() == b"webm"
        loaded, _ = await store.load(info.id)
        assert loaded.video == stopped.video and loaded.bytes >= 4
        nursery.cancel_scope.cancel()


async def test_a_video_ending_by_itself_leaves_the_record_recording(tmp_path: Path) -> None:
    store = RecordStore(tmp_path / "records")

    async def crashes(out: Path, stop: trio.Event) -> Mapping[str, Any]:
        return {"state": "failed", "reason": "ffmpeg exited by itself (code 1)"}

    async def bug(out: Path, stop: trio.Event) -> Mapping[str, Any]:
        raise RuntimeError("a bug")

    async with trio.open_nursery() as nursery:
        await nursery.start(store.run)
        info = await store.start("p", "s1", "agent", None, video=crashes)
        active = store.active_for("p", "s1", "agent")
        assert active is not None and active.video_done is not None
        await active.video_done.wait()
        assert active.info.recording and active.info.video is not None
        assert active.info.video["state"] == "failed"
        # Written to the header at once (not only at stop).
        loaded, _ = await store.load(info.id)
        assert loaded.video is not None and "code 1" in loaded.video["reason"]
        await store.stop("p", "s1", "agent")
        other = await store.start("p", "s2", "agent", None, video=bug)
        active = store.active_for("p", "s2", "agent")
        assert active is not None and active.video_done is not None
        await active.video_done.wait()
        assert active.info.video is not None
        assert active.info.video["reason"] == "internal error: RuntimeError"
        await store.delete(other.id)
        nursery.cancel_scope.cancel()


async def test_deleting_stops_the_video_first_and_leaves_nothing(tmp_path: Path) -> None:
    store = RecordStore(tmp_path / "records")
    stopped = trio.Event()

    async def video(out: Path, stop: trio.Event) -> Mapping[str, Any]:
        await stop.wait()
        stopped.set()
        return {"state": "done", "reason": "stopped"}

    async with trio.open_nursery() as nursery:
        await nursery.start(store.run)
        info = await store.start("p", None, "agent", None, video=video)
        await store.delete(info.id)
        assert stopped.is_set()
        assert not (tmp_path / "records" / info.id).exists()
        nursery.cancel_scope.cancel()


async def test_a_video_left_recording_by_an_earlier_run_reads_as_failed(tmp_path: Path
                                                                        ) -> None:
    store = RecordStore(tmp_path / "records")

    async def video(out: Path, stop: trio.Event) -> Mapping[str, Any]:
        await trio.sleep_forever()
        raise AssertionError

    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            await nursery.start(store.run)
            info = await store.start("p", None, "agent", None, video=video)
            scope.cancel()
    # A new store (a new run of the service) reads it as ended, its video failed.
    loaded, _ = await RecordStore(tmp_path / "records").load(info.id)
    assert not loaded.recording and loaded.video is not None
    assert loaded.video["state"] == "failed"
    assert "service stopped" in loaded.video["reason"]


async def test_at_most_max_videos_run_at_once(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from browserd.records import store as store_module

    monkeypatch.setattr(store_module, "MAX_VIDEOS", 2)
    store = RecordStore(tmp_path / "records")

    async def video(out: Path, stop: trio.Event) -> Mapping[str, Any]:
        await stop.wait()
        return {"state": "done", "reason": "stopped"}

    async with trio.open_nursery() as nursery:
        await nursery.start(store.run)
        await store.start("p", "a", "agent", None, video=video)
        await store.start("p", "b", "agent", None, video=video)
        with pytest.raises(Overloaded):
            await store.start("p", "c", "agent", None, video=video)
        await store.start("p", "c", "agent", None)  # without video: fine
        await store.stop("p", "a", "agent")
        await store.stop("p", "c", "agent")
        await store.start("p", "c", "agent", None, video=video)  # a slot is free again
        nursery.cancel_scope.cancel()
