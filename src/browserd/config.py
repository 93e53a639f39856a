"""Settings: ``config.toml`` overridden by ``BROWSERD_*`` variables and CLI flags.

Precedence, lowest first: built-in defaults → ``<config_dir>/config.toml`` →
environment (``BROWSERD_`` + the key upper-cased) → explicit overrides (CLI
flags). ``default_profile`` is the documented name of the ``profile`` key;
``[profiles.NAME]`` tables (config.toml only) become :attr:`Settings.profiles`.
Every value is validated once here; a bad value is a
:class:`~browserd.errors.ConfigError` naming the key and where it came from.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
import stat
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import attrs

from .confirm.rules import ConfirmRule, parse_rules
from .egress import EgressPolicy
from .errors import ConfigError
from .paths import Paths
from .profilespec import ProfileSpec, parse_profile_table

__all__ = [
    "DEFAULT_CONTROL_PORT", "FORBIDDEN_PORTS", "Settings", "default_headless",
    "is_loopback_host", "load_settings", "read_config_keys"
]

DEFAULT_CONTROL_PORT = 18791
FORBIDDEN_PORTS = frozenset({9222})
_COLOR_RE = re.compile(r"#[0-9a-fA-F]{6}")  # always used with fullmatch
_FINGERPRINT_RE = re.compile(r"[0-9a-fA-F]{64}")
_PROFILE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and loopback IP literals (127.0.0.0/8, ::1)."""
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def default_headless(environ: Mapping[str, str]) -> bool:
    """Headless where there is no display to show a window on."""
    if sys.platform == "darwin" or sys.platform.startswith("win"):
        return False
    return not (environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))


@attrs.frozen(kw_only=True)
class Settings:
    """Validated settings. See docs/api.md "Settings" for each key."""

    enabled: bool = True
    control_url: str = f"http://127.0.0.1:{DEFAULT_CONTROL_PORT}"
    cdp_port: int | None = None
    cdp_url: str | None = None
    cdp_gateway: bool = True
    attach_only: bool = False
    headless: bool | None = None
    executable: str | None = None
    profile: str = "clawd"
    color: str = "#FF4500"
    evaluate_enabled: bool = True
    #: Where the vault key lives: "auto" (the OS keyring when there is one, else
    #: <config>/secrets.key) or "file" (always the key file).
    vault_key: str = "auto"
    #: Agent actions held for the person's confirmation: ``[{kind?, origin?, name?}, …]``
    #: (:mod:`browserd.confirm.rules`); empty: none is held.
    confirm: tuple[ConfirmRule, ...] = ()
    allow_remote_control: bool = False
    # TLS (tls.py): tls = "self-signed" (made and kept under <config>/tls/) or the operator's
    # tls_cert + tls_key; either needs an https:// control_url. tls_fingerprint: the client's
    # pin of the served certificate (SHA-256 of its DER; BROWSERD_TLS_FINGERPRINT).
    tls: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_fingerprint: str | None = None
    url_allow: tuple[str, ...] = ()
    # Egress containment (egress.py): () = off; else the only origins pages may reach.
    allowed_origins: tuple[str, ...] = ()
    auto_start: bool = True
    media_max_files: int = 200
    media_max_bytes: int = 500 * 1024 * 1024
    media_max_age_s: float = 24 * 3600.0
    tab_queue_limit: int = 8
    network_capture: str = "on-demand"
    max_concurrent_captures: int = 4
    eval_max_bytes: int = 8 * 1024 * 1024
    restart_budget: int = 5
    restart_window_s: float = 60.0
    upload_roots: tuple[str, ...] = ()  # () = <data>/uploads/ (see browserd.uploads)
    # Downloads (kept under <data>/downloads/<profile>/; see docs/operations.md).
    downloads_enabled: bool = True
    download_max_bytes: int = 512 * 1024 * 1024
    download_max_files: int = 200
    download_max_total_bytes: int = 2 * 1024 * 1024 * 1024
    download_max_age_s: float = 24 * 3600.0
    max_sessions: int = 16
    session_ttl_s: float = 1800.0
    profile_port_start: int = 18800
    profile_port_end: int = 18899
    profiles: tuple[ProfileSpec, ...] = ()
    # A live profile (set by its ProfileSpec only): the user's browser's user data directory.
    live_user_data_dir: str | None = None
    approval_timeout_s: float = 60.0
    # Liveness (supervisor/liveness.py): Browser.getVersion every interval while running;
    # no answer within the timeout = hung (state unresponsive, restart with reason hung).
    liveness_interval_s: float = 5.0
    liveness_timeout_s: float = 10.0
    # Tab restore (supervisor/restore.py): after an unplanned restart, reopen the agent's tabs;
    # their old targetIds answer TAB_RESTORED / TAB_LOST for restored_id_ttl_s.
    restore_tabs: bool = True
    restored_id_ttl_s: float = 600.0
    # Record videos (records/video.py): the ffmpeg executable, a path or a name on PATH
    # (None: "ffmpeg" on PATH); only needed by POST /record/start {video: true}.
    ffmpeg: str | None = None

    # -- derived -------------------------------------------------------------

    @property
    def control_host(self) -> str:
        return urlsplit(self.control_url).hostname or "127.0.0.1"

    @property
    def control_port(self) -> int:
        port = urlsplit(self.control_url).port
        return DEFAULT_CONTROL_PORT if port is None else port

    @property
    def effective_cdp_port(self) -> int:
        if self.cdp_url:
            parts = urlsplit(self.cdp_url)
            if parts.port is not None:
                return parts.port
            return 443 if parts.scheme in ("https", "wss") else 80
        return self.cdp_port if self.cdp_port is not None else self.control_port + 1

    @property
    def effective_cdp_url(self) -> str:
        return self.cdp_url or f"http://127.0.0.1:{self.effective_cdp_port}"

    @property
    def is_attach_only(self) -> bool:
        """Attach-only when asked, or when the CDP endpoint is not loopback."""
        if self.attach_only:
            return True
        if self.cdp_url:
            return not is_loopback_host(urlsplit(self.cdp_url).hostname or "")
        return False

    @property
    def is_live(self) -> bool:
        """The user's own browser, found by its DevToolsActivePort (consent-scoped tabs)."""
        return self.live_user_data_dir is not None

    @property
    def is_attach(self) -> bool:
        """Connect to an existing browser instead of launching one."""
        return self.is_attach_only or bool(self.cdp_url) or self.is_live

    @property
    def gateway_active(self) -> bool:
        """browserd serves its CDP gateway on the CDP port (launched browsers only:
        when attaching, that port is the other browser's)."""
        return self.cdp_gateway and not self.is_attach

    def effective_headless(self, environ: Mapping[str, str] | None = None) -> bool:
        if self.headless is not None:
            return self.headless
        return default_headless(os.environ if environ is None else environ)

    def public_dict(self) -> dict[str, Any]:
        return attrs.asdict(self, recurse=False) | {
            "url_allow": list(self.url_allow),
            "allowed_origins": list(self.allowed_origins),
            "upload_roots": list(self.upload_roots),
            "profiles": {p.name: p.to_record() for p in self.profiles},
        }


_FIELDS = {f.name: f for f in attrs.fields(Settings) if f.name != "profiles"}
#: Other spellings of a key (the documented one first).
_ALIASES = {"default_profile": "profile"}


def _coerce(key: str, raw: Any, source: str) -> Any:
    """Turn a raw TOML/env value into the field's type, or raise ConfigError."""
    field = _FIELDS[key]
    kind = str(field.type)
    try:
        if key == "confirm":
            return parse_rules(raw)
        if kind.startswith("bool"):
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in _TRUE:
                return True
            if text in _FALSE:
                return None if "None" in kind and text == "" else False
            raise ValueError(f"expected a boolean, got {raw!r}")
        if kind.startswith("int"):
            if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
                raise ValueError(f"expected an integer, got {raw!r}")
            if raw == "" and "None" in kind:
                return None
            return int(raw)
        if kind.startswith("float"):
            if isinstance(raw, bool):
                raise ValueError(f"expected a number, got {raw!r}")
            number = float(raw)
            if not math.isfinite(number):
                raise ValueError(f"expected a finite number, got {raw!r}")
            return number
        if kind.startswith("tuple"):
            if isinstance(raw, str):
                return tuple(p.strip() for p in raw.split(",") if p.strip())
            if isinstance(raw, list) and all(isinstance(p, str) for p in raw):
                return tuple(raw)
            raise ValueError(f"expected a list of strings, got {raw!r}")
        if raw == "" and "None" in kind:
            return None
        if not isinstance(raw, str):
            raise ValueError(f"expected a string, got {raw!r}")
        return raw
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"setting {key!r} from {source}: {exc}") from None


def _validate(s: Settings, sources: Mapping[str, str] | None = None) -> None:
    """Check cross-field rules; a failure names the key and where it came from."""
    src = sources or {}

    def fail(key: str, problem: str, source_key: str | None = None) -> ConfigError:
        source = src.get(source_key or key, "the defaults")
        return ConfigError(f"setting {key!r} from {source}: {problem}")

    if s.vault_key not in ("auto", "file"):
        raise fail("vault_key", f"must be 'auto' or 'file', got {s.vault_key!r}")
    parts = urlsplit(s.control_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise fail("control_url", f"must be http(s)://HOST:PORT, got {s.control_url!r}")
    if s.tls not in (None, "self-signed"):
        raise fail("tls", f"{s.tls!r}: use \"self-signed\", or set tls_cert and tls_key")
    if (s.tls_cert is None) != (s.tls_key is None):
        raise fail("tls_cert" if s.tls_cert is None else "tls_key",
                   "tls_cert and tls_key go together (the certificate and its private key)")
    if s.tls is not None and s.tls_cert is not None:
        raise fail("tls", "tls = \"self-signed\" and tls_cert/tls_key: choose one")
    for key in ("tls_cert", "tls_key"):
        value = getattr(s, key)
        if value is not None and not Path(value).expanduser().is_absolute():
            raise fail(key, f"{value!r} is not an absolute path")
    if s.tls_fingerprint is not None and not _FINGERPRINT_RE.fullmatch(
            s.tls_fingerprint.replace(":", "")):
        raise fail("tls_fingerprint", "the SHA-256 of the server's certificate: 64 hex digits, "
                   "colons allowed (`browserd token --remote` on the server prints it)")
    try:
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        raise fail("control_url", f"bad port in {s.control_url!r}") from None
    ports = [("control_url", s.control_port, "", "control_url")]
    if not s.cdp_url:
        # The derived default (control port + 1) must obey the same rules.
        if s.cdp_port is None:
            ports.append(("cdp_port", s.effective_cdp_port,
                          " (control port + 1; set cdp_port)", "control_url"))
        else:
            ports.append(("cdp_port", s.cdp_port, "", "cdp_port"))
    for name, port, note, source_key in ports:
        if not 1 <= port <= 65535:
            raise fail(name, f"port {port}{note} is out of range", source_key)
        if port in FORBIDDEN_PORTS:
            raise fail(name, f"port {port}{note} is reserved for the user's own browser",
                       source_key)
    if not s.cdp_url and s.effective_cdp_port == s.control_port:
        raise fail("cdp_port", "must differ from the control port")
    if s.cdp_url:
        cp = urlsplit(s.cdp_url)
        if cp.scheme not in ("http", "https", "ws", "wss") or not cp.hostname:
            raise fail("cdp_url", f"must be http(s)://HOST:PORT or ws(s)://…, got {s.cdp_url!r}")
    if not _PROFILE_RE.fullmatch(s.profile):
        raise fail(
            "profile",
            f"{s.profile!r}: use 1-64 letters, digits, '.', '_' or '-', starting alphanumeric",
        )
    if not _COLOR_RE.fullmatch(s.color):
        raise fail("color", f"{s.color!r}: use #RRGGBB")
    for root in s.upload_roots:
        if not Path(root).expanduser().is_absolute():
            raise fail("upload_roots", f"{root!r} is not an absolute path")
    if s.allowed_origins:
        try:
            EgressPolicy.parse(s.allowed_origins)
        except ValueError as exc:
            raise fail("allowed_origins", str(exc)) from None
    if s.network_capture not in ("on-demand", "always"):
        raise fail("network_capture", f"{s.network_capture!r}: use on-demand or always")
    for key in ("media_max_files", "media_max_bytes", "tab_queue_limit",
                "max_concurrent_captures", "restart_budget", "eval_max_bytes", "max_sessions",
                "download_max_bytes", "download_max_files", "download_max_total_bytes"):
        if getattr(s, key) < 1:
            raise fail(key, "must be at least 1")
    if s.download_max_age_s <= 0:
        raise fail("download_max_age_s", "must be more than 0")
    if s.session_ttl_s <= 0:
        raise fail("session_ttl_s", "must be more than 0")
    if s.restored_id_ttl_s <= 0:
        raise fail("restored_id_ttl_s", "must be more than 0")
    for key in ("liveness_interval_s", "liveness_timeout_s"):
        if getattr(s, key) <= 0:
            raise fail(key, "must be more than 0")
    if s.liveness_timeout_s < s.liveness_interval_s:
        raise fail("liveness_timeout_s", f"must be at least liveness_interval_s "
                   f"({s.liveness_interval_s:g} s): a browser is called hung only after "
                   "it was silent longer than one probe interval")
    if not 1024 <= s.profile_port_start <= s.profile_port_end <= 65535:
        raise fail("profile_port_start", "profile_port_start..profile_port_end must be a "
                   "range of ports between 1024 and 65535")
    for spec in s.profiles:
        if spec.name == s.profile:
            raise fail("profiles", f"[profiles.{spec.name}] is the default profile; "
                       "it needs no table (its settings are the top-level keys)")
        if spec.cdp_port in (s.control_port, s.effective_cdp_port):
            raise fail("profiles", f"[profiles.{spec.name}] cdp_port {spec.cdp_port} is "
                       "already browserd's control or default CDP port")
    table_ports = [spec.cdp_port for spec in s.profiles if spec.cdp_port is not None]
    if len(table_ports) != len(set(table_ports)):
        raise fail("profiles", "two [profiles.*] tables name the same cdp_port")


def load_settings(
    paths: Paths,
    *,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Read config.toml, apply environment and overrides, validate.

    Raises ConfigError for an unreadable file, an unknown key or a bad value.
    """
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    file = paths.config_file
    text = read_config_text(file)
    if text is not None:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"cannot read {file}: {exc}") from None
        tables = data.pop("profiles", {})
        if not isinstance(tables, dict):
            raise ConfigError(f"'profiles' in {file} must be tables: [profiles.NAME]")
        values["profiles"] = tuple(
            parse_profile_table(name, table, source=str(file))
            for name, table in sorted(tables.items()))
        sources["profiles"] = str(file)
        for key, raw in data.items():
            key = _ALIASES.get(key, key)
            if key not in _FIELDS:
                raise ConfigError(f"unknown setting {key!r} in {file}")
            values[key] = _coerce(key, raw, str(file))
            sources[key] = str(file)
    for key in [*_FIELDS, *_ALIASES]:
        var = "BROWSERD_" + key.upper()
        if var in env:
            key = _ALIASES.get(key, key)
            values[key] = _coerce(key, env[var], f"${var}")
            sources[key] = f"${var}"
    for key, raw in (overrides or {}).items():
        key = _ALIASES.get(key, key)
        if raw is None:
            continue
        if key not in _FIELDS:
            raise ConfigError(f"unknown setting {key!r}")
        values[key] = _coerce(key, raw, "the command line")
        sources[key] = "the command line"
    settings = Settings(**values)
    _validate(settings, sources)
    return settings


MAX_CONFIG_BYTES = 1024 * 1024


def read_config_text(path: Path) -> str | None:
    """The config file's text, or None when there is none.

    Only a regular file is read: a FIFO, a directory or a device is a
    ConfigError at once, never a hang (the file is opened non-blocking and
    checked with fstat, so a swap after a check cannot slip a FIFO in).
    Raises ConfigError when it cannot be read, is over 1 MiB or is not UTF-8.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError(f"{path} is not a regular file",
                              hint="config.toml must be a plain TOML file")
        data = os.read(fd, MAX_CONFIG_BYTES + 1)
        while len(data) <= MAX_CONFIG_BYTES and (more := os.read(fd, MAX_CONFIG_BYTES)):
            data += more
        if len(data) > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path} is larger than 1 MiB; it is not a browserd config")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None


def read_config_keys(path: Path) -> list[str]:
    """The keys a config file sets (for diagnostics)."""
    try:
        return sorted(tomllib.loads(read_config_text(path) or ""))
    except (ConfigError, tomllib.TOMLDecodeError):
        return []
