"""Service definitions: the ServiceSpec, and its renderings as a launchd plist and a
systemd user unit (the checked-in examples in deploy/ included).

`systemd-analyze verify`, when present, checks the units are valid systemd.
Installing and uninstalling them: test_service_install.py.
"""

from __future__ import annotations

import os
import plistlib
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

from browserd.errors import ConfigError
from browserd.paths import Paths
from browserd.service_install import (
    ServiceSpec,
    default_path,
    render_launchd_plist,
    render_systemd_unit,
    spec_for_current_install,
)
from tests.unit._service_install import (
    STOP_BUDGET_S,
    check_plist,
    check_unit,
    exec_argv,
    one,
    parse_unit,
)
from tests.unit._service_install import paths as paths

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_PLIST = REPO / "deploy" / "launchd" / "dev.browserd.agent.plist"
EXAMPLE_UNIT = REPO / "deploy" / "systemd" / "browserd.service"


# -- helpers -------------------------------------------------------------------


def make_spec(tmp_path: Path, **changes: Any) -> ServiceSpec:
    py = "/opt/py/bin/python3"
    base = ServiceSpec(
        program=(py, "-m", "browserd", "serve"),
        working_dir=tmp_path / "data",
        log_dir=tmp_path / "logs",
        environment={"PATH": default_path(py, "linux"), "BROWSERD_HOME": str(tmp_path)},
    )
    return attrs.evolve(base, **changes)


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
