"""What a service manager is given to run browserd: the spec and its two renderings.

The service definition is data: :class:`ServiceSpec` says what to run, where,
with which environment and how long a stop may take
(:func:`spec_for_current_install` makes the one for this interpreter); two pure
renderers turn it into a LaunchAgent plist (:func:`render_launchd_plist`) or a
systemd user unit (:func:`render_systemd_unit`). Writing them and driving
``launchctl`` / ``systemctl`` is :mod:`browserd.service_install`'s.

Neither launchd nor systemd expands ``~`` or gives a useful ``PATH``, so every
path in a spec is absolute and ``PATH`` is spelled out. The stop timeout is
set above browserd's own stop budget (15 s): the service manager's SIGKILL is
a last resort, never the normal way out.

Plain code, no I/O. Errors are :class:`~browserd.errors.ConfigError` (a spec
that cannot be expressed, such as a relative path or a control character in
a value) or, from :func:`spec_for_current_install`,
:class:`~browserd.errors.StartupError` (the interpreter's path is unknown).
"""

from __future__ import annotations

import os
import plistlib
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Literal

import attrs

from .errors import ConfigError, StartupError
from .paths import Paths
from .supervisor.budgets import SERVICE_STOP_S

__all__ = [
    "DEFAULT_LABEL", "STDERR_LOG_NAME", "STDOUT_LOG_NAME", "STOP_BUDGET_S", "SYSTEMD_UNIT_NAME",
    "ServiceKind", "ServiceSpec", "default_path", "render_launchd_plist", "render_systemd_unit",
    "spec_for_current_install", "systemd_quote_word",
]

ServiceKind = Literal["launchd", "systemd"]

DEFAULT_LABEL = "dev.browserd.agent"
SYSTEMD_UNIT_NAME = "browserd.service"
STOP_BUDGET_S = int(SERVICE_STOP_S)
"""browserd's own bound on a graceful stop; the service managers wait longer."""

STDOUT_LOG_NAME = "service.stdout.log"
STDERR_LOG_NAME = "service.stderr.log"

_SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
_SYSTEMD_SAFE_WORD = re.compile(r"^[A-Za-z0-9_@+=:,./-]+$")
_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")


# -- the spec ------------------------------------------------------------------


def _str_tuple(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(items)


def _frozen_env(env: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(env))


def _check_program(_inst: object, _attr: object, value: tuple[str, ...]) -> None:
    if not value:
        raise ConfigError("service program is empty")
    if not os.path.isabs(value[0]):
        raise ConfigError(f"service program must be an absolute path, got {value[0]!r}")
    for arg in value:
        if arg.startswith("~"):
            raise ConfigError(f"service argument {arg!r}: the service manager does not expand '~'")


def _check_abs_dir(_inst: object, attr: attrs.Attribute[Path], value: Path) -> None:
    if not value.is_absolute():
        raise ConfigError(f"service {attr.name} must be an absolute path, got {str(value)!r}")


def _check_env(_inst: object, _attr: object, value: Mapping[str, str]) -> None:
    for key, val in value.items():
        if not key or "=" in key or _CONTROL_CHARS.search(key):
            raise ConfigError(f"bad environment variable name {key!r}")
        if val.startswith("~"):
            raise ConfigError(f"environment {key}={val!r}: '~' is not expanded")
    for entry in value.get("PATH", "/").split(os.pathsep):
        if not os.path.isabs(entry):
            raise ConfigError(f"PATH entry {entry!r} is not absolute")


def _check_positive(_inst: object, attr: attrs.Attribute[int], value: int) -> None:
    if value < 1:
        raise ConfigError(f"service {attr.name} must be at least 1, got {value}")


@attrs.frozen(kw_only=True)
class ServiceSpec:
    """What the service manager runs and how it stops it.

    ``program`` is the absolute argv; ``working_dir`` and ``log_dir`` are
    absolute directories; ``environment`` is the whole environment the
    service gets (the managers add almost nothing). ``stop_timeout_s`` is how
    long the manager waits after SIGTERM before SIGKILL; ``throttle_s`` is the
    pause before a restart after a failure. Construction raises ConfigError
    for a relative path, a ``~``, or a bad variable name.
    """

    label: str = DEFAULT_LABEL
    program: tuple[str, ...] = attrs.field(converter=_str_tuple, validator=_check_program)
    working_dir: Path = attrs.field(validator=_check_abs_dir)
    log_dir: Path = attrs.field(validator=_check_abs_dir)
    environment: Mapping[str, str] = attrs.field(converter=_frozen_env, validator=_check_env)
    stop_timeout_s: int = attrs.field(default=30, validator=_check_positive)
    throttle_s: int = attrs.field(default=10, validator=_check_positive)

    @property
    def stdout_path(self) -> Path:
        return self.log_dir / STDOUT_LOG_NAME

    @property
    def stderr_path(self) -> Path:
        return self.log_dir / STDERR_LOG_NAME


def default_path(python: str, platform: str) -> str:
    """An absolute PATH: the interpreter's bin dir first, then the system dirs."""
    entries = [str(Path(python).parent), *_SYSTEM_PATH]
    if platform == "darwin":
        entries.append("/opt/homebrew/bin")
    elif platform.startswith("linux"):
        entries.append("/snap/bin")  # Ubuntu's chromium is a snap
    return os.pathsep.join(dict.fromkeys(entries))


def spec_for_current_install(
    paths: Paths,
    environ: Mapping[str, str] = os.environ,
    *,
    python: str | None = None,
    platform: str | None = None,
) -> ServiceSpec:
    """The spec that runs this interpreter's browserd as ``browserd serve``.

    ``python`` defaults to ``sys.executable`` made absolute but *not* resolved
    (a venv's ``bin/python`` is a symlink; resolving it would leave the venv).
    ``BROWSERD_HOME`` is carried over, absolute, when set. Raises StartupError
    when the interpreter's path is unknown.
    """
    exe = sys.executable if python is None else python
    if not exe:
        raise StartupError(
            "cannot tell which Python runs browserd (sys.executable is empty)",
            hint="run `browserd service install` with the venv's own python",
        )
    exe = os.path.abspath(os.path.expanduser(exe))
    env = {"PATH": default_path(exe, sys.platform if platform is None else platform)}
    home = environ.get("BROWSERD_HOME")
    if home:
        env["BROWSERD_HOME"] = str(Path(home).expanduser().absolute())
    return ServiceSpec(
        program=(exe, "-m", "browserd", "serve"),
        working_dir=paths.data_dir,
        log_dir=paths.log_dir,
        environment=env,
    )


# -- renderers -----------------------------------------------------------------


def render_launchd_plist(spec: ServiceSpec) -> bytes:
    """The LaunchAgent plist (XML) for ``spec``.

    KeepAlive restarts only after a non-zero exit (a SIGTERM stop exits 0);
    ExitTimeOut is the SIGTERM→SIGKILL wait. Raises ConfigError for a value
    plist XML cannot hold (control characters).
    """
    doc = {
        "Label": spec.label,
        "ProgramArguments": list(spec.program),
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": spec.throttle_s,
        "ExitTimeOut": spec.stop_timeout_s,
        "ProcessType": "Interactive",
        "WorkingDirectory": str(spec.working_dir),
        "StandardOutPath": str(spec.stdout_path),
        "StandardErrorPath": str(spec.stderr_path),
        "EnvironmentVariables": dict(spec.environment),
    }
    try:
        return plistlib.dumps(doc, fmt=plistlib.FMT_XML, sort_keys=False)
    except ValueError as exc:
        raise ConfigError(f"cannot write the LaunchAgent plist: {exc}") from None


def _systemd_escape(value: str, *, exec_line: bool) -> str:
    """Escape for a systemd quoted word: backslash, quote, ``%`` (and ``$`` in Exec lines)."""
    out = value.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    if exec_line:
        out = out.replace("$", "$$")
    out = out.replace("\n", "\\n").replace("\t", "\\t")
    if _CONTROL_CHARS.search(out):
        raise ConfigError(f"cannot put {value!r} in a systemd unit: control character")
    return out


def systemd_quote_word(word: str) -> str:
    """One ExecStart argument as systemd reads it back unchanged.

    Plain words stay bare; anything else is double-quoted with C escapes.
    ``%`` becomes ``%%`` (specifiers) and ``$`` becomes ``$$`` (variables)
    either way, and a lone ``;`` is quoted so it is not a command separator.
    """
    escaped = _systemd_escape(word, exec_line=True)
    if _SYSTEMD_SAFE_WORD.match(word):
        return escaped
    return f'"{escaped}"'


def render_systemd_unit(spec: ServiceSpec) -> str:
    """The systemd --user unit for ``spec``.

    KillMode=mixed: SIGTERM to the main process only (browserd stops its own
    browser), then SIGKILL to the whole group after TimeoutStopSec. Raises
    ConfigError for a value a unit file cannot hold.
    """
    workdir = str(spec.working_dir)
    if _CONTROL_CHARS.search(workdir):
        raise ConfigError(f"cannot put {workdir!r} in a systemd unit: control character")
    lines = [
        "[Unit]",
        "Description=browserd: a supervised browser of the agent's own",
        "After=graphical-session.target",
        "",
        "[Service]",
        "Type=simple",
        "ExecStart=" + " ".join(systemd_quote_word(w) for w in spec.program),
        "WorkingDirectory=" + workdir.replace("%", "%%"),
    ]
    for key, value in spec.environment.items():
        lines.append(f'Environment="{_systemd_escape(f"{key}={value}", exec_line=False)}"')
    lines += [
        "Restart=on-failure",
        f"RestartSec={spec.throttle_s}",
        f"TimeoutStopSec={spec.stop_timeout_s}",
        "KillMode=mixed",
        "KillSignal=SIGTERM",
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
    ]
    return "\n".join(lines)
