"""Install browserd as a per-user background service (launchd or systemd --user).

:func:`install` and :func:`uninstall` write or remove the service definition
(rendered from a :class:`~browserd.service_units.ServiceSpec` by
:mod:`browserd.service_units`, whose names are importable from here too) and
drive ``launchctl`` / ``systemctl`` through a ``runner`` seam
(``subprocess.run`` by default) so tests can check the exact commands without
running them.

Everything here is synchronous (it runs from the CLI, not inside trio).
Errors are :class:`~browserd.errors.StartupError` (a tool is missing or
failed: the message carries its stderr and a hint) or
:class:`~browserd.errors.ConfigError` (a spec that cannot be expressed, such
as a relative path or a control character in a value).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol

import attrs

from .errors import ConfigError, StartupError
from .paths import Paths, ensure_private_dir
from .service_units import (
    DEFAULT_LABEL,
    STDERR_LOG_NAME,
    STDOUT_LOG_NAME,
    STOP_BUDGET_S,
    SYSTEMD_UNIT_NAME,
    ServiceKind,
    ServiceSpec,
    default_path,
    render_launchd_plist,
    render_systemd_unit,
    spec_for_current_install,
    systemd_quote_word,
)

__all__ = [
    "DEFAULT_LABEL", "STDERR_LOG_NAME", "STDOUT_LOG_NAME", "STOP_BUDGET_S", "SYSTEMD_UNIT_NAME",
    "InstallResult", "Runner", "ServiceKind", "ServiceSpec", "default_kind", "default_path",
    "install", "launchd_plist_path", "render_launchd_plist", "render_systemd_unit",
    "spec_for_current_install", "systemd_quote_word", "systemd_unit_path", "uninstall",
]


_COMMAND_TIMEOUT_S = 90.0  # above stop_timeout_s: bootout / disable --now wait for the stop

_SYSTEMD_HINT = (
    "systemctl --user needs a user session (a login of this user with its D-Bus); "
    "on a headless server run `loginctl enable-linger $USER` and log in again, "
    "or print the unit with `browserd service install --print` and install it by hand"
)
_LAUNCHD_HINT = (
    "launchctl needs this user's GUI session (gui/<uid>): run it from the user's own "
    "login, not through sudo or ssh as another user; check the file with `plutil -lint`"
)


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
