"""What the walker tests share: one headless Chromium per test module, two page servers,
a :class:`Tab` that drives a page over raw CDP as browserd does, and the pages more
than one of them loads.

The browser is launched synchronously (``browser_url``, module scope); each test gets
its own tab over its own websocket (``tab``). Pages come from two tiny HTTP servers on
127.0.0.1 (``servers``: different ports, so different origins); a ``?slow=<ms>`` query
answers that many ms late. The fixtures are imported by name into each test module
(tests/integration/test_walker*.py), which lists them in its ``__all__``.
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import attrs
import pytest
import trio

from browserd.snapshot import (
    WALKER_SOURCE,
    SnapshotOptions,
    decode_reply,
    resolve_call,
    snapshot_call,
)
from browserd.tabs.pagejs import page_function
from tests.integration._rawcdp import RawCdp, launch_chromium, open_cdp, open_page

__all__ = [
    "CONTROLS",
    "HIDDEN",
    "LINE",
    "SIGN_IN",
    "Servers",
    "Tab",
    "browser_url",
    "by_name",
    "parse",
    "servers",
    "stripped_lines",
    "tab",
]

LINE = re.compile(r'^( *)\[(e\d+)\] (\S+)(?: ("(?:[^"\\]|\\.)*"))?(.*)$')


# ---------------------------------------------------------------- fixtures


class _Pages:
    """path -> HTML, shared by both servers."""

    def __init__(self) -> None:
        self.pages: dict[str, str] = {}
        self.lock = threading.Lock()

    def get(self, path: str) -> str | None:
        with self.lock:
            return self.pages.get(path)

    def put(self, path: str, html: str) -> None:
        with self.lock:
            self.pages[path] = html


class _Handler(http.server.BaseHTTPRequestHandler):
    def __init__(self, *args: Any, pages: _Pages, **kwargs: Any) -> None:
        self.store = pages
        super().__init__(*args, **kwargs)

    def do_GET(self) -> None:
        slow = re.search(r"[?&]slow=(\d+)", self.path)  # answer that many ms late
        if slow:
            time.sleep(int(slow.group(1)) / 1000)
        html = self.store.get(self.path.split("?")[0])
        body = (html if html is not None else "not found").encode()
        self.send_response(200 if html is not None else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@attrs.frozen(kw_only=True)
class Servers:
    pages: _Pages
    base: str  # the tab's origin
    other: str  # a second origin (same host, another port)

    def put(self, path: str, html: str) -> str:
        self.pages.put(path, html)
        return self.base + path


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    pages = _Pages()
    handler = functools.partial(_Handler, pages=pages)
    made = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) for _ in range(2)]
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in made]
    for t in threads:
        t.start()
    try:
        yield Servers(
            pages=pages,
            base=f"http://127.0.0.1:{made[0].server_address[1]}",
            other=f"http://127.0.0.1:{made[1].server_address[1]}",
        )
    finally:
        for s in made:
            s.shutdown()
            s.server_close()
        for t in threads:
            t.join(5)


@pytest.fixture(scope="module")
def browser_url() -> Iterator[str]:
    with launch_chromium() as url:
        yield url


@attrs.define
class Tab:
    """One tab, its browserd world, and the tab's ref counter."""

    cdp: RawCdp
    session: str
    frame_id: str = ""
    ctx: int = 0
    next_ref: int = 1

    async def _evaluate(self, expr: str, ctx: int | None, by_value: bool,
                        await_promise: bool = False) -> dict[str, Any]:
        params: dict[str, Any] = {"expression": expr, "returnByValue": by_value,
                                  "awaitPromise": await_promise}
        if ctx is not None:
            params["contextId"] = ctx
        reply = await self.cdp.send("Runtime.evaluate", params, self.session)
        if "exceptionDetails" in reply:
            raise AssertionError(f"evaluation failed: {reply['exceptionDetails']}")
        result: dict[str, Any] = reply["result"]
        return result

    async def page(self, expr: str) -> Any:
        """Evaluate in the page's own (main) world, like a page script."""
        return (await self._evaluate(expr, None, True)).get("value")

    async def world(self, expr: str) -> Any:
        """Evaluate in the browserd world."""
        return (await self._evaluate(expr, self.ctx, True)).get("value")

    async def element(self, selector: str) -> str:
        """The objectId, in the browserd world, of the first element matching ``selector``."""
        found = await self._evaluate(f"document.querySelector({json.dumps(selector)})",
                                     self.ctx, False)
        assert found.get("subtype") == "node", selector
        return str(found["objectId"])

    async def on(self, selector: str, name: str, *args: Any, by_value: bool = True) -> Any:
        """Call the page function ``name`` with ``this`` = the element, as browserd does."""
        reply = await self.cdp.send("Runtime.callFunctionOn", {
            "objectId": await self.element(selector),
            "functionDeclaration": page_function(name).declaration,
            "arguments": [{"value": a} for a in args], "returnByValue": by_value,
        }, self.session)
        assert "exceptionDetails" not in reply, reply["exceptionDetails"]
        result: dict[str, Any] = reply["result"]
        return result.get("value") if by_value else result

    async def call(self, name: str, *args: Any, main: bool = False,
                   await_promise: bool = False) -> Any:
        """Evaluate a call of the page function ``name`` in the browserd (or main) world."""
        result = await self._evaluate(page_function(name).call(*args),
                                      None if main else self.ctx, True, await_promise)
        return result.get("value")

    async def install(self, frame_id: str) -> int:
        made = await self.cdp.send(
            "Page.createIsolatedWorld", {"frameId": frame_id, "worldName": "browserd"}, self.session
        )
        ctx: int = made["executionContextId"]
        assert (await self._evaluate(WALKER_SOURCE, ctx, True))["value"] == "installed"
        return ctx

    async def goto(self, url: str) -> None:
        nav = await self.cdp.send("Page.navigate", {"url": url}, self.session)
        self.frame_id = nav["frameId"]
        probe = f"location.href === {json.dumps(url)} && document.readyState === 'complete'"
        while not await self.page(probe):
            await trio.sleep(0.01)
        self.ctx = await self.install(self.frame_id)

    async def snapshot(self, ctx: int | None = None, **kw: Any) -> dict[str, Any]:
        opts = SnapshotOptions(next_ref=self.next_ref, **kw)
        raw: str = (await self._evaluate(snapshot_call(opts), ctx or self.ctx, True))["value"]
        out = decode_reply(raw)
        if "nextRef" in out:
            assert out["nextRef"] >= self.next_ref
            self.next_ref = out["nextRef"]
        return out

    async def resolve(
        self, ref: str, role: str | None = None, name: str | None = None
    ) -> dict[str, Any]:
        """{"node": objectId} when live, else the walker's stale record."""
        result = await self._evaluate(resolve_call(ref, role, name), self.ctx, False)
        if result.get("subtype") == "node":
            return {"node": result["objectId"]}
        stale: dict[str, Any] = json.loads(result["value"])
        return stale


@pytest.fixture
async def tab(browser_url: str) -> AsyncIterator[Tab]:
    with trio.fail_after(20):
        async with open_cdp(browser_url) as cdp, open_page(cdp) as session:
            yield Tab(cdp=cdp, session=session)


def parse(text: str) -> list[tuple[int, str, str, str, str]]:
    """(depth, ref, role, name, rest) for every ref'd line."""
    out = []
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            ind, ref, role, name, rest = m.groups()
            out.append((len(ind) // 2, ref, role, json.loads(name) if name else "", rest.strip()))
    return out


def by_name(snap: dict[str, Any], role: str, name: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [
        n for n in snap["nodes"] if n["role"] == role and n["name"] == name
    ]
    assert len(found) == 1, (role, name, snap["text"])
    return found[0]


def stripped_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()]


# ------------------------------------------------------------------ pages

SIGN_IN = """<!doctype html><title>Sign in</title>
<h1>Sign in</h1>
<h3>Step <em>one</em></h3>
<form aria-label="Login">
  <label for="email">Email</label><input id="email" value="ann@example.com">
  <label>Password <input type="password" value="hunter2secret"></label>
  <input placeholder="Search the docs" type="search">
  <input title="Code from the app" name="otp">
  <textarea aria-label="Notes">first line</textarea>
  <button type="submit">Continue</button>
  <input type="submit">
  <input type="reset" value="Start over">
</form>
"""

CONTROLS = """<!doctype html><title>Controls</title>
<a href="/home">Home</a>
<a href="/img"><img src="data:," alt="Logo"></a>
<a>No href</a>
<button disabled>Disabled one</button>
<button aria-pressed="true">Bold</button>
<button aria-expanded="false">Menu</button>
<label><input type="checkbox" checked> Remember me</label>
<label><input type="checkbox"> Spam me</label>
<input type="checkbox" id="mixed" aria-label="Some">
<label><input type="radio" name="size" value="s"> Small</label>
<label><input type="radio" name="size" value="l" checked> Large</label>
<div role="switch" aria-checked="true" tabindex="0">Wifi</div>
<label for="c">Country</label>
<select id="c"><option>France</option><option selected>Spain</option></select>
<select aria-label="Toppings" multiple><option selected>Ham</option><option>Egg</option></select>
<input type="range" aria-label="Volume" value="30">
<input type="number" aria-label="Qty" value="2">
<div onclick="void 0">Clickable div</div>
<span tabindex="0">Focusable span</span>
<div contenteditable="true"><p>Editable</p></div>
<details><summary>More</summary><p>Inside details</p>loose text</details>
<script>document.getElementById('mixed').indeterminate = true;</script>
"""

HIDDEN = """<!doctype html><title>Hidden</title>
<div style="display:none"><a href="/a">display none link</a></div>
<div aria-hidden="true"><button>aria hidden button</button></div>
<p hidden>hidden attribute text</p>
<div inert><button>inert button</button></div>
<div style="visibility:hidden">invisible text<a href="/v"
  style="visibility:visible">visible link</a></div>
<input type="hidden" value="tok">
<dialog><button>closed dialog button</button></dialog>
<template><button>template button</button></template>
<script>var scriptText = 1;</script><style>.x{}</style>
<div style="display:contents"><button>contents button</button></div>
<p>shown text</p>
"""
