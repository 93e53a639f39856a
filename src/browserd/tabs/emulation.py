"""Per-tab emulation: viewport, user agent, locale, timezone, geolocation, media, network, CPU.

The tab's current settings are one :class:`Emulation` record that the
TabActor holds (``tab.emulation``); :func:`merge` builds the next one from
a request (absent: keep, ``null``: clear, a value: set; the route turns
absent fields away before calling it) and :func:`apply`
sends only what changed. Chromium keeps these overrides on the tab's
session across its navigations, cross-process ones included (the
DevTools emulation lives in the browser process and is re-applied to each
new renderer), so nothing has to be re-sent after a navigation.

Geolocation also needs the permission: while any tab emulates a position,
``geolocation`` is granted to every origin (``Browser.setPermission``,
browser-wide, not saved in the profile); when none does, it goes back to
"prompt".

Errors: BadRequest for invalid values (nothing is sent then); CdpError /
BrowserGone / TargetCrashed from the tab. On an error or cancellation half
way, the tab may hold part of the new settings while ``tab.emulation``
still shows the old record: send the request again, or reset.
"""

from __future__ import annotations

import re
import zoneinfo
from functools import cache
from typing import TYPE_CHECKING, Any

import attrs

from ..errors import BadRequest, BrowserdError, CdpError

if TYPE_CHECKING:
    from .actor import TabActor
    from .registry import TabRegistry

_LOCALE_RE = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*")
COLOR_SCHEMES = ("light", "dark")
REDUCED_MOTION = ("reduce", "no-preference")


@attrs.frozen(kw_only=True)
class Viewport:
    width: int
    height: int
    device_scale_factor: float = 1.0
    mobile: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"width": self.width, "height": self.height,
                "deviceScaleFactor": self.device_scale_factor, "mobile": self.mobile}


@attrs.frozen(kw_only=True)
class Geolocation:
    latitude: float
    longitude: float
    accuracy: float = 1.0

    def to_json(self) -> dict[str, Any]:
        return {"latitude": self.latitude, "longitude": self.longitude,
                "accuracy": self.accuracy}


@attrs.frozen(kw_only=True)
class NetworkConditions:
    latency_ms: float
    download_kbps: float
    upload_kbps: float

    def to_json(self) -> dict[str, Any]:
        return {"latencyMs": self.latency_ms, "downloadKbps": self.download_kbps,
                "uploadKbps": self.upload_kbps}


@attrs.frozen(kw_only=True)
class Emulation:
    """A tab's emulation settings; the defaults mean "not emulated"."""

    viewport: Viewport | None = None
    user_agent: str | None = None
    locale: str | None = None
    timezone: str | None = None
    geolocation: Geolocation | None = None
    color_scheme: str | None = None
    reduced_motion: str | None = None
    offline: bool = False
    cpu_throttling: float = 1.0
    network: NetworkConditions | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "viewport": self.viewport.to_json() if self.viewport else None,
            "userAgent": self.user_agent, "locale": self.locale, "timezone": self.timezone,
            "geolocation": self.geolocation.to_json() if self.geolocation else None,
            "colorScheme": self.color_scheme, "reducedMotion": self.reduced_motion,
            "offline": self.offline, "cpuThrottling": self.cpu_throttling,
            "network": self.network.to_json() if self.network else None,
        }


NO_EMULATION = Emulation()

#: The request fields of POST /emulate and the record attribute each sets.
FIELDS = {"viewport": "viewport", "userAgent": "user_agent", "locale": "locale",
          "timezone": "timezone", "geolocation": "geolocation", "colorScheme": "color_scheme",
          "reducedMotion": "reduced_motion", "offline": "offline",
          "cpuThrottling": "cpu_throttling", "network": "network"}


# -- validation ---------------------------------------------------------------------


def _number(raw: dict[str, Any], key: str, where: str, *, low: float, high: float,
            default: float | None = None) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not low <= value <= high:
        raise BadRequest(f"{where}.{key} must be a number from {low:g} to {high:g}",
                         field=where)
    return float(value)


def _object(raw: Any, where: str, keys: set[str]) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise BadRequest(f"{where} must be an object", field=where)
    unknown = set(raw) - keys
    if unknown:
        raise BadRequest(f"{where}: unknown field {sorted(unknown)[0]!r}", field=where,
                         hint="accepted: " + ", ".join(sorted(keys)))
    return raw


def parse_viewport(raw: Any) -> Viewport:
    obj = _object(raw, "viewport", {"width", "height", "deviceScaleFactor", "mobile"})
    for key in ("width", "height"):
        if isinstance(obj.get(key), bool) or not isinstance(obj.get(key), int) or \
                not 1 <= obj[key] <= 10_000:
            raise BadRequest(f"viewport.{key} must be an integer from 1 to 10000",
                             field="viewport")
    mobile = obj.get("mobile", False)
    if not isinstance(mobile, bool):
        raise BadRequest("viewport.mobile must be a boolean", field="viewport")
    return Viewport(width=obj["width"], height=obj["height"], mobile=mobile,
                    device_scale_factor=_number(obj, "deviceScaleFactor", "viewport",
                                                low=0.25, high=10, default=1))


def parse_geolocation(raw: Any) -> Geolocation:
    obj = _object(raw, "geolocation", {"latitude", "longitude", "accuracy"})
    return Geolocation(
        latitude=_number(obj, "latitude", "geolocation", low=-90, high=90),
        longitude=_number(obj, "longitude", "geolocation", low=-180, high=180),
        accuracy=_number(obj, "accuracy", "geolocation", low=0, high=1e7, default=1))


def parse_network(raw: Any) -> NetworkConditions:
    obj = _object(raw, "network", {"latencyMs", "downloadKbps", "uploadKbps"})
    return NetworkConditions(
        latency_ms=_number(obj, "latencyMs", "network", low=0, high=60_000),
        download_kbps=_number(obj, "downloadKbps", "network", low=1, high=10_000_000),
        upload_kbps=_number(obj, "uploadKbps", "network", low=1, high=10_000_000))


@cache
def _timezones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def parse_timezone(raw: str) -> str:
    """An IANA zone name. Chromium takes an unknown one silently and falls back to UTC."""
    known = _timezones()
    if raw != "UTC" and (raw not in known if known else not re.fullmatch(r"[A-Za-z_+\-/0-9]+",
                                                                           raw)):
        raise BadRequest(f"timezone {raw[:60]!r} is not an IANA time zone name",
                         field="timezone", hint="e.g. Europe/Berlin, America/New_York, UTC")
    return raw


def parse_locale(raw: str) -> str:
    if not _LOCALE_RE.fullmatch(raw):
        raise BadRequest(f"locale {raw[:40]!r} is not a BCP 47 language tag",
                         field="locale", hint="e.g. de-DE, en-GB, ja")
    return raw.replace("_", "-")


def parse_user_agent(raw: str) -> str:
    if not raw or not raw.isprintable():
        raise BadRequest("userAgent must be printable text", field="userAgent")
    return raw


_PARSERS: dict[str, Any] = {
    "viewport": parse_viewport, "geolocation": parse_geolocation, "network": parse_network,
    "timezone": parse_timezone, "locale": parse_locale, "userAgent": parse_user_agent,
}


def merge(current: Emulation, given: dict[str, Any]) -> Emulation:
    """The record after a POST /emulate: a field not in ``given`` is kept, None clears it."""
    changes: dict[str, Any] = {}
    for name, attr in FIELDS.items():
        if name not in given:
            continue
        value = given[name]
        if value is None:
            changes[attr] = getattr(NO_EMULATION, attr)
            continue
        parser = _PARSERS.get(name)
        changes[attr] = parser(value) if parser else value
    return attrs.evolve(current, **changes)


# -- the browser --------------------------------------------------------------------


async def apply(tab: TabActor, old: Emulation, new: Emulation, *, default_user_agent: str
                ) -> None:
    """Send the commands that take the tab from ``old`` to ``new`` (changed aspects only)."""
    if new.viewport != old.viewport:
        await _apply_viewport(tab, new.viewport)
    if (new.user_agent, new.locale) != (old.user_agent, old.locale):
        params: dict[str, Any] = {"userAgent": ""}  # "" drops the override
        if new.user_agent or new.locale:
            params["userAgent"] = new.user_agent or default_user_agent
            if new.locale:
                params["acceptLanguage"] = new.locale
        await tab.send("Emulation.setUserAgentOverride", params)
    if new.locale != old.locale:
        try:
            await tab.send("Emulation.setLocaleOverride",
                           {"locale": new.locale} if new.locale else {})
        except CdpError as exc:
            raise BadRequest(f"Chromium refused the locale: {exc.message}",
                             field="locale") from None
    if new.timezone != old.timezone:
        await tab.send("Emulation.setTimezoneOverride", {"timezoneId": new.timezone or ""})
    if new.geolocation != old.geolocation:
        if new.geolocation is None:
            await tab.send("Emulation.clearGeolocationOverride")
        else:
            await tab.send("Emulation.setGeolocationOverride", new.geolocation.to_json())
    if (new.color_scheme, new.reduced_motion) != (old.color_scheme, old.reduced_motion):
        await tab.send("Emulation.setEmulatedMedia", {"features": [
            {"name": "prefers-color-scheme", "value": new.color_scheme or ""},
            {"name": "prefers-reduced-motion", "value": new.reduced_motion or ""}]})
    if (new.offline, new.network) != (old.offline, old.network):
        net = new.network
        if new.offline or net is not None:
            # The conditions only bite with the Network domain on (left on after:
            # other features of the tab may use it too).
            await tab.send("Network.enable")
        await tab.send("Network.emulateNetworkConditions", {
            "offline": new.offline, "latency": net.latency_ms if net else 0,
            # kilobits per second → bytes per second; -1: no throttling
            "downloadThroughput": net.download_kbps * 125 if net else -1,
            "uploadThroughput": net.upload_kbps * 125 if net else -1})
    if new.cpu_throttling != old.cpu_throttling:
        await tab.send("Emulation.setCPUThrottlingRate", {"rate": new.cpu_throttling})


async def _apply_viewport(tab: TabActor, viewport: Viewport | None) -> None:
    if viewport is not None:
        await tab.send("Emulation.setDeviceMetricsOverride", {
            "width": viewport.width, "height": viewport.height,
            "deviceScaleFactor": viewport.device_scale_factor, "mobile": viewport.mobile})
        await tab.send("Emulation.setTouchEmulationEnabled", {
            "enabled": viewport.mobile, **({"maxTouchPoints": 5} if viewport.mobile else {})})
        return
    if tab.headless_viewport is not None:  # back to browserd's own headless viewport
        width, height = tab.headless_viewport
        await tab.send("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    else:
        await tab.send("Emulation.clearDeviceMetricsOverride")
    await tab.send("Emulation.setTouchEmulationEnabled", {"enabled": False})


async def sync_geolocation_permission(registry: TabRegistry) -> None:
    """Grant geolocation everywhere while a tab emulates a position, else back to "prompt"."""
    wanted = any(
        (tab := _tab_or_none(registry, target_id)) is not None
        and tab.emulation.geolocation is not None
        for target_id in registry.target_ids())
    await registry.connection.send("Browser.setPermission", {
        "permission": {"name": "geolocation"}, "setting": "granted" if wanted else "prompt"})


def _tab_or_none(registry: TabRegistry, target_id: str) -> TabActor | None:
    try:
        return registry.get(target_id)
    except BrowserdError:  # gone meanwhile
        return None
