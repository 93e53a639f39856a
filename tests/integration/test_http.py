"""HTTP façade behaviour that involves the browser: cancellation on disconnect, errors."""

from __future__ import annotations

import httpx
import pytest
import trio

from tests.conftest import ServiceInfo

pytestmark = pytest.mark.chromium


async def test_a_request_whose_client_went_away_is_cancelled(
    service: ServiceInfo, api: httpx.AsyncClient, tab: str
) -> None:
    """A long /wait whose client disconnects frees the tab's work slot at once."""
    with trio.fail_after(30):
        async with service.client(timeout=0.5) as impatient:
            try:
                # far longer than this test's deadline: if the abandoned wait kept
                # the tab's work slot, the /eval below could not answer in time
                await impatient.post("/wait", json={"targetId": tab, "selector": "#never",
                                                    "timeoutMs": 120_000})
            except httpx.TimeoutException:
                pass
        r = await api.post("/eval", json={"targetId": tab, "js": "1+1"})
        assert r.status_code == 200 and r.json()["result"] == 2


async def test_unknown_fields_and_bad_json_are_400_naming_the_problem(
    api: httpx.AsyncClient,
) -> None:
    with trio.fail_after(10):
        r = await api.post("/navigate", json={"url": "http://127.0.0.1:1/", "wait": "load"})
        assert (r.status_code, r.json()["code"]) == (400, "BAD_REQUEST")
        assert r.json()["field"] == "wait"
        r = await api.post("/eval", content=b"{not json", headers={
            "Content-Type": "application/json"})
        assert r.status_code == 400 and "JSON" in r.json()["error"]
        r = await api.post("/eval", json={"js": 5})
        assert r.status_code == 400 and r.json()["field"] == "js"


async def test_openapi_lists_every_route(api: httpx.AsyncClient) -> None:
    with trio.fail_after(10):
        spec = (await api.get("/openapi.json")).json()
    for path in ("/healthz", "/status", "/start", "/stop", "/tabs", "/tabs/open", "/navigate",
                 "/eval", "/snapshot", "/click", "/type", "/wait", "/act", "/dialog"):
        assert path in spec["paths"], path


async def test_tab_titles_follow_navigations_caused_by_clicks(
    api: httpx.AsyncClient, pages, tab: str  # type: ignore[no-untyped-def]
) -> None:
    with trio.fail_after(30):
        r = await api.post("/navigate", json={"targetId": tab, "url": pages.url("/lead_a.html")})
        assert r.json()["title"] == "Page A"
        r = await api.post("/click", json={"targetId": tab, "selector": "#go"})
        assert r.status_code == 200 and r.json()["effects"]["navigated"].endswith("lead_b.html")
        await api.post("/wait", json={"targetId": tab, "loadState": "load"})
        tabs = (await api.get("/tabs")).json()["tabs"]
        mine = next(t for t in tabs if t["targetId"] == tab)
        assert (mine["title"], mine["url"].rsplit("/", 1)[1]) == ("Page B", "lead_b.html")


async def test_typing_into_something_not_editable_is_refused(
    api: httpx.AsyncClient, pages, tab: str  # type: ignore[no-untyped-def]
) -> None:
    with trio.fail_after(30):
        await api.post("/navigate", json={"targetId": tab, "url": pages.url("/lead_a.html")})
        for selector, what in (("#btn", "button"), ("#ro", "readonly input")):
            r = await api.post("/type", json={"targetId": tab, "selector": selector,
                                              "text": "hello"})
            assert (r.status_code, r.json()["code"]) == (400, "BAD_REQUEST"), r.text
            assert what in r.json()["error"]
        r = await api.post("/eval", json={"targetId": tab,
                                          "js": "document.querySelector('#ro').value"})
        assert r.json()["result"] == "fixed"


async def test_a_repeated_query_field_is_refused(api: httpx.AsyncClient, tab: str) -> None:
    with trio.fail_after(10):
        r = await api.get(f"/dom?targetId={tab}&format=text&format=bogus")
        assert (r.status_code, r.json()["code"], r.json()["field"]) == (400, "BAD_REQUEST",
                                                                        "format")
        r = await api.get(f"/dom?targetId={tab}&format=text")
        assert r.status_code == 200
