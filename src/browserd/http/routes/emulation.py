"""Routes for per-tab emulation: GET, POST and DELETE /emulate.

POST merges: a field left out keeps its setting, ``null`` clears it, a
value sets it. This module turns the request (camelCase JSON) into
validated changes of the tab's :class:`~browserd.tabs.state.Emulation`
record — every value is checked before the tab is queued for (400) — and
:mod:`browserd.tabs.emulation` sends them. The tab's work slot is held
while the commands are sent (refused beside a JavaScript dialog: 409
DIALOG_OPEN); 504 past the deadline, with the tab possibly half changed
(see :mod:`browserd.tabs.emulation`).
"""

from __future__ import annotations

import re
import zoneinfo
from functools import cache
from typing import Any

import trio

from ...errors import BadRequest
from ...system import System
from ...tabs import emulation
from ...tabs.actor import TabActor
from ...tabs.state import Emulation, Geolocation, NetworkConditions, Viewport
from ..answers import returns
from ..facts import DIALOG, HANDOFF, NOT_HELD, NOTHING, READS, SETS, Render, by_hand
from ..fields import TARGET
from ..schema import UNSET, Field, Route
from ..tabwork import on_tab

__all__ = ["emulation_changes", "emulation_routes"]

EMULATE_DEADLINE_S = 15.0
_LOCALE_RE = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*")


# -- the request → changes ------------------------------------------------------------


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


def _viewport(raw: Any) -> Viewport:
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


def _geolocation(raw: Any) -> Geolocation:
    obj = _object(raw, "geolocation", {"latitude", "longitude", "accuracy"})
    return Geolocation(
        latitude=_number(obj, "latitude", "geolocation", low=-90, high=90),
        longitude=_number(obj, "longitude", "geolocation", low=-180, high=180),
        accuracy=_number(obj, "accuracy", "geolocation", low=0, high=1e7, default=1))


def _network(raw: Any) -> NetworkConditions:
    obj = _object(raw, "network", {"latencyMs", "downloadKbps", "uploadKbps"})
    return NetworkConditions(
        latency_ms=_number(obj, "latencyMs", "network", low=0, high=60_000),
        download_kbps=_number(obj, "downloadKbps", "network", low=1, high=10_000_000),
        upload_kbps=_number(obj, "uploadKbps", "network", low=1, high=10_000_000))


@cache
def _timezones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def _timezone(raw: str) -> str:
    """An IANA zone name. Chromium takes an unknown one silently and falls back to UTC."""
    known = _timezones()
    if raw != "UTC" and (raw not in known if known else not re.fullmatch(r"[A-Za-z_+\-/0-9]+",
                                                                           raw)):
        raise BadRequest(f"timezone {raw[:60]!r} is not an IANA time zone name",
                         field="timezone", hint="e.g. Europe/Berlin, America/New_York, UTC")
    return raw


def _locale(raw: str) -> str:
    if not _LOCALE_RE.fullmatch(raw):
        raise BadRequest(f"locale {raw[:40]!r} is not a BCP 47 language tag",
                         field="locale", hint="e.g. de-DE, en-GB, ja")
    return raw.replace("_", "-")


def _user_agent(raw: str) -> str:
    if not raw or not raw.isprintable():
        raise BadRequest("userAgent must be printable text", field="userAgent")
    return raw


def _same(raw: Any) -> Any:
    return raw


#: Each POST /emulate field: the Emulation attribute it sets, and its parser.
_FIELDS: dict[str, tuple[str, Any]] = {
    "viewport": ("viewport", _viewport), "userAgent": ("user_agent", _user_agent),
    "locale": ("locale", _locale), "timezone": ("timezone", _timezone),
    "geolocation": ("geolocation", _geolocation), "colorScheme": ("color_scheme", _same),
    "reducedMotion": ("reduced_motion", _same), "offline": ("offline", _same),
    "cpuThrottling": ("cpu_throttling", float), "network": ("network", _network),
}


def emulation_changes(args: dict[str, Any]) -> dict[str, Any]:
    """The changes a POST /emulate asks for: Emulation attribute → value (None: clear).

    Fields absent from the request (UNSET) are not named; BadRequest for an
    invalid value. The table's checks (types, enums, ranges) ran before.
    """
    changes: dict[str, Any] = {}
    for name, (attribute, parse) in _FIELDS.items():
        value = args.get(name, UNSET)
        if value is UNSET:
            continue
        changes[attribute] = None if value is None else parse(value)
    return changes


# -- handlers -----------------------------------------------------------------------


async def _change(system: System, target_id: str | None,
                  changes: dict[str, Any] | None) -> dict[str, Any]:
    """Apply ``changes`` to the tab's emulation (None: reset it all)."""
    runtime = system.require_runtime()

    async def work(tab: TabActor) -> tuple[str, Emulation]:
        new = await emulation.change(tab, runtime.tabs, changes,
                                     default_user_agent=runtime.user_agent)
        return tab.target_id, new

    target, new = await on_tab(system, target_id, work, deadline_s=EMULATE_DEADLINE_S)
    return {"ok": True, "targetId": target, "emulation": new.to_json()}


async def post_emulate(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return await _change(system, args["targetId"], emulation_changes(args))


async def delete_emulate(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return await _change(system, args["targetId"], None)


async def get_emulate(system: System, args: dict[str, Any]) -> dict[str, Any]:
    """The tab's record as it stands (no work slot: readable beside a dialog or busy tab)."""
    runtime = system.require_runtime()
    with trio.fail_after(EMULATE_DEADLINE_S):
        tab = await runtime.tabs.resolve(args["targetId"])
    return {"targetId": tab.target_id, "emulation": tab.emulation.to_json()}


def emulation_routes() -> list[Route]:
    def opt(name: str, kind: str, description: str, **kw: Any) -> Field:
        return Field(name=name, type=kind, nullable=True, description=description, **kw)

    return [
        Route(path="/emulate", methods=("GET",), handler=get_emulate, tag="page",
              summary="The tab's current emulation", fields=(TARGET,),
              name="emulate_get", group="emulation", hints=READS, needs="read",
              untrusted=(), render=Render.FIELDS,
              answer=returns("EmulationAnswer"), blocked_by=NOTHING, cli=by_hand("emulate")),
        Route(path="/emulate", methods=("POST",), handler=post_emulate, tag="page",
              summary="Emulate a device, locale, timezone, position, media or network "
              "for one tab (kept across its navigations)",
              fields=(
                  TARGET,
                  opt("viewport", "object", "{width, height, deviceScaleFactor?, mobile?}"),
                  opt("userAgent", "string", "the User-Agent header and navigator.userAgent",
                      max_length=1000),
                  opt("locale", "string", "e.g. de-DE: Intl, navigator.language, "
                      "Accept-Language", max_length=35),
                  opt("timezone", "string", "an IANA zone, e.g. Asia/Tokyo", max_length=64),
                  opt("geolocation", "object", "{latitude, longitude, accuracy?}"),
                  opt("colorScheme", "string", "prefers-color-scheme",
                      enum=emulation.COLOR_SCHEMES),
                  opt("reducedMotion", "string", "prefers-reduced-motion",
                      enum=emulation.REDUCED_MOTION),
                  opt("offline", "boolean", "fail every request of the tab"),
                  opt("cpuThrottling", "number", "slow the CPU down this many times",
                      minimum=1, maximum=20),
                  opt("network", "object", "{latencyMs, downloadKbps, uploadKbps}"),
              ),
              name="emulate_set", group="emulation", hints=SETS, needs="act",
              confirm=NOT_HELD, untrusted=(), render=Render.FIELDS,
              answer=returns("EmulationAnswer"), blocked_by=DIALOG | HANDOFF,
              cli=by_hand("emulate")),
        Route(path="/emulate", methods=("DELETE",), handler=delete_emulate, tag="page",
              summary="Reset the tab's emulation", fields=(TARGET,),
              name="emulate_delete", group="emulation", hints=SETS, needs="act",
              confirm=NOT_HELD, untrusted=(), render=Render.FIELDS,
              answer=returns("EmulationAnswer"), blocked_by=DIALOG | HANDOFF,
              cli=by_hand("emulate")),
    ]
