"""What changed: /snapshot {since} and input actions with snapshot: "diff" on a list app."""

from __future__ import annotations

import time
from typing import Any

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


SPA = """<!doctype html><title>late app</title><div id="app">Loading…</div>
<script>
window.addEventListener('load', () => {
  // A burst of fetches, then the UI is drawn, a little at a time.
  Promise.all([1, 2, 3].map(i => fetch('/diffs/todos?i=' + i))).then(() => {
    let n = 0;
    const draw = () => {
      const b = document.createElement('button');
      b.textContent = 'Launcher ' + (++n);
      document.getElementById('app').append(b);
      if (n < 5) setTimeout(draw, 30); else document.getElementById('app').firstChild.remove();
    };
    setTimeout(draw, 30);
  });
});
</script>"""
add_route("/diffs/spa", html_route(SPA))


async def test_the_first_snapshot_after_navigate_reads_an_app_that_draws_late(
        api: httpx.AsyncClient, pages: PageServer, tab: str) -> None:
    r = await api.post("/navigate", json={"targetId": tab, "url": pages.url("/diffs/spa")})
    assert r.status_code == 200, r.text
    snap = (await api.get("/snapshot", params={"targetId": tab})).json()
    assert snap["settled"] is True, snap
    assert all(f'button "Launcher {n}"' in snap["text"] for n in range(1, 6)), snap["text"]
    assert "Loading" not in snap["text"]
    # settleMs 0 reads at once (no wait, settled as asked).
    fast = (await api.get("/snapshot", params={"targetId": tab, "settleMs": 0})).json()
    assert fast["settled"] is True


def _slow(delay_s: float, body: bytes = b'{"items": ["alpha", "beta"]}') -> Any:
    def handler(req: Any) -> None:
        time.sleep(delay_s)
        req.send_response(200)
        req.send_header("Content-Type", "application/json")
        req.send_header("Content-Length", str(len(body)))
        req.end_headers()
        req.wfile.write(body)
    return handler


SLOW_APP = """<!doctype html><title>slow app</title><div id="app">Loading…</div>
<script>
window.addEventListener('load', () => {
  // One slow answer (0.8 s, far beyond the quiet window), then the UI; beside it a
  // long poll that stays open for 8 s: reads wait for the first, never for the second.
  fetch('/diffs/poll');
  fetch('/diffs/slow').then(r => r.json()).then(data => {
    const app = document.getElementById('app');
    app.textContent = '';
    for (const item of data.items) {
      const b = document.createElement('button');
      b.textContent = 'Open ' + item;
      app.append(b);
    }
  });
});
</script>"""
add_route("/diffs/slow", _slow(0.8))
add_route("/diffs/poll", _slow(8.0, b"{}"))
add_route("/diffs/slow-app", html_route(SLOW_APP))


async def test_a_read_waits_for_a_slow_fetch_but_not_for_a_long_poll(
        api: httpx.AsyncClient, pages: PageServer, tab: str) -> None:
    """The DOM is quiet for 0.8 s while the app's fetch is in flight: the read waits for
    the answer and the drawing, and does not wait out the poll beside it."""
    r = await api.post("/navigate", json={"targetId": tab, "url": pages.url("/diffs/slow-app")})
    assert r.status_code == 200, r.text
    snap = (await api.get("/snapshot", params={"targetId": tab, "settleMs": 6000})).json()
    assert snap["settled"] is True, snap
    assert 'button "Open alpha"' in snap["text"] and 'button "Open beta"' in snap["text"], snap
    assert "Loading" not in snap["text"]
    found = (await api.get("/find", params={"targetId": tab, "role": "button"})).json()
    assert found["count"] == 2 and found["settled"] is True, found
