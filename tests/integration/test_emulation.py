"""Per-tab emulation on the real Chromium: what the page sees, across navigations, reset."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import trio

from tests.conftest import PageServer
from tests.integration.helpers import navigate

pytestmark = pytest.mark.chromium

PARIS = {"latitude": 48.8566, "longitude": 2.3522, "accuracy": 10}


async def _probe(api: httpx.AsyncClient, tab: str) -> dict[str, Any]:
    r = await api.post("/eval", json={"targetId": tab, "js": "probe()"})
    assert r.status_code == 200, r.text
    value: dict[str, Any] = r.json()["result"]
    return value


async def _position(api: httpx.AsyncClient, tab: str) -> Any:
    r = await api.post("/eval", json={"targetId": tab, "js": "position()", "await": True})
    assert r.status_code == 200, r.text
    return r.json()["result"]


async def test_emulation_reaches_the_page_survives_navigation_and_resets(
    api: httpx.AsyncClient, tab: str, pages: PageServer, other_origin: PageServer,
) -> None:
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/emulate_probe.html"))
        before = await _probe(api, tab)
        assert (before["width"], before["height"], before["dark"]) == (1280, 720, False)
        zone = "Asia/Tokyo" if before["timeZone"] != "Asia/Tokyo" else "Europe/Berlin"
        r = await api.post("/emulate", json={
            "targetId": tab, "colorScheme": "dark", "locale": "de-DE", "timezone": zone,
            "viewport": {"width": 500, "height": 400, "deviceScaleFactor": 2},
            "geolocation": PARIS, "reducedMotion": "reduce", "userAgent": "browserd-test/1.0"})
        assert r.status_code == 200, r.text
        want = {"dark": True, "reducedMotion": True, "language": "de-DE", "timeZone": zone,
                "userAgent": "browserd-test/1.0", "width": 500, "height": 400, "dpr": 2}
        seen = await _probe(api, tab)
        assert {k: seen[k] for k in want} == want
        assert await _position(api, tab) == [PARIS["latitude"], PARIS["longitude"]]
        # A cross-site navigation (a new renderer) keeps all of it.
        await navigate(api, tab, other_origin.url("/emulate_probe.html"))
        seen = await _probe(api, tab)
        assert {k: seen[k] for k in want} == want
        assert await _position(api, tab) == [PARIS["latitude"], PARIS["longitude"]]
        r = await api.get("/emulate", params={"targetId": tab})
        shown = r.json()["emulation"]
        assert shown["timezone"] == zone and shown["geolocation"] == PARIS
        assert shown["viewport"] == {"width": 500, "height": 400, "deviceScaleFactor": 2,
                                     "mobile": False}
        # null clears one setting; the others stay.
        r = await api.post("/emulate", json={"targetId": tab, "colorScheme": None})
        assert r.json()["emulation"]["colorScheme"] is None
        assert r.json()["emulation"]["locale"] == "de-DE"
        seen = await _probe(api, tab)
        assert (seen["dark"], seen["language"]) == (False, "de-DE")
        # DELETE: back to how the tab was (browserd's headless 1280x720 viewport).
        r = await api.request("DELETE", "/emulate", json={"targetId": tab})
        assert r.status_code == 200, r.text
        await navigate(api, tab, pages.url("/emulate_probe.html"))
        after = await _probe(api, tab)
        assert after == before
        assert await _position(api, tab) != [PARIS["latitude"], PARIS["longitude"]]
        r = await api.get("/emulate", params={"targetId": tab})
        assert r.json()["emulation"]["viewport"] is None


async def test_offline_network_and_cpu(
    api: httpx.AsyncClient, tab: str, pages: PageServer,
) -> None:
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/emulate_probe.html"))
        r = await api.post("/emulate", json={"targetId": tab, "offline": True,
                                             "cpuThrottling": 4})
        assert r.status_code == 200, r.text
        assert (await _probe(api, tab))["onLine"] is False
        r = await api.post("/eval", json={
            "targetId": tab, "await": True,
            "js": "fetch('/hello.html?' + Math.random()).then(() => 'fetched', () => 'failed')"})
        assert r.json()["result"] == "failed"
        r = await api.post("/emulate", json={
            "targetId": tab, "offline": False,
            "network": {"latencyMs": 50, "downloadKbps": 1600, "uploadKbps": 750}})
        assert r.json()["emulation"]["network"] == {"latencyMs": 50, "downloadKbps": 1600,
                                                    "uploadKbps": 750}
        assert r.json()["emulation"]["cpuThrottling"] == 4
        r = await api.post("/eval", json={
            "targetId": tab, "await": True,
            "js": "fetch('/hello.html?' + Math.random()).then(() => 'fetched', () => 'failed')"})
        assert r.json()["result"] == "fetched"
        r = await api.request("DELETE", "/emulate", json={"targetId": tab})
        assert r.json()["emulation"]["network"] is None


async def test_emulation_values_are_validated(api: httpx.AsyncClient, tab: str) -> None:
    bad: list[dict[str, Any]] = [
        {"timezone": "Mars/Olympus_Mons"},
        {"locale": "not a locale"},
        {"viewport": {"width": 0, "height": 100}},
        {"viewport": {"width": 100, "height": 100, "zoom": 2}},
        {"geolocation": {"latitude": 91, "longitude": 0}},
        {"cpuThrottling": 50},
        {"colorScheme": "sepia"},
        {"network": {"latencyMs": 10}},
    ]
    with trio.fail_after(30):
        for body in bad:
            r = await api.post("/emulate", json={"targetId": tab, **body})
            assert r.status_code == 400, (body, r.text)
            assert r.json()["field"] == next(iter(body)), (body, r.json())
        r = await api.get("/emulate", params={"targetId": tab})
        assert r.json()["emulation"]["timezone"] is None, "a refused request changed nothing"


async def test_a_full_page_capture_keeps_the_emulated_viewport(
    api: httpx.AsyncClient, tab: str, pages: PageServer,
) -> None:
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/emulate_probe.html"))
        r = await api.post("/emulate", json={
            "targetId": tab, "viewport": {"width": 500, "height": 400, "deviceScaleFactor": 2}})
        assert r.status_code == 200, r.text
        r = await api.post("/eval", json={
            "targetId": tab, "js": "document.body.style.height = '3000px'; 1"})
        assert r.status_code == 200, r.text
        # A capture beyond the viewport is followed by a device-metrics reset
        # (scrollbars); it must put the emulated viewport back, not browserd's own.
        r = await api.post("/screenshot", json={"targetId": tab, "fullPage": True})
        assert r.status_code == 200, r.text
        seen = await _probe(api, tab)
        assert (seen["width"], seen["height"], seen["dpr"]) == (500, 400, 2)
        r = await api.request("DELETE", "/emulate", json={"targetId": tab})
        assert r.status_code == 200, r.text
        r = await api.post("/screenshot", json={"targetId": tab, "fullPage": True})
        assert r.status_code == 200, r.text
        seen = await _probe(api, tab)
        assert (seen["width"], seen["height"], seen["dpr"]) == (1280, 720, 1)
