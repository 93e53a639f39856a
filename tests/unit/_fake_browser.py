"""The fake browser process the stop-ladder and launch tests share (test_stop_ladder.py,
test_browser_launch.py).

The fake (:data:`FAKE_BROWSER`, written out by the ``fake_browser`` fixture) is a
small Python script launched exactly as Chromium would be (same argv, CDP pipes on
fds 3 and 4, own process group). It answers ``Browser.getVersion`` on the pipe
(browserd's readiness check), then behaves as ``FAKE_BROWSER_MODE`` asks: exit on
``Browser.close``, ignore it but clean up on SIGTERM, ignore SIGTERM too, fail to
start, serve, and so on; like Chromium it exits when browserd's end of the pipe
closes. The ``short_ladder`` fixture shortens the ladder's first wait; the rest are
helpers to launch it and see what became of it. Fixtures are imported as
``name as name``: pytest finds them by that name.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import trio

from browserd.browser import process as process_module
from browserd.browser.process import BrowserProcess, LaunchSpec, run_browser
from browserd.errors import BrowserGone, unwrap_group

__all__ = ["FAKE_BROWSER", "alive", "fake_browser", "raised_by", "run_browser_until_it_ends",
           "short_ladder", "spec_for", "supervise"]


FAKE_BROWSER = """\
import json, os, signal, sys, threading, time
mode = os.environ.get("FAKE_BROWSER_MODE", "close")
marker = os.environ.get("FAKE_BROWSER_MARKER")
if mode == "exit":
    sys.stderr.write("[0101/000000.000000:INFO:noise] ignored\\nfatal: no display\\n")
    sys.stderr.flush()
    sys.exit(1)
if mode == "profile-in-use":  # what Chromium does when another browser holds the profile
    os.close(3)  # the pipe closes a moment before the exit code is known
    os.close(4)
    time.sleep(0.3)
    sys.exit(21)
if mode.startswith("orphan"):  # a "renderer" in our process group that outlives us
    # "orphan-holding-pipe[-exit]": one that also holds the CDP pipe and stderr open
    import subprocess
    holds = (4,) if "holding" in mode else ()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"],
                             pass_fds=holds)
    with open(marker, "w") as f:
        f.write(str(child.pid))
    mode = "exit-when-ready" if mode.endswith("-exit") else "close"

def on_term(signum, frame):
    if marker:
        with open(marker, "w") as f:
            f.write("sigterm")
    os._exit(0)

def reply(message):
    os.write(4, json.dumps(message).encode() + b"\\0")

def serve_pipe():
    # Like Chromium with --remote-debugging-pipe: NUL-framed JSON commands on
    # fd 3, replies on fd 4; when browserd's end closes (the lifeline), exit.
    buffer = b""
    while True:
        chunk = os.read(3, 4096)
        if not chunk:
            os._exit(0)
        buffer += chunk
        *messages, buffer = buffer.split(b"\\0")
        for raw in messages:
            command = json.loads(raw)
            method = command.get("method")
            if method == "Browser.getVersion" and mode != "mute":
                if mode == "chatty":  # an event first: it is not the reply
                    reply({"method": "Target.targetCreated", "params": {"id": command["id"]}})
                reply({"id": command["id"], "result": {"product": "Fake/1.0"}})
                if mode == "exit-when-ready":
                    os._exit(3)
                if mode == "drop-pipe":  # ready, then the pipe breaks; the process lives on
                    os.close(3)
                    os.close(4)
                    return
            elif method == "Browser.close" and mode in ("close", "flood-on-close", "serve"):
                if mode == "flood-on-close":  # last events, far more than a pipe holds
                    event = json.dumps({"method": "Target.detachedFromTarget",
                                        "params": {"pad": "x" * 4000}}).encode() + b"\\0"
                    for _ in range(512):
                        os.write(4, event)
                reply({"id": command["id"], "result": {}})
                os._exit(0)
            elif mode == "serve" and "id" in command:  # a browser with no pages: {} to all
                result = {"targetInfos": []} if method == "Target.getTargets" else {}
                reply({"id": command["id"], "result": result})

if mode == "serve" and marker:
    with open(marker, "w") as f:
        json.dump(sys.argv, f)
if mode == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
else:
    signal.signal(signal.SIGTERM, on_term)
threading.Thread(target=serve_pipe, daemon=True).start()
while True:
    time.sleep(3600)
"""


@pytest.fixture
def fake_browser(tmp_path: Path) -> Path:
    path = tmp_path / "fake-browser"
    path.write_text(f"#!{sys.executable}\n{FAKE_BROWSER}")
    path.chmod(0o755)
    return path


def spec_for(executable: Path, tmp_path: Path) -> LaunchSpec:
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    return LaunchSpec(executable=executable, profile_dir=profile, headless=True)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"


async def supervise(
    spec: LaunchSpec, *, task_status: trio.TaskStatus[BrowserProcess] = trio.TASK_STATUS_IGNORED
) -> None:
    """run_browser, minus the BrowserGone it raises once the process is gone."""
    with contextlib.suppress(BrowserGone):
        await run_browser(spec, task_status=task_status)


@pytest.fixture
def short_ladder(monkeypatch: pytest.MonkeyPatch) -> None:
    # Shorter waits keep these tests quick; they are deadlines, not assertions.
    monkeypatch.setattr(process_module, "CLOSE_WAIT_S", 0.5)


async def run_browser_until_it_ends(spec: LaunchSpec) -> None:
    async with trio.open_nursery() as nursery:
        await nursery.start(run_browser, spec)
        await trio.sleep_forever()


async def raised_by(fn: Callable[[LaunchSpec], Awaitable[None]], spec: LaunchSpec
                    ) -> BaseException | None:
    """What ``fn(spec)`` raised, unwrapped from trio's exception groups."""
    try:
        await fn(spec)
    except BaseException as exc:
        return unwrap_group(exc)
    return None
