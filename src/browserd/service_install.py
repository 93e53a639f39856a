"""Install browserd as a per-user background service (launchd or systemd --user).

The service definition is data: :class:`ServiceSpec` says what to run, where,
with which environment and how long a stop may take; two pure renderers turn
it into a LaunchAgent plist or a systemd user unit; :func:`install` and
:func:`uninstall` write or remove the file and drive ``launchctl`` /
``systemctl`` through a ``runner`` seam (``subprocess.run`` by default) so
tests can check the exact commands without running them.

Neither launchd nor systemd expands ``~`` or gives a useful ``PATH``, so every
path in a spec is absolute and ``PATH`` is spelled out. The stop timeout is
set above browserd's own stop budget (15 s): the service manager's SIGKILL is
a last resort, never the normal way out.

Everything here is synchronous (it runs from the CLI, not inside trio).
Errors are :class:`~browserd.errors.StartupError` (a tool is missing or
failed: the message carries its stderr and a hint) or
:class:`~browserd.errors.ConfigError` (a spec that cannot be expressed, such
as a relative path or a control character in a value).
"""

from __future__ import annotations

import os
import plistlib
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Literal, Protocol

import attrs

from .errors import ConfigError, StartupError
from .paths import Paths, ensure_private_dir
from .supervisor.budgets import SERVICE_STOP_S

__all__ = [
    "DEFAULT_LABEL", "STDERR_LOG_NAME", "STDOUT_LOG_NAME", "STOP_BUDGET_S", "SYSTEMD_UNIT_NAME",
    "InstallResult", "Runner", "ServiceKind", "ServiceSpec", "default_kind", "default_path",
    "install", "launchd_plist_path", "render_launchd_plist", "render_systemd_unit",
    "spec_for_current_install", "systemd_quote_word", "systemd_unit_path", "uninstall",
]

ServiceKind = Literal["launchd", "systemd"]

DEFAULT_LABEL = "dev.browserd.agent"
SYSTEMD_UNIT_NAME = "browserd.service"
STOP_BUDGET_S = int(SERVICE_STOP_S)
"""browserd's own bound on a graceful stop; the service managers wait longer."""

STDOUT_LOG_NAME = "service.stdout.log"
STDERR_LOG_NAME = "service.stderr.log"

_COMMAND_TIMEOUT_S = 90.0  # above stop_timeout_s: bootout / disable --now wait for the stop
_SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
_SYSTEMD_SAFE_WORD = re.compile(r"^[A-Za-z0-9_@+=:,./-]+$")
_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")

_SYSTEMD_HINT = (
    "systemctl --user needs a user session (a login of this user with its D-Bus); "
    "on a headless server run `loginctl enable-linger $USER` and log in again, "
    "or print the unit with `browserd service install --print` and install it by hand"
)
_LAUNCHD_HINT = (
    "launchctl needs this user's GUI session (gui/<uid>): run it from the user's own "
    "login, not through sudo or ssh as another user; check the file with `plutil -lint`"
)


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


# -- install / uninstall -------------------------------------------------------


class Runner(Protocol):
    """The shape of ``subprocess.run`` as used here (the test seam)."""

    def __call__(
        self,
        args: Sequence[str],
        *,
        capture_output: bool,
        text: Literal[True],
        check: bool,
        timeout: float,
    ) -> subprocess.CompletedProcess[str]: ...


@attrs.frozen(kw_only=True)
class InstallResult:
    """What install/uninstall did, or (``applied`` false) would do.

    ``path`` is the plist or unit file; ``text`` its rendered content (for
    uninstall: the content that was, or would be, removed, or ``""``);
    ``commands`` the commands run, in order. With ``print_only`` the
    commands are those a first install (or an uninstall of a loaded service)
    would run; nothing was written or run.
    """

    kind: ServiceKind
    path: Path
    text: str
    commands: tuple[tuple[str, ...], ...]
    applied: bool


def default_kind(platform: str | None = None) -> ServiceKind:
    """launchd on macOS, systemd everywhere else."""
    return "launchd" if (sys.platform if platform is None else platform) == "darwin" else "systemd"


def _kind(kind: str | None) -> ServiceKind:
    if kind is None:
        return default_kind()
    if kind == "launchd":
        return "launchd"
    if kind == "systemd":
        return "systemd"
    raise ConfigError(f"unknown service kind {kind!r}: use launchd or systemd")


def launchd_plist_path(label: str = DEFAULT_LABEL) -> Path:
    return Path.home() / "Library" / "LaunchAgents" / f"{label}.plist"


def systemd_unit_path() -> Path:
    return Path.home() / ".config" / "systemd" / "user" / SYSTEMD_UNIT_NAME


def _launchd_domain() -> str:
    return f"gui/{os.getuid()}"


def _systemctl(*args: str) -> tuple[str, ...]:
    return ("systemctl", "--user", *args)


def _run(runner: Runner, argv: tuple[str, ...], hint: str) -> subprocess.CompletedProcess[str]:
    """Run one command; a missing tool, a timeout or a non-zero exit is StartupError."""
    try:
        proc = runner(list(argv), capture_output=True, text=True, check=False,
                      timeout=_COMMAND_TIMEOUT_S)
    except FileNotFoundError:
        raise StartupError(f"`{argv[0]}` not found: cannot run `{' '.join(argv)}`",
                           hint=hint) from None
    except subprocess.TimeoutExpired:
        raise StartupError(f"`{' '.join(argv)}` did not finish within {_COMMAND_TIMEOUT_S:.0f} s",
                           hint=hint) from None
    except OSError as exc:
        raise StartupError(f"cannot run `{' '.join(argv)}`: {exc}", hint=hint) from None
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout or "").strip() or "(no output)"
        raise StartupError(
            f"`{' '.join(argv)}` failed with exit status {proc.returncode}: {detail}", hint=hint
        )
    return proc


def _succeeds(runner: Runner, argv: tuple[str, ...]) -> bool:
    """True when the command exits 0; any failure (even a missing tool) is False."""
    try:
        proc = runner(list(argv), capture_output=True, text=True, check=False,
                      timeout=_COMMAND_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def _write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` (mode 0644) via a temp file and rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # not group/world-writable whatever the umask: launchd insists
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise StartupError(f"cannot write {path}: {exc}") from None


def _remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise StartupError(f"cannot remove {path}: {exc}") from None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def install(
    kind: ServiceKind | None = None,
    *,
    print_only: bool = False,
    paths: Paths,
    runner: Runner = subprocess.run,
) -> InstallResult:
    """Write the service definition for this install and start it.

    launchd: writes ``~/Library/LaunchAgents/<label>.plist``; if the job is
    already loaded it is booted out first (so a reinstall takes effect), then
    ``launchctl enable`` and ``launchctl bootstrap gui/<uid> <plist>``.
    systemd: writes ``~/.config/systemd/user/browserd.service``, then
    ``daemon-reload``, ``try-restart`` (a running old version picks up the new
    unit) and ``enable --now``. The working and log directories are created
    (launchd and systemd refuse to start without them).

    ``print_only`` renders and returns without touching anything. Errors:
    StartupError naming the failed command, its stderr and a hint; the file
    already written is left in place so the user can retry or inspect it.
    """
    k = _kind(kind)
    spec = spec_for_current_install(paths)
    if k == "launchd":
        path = launchd_plist_path(spec.label)
        data = render_launchd_plist(spec)
        target = f"{_launchd_domain()}/{spec.label}"
        hint = _LAUNCHD_HINT
        before: tuple[tuple[str, ...], ...] = (("launchctl", "bootout", target),)
        after: tuple[tuple[str, ...], ...] = (
            ("launchctl", "enable", target),
            ("launchctl", "bootstrap", _launchd_domain(), str(path)),
        )
    else:
        path = systemd_unit_path()
        data = render_systemd_unit(spec).encode()
        hint = _SYSTEMD_HINT
        before = ()
        after = (
            _systemctl("daemon-reload"),
            _systemctl("try-restart", SYSTEMD_UNIT_NAME),
            _systemctl("enable", "--now", SYSTEMD_UNIT_NAME),
        )
    if print_only:
        return InstallResult(kind=k, path=path, text=data.decode(), commands=after, applied=False)

    for directory in (spec.working_dir, spec.log_dir):
        try:
            ensure_private_dir(directory)
        except OSError as exc:
            raise StartupError(f"cannot create {directory}: {exc}") from None
    ran: list[tuple[str, ...]] = []
    if before and _succeeds(runner, ("launchctl", "print", target)):
        # Loaded already: boot the old job out before its plist changes under it.
        for argv in before:
            _run(runner, argv, hint)
            ran.append(argv)
    _write_atomic(path, data)
    for argv in after:
        _run(runner, argv, hint)
        ran.append(argv)
    return InstallResult(kind=k, path=path, text=data.decode(), commands=tuple(ran), applied=True)


def uninstall(
    kind: ServiceKind | None = None,
    *,
    print_only: bool = False,
    label: str = DEFAULT_LABEL,
    runner: Runner = subprocess.run,
) -> InstallResult:
    """Stop the service, remove its definition, and tell the manager.

    launchd: ``launchctl bootout gui/<uid>/<label>`` (when loaded), then the
    plist is deleted. systemd: ``systemctl --user disable --now
    browserd.service``, the unit is deleted, ``daemon-reload``. Uninstalling
    what is not installed does nothing and is not an error. The stop waits
    for browserd's graceful exit (bounded by the stop timeout). Errors:
    StartupError with the command's stderr and a hint; on a failed stop the
    file is kept so the service stays manageable.
    """
    k = _kind(kind)
    if k == "launchd":
        path = launchd_plist_path(label)
        target = f"{_launchd_domain()}/{label}"
        bootout = ("launchctl", "bootout", target)
        if print_only:
            return InstallResult(kind=k, path=path, text=_read_text(path), commands=(bootout,),
                                 applied=False)
        text = _read_text(path)
        commands: tuple[tuple[str, ...], ...] = ()
        if _succeeds(runner, ("launchctl", "print", target)):
            _run(runner, bootout, _LAUNCHD_HINT)
            commands = (bootout,)
        _remove(path)
        return InstallResult(kind=k, path=path, text=text, commands=commands, applied=True)

    path = systemd_unit_path()
    planned = (
        _systemctl("disable", "--now", SYSTEMD_UNIT_NAME),
        _systemctl("daemon-reload"),
    )
    if print_only:
        return InstallResult(kind=k, path=path, text=_read_text(path), commands=planned,
                             applied=False)
    if not path.exists():
        return InstallResult(kind=k, path=path, text="", commands=(), applied=True)
    text = _read_text(path)
    _run(runner, planned[0], _SYSTEMD_HINT)
    _remove(path)
    _run(runner, planned[1], _SYSTEMD_HINT)
    return InstallResult(kind=k, path=path, text=text, commands=planned, applied=True)
