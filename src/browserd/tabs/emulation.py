"""Per-tab emulation: viewport, user agent, locale, timezone, geolocation, media, network, CPU.

The tab's current settings are one :class:`~browserd.tabs.state.Emulation`
record that the TabActor holds (``tab.emulation``, replaced through
``TabActor.note_emulation``). :func:`updated` builds the next record from
validated changes (attribute name → value; None clears an aspect; an
aspect not named is kept) — the HTTP layer turns a request into those
changes — and :func:`change` sends only what differs, then records it.
Chromium keeps these overrides on the tab's session across its
navigations, cross-process ones included (the DevTools emulation lives in
the browser process and is re-applied to each new renderer), so nothing
has to be re-sent after a navigation.

Geolocation also needs the permission: while any tab of a scope (a
session's browser context, or the default one) emulates a position,
``geolocation`` is granted to every origin of that context
(``Browser.setPermission {browserContextId}``, not saved in the profile);
when none does, it goes back to "prompt".

Errors: BadRequest when Chromium refuses a locale; CdpError / BrowserGone /
TargetCrashed from the tab. On an error or cancellation half way, the tab
may hold part of the new settings while ``tab.emulation`` still shows the
old record: send the request again, or reset.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from ..errors import BadRequest, BrowserdError, CdpError
from .state import NO_EMULATION, Emulation, Viewport

if TYPE_CHECKING:
    from .actor import TabActor
    from .scope import TabScope

__all__ = ["COLOR_SCHEMES", "REDUCED_MOTION", "apply", "change", "sync_geolocation_permission",
           "updated"]

COLOR_SCHEMES = ("light", "dark")
REDUCED_MOTION = ("reduce", "no-preference")


def updated(current: Emulation, changes: Mapping[str, Any]) -> Emulation:
    """``current`` with ``changes`` applied (None: that aspect back to "not emulated").

    ``changes`` maps :class:`Emulation` attribute names to validated values;
    an attribute not named keeps its setting. ValueError for an unknown name.
    """
    unknown = set(changes) - set(attrs.fields_dict(Emulation))
    if unknown:
        raise ValueError(f"not an emulation setting: {sorted(unknown)[0]!r}")
    return attrs.evolve(current, **{
        name: getattr(NO_EMULATION, name) if value is None else value
        for name, value in changes.items()})


async def change(tab: TabActor, tabs: TabScope, changes: Mapping[str, Any] | None, *,
                 default_user_agent: str) -> Emulation:
    """Apply ``changes`` to the tab's emulation (None: reset it all); the new record.

    The caller holds the tab's work slot and owns the deadline. The record
    is replaced only once every command was answered (see the module doc
    for an error or cancellation half way); the geolocation permission of
    the tab's scope ``tabs`` is synced when the tab starts or stops
    emulating a position.
    """
    old = tab.emulation
    new = NO_EMULATION if changes is None else updated(old, changes)
    await apply(tab, old, new, default_user_agent=default_user_agent)
    tab.note_emulation(new)
    if (old.geolocation is None) != (new.geolocation is None):
        await sync_geolocation_permission(tabs)
    return new


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


async def sync_geolocation_permission(tabs: TabScope) -> None:
    """Grant geolocation in the scope's browser context while one of its tabs emulates a
    position, else back to "prompt"."""
    wanted = any(
        (tab := _tab_or_none(tabs, target_id)) is not None
        and tab.emulation.geolocation is not None
        for target_id in tabs.target_ids())
    params: dict[str, Any] = {"permission": {"name": "geolocation"},
                              "setting": "granted" if wanted else "prompt"}
    if tabs.context is not None:
        params["browserContextId"] = tabs.context
    await tabs.connection.send("Browser.setPermission", params)


def _tab_or_none(tabs: TabScope, target_id: str) -> TabActor | None:
    try:
        return tabs.get(target_id)
    except BrowserdError:  # gone meanwhile
        return None
