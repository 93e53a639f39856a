"""Installing and uninstalling the service: a launchd LaunchAgent, a systemd user unit.

Nothing here runs launchctl or systemctl: a fake runner records the commands.
The definitions themselves (the spec, the plist, the unit): test_service_units.py.
"""

from __future__ import annotations

import os
import plistlib
import stat
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from browserd.errors import ConfigError, StartupError
from browserd.paths import Paths
from browserd.service_install import (
    DEFAULT_LABEL,
    InstallResult,
    default_kind,
    install,
    render_launchd_plist,
    render_systemd_unit,
    spec_for_current_install,
    uninstall,
)
from tests.unit._service_install import check_plist, check_unit, exec_argv, one
from tests.unit._service_install import paths as paths

# -- helpers -------------------------------------------------------------------


class FakeRunner:
    """Records every command; answers from ``results`` (argv -> (rc, stderr))."""

    def __init__(
        self,
        results: dict[tuple[str, ...], tuple[int, str]] | None = None,
        on_call: Callable[[tuple[str, ...]], None] | None = None,
    ) -> None:
        self.results = results or {}
        self.on_call = on_call
        self.calls: list[tuple[str, ...]] = []

    def __call__(
        self, args: Sequence[str], **kwargs: Any
    ) -> subprocess.CompletedProcess[str]:
        assert kwargs["capture_output"] is True and kwargs["text"] is True
        assert kwargs["check"] is False and kwargs["timeout"] > 30
        argv = tuple(args)
        self.calls.append(argv)
        if self.on_call is not None:
            self.on_call(argv)
        rc, err = self.results.get(argv, (0, ""))
        return subprocess.CompletedProcess(list(argv), rc, "", err)


def refuse_to_run(args: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    raise AssertionError(f"print_only ran {args!r}")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.delenv("BROWSERD_HOME", raising=False)
    assert Path.home() == h
    return h


# -- install / uninstall: launchd ----------------------------------------------


def test_default_kind() -> None:
    assert default_kind("darwin") == "launchd"
    assert default_kind("linux") == "systemd"


def test_kind_none_follows_the_platform(
    home: Path, paths: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert install(None, print_only=True, paths=paths, runner=refuse_to_run).kind == "launchd"
    monkeypatch.setattr(sys, "platform", "linux")
    assert install(None, print_only=True, paths=paths, runner=refuse_to_run).kind == "systemd"


def test_unknown_kind(home: Path, paths: Paths) -> None:
    with pytest.raises(ConfigError):
        install("upstart", paths=paths, runner=refuse_to_run)  # type: ignore[arg-type]


def test_install_launchd_first_time(home: Path, paths: Paths) -> None:
    uid = os.getuid()
    target = f"gui/{uid}/{DEFAULT_LABEL}"
    plist = home / "Library" / "LaunchAgents" / f"{DEFAULT_LABEL}.plist"
    runner = FakeRunner({("launchctl", "print", target): (113, "Could not find service")})
    result = install("launchd", paths=paths, runner=runner)
    assert runner.calls == [
        ("launchctl", "print", target),
        ("launchctl", "enable", target),
        ("launchctl", "bootstrap", f"gui/{uid}", str(plist)),
    ]
    assert result == InstallResult(
        kind="launchd", path=plist, text=plist.read_text(), commands=tuple(runner.calls[1:]),
        applied=True,
    )
    check_plist(plistlib.loads(plist.read_bytes()), log_dir=paths.log_dir)
    assert stat.S_IMODE(plist.stat().st_mode) == 0o644
    assert paths.log_dir.is_dir() and paths.data_dir.is_dir()
    assert list(plist.parent.iterdir()) == [plist]  # no temp file left


def test_install_launchd_when_loaded_boots_out_first(home: Path, paths: Paths) -> None:
    uid = os.getuid()
    target = f"gui/{uid}/{DEFAULT_LABEL}"
    plist = home / "Library" / "LaunchAgents" / f"{DEFAULT_LABEL}.plist"
    plist.parent.mkdir(parents=True)
    plist.write_bytes(b"old")
    seen: dict[str, bytes] = {}

    def on_call(argv: tuple[str, ...]) -> None:
        seen[argv[1]] = plist.read_bytes()

    runner = FakeRunner(on_call=on_call)
    result = install("launchd", paths=paths, runner=runner)
    assert runner.calls == [
        ("launchctl", "print", target),
        ("launchctl", "bootout", target),
        ("launchctl", "enable", target),
        ("launchctl", "bootstrap", f"gui/{uid}", str(plist)),
    ]
    assert seen["bootout"] == b"old"  # the old job goes before its file changes
    assert seen["bootstrap"] != b"old"
    assert result.commands == tuple(runner.calls[1:])


def test_install_launchd_bootstrap_failure(home: Path, paths: Paths) -> None:
    uid = os.getuid()
    plist = home / "Library" / "LaunchAgents" / f"{DEFAULT_LABEL}.plist"
    bootstrap = ("launchctl", "bootstrap", f"gui/{uid}", str(plist))
    runner = FakeRunner({
        ("launchctl", "print", f"gui/{uid}/{DEFAULT_LABEL}"): (113, ""),
        bootstrap: (5, "Bootstrap failed: 5: Input/output error"),
    })
    with pytest.raises(StartupError) as info:
        install("launchd", paths=paths, runner=runner)
    assert "Input/output error" in info.value.message
    assert "launchctl bootstrap" in info.value.message
    assert "GUI session" in info.value.hint
    assert plist.exists()  # left for inspection and retry


def test_install_launchd_without_launchctl(home: Path, paths: Paths) -> None:
    def missing(args: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        raise FileNotFoundError(2, "No such file or directory", args[0])

    with pytest.raises(StartupError) as info:
        install("launchd", paths=paths, runner=missing)
    assert "`launchctl` not found" in info.value.message


def test_print_only_launchd_writes_and_runs_nothing(home: Path, paths: Paths) -> None:
    result = install("launchd", print_only=True, paths=paths, runner=refuse_to_run)
    assert not result.applied
    assert result.path == home / "Library" / "LaunchAgents" / f"{DEFAULT_LABEL}.plist"
    assert result.text.encode() == render_launchd_plist(spec_for_current_install(paths, {}))
    assert [c[1] for c in result.commands] == ["enable", "bootstrap"]
    assert list(home.iterdir()) == []
    assert not paths.log_dir.exists() and not paths.data_dir.exists()


def test_uninstall_launchd(home: Path, paths: Paths) -> None:
    uid = os.getuid()
    target = f"gui/{uid}/{DEFAULT_LABEL}"
    plist = home / "Library" / "LaunchAgents" / f"{DEFAULT_LABEL}.plist"
    install("launchd", paths=paths, runner=FakeRunner({("launchctl", "print", target): (113, "")}))
    assert plist.exists()
    exists_at_bootout: list[bool] = []
    runner = FakeRunner(on_call=lambda argv: exists_at_bootout.append(plist.exists()))
    result = uninstall("launchd", runner=runner)
    assert runner.calls == [("launchctl", "print", target), ("launchctl", "bootout", target)]
    assert exists_at_bootout == [True, True]
    assert not plist.exists()
    assert result.applied and result.commands == (("launchctl", "bootout", target),)
    # Again: nothing loaded, nothing on disk, nothing to do, no error.
    runner = FakeRunner({("launchctl", "print", target): (113, "")})
    result = uninstall("launchd", runner=runner)
    assert runner.calls == [("launchctl", "print", target)]
    assert result.commands == ()


def test_uninstall_launchd_bootout_failure_keeps_the_plist(home: Path, paths: Paths) -> None:
    uid = os.getuid()
    target = f"gui/{uid}/{DEFAULT_LABEL}"
    install("launchd", paths=paths, runner=FakeRunner())
    runner = FakeRunner({("launchctl", "bootout", target): (1, "Boot-out failed: 1")})
    with pytest.raises(StartupError, match="Boot-out failed"):
        uninstall("launchd", runner=runner)
    assert (home / "Library" / "LaunchAgents" / f"{DEFAULT_LABEL}.plist").exists()


def test_print_only_uninstall_changes_nothing(home: Path, paths: Paths) -> None:
    install("systemd", paths=paths, runner=FakeRunner())
    install("launchd", paths=paths, runner=FakeRunner())
    before = sorted(p for p in home.rglob("*"))
    for kind in ("launchd", "systemd"):
        result = uninstall(kind, print_only=True, runner=refuse_to_run)
        assert not result.applied and result.path.exists() and result.text
    assert sorted(p for p in home.rglob("*")) == before


# -- install / uninstall: systemd ----------------------------------------------


def test_install_systemd(home: Path, paths: Paths) -> None:
    unit = home / ".config" / "systemd" / "user" / "browserd.service"
    present: list[bool] = []
    runner = FakeRunner(on_call=lambda argv: present.append(unit.exists()))
    result = install("systemd", paths=paths, runner=runner)
    assert runner.calls == [
        ("systemctl", "--user", "daemon-reload"),
        ("systemctl", "--user", "try-restart", "browserd.service"),
        ("systemctl", "--user", "enable", "--now", "browserd.service"),
    ]
    assert present == [True, True, True]
    assert result.path == unit and result.applied
    assert result.commands == tuple(runner.calls)
    assert unit.read_text() == result.text
    svc = check_unit(unit.read_text())["Service"]
    assert exec_argv(one(svc, "ExecStart"))[0] == os.path.abspath(sys.executable)
    assert one(svc, "WorkingDirectory") == str(paths.data_dir)
    assert paths.data_dir.is_dir() and paths.log_dir.is_dir()


def test_install_systemd_carries_browserd_home(
    home: Path, paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BROWSERD_HOME", str(tmp_path / "bhome"))
    result = install("systemd", paths=paths, runner=FakeRunner())
    assert f'Environment="BROWSERD_HOME={tmp_path / "bhome"}"' in result.text.splitlines()


def test_print_only_systemd_writes_and_runs_nothing(home: Path, paths: Paths) -> None:
    result = install("systemd", print_only=True, paths=paths, runner=refuse_to_run)
    assert not result.applied
    assert result.text == render_systemd_unit(spec_for_current_install(paths, {}))
    assert result.commands[-1] == ("systemctl", "--user", "enable", "--now", "browserd.service")
    assert list(home.iterdir()) == []


def test_install_systemd_without_user_session(home: Path, paths: Paths) -> None:
    runner = FakeRunner({
        ("systemctl", "--user", "daemon-reload"): (
            1, "Failed to connect to bus: No medium found"),
    })
    with pytest.raises(StartupError) as info:
        install("systemd", paths=paths, runner=runner)
    assert "Failed to connect to bus" in info.value.message
    assert "loginctl enable-linger" in info.value.hint
    assert info.value.code == "STARTUP_FAILED"


def test_install_systemd_without_systemctl(home: Path, paths: Paths) -> None:
    def missing(args: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        raise FileNotFoundError(2, "No such file or directory", args[0])

    with pytest.raises(StartupError) as info:
        install("systemd", paths=paths, runner=missing)
    assert "`systemctl` not found" in info.value.message
    assert "loginctl enable-linger" in info.value.hint


def test_install_systemd_command_timeout(home: Path, paths: Paths) -> None:
    def slow(args: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        raise subprocess.TimeoutExpired(list(args), kwargs["timeout"])

    with pytest.raises(StartupError, match="did not finish"):
        install("systemd", paths=paths, runner=slow)


def test_uninstall_systemd(home: Path, paths: Paths) -> None:
    unit = home / ".config" / "systemd" / "user" / "browserd.service"
    install("systemd", paths=paths, runner=FakeRunner())
    present: list[bool] = []
    runner = FakeRunner(on_call=lambda argv: present.append(unit.exists()))
    result = uninstall("systemd", runner=runner)
    assert runner.calls == [
        ("systemctl", "--user", "disable", "--now", "browserd.service"),
        ("systemctl", "--user", "daemon-reload"),
    ]
    assert present == [True, False]  # stopped while defined, reloaded after removal
    assert not unit.exists()
    assert result.applied and result.commands == tuple(runner.calls)
    # Not installed: nothing to do.
    runner = FakeRunner()
    assert uninstall("systemd", runner=runner).commands == ()
    assert runner.calls == []


def test_uninstall_systemd_disable_failure_keeps_the_unit(home: Path, paths: Paths) -> None:
    unit = home / ".config" / "systemd" / "user" / "browserd.service"
    install("systemd", paths=paths, runner=FakeRunner())
    runner = FakeRunner({
        ("systemctl", "--user", "disable", "--now", "browserd.service"): (1, "Access denied"),
    })
    with pytest.raises(StartupError, match="Access denied"):
        uninstall("systemd", runner=runner)
    assert unit.exists()
