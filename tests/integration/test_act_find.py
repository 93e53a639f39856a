"""A batch that reads: navigate, click, then find what the click wrote, in one /act call."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import PageServer, add_route
from tests.integration.helpers import html_route, js, post

pytestmark = pytest.mark.chromium

PAGE = """<!doctype html><title>save</title>
<button onclick="saves += 1;
  document.getElementById('status').textContent = 'Saved ' + saves + ' item(s)'">Save</button>
<p id="status" role="status"></p>
<script>var saves = 0;</script>"""
add_route("/act_find/page", html_route(PAGE))


async def test_a_batch_finds_what_its_click_wrote_and_goes_on_past_no_match(
        api: httpx.AsyncClient, pages: PageServer, tab: str) -> None:
    r = await post(api, "/act", tab, actions=[
        {"kind": "navigate", "url": pages.url("/act_find/page")},
        {"kind": "click", "role": "button", "name": "Save"},
        {"kind": "find", "role": "status", "text": "saved"},
        {"kind": "find", "role": "alert"},
        {"kind": "find", "role": "status"},
        {"kind": "click", "role": "button", "name": "Save"},
        {"kind": "find", "text": "item(s)", "limit": 1}])
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["ok"] is True and "failedAt" not in data, data
    assert data["untrusted"] == ["steps"]
    steps = data["steps"]
    assert [(s["index"], s["kind"], s["ok"]) for s in steps] == [
        (0, "navigate", True), (1, "click", True), (2, "find", True), (3, "find", True),
        (4, "find", True), (5, "click", True), (6, "find", True)]
    found = steps[2]["result"]
    assert found["count"] == 1 and found["url"] == pages.url("/act_find/page"), found
    (status,) = found["matches"]
    assert status["role"] == "status" and status["text"] == "Saved 1 item(s)", status
    assert status["ref"].startswith("e")
    # Matching nothing is an answer, not a failure: the batch went on.
    assert steps[3]["result"]["count"] == 0 and steps[3]["result"]["matches"] == []
    # A match without a name shows the text it holds (a status line, read by role alone).
    (by_role,) = steps[4]["result"]["matches"]
    assert (by_role["ref"], by_role["name"], by_role["text"]) == (
        status["ref"], "", "Saved 1 item(s)"), by_role
    assert steps[6]["result"]["matches"][0]["text"] == "Saved 2 item(s)"
    assert "effects" not in found  # a read: it caused nothing
    assert await js(api, tab, "saves") == 2
    # Its refs are ordinary refs.
    r = await post(api, "/hover", tab, ref=status["ref"])
    assert r.status_code == 200, r.text


async def test_a_find_step_with_nothing_to_find_refuses_the_whole_batch(
        api: httpx.AsyncClient, pages: PageServer, tab: str) -> None:
    r = await post(api, "/act", tab, actions=[
        {"kind": "navigate", "url": pages.url("/act_find/page")},
        {"kind": "click", "role": "button", "name": "Save"},
        {"kind": "find", "exact": True, "root": "#status"}])
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["code"] == "BAD_REQUEST" and body["field"] == "actions" and body["index"] == 2
    assert body["error"] == "actions[2]: give at least one of role, name or text"
    # /find says it the same way, and nothing of the batch ran.
    r = await post(api, "/find", tab, exact=True)
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "give at least one of role, name or text"
    assert await js(api, tab, "location.pathname") != "/act_find/page"
