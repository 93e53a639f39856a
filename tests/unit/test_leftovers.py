"""The pid record and the proof that a leftover browser is ours (F2, F6), on real processes.

``PidRecord`` is what a running attempt writes and what a restarted browserd
reads: these tests write and read it through its own methods, and stand in for
the "browser" with plain Python processes carrying the profile's
``--user-data-dir`` (the proof looks at the command line, not the program).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import trio

from browserd.browser.profile import pid_alive, user_data_dir_arg
from browserd.supervisor import leftovers
from browserd.supervisor.leftovers import PidRecord

#: A "browser" that takes 0.3 s to clean up on SIGTERM (a marker), then exits; or ignores it.
LEFTOVER = """\
import os, signal, sys, time
marker, mode = sys.argv[1], sys.argv[2]
def on_term(signum, frame):
    time.sleep(0.3)  # a browser takes a moment to flush its profile
    with open(marker, "w") as f:
        f.write("sigterm")
    os._exit(0)
signal.signal(signal.SIGTERM, signal.SIG_IGN if mode == "ignore-term" else on_term)
with open(marker + ".ready", "w") as f:
    f.write("ready")
while True:
    time.sleep(3600)
"""


@pytest.fixture
def profile(tmp_path: Path) -> Path:
    directory = tmp_path / "profile"
    directory.mkdir()
    return directory


@pytest.fixture
def record(tmp_path: Path) -> PidRecord:
    return PidRecord(path=tmp_path / "run" / "clawd.json")


Spawn = Any


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Spawn]:
    """Start a process in its own group; killed and reaped at the end of the test."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(*argv: str) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen([sys.executable, *argv], start_new_session=True)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def leftover_browser(spawn: Spawn, profile: Path, tmp_path: Path, mode: str = "clean-up"
                     ) -> tuple[subprocess.Popen[bytes], Path]:
    """A 'browser' on ``profile`` that is ready (its signal handler set) when this returns."""
    marker = tmp_path / f"leftover-{mode}"
    proc = spawn("-c", LEFTOVER, str(marker), mode, user_data_dir_arg(profile))
    deadline = time.monotonic() + 30
    while not (tmp_path / f"leftover-{mode}.ready").exists():
        assert time.monotonic() < deadline, "the leftover never started"
        time.sleep(0.02)
    return proc, marker


def lock(profile: Path, pid: int) -> None:
    (profile / "SingletonLock").unlink(missing_ok=True)
    os.symlink(f"{socket.gethostname()}-{pid}", profile / "SingletonLock")


def write_record(record: PidRecord, profile: Path, pid: Any, service_pid: Any) -> None:
    record.path.parent.mkdir(parents=True, exist_ok=True)
    record.path.write_text(json.dumps({
        "pid": pid, "profileDir": str(profile), "executable": "/usr/bin/chromium",
        "startedAt": 0, "servicePid": service_pid}))


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def a_process(profile: Path, executable: str = "/usr/bin/chromium", pid: int = 4321) -> Any:
    """What PidRecord.write reads of a BrowserProcess."""
    return SimpleNamespace(pid=pid, started_at=12.5,
                           spec=SimpleNamespace(profile_dir=profile, executable=executable))


# -- writing and clearing -------------------------------------------------------------------


def test_write_records_the_browser_and_this_service_in_a_private_directory(
    record: PidRecord, profile: Path
) -> None:
    record.write(a_process(profile))
    data = json.loads(record.path.read_text())
    assert data == {"pid": 4321, "profileDir": str(profile), "executable": "/usr/bin/chromium",
                    "startedAt": 12.5, "servicePid": os.getpid()}
    assert record.path.parent.stat().st_mode & 0o777 == 0o700
    assert [p.name for p in record.path.parent.iterdir()] == ["clawd.json"]  # no .tmp left


def test_write_replaces_an_older_record_and_creates_missing_parents(tmp_path: Path,
                                                                    profile: Path) -> None:
    deep = PidRecord(path=tmp_path / "a" / "b" / "run" / "clawd.json")
    deep.write(a_process(profile, pid=1))
    deep.write(a_process(profile, pid=2))
    assert json.loads(deep.path.read_text())["pid"] == 2


def test_clear_removes_the_record_and_absent_is_fine(record: PidRecord, profile: Path) -> None:
    record.write(a_process(profile))
    record.clear()
    assert not record.path.exists()
    record.clear()


# -- the proof ------------------------------------------------------------------------------


def test_a_browser_of_a_dead_browserd_is_provably_ours(
    record: PidRecord, profile: Path, spawn: Spawn, tmp_path: Path
) -> None:
    proc, _ = leftover_browser(spawn, profile, tmp_path)
    lock(profile, proc.pid)
    write_record(record, profile, proc.pid, dead_pid())
    assert record.leftover_pid(profile) == proc.pid


def test_our_own_earlier_attempt_is_ours(
    record: PidRecord, profile: Path, spawn: Spawn, tmp_path: Path
) -> None:
    proc, _ = leftover_browser(spawn, profile, tmp_path)
    lock(profile, proc.pid)
    write_record(record, profile, proc.pid, os.getpid())
    assert record.leftover_pid(profile) == proc.pid


@pytest.mark.parametrize("case", ["no record", "no lock", "lock names another pid",
                                  "pid not a number", "not on this profile"])
def test_without_every_part_of_the_proof_nothing_is_ours(
    record: PidRecord, profile: Path, spawn: Spawn, tmp_path: Path, case: str
) -> None:
    proc, _ = leftover_browser(spawn, profile, tmp_path)
    other = tmp_path / "other-profile"
    other.mkdir()
    if case != "no lock":
        lock(profile, proc.pid + 1 if case == "lock names another pid" else proc.pid)
    if case != "no record":
        write_record(record, profile, str(proc.pid) if case == "pid not a number" else proc.pid,
                     dead_pid())
    # "not on this profile": the process's command line names ``profile``, not ``other``
    checked = other if case == "not on this profile" else profile
    if case == "not on this profile":
        lock(other, proc.pid)
    assert record.leftover_pid(checked) is None


def test_a_browser_whose_browserd_lives_is_left_alone(
    record: PidRecord, profile: Path, spawn: Spawn, tmp_path: Path
) -> None:
    """F6: the record's service is alive and is a browserd."""
    proc, _ = leftover_browser(spawn, profile, tmp_path)
    other_browserd = spawn("-c", "import time; time.sleep(3600)", "browserd", "serve")
    lock(profile, proc.pid)
    write_record(record, profile, proc.pid, other_browserd.pid)
    assert record.leftover_pid(profile) is None


def test_a_live_service_whose_command_line_reads_empty_protects_the_browser(
    record: PidRecord, profile: Path, spawn: Spawn, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process in the middle of its exec shows an empty command line for a moment:
    browserd cannot tell what it is, so it touches nothing."""
    proc, _ = leftover_browser(spawn, profile, tmp_path)
    service = spawn("-c", "import time; time.sleep(3600)", "browserd", "serve")
    lock(profile, proc.pid)
    write_record(record, profile, proc.pid, service.pid)
    real = leftovers.process_argv
    monkeypatch.setattr(leftovers, "process_argv",
                        lambda pid: () if pid == service.pid else real(pid))
    assert record.leftover_pid(profile) is None


def test_a_live_service_pid_that_is_not_a_browserd_does_not_protect_the_browser(
    record: PidRecord, profile: Path, spawn: Spawn, tmp_path: Path
) -> None:
    """The recorded service died and its pid was reused by some other program."""
    proc, _ = leftover_browser(spawn, profile, tmp_path)
    stranger = spawn("-c", "import time; time.sleep(3600)")
    lock(profile, proc.pid)
    write_record(record, profile, proc.pid, stranger.pid)
    assert record.leftover_pid(profile) == proc.pid


# -- stopping -------------------------------------------------------------------------------


async def test_a_leftover_gets_sigterm_first_and_may_clean_up(
    record: PidRecord, profile: Path, spawn: Spawn, tmp_path: Path
) -> None:
    proc, marker = leftover_browser(spawn, profile, tmp_path)
    lock(profile, proc.pid)
    write_record(record, profile, proc.pid, dead_pid())
    with trio.fail_after(30):
        await record.stop_leftover(profile)
    assert marker.read_text() == "sigterm"
    assert proc.wait(timeout=10) == 0


async def test_a_leftover_that_ignores_sigterm_is_killed(
    record: PidRecord, profile: Path, spawn: Spawn, tmp_path: Path
) -> None:
    proc, marker = leftover_browser(spawn, profile, tmp_path, mode="ignore-term")
    lock(profile, proc.pid)
    write_record(record, profile, proc.pid, dead_pid())
    with trio.fail_after(30):
        await record.stop_leftover(profile)
    assert proc.wait(timeout=10) == -signal.SIGKILL
    assert not marker.exists()


async def test_a_browser_that_is_not_provably_ours_is_never_signalled(
    record: PidRecord, profile: Path, spawn: Spawn, tmp_path: Path
) -> None:
    proc, marker = leftover_browser(spawn, profile, tmp_path)
    lock(profile, proc.pid + 1)  # the lock names someone else
    write_record(record, profile, proc.pid, dead_pid())
    with trio.fail_after(30):
        await record.stop_leftover(profile)
    assert pid_alive(proc.pid) and proc.poll() is None
    assert not marker.exists()
