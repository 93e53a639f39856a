"""Launching on a fake browser process (tests/unit/_fake_browser.py: launched exactly
as Chromium would be): readiness, start-up failures and what they say, and the whole
supervised launch path (claim, record, serve, stop; a broken pipe; a foreign profile).

No real Chromium. Stopping it (the ladder) and leftovers: test_stop_ladder.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import trio

from browserd.browser import process as process_module
from browserd.browser.process import BrowserProcess
from browserd.browser.profile import profile_pids, user_data_dir_arg
from browserd.config import Settings
from browserd.errors import BrowserGone, ProfileInUse, ProfileRefused, StartupError
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
