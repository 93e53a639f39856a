"""ProfileSpec: what one named profile is (driver, colour, ports), validated once.

A settings record beside :mod:`browserd.config` (which reads the
``[profiles.NAME]`` tables with it), below the supervisor and the profile
manager that run what it describes.

A profile comes from one of three places (:class:`ProfileOrigin`): the
default profile (``default_profile``, launch driver, no table needed), a
``[profiles.NAME]`` table in ``config.toml``, or ``POST /profiles``
(persisted by :mod:`browserd.profiles.store`).
:func:`~browserd.profiles.manager.settings_for` turns a spec into the
:class:`~browserd.config.Settings` its supervisor runs with, so a profile's
browser is configured exactly like the single browser was.

Drivers: ``launch`` (browserd launches and supervises Chromium; its CDP
gateway on ``cdp_port``) and ``cdp`` (attach to a browser at ``cdp_url``).
``live`` attaches to the user's own running browser (found by its
``DevToolsActivePort``); ``extension`` drives the tabs the user shares
through browserd's browser extension (over the relay).

``allowed_origins`` (launch and cdp drivers: the ones with page guards)
turns egress containment on for the profile's pages
(:mod:`browserd.egress`); None leaves the service-wide setting.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import attrs

from .browser.live import LiveBrowser, parse_live_browser
from .egress import EgressPolicy
from .errors import BadRequest, ConfigError, DriverNotAvailable

__all__ = [
    "AVAILABLE_DRIVERS", "PROFILE_NAME_RE", "PROFILE_PALETTE", "Driver", "ProfileOrigin",
    "ProfileSpec", "build_spec", "check_profile_name", "parse_driver", "parse_profile_table",
]

#: Names of profiles created or configured here (the default profile keeps
#: the older, wider rule of the ``profile`` setting).
PROFILE_NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,31}")
_COLOR_RE = re.compile(r"#[0-9a-fA-F]{6}")
#: Colours handed out to profiles that name none (after the default's #FF4500).
PROFILE_PALETTE = ("#0066CC", "#2E8B57", "#8A2BE2", "#D2691E", "#C71585", "#008B8B",
                   "#B8860B", "#4B0082")
_TABLE_KEYS = frozenset({"driver", "color", "headless", "executable", "cdp_port", "cdp_url",
                         "live_browser", "user_data_dir", "approval_timeout_s",
                         "live_fallback", "allowed_origins"})
_LIVE_KEYS = ("live_browser", "user_data_dir", "approval_timeout_s", "live_fallback")
#: How long a live profile waits, by default, for the user to allow remote debugging.
DEFAULT_APPROVAL_TIMEOUT_S = 60.0


class Driver(enum.StrEnum):
    LAUNCH = "launch"
    CDP = "cdp"
    LIVE = "live"
    EXTENSION = "extension"


AVAILABLE_DRIVERS = frozenset(Driver)


class ProfileOrigin(enum.StrEnum):
    DEFAULT = "default"
    CONFIG = "config"
    API = "api"


@attrs.frozen(kw_only=True)
class ProfileSpec:
    """One profile as configured. ``cdp_port`` of a launch profile is its gateway port
    (None: allocated from the profile port range and persisted)."""

    name: str
    origin: ProfileOrigin
    driver: Driver = Driver.LAUNCH
    color: str | None = None
    headless: bool | None = None
    executable: str | None = None
    cdp_port: int | None = None
    cdp_url: str | None = None
    live_browser: LiveBrowser | None = None
    """live: whose default user data directory holds DevToolsActivePort."""
    user_data_dir: str | None = None
    """live: that directory given as a path (wins over ``live_browser``)."""
    approval_timeout_s: float | None = None
    live_fallback: str | None = None
    """live: the profile requests go to while the user's browser is not reachable."""
    allowed_origins: tuple[str, ...] | None = None
    """launch/cdp: the only origins its pages may reach (None: the service's setting)."""

    def to_record(self) -> dict[str, Any]:
        """The persisted form (``POST /profiles``): only what was given."""
        out: dict[str, Any] = {"driver": str(self.driver)}
        for key in ("color", "headless", "executable", "cdp_port", "cdp_url", *_LIVE_KEYS):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.allowed_origins is not None:
            out["allowed_origins"] = list(self.allowed_origins)
        return out


def check_profile_name(name: object, *, error: type[BadRequest] | None = None) -> str:
    """``name`` when it is ``[a-z0-9][a-z0-9-]{0,31}``; BadRequest (or ConfigError) if not."""
    if isinstance(name, str) and PROFILE_NAME_RE.fullmatch(name):
        return name
    message = (f"profile name {name!r}: use 1-32 lowercase letters, digits or '-', "
               "starting with a letter or digit")
    if error is None:
        raise ConfigError(message)
    raise error(message, field="name")


def parse_driver(value: object, *, where: str) -> Driver:
    """A driver name → :class:`Driver` (DriverNotAvailable for one this build lacks)."""
    try:
        driver = Driver(str(value))
    except ValueError:
        raise BadRequest(f"{where}: unknown driver {value!r}; use launch, cdp, live or "
                         "extension") from None
    if driver not in AVAILABLE_DRIVERS:
        raise DriverNotAvailable(
            f"{where}: driver {driver.value!r} is not available in this build")
    return driver


def _check_port(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        raise BadRequest(f"{where}: cdp_port must be a port number, got {value!r}")
    if value == 9222:
        raise BadRequest(f"{where}: port 9222 is reserved for the user's own browser")
    return value


def _check_cdp_url(value: object, where: str) -> str:
    parts = urlsplit(value) if isinstance(value, str) else None
    if parts is None or parts.scheme not in ("http", "https", "ws", "wss") or not parts.hostname:
        raise BadRequest(f"{where}: cdp_url must be http(s)://HOST:PORT or ws(s)://…, "
                         f"got {value!r}")
    assert isinstance(value, str)
    return value


def build_spec(name: str, values: Mapping[str, Any], *, origin: ProfileOrigin,
               where: str) -> ProfileSpec:
    """Validate one profile's name and values (snake_case keys). Raises BadRequest subclasses."""
    check_profile_name(name, error=BadRequest)  # also for names read back from the store
    driver = parse_driver(values.get("driver", "launch"), where=where)
    color = values.get("color")
    if color is not None and not (isinstance(color, str) and _COLOR_RE.fullmatch(color)):
        raise BadRequest(f"{where}: color {color!r}: use #RRGGBB")
    headless = values.get("headless")
    if headless is not None and not isinstance(headless, bool):
        raise BadRequest(f"{where}: headless must be true or false")
    executable = values.get("executable")
    if executable is not None and not isinstance(executable, str):
        raise BadRequest(f"{where}: executable must be a path")
    port = values.get("cdp_port")
    cdp_url = values.get("cdp_url")
    if driver == Driver.CDP:
        if cdp_url is None:
            raise BadRequest(f"{where}: driver 'cdp' needs cdp_url")
        if port is not None or executable is not None or headless is not None:
            raise BadRequest(f"{where}: driver 'cdp' takes cdp_url, not cdp_port, executable "
                             "or headless (the browser is not ours to launch)")
        cdp_url = _check_cdp_url(cdp_url, where)
    elif cdp_url is not None:
        raise BadRequest(f"{where}: cdp_url is for driver 'cdp'")
    live = _live_values(driver, values, name=name, where=where)
    if driver in (Driver.LIVE, Driver.EXTENSION) and (
        port is not None or executable is not None or headless is not None
    ):
        raise BadRequest(f"{where}: driver {driver.value!r} takes no cdp_port, executable or "
                         "headless (the user's browser is never launched by browserd)")
    return ProfileSpec(
        name=name, origin=origin, driver=driver, color=color, headless=headless,
        executable=executable, cdp_port=None if port is None else _check_port(port, where),
        cdp_url=cdp_url, allowed_origins=_allowed_origins(driver, values, where), **live,
    )


def _allowed_origins(driver: Driver, values: Mapping[str, Any], where: str
                     ) -> tuple[str, ...] | None:
    """``allowed_origins`` validated (BadRequest): a list of origin patterns, guarded drivers."""
    given = values.get("allowed_origins")
    if given is None:
        return None
    if driver not in (Driver.LAUNCH, Driver.CDP):
        raise BadRequest(f"{where}: allowed_origins needs browserd's page guards (drivers "
                         "'launch' and 'cdp'); the user's own browser is not contained")
    if not isinstance(given, list | tuple) or not all(isinstance(o, str) for o in given):
        raise BadRequest(f"{where}: allowed_origins must be a list of origin patterns")
    try:
        EgressPolicy.parse(given)
    except ValueError as exc:
        raise BadRequest(f"{where}: allowed_origins: {exc}") from None
    return tuple(given)


def _live_values(driver: Driver, values: Mapping[str, Any], *, name: str,
                 where: str) -> dict[str, Any]:
    """The live driver's keys, validated (BadRequest when given to another driver)."""
    given = {k: values[k] for k in _LIVE_KEYS if values.get(k) is not None}
    if driver != Driver.LIVE:
        if given:
            raise BadRequest(f"{where}: {', '.join(sorted(given))} are for driver 'live'")
        return {}
    out: dict[str, Any] = {"live_browser": parse_live_browser(
        given.get("live_browser", "chrome"), where=where)}
    directory = given.get("user_data_dir")
    if directory is not None:
        if not isinstance(directory, str) or not directory.strip():
            raise BadRequest(f"{where}: user_data_dir must be a path")
        out["user_data_dir"] = directory
    timeout = given.get("approval_timeout_s")
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not (
            1 <= timeout <= 600
        ):
            raise BadRequest(f"{where}: approval_timeout_s must be 1-600 seconds")
        out["approval_timeout_s"] = float(timeout)
    fallback = given.get("live_fallback")
    if fallback is not None:
        fallback = check_profile_name(fallback, error=BadRequest)
        if fallback == name:
            raise BadRequest(f"{where}: live_fallback must name another profile")
        out["live_fallback"] = fallback
    return out


def parse_profile_table(name: str, table: object, *, source: str) -> ProfileSpec:
    """A ``[profiles.NAME]`` table → ProfileSpec; ConfigError naming the table at fault."""
    where = f"[profiles.{name}] in {source}"
    check_profile_name(name)
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table")
    unknown = set(table) - _TABLE_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}",
                          hint="accepted: " + ", ".join(sorted(_TABLE_KEYS)))
    try:
        return build_spec(name, table, origin=ProfileOrigin.CONFIG, where=where)
    except BadRequest as exc:
        raise ConfigError(exc.message, hint=exc.hint or None) from None
