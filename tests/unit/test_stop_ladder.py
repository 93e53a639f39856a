"""The stop ladder and the leftover-browser clean-up, on a fake browser process.

The fake is a small Python script launched exactly as Chromium would be (same
argv, CDP pipes on fds 3 and 4, own process group). It answers
``Browser.getVersion`` on the pipe (browserd's readiness check), then behaves as
the test asks: exit on ``Browser.close``, ignore it but clean up on SIGTERM, or
ignore SIGTERM too; like Chromium it exits when browserd's end of the pipe
closes. No real Chromium: these tests are about which signal ended the
process and that nothing is left running.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
import trio

from browserd.browser import process as process_module
from browserd.browser.process import BrowserProcess, LaunchSpec, run_browser
from browserd.browser.profile import profile_pids, user_data_dir_arg
from browserd.config import Settings
from browserd.errors import (
    BrowserGone,
    ProfileInUse,
    ProfileRefused,
    StartupError,
    unwrap_group,
)
from browserd.paths import Paths
from browserd.supervisor import BrowserSupervisor

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


async def stop_fake(executable: Path, tmp_path: Path) -> tuple[str, int, int | None]:
    """Launch the fake, run the stop ladder on it; (step, pid, returncode)."""
    spec = spec_for(executable, tmp_path)
    async with trio.open_nursery() as nursery:
        proc: BrowserProcess = await nursery.start(supervise, spec)
        step = await proc.stop()
    return step, proc.pid, proc.returncode


@pytest.fixture
def short_ladder(monkeypatch: pytest.MonkeyPatch) -> None:
    # Shorter waits keep these tests quick; they are deadlines, not assertions.
    monkeypatch.setattr(process_module, "CLOSE_WAIT_S", 0.5)


async def test_a_browser_that_honours_close_ends_at_the_first_step(
    fake_browser: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_BROWSER_MODE", "close")
    step, pid, code = await stop_fake(fake_browser, tmp_path)
    assert (step, code) == ("close", 0)
    assert not alive(pid)


async def test_a_browser_that_ignores_close_gets_sigterm_and_may_clean_up(
    fake_browser: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, short_ladder: None
) -> None:
    marker = tmp_path / "got-sigterm"
    monkeypatch.setenv("FAKE_BROWSER_MODE", "ignore-close")
    monkeypatch.setenv("FAKE_BROWSER_MARKER", str(marker))
    step, pid, code = await stop_fake(fake_browser, tmp_path)
    assert step == "sigterm"
    assert marker.read_text() == "sigterm", "the browser never got SIGTERM's chance to clean up"
    assert code == 0 and not alive(pid)


async def test_a_browser_that_ignores_sigterm_is_killed_and_reaped(
    fake_browser: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, short_ladder: None
) -> None:
    monkeypatch.setattr(process_module, "TERM_WAIT_S", 0.5)
    # The ladder's own SIGKILL, not the process-group sweep after it, must end the
    # browser: the ladder then reaps it within KILL_WAIT_S, so its exit code is known
    # when stop() returns. (Without that SIGKILL the ladder waits out KILL_WAIT_S and
    # the sweep kills the browser after the last wait: stop() returns before the exit.)
    monkeypatch.setattr(process_module, "KILL_WAIT_S", 10.0)
    monkeypatch.setenv("FAKE_BROWSER_MODE", "ignore-term")
    spec = spec_for(fake_browser, tmp_path)
    async with trio.open_nursery() as nursery:
        proc: BrowserProcess = await nursery.start(supervise, spec)
        step = await proc.stop()
        assert step == "sigkill"
        assert proc.returncode == -signal.SIGKILL, "not reaped after the ladder's SIGKILL"
    assert not alive(proc.pid)


async def test_stopping_twice_is_harmless(
    fake_browser: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_BROWSER_MODE", "close")
    spec = spec_for(fake_browser, tmp_path)
    async with trio.open_nursery() as nursery:
        proc: BrowserProcess = await nursery.start(supervise, spec)
        assert await proc.stop() == "close"
        assert await proc.stop() == "exited"


async def test_cancelling_the_supervising_task_runs_the_ladder_to_the_end(
    fake_browser: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, short_ladder: None
) -> None:
    """The path the supervisor takes: cancellation, shielded ladder, nothing left running."""
    monkeypatch.setattr(process_module, "TERM_WAIT_S", 0.5)
    monkeypatch.setenv("FAKE_BROWSER_MODE", "ignore-term")
    spec = spec_for(fake_browser, tmp_path)
    async with trio.open_nursery() as nursery:
        proc: BrowserProcess = await nursery.start(run_browser, spec)
        nursery.cancel_scope.cancel()
    assert proc.returncode == -signal.SIGKILL
    assert not alive(proc.pid)


# -- a browser left behind by a browserd that died (F2) -------------------------------------


@pytest.fixture
def leftover(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Paths]]:
    """A 'browser' on the profile, with the pid record and lock a dead browserd left."""
    paths = Paths.resolve({"BROWSERD_HOME": str(tmp_path / "home")})
    profile = paths.profile_dir("clawd")
    profile.mkdir(parents=True, mode=0o700)
    (profile / ".browserd-profile").write_text('{"createdBy": "browserd", "version": 1}\n')
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(3600)", user_data_dir_arg(profile)],
        start_new_session=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    os.symlink(f"{socket.gethostname()}-{proc.pid}", profile / "SingletonLock")
    paths.state_dir.mkdir(parents=True, exist_ok=True)
    (paths.state_dir / "clawd.json").write_text(json.dumps({
        "pid": proc.pid, "profileDir": str(profile), "executable": "/usr/bin/chromium",
        "startedAt": 0, "servicePid": dead.pid}))
    yield proc, paths
    if proc.poll() is None:
        proc.kill()
        proc.wait()


async def test_a_browser_left_by_a_dead_browserd_is_stopped_before_launching(
    leftover: tuple[subprocess.Popen[bytes], Paths], fake_browser: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    proc, paths = leftover
    monkeypatch.delenv("BROWSERD_BROWSER", raising=False)
    monkeypatch.setenv("FAKE_BROWSER_MODE", "exit")  # the new launch itself fails at once
    settings = Settings(executable=str(fake_browser), restart_budget=0)
    sup = BrowserSupervisor(settings, paths)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        with pytest.raises(Exception) as raised:
            await sup.start()
        nursery.cancel_scope.cancel()
    assert not isinstance(raised.value, ProfileInUse), raised.value
    assert proc.poll() is not None or not alive(proc.pid), "the leftover browser still runs"
    assert "exited before CDP was ready" in str(raised.value)


def open_fds() -> set[int]:
    return {int(fd) for fd in os.listdir("/proc/self/fd")}


async def test_a_renderer_orphaned_in_the_group_is_killed_too(
    fake_browser: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "orphan-pid"
    monkeypatch.setenv("FAKE_BROWSER_MODE", "orphan")
    monkeypatch.setenv("FAKE_BROWSER_MARKER", str(marker))
    step, _, _ = await stop_fake(fake_browser, tmp_path)
    assert step == "close"
    orphan = int(marker.read_text())
    with trio.fail_after(10):  # SIGKILL was sent; wait for the kernel to finish it
        while alive(orphan):
            await trio.sleep(0.02)


async def test_the_lifeline_pipes_are_closed_after_the_stop(
    fake_browser: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_BROWSER_MODE", "close")
    before = open_fds()
    spec = spec_for(fake_browser, tmp_path)
    async with trio.open_nursery() as nursery:
        proc: BrowserProcess = await nursery.start(supervise, spec)
        assert open_fds() > before  # the pipes (and stderr) are open while it runs
        await proc.stop()
    # closed by the stop and run_browser's end, while the handle still exists (not by the GC)
    assert open_fds() <= before
    assert proc.returncode == 0


async def test_a_browser_that_never_gets_ready_is_a_startup_error_and_is_stopped(
    fake_browser: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, short_ladder: None
) -> None:
    monkeypatch.setattr(process_module, "READY_TIMEOUT_S", 0.5)
    monkeypatch.setenv("FAKE_BROWSER_MODE", "mute")
    spec = spec_for(fake_browser, tmp_path)
    error = await raised_by(run_browser_until_it_ends, spec)
    assert isinstance(error, StartupError) and "did not answer CDP" in error.message
    assert not [pid for pid in profile_pids(spec.profile_dir) if alive(pid)]


async def test_a_browser_exiting_on_its_own_is_reported_gone(
    fake_browser: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_BROWSER_MODE", "exit-when-ready")
    spec = spec_for(fake_browser, tmp_path)
    error = await raised_by(run_browser_until_it_ends, spec)
    assert isinstance(error, BrowserGone) and "exited unexpectedly" in error.message


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


async def test_a_browser_of_another_live_browserd_is_left_alone(
    leftover: tuple[subprocess.Popen[bytes], Paths], fake_browser: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """F6: the record names a service that is alive and is a browserd: refuse, kill nothing."""
    proc, paths = leftover
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)",
                              "browserd", "serve"])
    try:
        # Until it has exec'd, the child's command line is still this process's; the
        # record must name a process that already reads as "browserd serve".
        with trio.fail_after(10):
            while b"browserd" not in Path(f"/proc/{other.pid}/cmdline").read_bytes():
                await trio.sleep(0.01)
        record = paths.state_dir / "clawd.json"
        record.write_text(json.dumps({**json.loads(record.read_text()), "servicePid": other.pid}))
        monkeypatch.delenv("BROWSERD_BROWSER", raising=False)
        monkeypatch.setenv("FAKE_BROWSER_MODE", "exit")
        settings = Settings(executable=str(fake_browser), restart_budget=0)
        sup = BrowserSupervisor(settings, paths)
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            with pytest.raises(ProfileInUse, match=f"pid {proc.pid}"):
                await sup.start()
            nursery.cancel_scope.cancel()
        assert proc.poll() is None, "another browserd's browser was killed"
    finally:
        other.kill()
        other.wait()


async def test_readiness_is_the_reply_to_its_own_question_not_the_first_message(
    fake_browser: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_BROWSER_MODE", "chatty")
    spec = spec_for(fake_browser, tmp_path)
    async with trio.open_nursery() as nursery:
        proc: BrowserProcess = await nursery.start(supervise, spec)
        assert proc.version == {"product": "Fake/1.0"}
        await proc.stop()


async def test_exit_code_21_is_profile_in_use(
    fake_browser: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_BROWSER_MODE", "profile-in-use")
    error = await raised_by(run_browser_until_it_ends, spec_for(fake_browser, tmp_path))
    assert isinstance(error, ProfileInUse), error


async def test_a_failed_start_carries_the_browsers_own_words(
    fake_browser: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_BROWSER_MODE", "exit")
    error = await raised_by(run_browser_until_it_ends, spec_for(fake_browser, tmp_path))
    assert isinstance(error, StartupError) and not isinstance(error, ProfileInUse), error
    assert "exit code 1" in error.message
    assert error.details["stderr"] == "fatal: no display"  # Chromium's [..] log noise left out


async def test_a_browser_flooding_the_pipe_as_it_closes_still_closes_at_the_first_step(
    fake_browser: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2 MB of last events: the ladder reads them, so the browser never blocks writing."""
    monkeypatch.setenv("FAKE_BROWSER_MODE", "flood-on-close")
    step, pid, code = await stop_fake(fake_browser, tmp_path)
    assert (step, code) == ("close", 0)
    assert not alive(pid)


@pytest.mark.parametrize("mode", ["orphan-holding-pipe", "orphan-holding-pipe-exit"])
async def test_a_renderer_holding_the_pipe_and_stderr_cannot_hold_up_the_end(
    fake_browser: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """Neither the stop nor a browser's own exit waits for EOF that a leftover child withholds."""
    marker = tmp_path / "orphan-pid"
    monkeypatch.setenv("FAKE_BROWSER_MODE", mode)
    monkeypatch.setenv("FAKE_BROWSER_MARKER", str(marker))
    spec = spec_for(fake_browser, tmp_path)
    with trio.fail_after(30):
        if mode.endswith("-exit"):  # the browser exits by itself once ready
            error = await raised_by(run_browser_until_it_ends, spec)
            assert isinstance(error, BrowserGone), error
        else:
            step, _, _ = await stop_fake(fake_browser, tmp_path)
            assert step == "close"
        orphan = int(marker.read_text())
        while alive(orphan):  # SIGKILL was sent to the group; the kernel finishes it
            await trio.sleep(0.02)


async def test_a_supervised_launch_records_the_browser_and_stops_it_cleanly(
    fake_browser: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole launched path on a fake browser that answers CDP: claim, record, serve, stop."""
    argv_file = tmp_path / "argv.json"
    monkeypatch.delenv("BROWSERD_BROWSER", raising=False)
    monkeypatch.setenv("FAKE_BROWSER_MODE", "serve")
    monkeypatch.setenv("FAKE_BROWSER_MARKER", str(argv_file))
    paths = Paths.resolve({"BROWSERD_HOME": str(tmp_path / "home")})
    settings = Settings(executable=str(fake_browser), headless=False, restart_budget=0)
    sup = BrowserSupervisor(settings, paths)
    record = paths.state_dir / "clawd.json"
    profile = paths.profile_dir("clawd")
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            await sup.start()
            assert sup.state == "running" and sup.spawns == 1
            pid = sup.statistics().pid
            assert pid is not None and alive(pid)
            assert sup.require_runtime().version == "Fake/1.0"
            written = json.loads(record.read_text())
            assert (written["pid"], written["servicePid"]) == (pid, os.getpid())
            assert (profile / ".browserd-profile").exists()  # claimed as ours
            assert (profile / "Default" / "Preferences").exists()  # prepared
            argv = json.loads(argv_file.read_text())
            assert user_data_dir_arg(profile) in argv
            assert ("--no-sandbox" in argv) == (os.geteuid() == 0)
            assert await sup.stop() is True
            assert sup.state == "stopped" and not record.exists()
            assert not alive(pid)
            nursery.cancel_scope.cancel()
    assert sup.spawns == 1


async def test_a_broken_pipe_to_a_living_browser_ends_the_attempt_at_once(
    fake_browser: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, short_ladder: None
) -> None:
    """The connection is lost while the process runs on: stopped and restarted, not waited on."""
    monkeypatch.delenv("BROWSERD_BROWSER", raising=False)
    monkeypatch.setenv("FAKE_BROWSER_MODE", "drop-pipe")
    paths = Paths.resolve({"BROWSERD_HOME": str(tmp_path / "home")})
    settings = Settings(executable=str(fake_browser), headless=False, restart_budget=1)
    sup = BrowserSupervisor(settings, paths)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            with pytest.raises(BrowserGone, match="giving up"):
                await sup.start()
            nursery.cancel_scope.cancel()
    assert sup.spawns == 2
    assert not [pid for pid in profile_pids(paths.profile_dir("clawd")) if alive(pid)]


async def test_a_directory_that_is_not_a_browserd_profile_is_never_launched_on(
    fake_browser: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Someone's own browser profile at the path: refused, untouched, nothing launched."""
    monkeypatch.delenv("BROWSERD_BROWSER", raising=False)
    monkeypatch.setenv("FAKE_BROWSER_MODE", "serve")
    paths = Paths.resolve({"BROWSERD_HOME": str(tmp_path / "home")})
    profile = paths.profile_dir("clawd")
    (profile / "Default").mkdir(parents=True)
    (profile / "Default" / "Bookmarks").write_text("{}")
    before = sorted(p.relative_to(profile) for p in profile.rglob("*"))
    sup = BrowserSupervisor(Settings(executable=str(fake_browser), headless=False), paths)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            with pytest.raises(ProfileRefused, match="not a browserd profile"):
                await sup.start()
            nursery.cancel_scope.cancel()
    assert sup.spawns == 0
    assert sorted(p.relative_to(profile) for p in profile.rglob("*")) == before


@pytest.mark.parametrize("stopped", [False, True], ids=["hung", "sigstopped"])
async def test_an_unresponsive_browser_gets_no_close_and_a_stopped_group_is_still_reaped(
    fake_browser: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stopped: bool
) -> None:
    """Hung (the liveness probe's verdict): straight to the signals; SIGSTOP cannot hold it."""
    monkeypatch.setattr(process_module, "TERM_WAIT_S", 0.5)
    monkeypatch.setenv("FAKE_BROWSER_MODE", "close")  # it would honour Browser.close
    async with trio.open_nursery() as nursery:
        proc: BrowserProcess = await nursery.start(supervise, spec_for(fake_browser, tmp_path))
        if stopped:
            os.killpg(proc.pid, signal.SIGSTOP)
            while Path(f"/proc/{proc.pid}/stat").read_text().rsplit(") ", 1)[1][0] != "T":
                await trio.sleep(0.001)
        proc.mark_unresponsive()
        step = await proc.stop()
    assert (step, proc.returncode) == (("sigkill", -signal.SIGKILL) if stopped else ("sigterm", 0))
    assert not alive(proc.pid) and proc.own_exit is None  # ended by browserd, not by itself
