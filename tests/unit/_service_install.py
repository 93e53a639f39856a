"""What the service-definition tests share (test_service_install.py, test_service_units.py).

The ``paths`` fixture (a BROWSERD_HOME under ``tmp_path``) and the checks of a
rendered LaunchAgent plist (:func:`check_plist`) and systemd user unit
(:func:`check_unit`, with :func:`parse_unit`, :func:`one` and :func:`exec_argv`
to read one). Fixtures are imported as ``name as name``: pytest finds them by that name.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

import pytest

from browserd.paths import Paths
from browserd.service_install import DEFAULT_LABEL

__all__ = ["PLIST_KEYS", "STOP_BUDGET_S", "check_plist", "check_unit", "exec_argv", "one",
           "parse_unit", "paths"]


STOP_BUDGET_S = 15

PLIST_KEYS = {
    "Label", "ProgramArguments", "RunAtLoad", "KeepAlive", "ThrottleInterval", "ExitTimeOut",
    "ProcessType", "WorkingDirectory", "StandardOutPath", "StandardErrorPath",
    "EnvironmentVariables",
}


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    return Paths.resolve({"BROWSERD_HOME": str(tmp_path / "bhome")})


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
