"""The stop ladder and the leftover-browser clean-up, on a fake browser process
(tests/unit/_fake_browser.py: launched exactly as Chromium would be).

No real Chromium: these tests are about which signal ended the process and that
nothing is left running. Start-up and the supervised launch on the same fake:
test_browser_launch.py.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from browserd.browser import process as process_module
from browserd.browser.process import BrowserProcess, run_browser
from browserd.browser.profile import user_data_dir_arg
from browserd.config import Settings
from browserd.errors import BrowserGone, ProfileInUse
from browserd.paths import Paths
from browserd.supervisor import BrowserSupervisor
from tests.unit._fake_browser import (
    alive,
    raised_by,
    run_browser_until_it_ends,
    spec_for,
    supervise,
)
from tests.unit._fake_browser import fake_browser as fake_browser
from tests.unit._fake_browser import short_ladder as short_ladder


async def stop_fake(executable: Path, tmp_path: Path) -> tuple[str, int, int | None]:
    """Launch the fake, run the stop ladder on it; (step, pid, returncode)."""
    spec = spec_for(executable, tmp_path)
    async with trio.open_nursery() as nursery:
        proc: BrowserProcess = await nursery.start(supervise, spec)
        step = await proc.stop()
    return step, proc.pid, proc.returncode


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
