"""A record's video against real Chromium and the real ffmpeg.

A short animation is recorded with ``POST /record/start {video: true}``; the
WebM is served by ``GET /records/{id}/video``, starts with the EBML magic and
``ffprobe`` finds a video stream with frames. ffmpeg killed mid-record ends
the video with a reason while the record goes on; no ffmpeg is left running.
A service whose ``ffmpeg`` setting names nothing answers 424 FFMPEG_MISSING
(that one never starts a browser).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from tests.conftest import PageServer, ServiceInfo, add_route, start_service, stop_service
from tests.integration.helpers import Session, html_route

pytestmark = pytest.mark.chromium

EBML_MAGIC = bytes.fromhex("1A45DFA3")
_ANIMATION = """<!doctype html><html><head><title>moving</title><style>
body { margin: 0; }
#ball { position: absolute; top: 100px; width: 80px; height: 80px; border-radius: 40px;
        background: rgb(220, 30, 30); animation: go 1s linear infinite alternate; }
@keyframes go { from { left: 0; } to { left: 600px; } }
</style></head><body><div id="ball"></div><button>Press</button></body></html>"""

add_route("/video-animation", html_route(_ANIMATION))


@pytest.fixture
async def session(api: httpx.AsyncClient) -> AsyncIterator[Session]:
    r = await api.post("/sessions", json={"name": "video"})
    assert r.status_code == 200, r.text
    sid = r.json()["sessionId"]
    yield Session(api, sid)
    await api.delete(f"/sessions/{sid}")


def ffmpeg_pids(record_id: str) -> list[int]:
    """The ffmpeg processes writing this record's video (by their command line)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"ffmpeg") and any(record_id.encode() in a for a in argv):
            found.append(int(entry.name))
    return found


def probe(path: Path) -> dict[str, Any]:
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-count_frames", "-show_entries",
         "stream=codec_type,codec_name,width,height,nb_read_frames", "-of", "json", str(path)],
        capture_output=True, check=True, timeout=60).stdout
    data: dict[str, Any] = json.loads(out)
    return data


async def wait_video(s: Session, record_id: str, state: str) -> dict[str, Any]:
    """The record's video once it is in ``state`` (polled; the caller's deadline bounds it)."""
    while True:
        r = await s.get(f"/records/{record_id}")
        assert r.status_code == 200, r.text
        video: dict[str, Any] = r.json()["video"]
        if video["state"] == state:
            return video
        await trio.sleep(0.1)


async def test_a_short_animation_becomes_a_webm(session: Session, pages: PageServer,
                                                tmp_path: Path) -> None:
    tab = (await session.ok("/tabs/open", url=pages.url("/video-animation")))["targetId"]
    started = (await session.ok("/record/start", targetId=tab, video=True))["record"]
    record_id = started["id"]
    assert started["video"]["state"] == "recording"
    assert started["video"]["url"] == f"/records/{record_id}/video"
    assert started["video"]["targetId"] == tab
    r = await session.get(f"/records/{record_id}/video")
    assert (r.status_code, r.json()["code"]) == (409, "CONFLICT"), r.text
    await trio.sleep(1.5)
    await session.ok("/click", targetId=tab, role="button", name="Press")
    await trio.sleep(0.5)
    with trio.fail_after(30):
        assert ffmpeg_pids(record_id), "ffmpeg runs while the record records"
        stopped = (await session.ok("/record/stop"))["record"]
    video = stopped["video"]
    assert video["state"] == "done" and video["reason"] == "stopped", video
    assert video["frames"] >= 10 and video["screencastFrames"] >= 2, video
    assert video["durationS"] == pytest.approx(video["frames"] / 10)
    assert not ffmpeg_pids(record_id), "ffmpeg is gone once the record stopped"
    r = await session.get(f"/records/{record_id}/video")
    assert r.status_code == 200 and r.headers["content-type"] == "video/webm"
    assert r.content[:4] == EBML_MAGIC and len(r.content) == video["bytes"]
    assert stopped["bytes"] >= video["bytes"]
    path = tmp_path / "v.webm"
    path.write_bytes(r.content)
    [stream] = probe(path)["streams"]
    assert (stream["codec_type"], stream["codec_name"]) == ("video", "vp8")
    assert int(stream["nb_read_frames"]) == video["frames"]
    assert (stream["width"], stream["height"]) == (1280, 720)
    # The listing shows it; another session's agent does not see it.
    listed = (await session.get("/records")).json()["records"]
    assert next(r for r in listed if r["id"] == record_id)["video"]["state"] == "done"
    other = await session.api.get(f"/records/{record_id}/video")
    assert other.status_code == 404


async def test_ffmpeg_dying_ends_the_video_not_the_record(session: Session,
                                                          pages: PageServer) -> None:
    tab = (await session.ok("/tabs/open", url=pages.url("/video-animation")))["targetId"]
    record_id = (await session.ok("/record/start", targetId=tab, video=True))["record"]["id"]
    with trio.fail_after(30):
        while not (pids := ffmpeg_pids(record_id)):
            await trio.sleep(0.1)
        for pid in pids:
            os.kill(pid, signal.SIGKILL)  # ffmpeg of the service this test started
        video = await wait_video(session, record_id, "failed")
        assert "ffmpeg" in video["reason"], video
        # The record goes on: a later call is a step of it.
        await session.ok("/click", targetId=tab, role="button", name="Press")
        stopped = (await session.ok("/record/stop"))["record"]
    assert stopped["steps"] == 1 and stopped["video"]["state"] == "failed"
    assert not ffmpeg_pids(record_id)


async def test_a_record_without_video_has_none(session: Session) -> None:
    record = (await session.ok("/record/start"))["record"]
    assert record["video"] is None
    await session.ok("/record/stop")
    r = await session.get(f"/records/{record['id']}/video")
    assert (r.status_code, r.json()["code"]) == (404, "NOT_FOUND")


@pytest.fixture(scope="module")
def no_ffmpeg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceInfo]:
    """A service whose ffmpeg setting names nothing (and which never starts a browser)."""
    info = start_service(tmp_path_factory.mktemp("noffmpeg"), wait_browser=False, env={
        "BROWSERD_FFMPEG": "/nonexistent/ffmpeg", "BROWSERD_AUTO_START": "false"})
    yield info
    stop_service(info)


async def test_no_ffmpeg_is_424_at_start(no_ffmpeg: ServiceInfo) -> None:
    assert shutil.which("/nonexistent/ffmpeg") is None
    async with no_ffmpeg.client() as client:
        r = await client.post("/record/start", json={"video": True})
        body = r.json()
        assert (r.status_code, body["code"]) == (424, "FFMPEG_MISSING"), r.text
        assert "apt-get install ffmpeg" in body["hint"]
        assert (await client.get("/records")).json()["records"] == []


async def test_the_cli_records_and_writes_a_video(service: ServiceInfo, session: Session,
                                                  pages: PageServer, tmp_path: Path) -> None:
    await session.ok("/tabs/open", url=pages.url("/video-animation"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSERD_")}
    env |= {"BROWSERD_HOME": str(service.home), "BROWSERD_CONTROL_URL": service.base_url}
    sid = session.headers["X-Browserd-Session"]

    async def browserd(*argv: str) -> str:
        proc = await trio.run_process(
            [sys.executable, "-m", "browserd", "--session", sid, "--boundary", "off", *argv],
            env=env, capture_stdout=True, capture_stderr=True, check=False)
        assert proc.returncode == 0, proc.stderr.decode()
        return str(proc.stdout.decode())

    record_id = json.loads(await browserd("record", "start", "--video", "--json"))["record"]["id"]
    await trio.sleep(1)
    await browserd("record", "stop")
    assert f"{record_id}  steps=0  stopped  session={sid}  video=done" in await browserd(
        "record", "list")
    out = tmp_path / "r.webm"
    assert (await browserd("record", "video", record_id, "--out", str(out))).strip() == \
        f"wrote {out}"
    assert out.read_bytes()[:4] == EBML_MAGIC
