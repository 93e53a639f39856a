"""Service definitions (launchd plist, systemd user unit) and install/uninstall.

Nothing here runs launchctl or systemctl: a fake runner records the commands.
`systemd-analyze verify`, when present, checks the units are valid systemd.
"""

from __future__ import annotations

import os
import plistlib
import shlex
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest

from browserd.errors import ConfigError, StartupError
from browserd.paths import Paths
from browserd.service_install import (
    DEFAULT_LABEL,
    InstallResult,
    ServiceSpec,
    default_kind,
    default_path,
    install,
    render_launchd_plist,
    render_systemd_unit,
    spec_for_current_install,
    uninstall,
)

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_PLIST = REPO / "deploy" / "launchd" / "dev.browserd.agent.plist"
EXAMPLE_UNIT = REPO / "deploy" / "systemd" / "browserd.service"
STOP_BUDGET_S = 15

PLIST_KEYS = {
    "Label", "ProgramArguments", "RunAtLoad", "KeepAlive", "ThrottleInterval", "ExitTimeOut",
    "ProcessType", "WorkingDirectory", "StandardOutPath", "StandardErrorPath",
    "EnvironmentVariables",
}


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


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    return Paths.resolve({"BROWSERD_HOME": str(tmp_path / "bhome")})


def make_spec(tmp_path: Path, **changes: Any) -> ServiceSpec:
    py = "/opt/py/bin/python3"
    base = ServiceSpec(
        program=(py, "-m", "browserd", "serve"),
        working_dir=tmp_path / "data",
        log_dir=tmp_path / "logs",
        environment={"PATH": default_path(py, "linux"), "BROWSERD_HOME": str(tmp_path)},
    )
    return attrs.evolve(base, **changes)


def check_plist(doc: dict[str, Any], *, log_dir: Path | None) -> None:
    """The keys every browserd LaunchAgent must have, with sane values."""
    assert set(doc) == PLIST_KEYS  # nothing missing, nothing extra (no Nice)
    assert doc["Label"] == DEFAULT_LABEL
    argv = doc["ProgramArguments"]
    assert isinstance(argv, list) and argv[1:] == ["-m", "browserd", "serve"]
    assert os.path.isabs(argv[0])
    assert doc["RunAtLoad"] is True
    assert doc["KeepAlive"] == {"SuccessfulExit": False}
    assert doc["KeepAlive"]["SuccessfulExit"] is False
    assert isinstance(doc["ExitTimeOut"], int) and doc["ExitTimeOut"] > STOP_BUDGET_S
    assert isinstance(doc["ThrottleInterval"], int) and doc["ThrottleInterval"] >= 1
    assert doc["ProcessType"] == "Interactive"
    assert os.path.isabs(doc["WorkingDirectory"])
    out, err = Path(doc["StandardOutPath"]), Path(doc["StandardErrorPath"])
    assert out.is_absolute() and err.is_absolute() and out != err
    if log_dir is not None:
        assert out.parent == log_dir and err.parent == log_dir
    else:
        assert out.parent == err.parent
    env = doc["EnvironmentVariables"]
    entries = env["PATH"].split(":")
    assert all(os.path.isabs(e) for e in entries)
    assert entries[0] == str(Path(argv[0]).parent)
    assert {"/usr/bin", "/bin"} <= set(entries)

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                walk(k)
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, str):
            assert "~" not in v and "$" not in v, v

    walk(doc)


def parse_unit(text: str) -> dict[str, list[tuple[str, str]]]:
    """Sections -> [(key, value)] in order (repeatable keys kept)."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
            continue
        assert current is not None, raw
        key, sep, value = line.partition("=")
        assert sep, raw
        current.append((key, value))
    return sections


def one(section: list[tuple[str, str]], key: str) -> str:
    values = [v for k, v in section if k == key]
    assert len(values) == 1, (key, values)
    return values[0]


def exec_argv(value: str) -> list[str]:
    """Split ExecStart the way systemd does for the escapes we emit."""
    words = shlex.split(value, posix=True)
    return [w.replace("$$", "$").replace("%%", "%") for w in words]


def check_unit(text: str) -> dict[str, list[tuple[str, str]]]:
    unit = parse_unit(text)
    assert set(unit) == {"Unit", "Service", "Install"}
    svc = unit["Service"]
    assert one(svc, "Type") == "simple"
    assert one(svc, "Restart") == "on-failure"
    assert one(svc, "KillMode") == "mixed"
    assert one(svc, "KillSignal") == "SIGTERM"
    assert int(one(svc, "TimeoutStopSec")) > STOP_BUDGET_S
    assert int(one(svc, "RestartSec")) >= 1
    exec_start = one(svc, "ExecStart")
    first = exec_start.split()[0]
    assert first.startswith(("/", "%h/")), exec_start
    assert exec_start.split()[1:] == ["-m", "browserd", "serve"]
    assert one(svc, "WorkingDirectory").startswith(("/", "%h/"))
    assert any(v.startswith('"PATH=') for k, v in svc if k == "Environment")
    assert one(unit["Unit"], "After") == "graphical-session.target"
    assert one(unit["Install"], "WantedBy") == "default.target"
    assert "~" not in "\n".join(v for sec in unit.values() for _, v in sec)
    return unit


def systemd_verify(unit_file: Path, tmp_path: Path, home: Path) -> subprocess.CompletedProcess[str]:
    runtime = tmp_path / "xdg-runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = dict(os.environ, HOME=str(home), XDG_RUNTIME_DIR=str(runtime))
    return subprocess.run(
        ["systemd-analyze", "--user", "verify", str(unit_file)],
        capture_output=True, text=True, env=env, timeout=20, check=False,
    )


needs_systemd_analyze = pytest.mark.skipif(
    shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed"
)


# -- the spec ------------------------------------------------------------------


def test_spec_for_current_install_uses_this_interpreter(
    paths: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = spec_for_current_install(paths, {})
    assert spec.program == (os.path.abspath(sys.executable), "-m", "browserd", "serve")
    assert spec.label == "dev.browserd.agent"
    assert spec.working_dir == paths.data_dir
    assert spec.log_dir == paths.log_dir
    assert spec.stop_timeout_s > STOP_BUDGET_S
    assert spec.throttle_s == 10
    assert set(spec.environment) == {"PATH"}
    entries = spec.environment["PATH"].split(":")
    assert entries[0] == str(Path(sys.executable).absolute().parent)
    assert entries[1:4] == ["/usr/local/bin", "/usr/bin", "/bin"]


def test_spec_does_not_resolve_a_venv_symlink(paths: Paths, tmp_path: Path) -> None:
    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").symlink_to(sys.executable)
    spec = spec_for_current_install(paths, {}, python=str(venv_bin / "python"))
    assert spec.program[0] == str(venv_bin / "python")
    assert spec.environment["PATH"].startswith(f"{venv_bin}:")


def test_spec_path_per_platform(paths: Paths) -> None:
    mac = spec_for_current_install(paths, {}, python="/u/bin/python3", platform="darwin")
    linux = spec_for_current_install(paths, {}, python="/u/bin/python3", platform="linux")
    assert mac.environment["PATH"] == "/u/bin:/usr/local/bin:/usr/bin:/bin:/opt/homebrew/bin"
    assert "/opt/homebrew/bin" not in linux.environment["PATH"]
    assert linux.environment["PATH"].startswith("/u/bin:/usr/local/bin:/usr/bin:/bin")
    dup = spec_for_current_install(paths, {}, python="/usr/bin/python3", platform="linux")
    assert dup.environment["PATH"].split(":").count("/usr/bin") == 1


def test_spec_carries_browserd_home_absolute(
    paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = spec_for_current_install(paths, {"BROWSERD_HOME": "rel/home"})
    assert spec.environment["BROWSERD_HOME"] == str(tmp_path / "rel" / "home")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    spec = spec_for_current_install(paths, {"BROWSERD_HOME": "~/bh"})
    assert spec.environment["BROWSERD_HOME"] == str(tmp_path / "h" / "bh")


@pytest.mark.parametrize(
    "changes",
    [
        {"program": ("python3", "-m", "browserd", "serve")},
        {"program": ()},
        {"program": ("/usr/bin/python3", "~/x")},
        {"working_dir": Path("data")},
        {"log_dir": Path("~/logs")},
        {"environment": {"PATH": "bin:/usr/bin"}},
        {"environment": {"PATH": "/usr/bin", "X": "~/y"}},
        {"environment": {"PATH": "/usr/bin", "A=B": "c"}},
        {"stop_timeout_s": 0},
    ],
)
def test_spec_refuses_what_a_service_manager_cannot_run(
    tmp_path: Path, changes: dict[str, Any]
) -> None:
    with pytest.raises(ConfigError):
        make_spec(tmp_path, **changes)


def test_spec_environment_is_a_private_copy(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin"}
    spec = make_spec(tmp_path, environment=env)
    env["PATH"] = "/evil"
    assert spec.environment["PATH"] == "/usr/bin"


# -- launchd -------------------------------------------------------------------


def test_rendered_plist_has_every_key(tmp_path: Path) -> None:
    spec = make_spec(tmp_path)
    data = render_launchd_plist(spec)
    assert b"~" not in data
    doc = plistlib.loads(data)
    check_plist(doc, log_dir=spec.log_dir)
    assert doc["ProgramArguments"] == list(spec.program)
    assert doc["ThrottleInterval"] == 10 and doc["ExitTimeOut"] == 30
    assert doc["WorkingDirectory"] == str(spec.working_dir)
    assert doc["EnvironmentVariables"] == dict(spec.environment)
    assert "Nice" not in doc


def test_rendered_plist_for_current_install(paths: Paths) -> None:
    spec = spec_for_current_install(paths, {})
    doc = plistlib.loads(render_launchd_plist(spec))
    check_plist(doc, log_dir=paths.log_dir)
    assert doc["ProgramArguments"][0] == os.path.abspath(sys.executable)


def test_plist_refuses_control_characters(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, environment={"PATH": "/usr/bin", "X": "a\x01b"})
    with pytest.raises(ConfigError):
        render_launchd_plist(spec)


def test_checked_in_plist_is_a_valid_example() -> None:
    raw = EXAMPLE_PLIST.read_bytes()
    doc = plistlib.loads(raw)
    check_plist(doc, log_dir=None)
    assert doc["ProgramArguments"][0].startswith("/Users/agent/")
    assert doc["WorkingDirectory"].startswith("/Users/agent/")
    assert doc["StandardErrorPath"].startswith("/Users/agent/Library/Logs/browserd/")
    # Kept in step with the renderer: same document as rendering the example spec.
    py = doc["ProgramArguments"][0]
    spec = ServiceSpec(
        program=(py, "-m", "browserd", "serve"),
        working_dir=Path(doc["WorkingDirectory"]),
        log_dir=Path(doc["StandardErrorPath"]).parent,
        environment={"PATH": default_path(py, "darwin")},
    )
    assert plistlib.loads(render_launchd_plist(spec)) == doc


# -- systemd -------------------------------------------------------------------


def test_rendered_unit(tmp_path: Path) -> None:
    spec = make_spec(tmp_path)
    unit = check_unit(render_systemd_unit(spec))
    svc = unit["Service"]
    assert exec_argv(one(svc, "ExecStart")) == list(spec.program)
    assert one(svc, "WorkingDirectory") == str(spec.working_dir)
    assert one(svc, "TimeoutStopSec") == "30" and one(svc, "RestartSec") == "10"
    envs = [shlex.split(v)[0] for k, v in svc if k == "Environment"]
    assert envs == [f"{k}={v}" for k, v in spec.environment.items()]


def test_unit_quotes_awkward_arguments(tmp_path: Path) -> None:
    awkward = ("a b", 'say "hi"', "$HOME", "100%", ";", "back\\slash", "")
    program = ("/opt/my python/bin/python3", *awkward)
    spec = make_spec(tmp_path, program=program, working_dir=tmp_path / "50% dir",
                     environment={"PATH": "/usr/bin", "NOTE": 'x "y" %h $z'})
    unit = parse_unit(render_systemd_unit(spec))
    svc = unit["Service"]
    exec_start = one(svc, "ExecStart")
    assert exec_argv(exec_start) == list(program)
    assert exec_start.startswith('"/opt/my python/bin/python3" "a b" ')
    # systemd would expand these; the escaped forms keep them literal.
    assert ' "$$HOME" "100%%" ";" ' in exec_start
    assert one(svc, "WorkingDirectory") == str(tmp_path / "50%% dir")
    note = [v for k, v in svc if k == "Environment" and "NOTE" in v]
    assert note == ['"NOTE=x \\"y\\" %%h $z"']


def test_unit_escapes_newlines(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, program=("/usr/bin/python3", "a\nb"))
    text = render_systemd_unit(spec)
    assert '"a\\nb"' in text
    with pytest.raises(ConfigError):
        render_systemd_unit(make_spec(tmp_path, program=("/usr/bin/python3", "a\x01")))


@needs_systemd_analyze
def test_rendered_unit_passes_systemd_analyze(tmp_path: Path, paths: Paths) -> None:
    spec = spec_for_current_install(paths, {})
    spec = attrs.evolve(spec, program=(*spec.program, "a b", 'q"q', "$X", "5%", ";"))
    spec.working_dir.mkdir(parents=True)
    unit_file = tmp_path / "browserd.service"
    unit_file.write_text(render_systemd_unit(spec))
    proc = systemd_verify(unit_file, tmp_path, tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_checked_in_unit_is_a_valid_example(tmp_path: Path) -> None:
    text = EXAMPLE_UNIT.read_text()
    unit = check_unit(text)
    rendered = parse_unit(render_systemd_unit(make_spec(tmp_path, environment={"PATH": "/bin"})))
    for name, section in rendered.items():
        assert [k for k, _ in unit[name]] == [k for k, _ in section], name
    svc = unit["Service"]
    assert one(svc, "ExecStart").startswith("%h/")
    assert one(svc, "TimeoutStopSec") == "30"


@needs_systemd_analyze
def test_checked_in_unit_passes_systemd_analyze(tmp_path: Path) -> None:
    home = tmp_path / "agent"
    venv_bin = home / "browserd" / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").symlink_to(sys.executable)
    (home / ".local" / "share" / "browserd").mkdir(parents=True)
    proc = systemd_verify(EXAMPLE_UNIT, tmp_path, home)
    assert proc.returncode == 0, proc.stderr
    # And %h really is what it resolves against: a home without the venv fails.
    other = tmp_path / "other"
    other.mkdir()
    assert systemd_verify(EXAMPLE_UNIT, tmp_path, other).returncode != 0


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
