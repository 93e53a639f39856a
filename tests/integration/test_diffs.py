"""What changed: /snapshot {since} and input actions with snapshot: "diff" on a list app."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import PageServer, add_route
from tests.integration.helpers import html_route

pytestmark = pytest.mark.chromium

TODOS = """<!doctype html><title>todos</title>
<h1>todos</h1>
<input id="new" placeholder="What needs to be done?" aria-label="new todo">
<ul id="list"></ul><p id="left">0 items left</p>
<footer><a href="#all">All</a> <a href="#active">Active</a> <a href="#done">Done</a></footer>
<section><h2>Help</h2><p>Type a todo and press Enter. Double-click to edit.</p>
<p>Items are kept in this page only.</p><button>Clear completed</button></section>
<script>
const input = document.getElementById('new');
input.addEventListener('keydown', e => {
  if (e.key !== 'Enter' || !input.value) return;
  const li = document.createElement('li');
  li.innerHTML = '<input type="checkbox"> <label></label>';
  li.querySelector('label').textContent = input.value;
  li.querySelector('input').setAttribute('aria-label', input.value);
  document.getElementById('list').append(li);
  input.value = '';
  document.getElementById('left').textContent =
    document.querySelectorAll('#list li').length + ' items left';
});
</script>"""
add_route("/diffs/todos", html_route(TODOS))


async def test_adding_items_answers_only_the_new_lines(
        api: httpx.AsyncClient, pages: PageServer, tab: str) -> None:
    r = await api.post("/navigate", json={"targetId": tab, "url": pages.url("/diffs/todos")})
    assert r.status_code == 200, r.text
    full = (await api.get("/snapshot", params={"targetId": tab})).json()
    assert "text" in full
    for item in ("milk", "eggs", "bread"):
        r = await api.post("/type", json={"targetId": tab, "selector": "#new", "text": item,
                                          "submit": True, "snapshot": "diff"})
        assert r.status_code == 200, r.text
        snap = r.json()["snapshot"]
        assert snap["full"] is False and "text" not in snap, snap
        added = "\n".join(snap["diff"]["added"])
        assert item in added, snap
        assert all(other not in added for other in ("milk", "eggs", "bread") if other != item)
        answer_chars = sum(len(line) for lines in snap["diff"].values() for line in lines)
        assert answer_chars * 3 < len(full["text"]), (answer_chars, len(full["text"]))
    # /snapshot {since}: against the first full snapshot, all three items are new.
    r = await api.get("/snapshot", params={"targetId": tab, "since": full["snapshotId"]})
    diff = r.json()
    assert diff["baseSnapshotId"] == full["snapshotId"] and diff["full"] is False
    assert sum("checkbox" in line for line in diff["diff"]["added"]) == 3
    # Unknown base, or other options: the whole snapshot, said so.
    r = await api.get("/snapshot", params={"targetId": tab, "since": "s999999"})
    assert r.json()["full"] is True and "text" in r.json() and r.json()["diffHint"]
    r = await api.get("/snapshot", params={"targetId": tab, "since": diff["snapshotId"],
                                           "interactive": "true"})
    assert r.json()["full"] is True
