"""Act by role and name in one call: resolved when the action runs; several → 409 AMBIGUOUS."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import PageServer, add_route
from tests.integration.helpers import html_route, js, navigate

pytestmark = pytest.mark.chromium

PAGE = """<!doctype html><title>locators</title>
<label>Email <input id="email"></label>
<button onclick="document.title = 'saved'">Save</button>
<ul>
  <li><button onclick="this.textContent = 'removed 1'">Remove</button> milk</li>
  <li><button onclick="this.textContent = 'removed 2'">Remove</button> eggs</li>
</ul>
<a href="#docs">Save as PDF</a>"""
add_route("/locators/page", html_route(PAGE))


async def test_click_and_type_by_role_and_name_in_one_call(
        api: httpx.AsyncClient, pages: PageServer, tab: str) -> None:
    await navigate(api, tab, pages.url("/locators/page"))
    r = await api.post("/type", json={"targetId": tab, "role": "textbox", "name": "email",
                                      "text": "a@b.example"})
    assert r.status_code == 200, r.text
    assert await js(api, tab, "document.getElementById('email').value") == "a@b.example"
    # "Save" also matches the link "Save as PDF" by substring; exact picks the button.
    r = await api.post("/click", json={"targetId": tab, "name": "Save"})
    assert r.status_code == 409 and r.json()["code"] == "AMBIGUOUS", r.text
    r = await api.post("/click", json={"targetId": tab, "role": "button", "name": "Save",
                                      "exact": True})
    assert r.status_code == 200, r.text
    assert await js(api, tab, "document.title") == "saved"


async def test_several_matches_list_the_candidates_and_nth_chooses(
        api: httpx.AsyncClient, pages: PageServer, tab: str) -> None:
    await navigate(api, tab, pages.url("/locators/page"))
    r = await api.post("/click", json={"targetId": tab, "role": "button", "name": "Remove"})
    assert r.status_code == 409, r.text
    body = r.json()
    assert body["code"] == "AMBIGUOUS" and body["count"] == 2
    assert [c["name"] for c in body["candidates"]] == ["Remove", "Remove"]
    assert all(c["ref"].startswith("e") and c["role"] == "button" for c in body["candidates"])
    assert await js(api, tab, "document.body.innerText.includes('removed')") is False
    r = await api.post("/click", json={"targetId": tab, "role": "button", "name": "Remove",
                                      "nth": 1})
    assert r.status_code == 200, r.text
    assert await js(api, tab, "document.body.innerText.includes('removed 2')") is True
    # A candidate's ref acts as any ref does.
    r = await api.post("/click", json={"targetId": tab, "ref": body["candidates"][0]["ref"]})
    assert r.status_code == 200 and await js(
        api, tab, "document.body.innerText.includes('removed 1')") is True
    r = await api.post("/click", json={"targetId": tab, "role": "button", "name": "Nope"})
    assert r.status_code == 404 and r.json()["code"] == "NO_MATCH", r.text
    r = await api.post("/click", json={"targetId": tab, "role": "button", "ref": "e1"})
    assert r.status_code == 400, r.text
    # The same in a batch.
    r = await api.post("/act", json={"targetId": tab, "actions": [
        {"kind": "click", "role": "button", "name": "Save", "exact": True}]})
    assert r.status_code == 200 and r.json()["ok"] is True, r.text


LATE = """<!doctype html><title>late</title><main id="app">loading…</main>
<script>
// An app that draws after a burst of fetches (as a single-page app does).
Promise.all([1, 2, 3].map(i => new Promise(r => setTimeout(r, 120 * i)))).then(() => {
  document.getElementById('app').innerHTML =
    '<button onclick="document.title = \\'started\\'">Start</button>';
});
</script>"""
add_route("/locators/late", html_route(LATE))


async def test_an_action_on_a_page_still_drawing_waits_for_it_as_a_read_would(
        api: httpx.AsyncClient, pages: PageServer, tab: str) -> None:
    r = await api.post("/navigate", json={"targetId": tab, "url": pages.url("/locators/late"),
                                         "waitUntil": "commit"})
    assert r.status_code == 200, r.text
    r = await api.post("/click", json={"targetId": tab, "role": "button", "name": "Start"})
    assert r.status_code == 200, r.text
    assert await js(api, tab, "document.title") == "started"
    # What never appears is still NO_MATCH, once the page has settled.
    r = await api.post("/click", json={"targetId": tab, "role": "button", "name": "Stop"})
    assert r.status_code == 404 and r.json()["code"] == "NO_MATCH", r.text
    r = await api.post("/click", json={"targetId": tab, "selector": "#never"})
    assert r.status_code == 404 and r.json()["code"] == "NO_MATCH", r.text


BUSY = """<!doctype html><title>busy</title><main id="app">loading…</main><p id="tick"></p>
<script>
// A page that never goes quiet (a ticker), whose button is drawn after 300 ms and gone
// again after 1.2 s: an action acts on it while it is there, not after the page settles.
let n = 0;
setInterval(() => { document.getElementById('tick').textContent = String(++n); }, 40);
setTimeout(() => {
  document.getElementById('app').innerHTML =
    '<button onclick="document.title = \\'pressed\\'">Press</button>';
}, 300);
setTimeout(() => { document.getElementById('app').textContent = 'gone'; }, 1200);
</script>"""
add_route("/locators/busy", html_route(BUSY))


async def test_an_action_acts_on_its_target_as_soon_as_it_is_drawn(
        api: httpx.AsyncClient, pages: PageServer, tab: str) -> None:
    r = await api.post("/navigate", json={"targetId": tab, "url": pages.url("/locators/busy"),
                                         "waitUntil": "commit"})
    assert r.status_code == 200, r.text
    r = await api.post("/click", json={"targetId": tab, "role": "button", "name": "Press"})
    assert r.status_code == 200, r.text
    assert await js(api, tab, "document.title") == "pressed"
