"""Actions the person confirms: a click on "Pay" waits for them; the agent cannot approve.

A service of its own, with ``confirm = [{kind = "click", name = "pay|buy|delete"}]``
(through ``BROWSERD_CONFIRM``), on a real Chromium.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import trio
from supervision.harness import LOOPBACK_TLS

from tests.conftest import PageServer, ServiceInfo, add_route, start_service, stop_service
from tests.integration.helpers import html_route, js, ref_of

pytestmark = pytest.mark.chromium

SHOP = """<!doctype html><title>shop</title>
<p id="paid">0</p>
<button onclick="document.getElementById('paid').textContent =
  String(Number(document.getElementById('paid').textContent) + 1)">Pay now</button>
<button onclick="document.title = 'looked'">Look</button>
<div id="cart"><button id="x1" onclick="document.getElementById('paid').textContent =
  String(Number(document.getElementById('paid').textContent) + 10)">Buy it</button></div>"""
add_route("/confirm/shop", html_route(SHOP))
add_route("/confirm/files", html_route(
    '<!doctype html><a href="/confirm/report" download="report.txt">Get report</a>'))


def _report(req: Any) -> None:
    body = b"quarterly numbers\n"
    req.send_response(200)
    req.send_header("Content-Type", "text/plain")
    req.send_header("Content-Length", str(len(body)))
    req.end_headers()
    req.wfile.write(body)


add_route("/confirm/report", _report)


@pytest.fixture(scope="module")
def held_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceInfo]:
    rules = [{"kind": "click", "name": "pay|buy|delete"}, {"kind": "download"}]
    info = start_service(tmp_path_factory.mktemp("confirm"),
                         env={"BROWSERD_CONFIRM": json.dumps(rules)})
    yield info
    stop_service(info)


@pytest.fixture
async def agent(held_service: ServiceInfo) -> AsyncIterator[httpx.AsyncClient]:
    async with held_service.client() as client:
        yield client


def person(service: ServiceInfo) -> dict[str, str]:
    token = (service.home / "config" / "owner-token").read_text().strip()
    return {"Authorization": f"Bearer {token}"}


async def open_shop(agent: httpx.AsyncClient, pages: PageServer) -> str:
    r = await agent.post("/tabs/open", json={"url": pages.url("/confirm/shop")})
    assert r.status_code == 200, r.text
    return str(r.json()["targetId"])


async def test_a_pay_click_waits_for_the_person_and_runs_after_approval(
        held_service: ServiceInfo, agent: httpx.AsyncClient, pages: PageServer) -> None:
    tab = await open_shop(agent, pages)
    # Other clicks are not held.
    r = await agent.post("/click", json={"targetId": tab,
                                         "ref": await ref_of(agent, tab, "button", "Look")})
    assert r.status_code == 200, r.text
    pay = await ref_of(agent, tab, "button", "Pay now")
    r = await agent.post("/click", json={"targetId": tab, "ref": pay})
    assert r.status_code == 202, r.text
    held = r.json()["confirmation"]
    assert r.json()["code"] == "CONFIRMATION_REQUIRED" and held["kind"] == "click"
    assert "Pay now" in held["summary"] and held["state"] == "pending"
    assert await js(agent, tab, "document.getElementById('paid').textContent") == "0"
    # The person sees it; the agent can neither list nor approve it.
    r = await agent.get("/confirmations")
    assert r.status_code == 403 and r.json()["code"] == "OWNER_ONLY", r.text
    r = await agent.post(f"/confirmations/{held['id']}", json={"approve": True})
    assert r.status_code == 403 and r.json()["code"] == "OWNER_ONLY", r.text
    r = await agent.get("/confirmations", headers=person(held_service),
                        params={"pending": "true"})
    assert [h["id"] for h in r.json()["confirmations"]] == [held["id"]], r.text
    # Pending: a wait times out and it stays held.
    r = await agent.post("/wait", json={"confirmation": held["id"], "timeoutMs": 200})
    assert r.status_code == 504, r.text

    async def approve() -> None:
        await trio.sleep(0.3)
        r = await agent.post(f"/confirmations/{held['id']}", json={"approve": True},
                             headers=person(held_service))
        assert r.status_code == 200 and r.json()["state"] == "approved", r.text

    async with trio.open_nursery() as nursery:
        nursery.start_soon(approve)
        r = await agent.post("/wait", json={"confirmation": held["id"], "timeoutMs": 20_000})
    assert r.status_code == 200, r.text
    assert r.json()["result"]["ok"] is True
    assert await js(agent, tab, "document.getElementById('paid').textContent") == "1"
    # It ran once: waiting again is a conflict, never a second payment.
    r = await agent.post("/wait", json={"confirmation": held["id"], "timeoutMs": 1000})
    assert r.status_code == 409, r.text
    assert await js(agent, tab, "document.getElementById('paid').textContent") == "1"


async def test_the_name_is_the_elements_own_however_the_agent_names_it(
        agent: httpx.AsyncClient, pages: PageServer) -> None:
    """A name rule judges the element's accessible name, resolved in the page: a selector,
    a partial role/name locator (within a container too) or a text match cannot step around
    it, and raw input whose target cannot be told first (a mouse press at pixels) is held
    by it too."""
    tab = await open_shop(agent, pages)
    box = await js(agent, tab, "(() => { const r = document.getElementById('x1')"
                               ".getBoundingClientRect(); return [r.x + 5, r.y + 5]; })()")
    for how in ({"selector": "#x1"}, {"role": "button", "name": "uy i"},
                {"text": "Buy"}, {"selector": "button:nth-of-type(1)"},
                {"role": "button", "within": {"selector": "#cart"}}):
        r = await agent.post("/click", json={"targetId": tab, **how})
        assert r.status_code == 202, (how, r.text)
        assert r.json()["confirmation"]["target"]["name"] in ("Buy it", "Pay now"), r.text
    r = await agent.post("/act", json={"targetId": tab, "actions": [
        {"kind": "click", "selector": "#x1"}]})
    assert r.status_code == 202, r.text
    r = await agent.post("/mouse", json={"targetId": tab, "action": "click",
                                         "x": box[0], "y": box[1]})
    assert r.status_code == 202, r.text
    assert "cannot be told first" in r.json()["confirmation"]["summary"]
    r = await agent.post("/mouse", json={"targetId": tab, "action": "move", "x": 1, "y": 1})
    assert r.status_code == 200, r.text  # a move clicks nothing
    r = await agent.post("/click", json={"targetId": tab, "selector": "button:nth-of-type(2)"})
    assert r.status_code == 200, r.text  # "Look": not a name the rule holds
    r = await agent.post("/click", json={"targetId": tab, "selector": "#nothing-here"})
    assert r.status_code == 404, r.text  # the action's own answer: nothing matched
    # A malformed step is the batch's 400 (before anything runs), never a 500 in the rules.
    for bad in ({"nth": "x"}, {"within": {"role": "row", "nth": "x"}}):
        r = await agent.post("/act", json={"targetId": tab, "actions": [
            {"kind": "click", "role": "button", "name": "Pay", **bad}]})
        assert r.status_code == 400 and r.json()["index"] == 0, (bad, r.text)
    assert await js(agent, tab, "document.getElementById('paid').textContent") == "0"


async def test_a_denied_click_is_403_denied_and_never_runs(
        held_service: ServiceInfo, agent: httpx.AsyncClient, pages: PageServer) -> None:
    tab = await open_shop(agent, pages)
    r = await agent.post("/act", json={"targetId": tab, "actions": [
        {"kind": "click", "text": "Pay now"}]})
    assert r.status_code == 202, r.text
    held = r.json()["confirmation"]
    r = await agent.post(f"/confirmations/{held['id']}", json={"deny": True},
                         headers=person(held_service))
    assert r.status_code == 200 and r.json()["state"] == "denied", r.text
    r = await agent.post("/wait", json={"confirmation": held["id"]})
    assert r.status_code == 403 and r.json()["code"] == "DENIED", r.text
    assert await js(agent, tab, "document.getElementById('paid').textContent") == "0"
    # The held action belongs to the token that asked: another token cannot wait on it.
    async with httpx.AsyncClient(base_url=held_service.base_url, verify=LOOPBACK_TLS,
                                 headers=person(held_service)) as owner:
        minted = (await owner.post("/tokens", json={"name": "other", "scopes": ["act"]})).json()
    r = await agent.post("/wait", json={"confirmation": held["id"]},
                         headers={"Authorization": f"Bearer {minted['token']}"})
    assert r.status_code == 404, r.text


async def test_a_downloaded_file_reaches_the_agent_only_after_the_person_approves(
        held_service: ServiceInfo, agent: httpx.AsyncClient, pages: PageServer) -> None:
    r = await agent.post("/tabs/open", json={"url": pages.url("/confirm/files")})
    tab = r.json()["targetId"]

    async def click() -> None:
        await trio.sleep(0.2)
        r = await agent.post("/click", json={"targetId": tab, "role": "link",
                                             "name": "Get report"})
        assert r.status_code == 200, r.text

    async with trio.open_nursery() as nursery:
        nursery.start_soon(click)
        r = await agent.post("/wait", json={"targetId": tab, "download": True,
                                            "timeoutMs": 20_000})
    assert r.status_code == 200, r.text
    download = r.json()["download"]["id"]
    r = await agent.get(f"/downloads/{download}")
    assert r.status_code == 202 and r.json()["code"] == "CONFIRMATION_REQUIRED", r.text
    held = r.json()["confirmation"]
    assert held["kind"] == "download" and "report.txt" in held["summary"]
    r = await agent.post(f"/confirmations/{held['id']}", json={"approve": True},
                         headers=person(held_service))
    assert r.status_code == 200, r.text
    r = await agent.post("/wait", json={"confirmation": held["id"], "timeoutMs": 5000})
    assert r.status_code == 200 and r.json()["result"]["released"] is True, r.text
    r = await agent.get(f"/downloads/{download}")
    assert r.status_code == 200 and r.content == b"quarterly numbers\n", r.text


async def test_an_approved_action_is_recorded_and_its_replay_is_held_again(
        held_service: ServiceInfo, agent: httpx.AsyncClient, pages: PageServer) -> None:
    tab = await open_shop(agent, pages)
    r = await agent.post("/record/start", json={"targetId": tab})
    assert r.status_code == 200, r.text
    record_id = r.json()["record"]["id"]
    r = await agent.post("/click", json={"targetId": tab,
                                         "ref": await ref_of(agent, tab, "button", "Pay now")})
    assert r.status_code == 202, r.text
    held = r.json()["confirmation"]
    r = await agent.post(f"/confirmations/{held['id']}", json={"approve": True},
                         headers=person(held_service))
    assert r.status_code == 200, r.text
    r = await agent.post("/wait", json={"confirmation": held["id"], "timeoutMs": 20_000})
    assert r.status_code == 200 and r.json()["result"]["ok"] is True, r.text
    assert (await agent.post("/record/stop", json={})).status_code == 200
    steps = (await agent.get(f"/records/{record_id}")).json()["steps"]
    # The approved click is its own step (the wait on the confirmation, which a replay
    # leaves out, follows it).
    assert [(s["kind"], s["ok"]) for s in steps] == [("click", True), ("wait", True)], steps
    assert steps[0]["targets"]["element"]["name"] == "Pay now"
    # Replayed as the agent, the click is held for the person again (never paid twice).
    r = await agent.post(f"/records/{record_id}/replay", json={"targetId": tab})
    assert r.status_code == 200, r.text
    assert r.json()["ok"] is False and r.json()["error"]["code"] == "CONFIRMATION_REQUIRED"
    assert await js(agent, tab, "document.getElementById('paid').textContent") == "1"
    await agent.delete(f"/records/{record_id}")
