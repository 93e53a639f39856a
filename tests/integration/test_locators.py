"""Act by role and name in one call: resolved when the action runs; several → 409 AMBIGUOUS."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import PageServer, add_route
from tests.integration.helpers import fails, html_route, js, navigate, ok

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


PEOPLE = """<!doctype html><title>people</title>
<table>
<tr><th>name</th><th>email</th><th></th></tr>
<tr><th scope="row">Alice</th><td>alice@example.com</td>
    <td><a href="#a" onclick="edited('alice')">Edit</a></td></tr>
<tr><th scope="row">Bob</th><td>bob@example.com</td>
    <td><a href="#b" onclick="edited('bob')">Edit</a>
        <a href="#bn" onclick="edited('bob notes')">Edit notes</a></td></tr>
<tr id="carol"><th scope="row">Carol</th><td>carol@example.com</td>
    <td><a href="#c" onclick="edited('carol')">Edit</a></td></tr>
</table>
<script>function edited(who) { document.title = 'edited ' + who; }</script>"""
add_route("/locators/people", html_route(PEOPLE))
EDIT = {"role": "link", "name": "Edit", "exact": True}


async def test_a_row_is_named_by_its_cells_and_a_locator_acts_within_it(
        api: httpx.AsyncClient, pages: PageServer, tab: str) -> None:
    await navigate(api, tab, pages.url("/locators/people"))
    found = (await api.get("/find", params={"targetId": tab, "role": "row",
                                            "name": "bob"})).json()
    assert [m["name"] for m in found["matches"]] == ["Bob bob@example.com Edit Edit notes"]
    # Without role=row the words find the cell that shows them, not its row too.
    found = (await api.get("/find", params={"targetId": tab, "name": "bob@"})).json()
    assert [m["role"] for m in found["matches"]] == ["cell"], found
    # The snapshot's row lines leave the words to the cells' lines.
    text = (await api.get("/snapshot", params={"targetId": tab})).json()["text"]
    assert ' row "' not in text and 'rowheader "Bob"' in text, text
    # Several Edit links on the page: within Bob's row, one.
    await fails(api, "/click", tab, 409, "AMBIGUOUS", **EDIT)
    await ok(api, "/click", tab, **EDIT, within={"role": "row", "name": "Bob"})
    assert await js(api, tab, "document.title") == "edited bob"
    # By selector, and by a ref from /find.
    await ok(api, "/click", tab, **EDIT, within={"selector": "#carol"})
    assert await js(api, tab, "document.title") == "edited carol"
    (alice,) = (await api.get("/find", params={"targetId": tab, "role": "row",
                                               "name": "alice"})).json()["matches"]
    await ok(api, "/click", tab, **EDIT, within={"ref": alice["ref"]})
    assert await js(api, tab, "document.title") == "edited alice"
    # A step of a batch.
    r = await api.post("/act", json={"targetId": tab, "actions": [
        {"kind": "hover", "role": "link", "name": "notes", "within": {"role": "row",
                                                                      "name": "Bob"}},
        {"kind": "click", "role": "link", "name": "notes", "within": {"role": "row",
                                                                      "name": "Bob"}}]})
    assert r.status_code == 200 and r.json()["ok"] is True, r.text
    assert await js(api, tab, "document.title") == "edited bob notes"


async def test_within_says_whether_the_container_or_the_target_is_missing_or_several(
        api: httpx.AsyncClient, pages: PageServer, tab: str) -> None:
    await navigate(api, tab, pages.url("/locators/people"))
    # Two links in Bob's row say "Edit" (not exact): the target is ambiguous.
    body = await fails(api, "/click", tab, 409, "AMBIGUOUS", role="link", name="Edit",
                       within={"role": "row", "name": "Bob"})
    assert body["error"] == "2 elements match link 'Edit' within row 'Bob'", body
    assert [c["name"] for c in body["candidates"]] == ["Edit", "Edit notes"]
    # Every row has an email: the container is ambiguous, and says so.
    body = await fails(api, "/click", tab, 409, "AMBIGUOUS", **EDIT,
                       within={"role": "row", "name": "example.com"})
    assert body["error"] == "3 elements match row 'example.com' (within)", body
    assert [c["role"] for c in body["candidates"]] == ["row"] * 3
    assert "within.nth" in body["hint"]
    await ok(api, "/click", tab, **EDIT, within={"role": "row", "name": "example.com",
                                                 "nth": 2})
    assert await js(api, tab, "document.title") == "edited carol"
    # No such container; no such element in the one there is.
    body = await fails(api, "/click", tab, 404, "NO_MATCH", **EDIT,
                       within={"role": "row", "name": "Dave"})
    assert "the container within names is missing" in body["error"], body
    body = await fails(api, "/click", tab, 404, "NO_MATCH", **EDIT,
                       within={"selector": "#dave"})
    assert "(within): the container is missing" in body["error"], body
    body = await fails(api, "/click", tab, 404, "NO_MATCH", role="button",
                       within={"role": "row", "name": "Bob"})
    assert body["error"] == "no button within row 'Bob'", body
    await fails(api, "/click", tab, 404, "REF_NOT_FOUND", **EDIT, within={"ref": "e9999"})
    body = await fails(api, "/click", tab, 400, "BAD_REQUEST", selector="a",
                       within={"role": "row", "name": "Bob"})
    assert body["field"] == "within", body
    assert await js(api, tab, "document.title") == "edited carol"  # nothing else was clicked


LATE_ROW = """<!doctype html><title>late row</title><table><tbody id="rows"></tbody></table>
<script>
setTimeout(() => {
  document.getElementById('rows').innerHTML = '<tr><td>Dana</td><td><a href="#d" ' +
    'onclick="document.title = \\'edited dana\\'">Edit</a></td></tr>';
}, 300);
</script>"""
add_route("/locators/late-row", html_route(LATE_ROW))


async def test_a_container_not_drawn_yet_is_waited_for_as_a_target_is(
        api: httpx.AsyncClient, pages: PageServer, tab: str) -> None:
    r = await api.post("/navigate", json={"targetId": tab,
                                         "url": pages.url("/locators/late-row"),
                                         "waitUntil": "commit"})
    assert r.status_code == 200, r.text
    await ok(api, "/click", tab, **EDIT, within={"role": "row", "name": "Dana"})
    assert await js(api, tab, "document.title") == "edited dana"
