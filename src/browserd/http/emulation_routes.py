"""Routes for per-tab emulation: GET, POST and DELETE /emulate.

POST merges: a field left out keeps its setting, ``null`` clears it, a
value sets it. The tab's work slot is held while the commands are sent
(refused beside a JavaScript dialog: 409 DIALOG_OPEN); 504 past the deadline.
"""

from __future__ import annotations

from typing import Any

import trio

from ..system import System
from ..tabs import emulation
from .page_routes import TARGET
from .schema import UNSET, Field, Route

EMULATE_DEADLINE_S = 15.0


async def _change(system: System, target_id: str | None,
                  given: dict[str, Any] | None) -> dict[str, Any]:
    """Merge ``given`` into the tab's emulation (None: reset it all) and apply it."""
    rt = system.supervisor.require_runtime()
    with trio.fail_after(EMULATE_DEADLINE_S):
        tab = await rt.tabs.resolve(target_id)
        if given is not None:
            emulation.merge(tab.emulation, given)  # a 400 before the tab is queued for
        async with tab.work(allow_dialog=False):
            old = tab.emulation
            new = emulation.NO_EMULATION if given is None else emulation.merge(old, given)
            await emulation.apply(tab, old, new, default_user_agent=rt.user_agent)
            tab.emulation = new
        if (old.geolocation is None) != (new.geolocation is None):
            await emulation.sync_geolocation_permission(rt.tabs)
    return {"ok": True, "targetId": tab.target_id, "emulation": new.to_json()}


async def post_emulate(system: System, args: dict[str, Any]) -> dict[str, Any]:
    given = {k: v for k, v in args.items() if k in emulation.FIELDS and v is not UNSET}
    return await _change(system, args["targetId"], given)


async def delete_emulate(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return await _change(system, args["targetId"], None)


async def get_emulate(system: System, args: dict[str, Any]) -> dict[str, Any]:
    rt = system.supervisor.require_runtime()
    with trio.fail_after(EMULATE_DEADLINE_S):
        tab = await rt.tabs.resolve(args["targetId"])
    return {"targetId": tab.target_id, "emulation": tab.emulation.to_json()}


def emulation_routes() -> list[Route]:
    def opt(name: str, kind: str, description: str, **kw: Any) -> Field:
        return Field(name=name, type=kind, nullable=True, description=description, **kw)

    return [
        Route(path="/emulate", methods=("GET",), handler=get_emulate, tag="page",
              summary="The tab's current emulation", fields=(TARGET,)),
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
              )),
        Route(path="/emulate", methods=("DELETE",), handler=delete_emulate, tag="page",
              summary="Reset the tab's emulation", fields=(TARGET,)),
    ]
