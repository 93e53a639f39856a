"""The in-page snapshot walker, and the page functions of ``tabs/js/``, against a real
headless Chromium.

One Chromium serves the module (launched synchronously); each test gets its
own tab over its own websocket. Pages come from two tiny HTTP servers on
127.0.0.1 (different ports, so different origins).
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
    DESCRIBE_FUNCTION,
    WALKER_SOURCE,
    SnapshotOptions,
    cap_text,
    decode_reply,
    dom_snapshot_call,
    find_by_text_call,
    read_view_call,
    resolve_call,
    snapshot_call,
    splice_frame_text,
)
from browserd.tabs.pagejs import page_function

from ._rawcdp import RawCdp, launch_chromium, open_cdp, open_page

pytestmark = pytest.mark.chromium

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

LIFTED = """<!doctype html><title>Lifted</title>
<div><div><div><span><button>Deep button</button></span></div></div></div>
<div class="a"><div class="b">Hello <b>big</b> world</div></div>
<div>second block</div>
<ul><li><div><div>Item text</div></div></li></ul>
"""

SHADOW = """<!doctype html><title>Shadow</title>
<x-card><span slot="title">Slotted title</span></x-card>
<script>
customElements.define('x-card', class extends HTMLElement {
  constructor() {
    super();
    this.attachShadow({mode: 'open'}).innerHTML =
      '<h2><slot name="title">fallback</slot></h2><button>Shadow button</button>';
  }
});
</script>
"""


def big_page(n: int) -> str:
    parts = ["<!doctype html><title>Big</title><main>"]
    count = 2
    i = 0
    while count < n:
        i += 1
        parts.append(
            f'<div class="card"><div><h2>Card {i}</h2><p>Some text for card {i} with '
            f'<a href="/c/{i}">a link {i}</a>.</p><ul><li>one</li><li>two</li></ul>'
            f'<form><label>Field {i} <input name="f{i}"></label>'
            f"<button>Go {i}</button></form>"
            f"<table><tr><td>a</td><td>b</td></tr></table></div></div>"
        )
        count += 17
    parts.append("</main>")
    return "".join(parts)


# ------------------------------------------------------------------ tests


async def test_sign_in_form(tab: Tab, servers: Servers) -> None:
    with trio.fail_after(20):
        await tab.goto(servers.put("/signin", SIGN_IN))
        snap = await tab.snapshot()
    lines = snap["text"].splitlines()
    assert lines[0] == '[e1] RootWebArea "Sign in"'
    got = stripped_lines(snap["text"])
    for expected in [
        'heading "Sign in" level=1',
        'heading "Step one" level=3',
        'form "Login"',
        'textbox "Email" value="ann@example.com"',
        'textbox "Password" value="••••"',
        'searchbox "Search the docs"',
        'textbox "Code from the app"',
        'textbox "Notes" value="first line"',
        'button "Continue"',
        'button "Submit"',
        'button "Start over"',
    ]:
        assert any(line.endswith("] " + expected) for line in got), (expected, snap["text"])
    # the password itself never leaves the page
    assert "hunter2secret" not in json.dumps(snap)
    password = by_name(snap, "textbox", "Password")
    assert password["value"] == "••••"
    email = by_name(snap, "textbox", "Email")
    assert email["value"] == "ann@example.com"
    assert email["depth"] == 2  # under the form, under the root
    assert by_name(snap, "heading", "Sign in")["level"] == 1
    # labels are not repeated as text lines
    assert not any(line.startswith("text ") for line in got), snap["text"]
    assert snap["stats"]["refs"] == len(snap["nodes"]) == len(parse(snap["text"]))
    assert snap["stats"]["chars"] == len(snap["text"])
    assert snap["truncated"] is False


async def test_controls_and_states(tab: Tab, servers: Servers) -> None:
    with trio.fail_after(20):
        await tab.goto(servers.put("/controls", CONTROLS))
        snap = await tab.snapshot()
    text = snap["text"]
    got = stripped_lines(text)

    def has(expected: str) -> bool:
        return any(line.endswith("] " + expected) for line in got)

    for expected in [
        'link "Home" → /home',
        'link "Logo" → /img',
        'button "Disabled one" disabled',
        'button "Bold" pressed',
        'button "Menu" expanded=false',
        'checkbox "Remember me" checked',
        'checkbox "Spam me"',
        'checkbox "Some" checked=mixed',
        'radio "Small"',
        'radio "Large" checked',
        'switch "Wifi" checked',
        'combobox "Country" value="Spain"',
        'option "Spain" selected',
        'listbox "Toppings"',
        'slider "Volume" value="30"',
        'spinbutton "Qty" value="2"',
        'generic "Clickable div"',
        'generic "Focusable span"',
        'textbox value="Editable"',
        'button "More" expanded=false',
    ]:
        assert has(expected), (expected, text)
    assert not has('link "No href"')
    assert "Inside details" not in text and "loose text" not in text
    assert by_name(snap, "link", "Home")["href"].endswith("/home")
    assert by_name(snap, "checkbox", "Spam me")["checked"] is False
    assert by_name(snap, "checkbox", "Remember me")["checked"] is True
    assert by_name(snap, "checkbox", "Some")["checked"] == "mixed"
    assert by_name(snap, "button", "Disabled one")["disabled"] is True
    assert by_name(snap, "option", "Spain")["selected"] is True


async def test_hidden_content_is_skipped(tab: Tab, servers: Servers) -> None:
    with trio.fail_after(20):
        await tab.goto(servers.put("/hidden", HIDDEN))
        snap = await tab.snapshot()
        inter = await tab.snapshot(interactive=True)
    text = snap["text"]
    for hidden in [
        "display none link",
        "aria hidden button",
        "hidden attribute text",
        "inert button",
        "invisible text",
        "tok",
        "closed dialog button",
        "template button",
        "scriptText",
        ".x{}",
    ]:
        assert hidden not in text, (hidden, text)
        assert hidden not in inter["text"], (hidden, inter["text"])
    assert 'link "visible link"' in text  # visibility:visible inside visibility:hidden
    assert 'button "contents button"' in text  # display:contents keeps its children
    assert 'text "shown text"' in text
    assert [n["name"] for n in inter["nodes"]] == ["visible link", "contents button"]


async def test_generic_containers_are_lifted(tab: Tab, servers: Servers) -> None:
    with trio.fail_after(20):
        await tab.goto(servers.put("/lifted", LIFTED))
        snap = await tab.snapshot()
    assert snap["text"] == (
        '[e1] RootWebArea "Lifted"\n'
        '  [e2] button "Deep button"\n'
        '  text "Hello big world"\n'
        '  text "second block"\n'
        "  [e3] list\n"
        "    [e4] listitem\n"
        '      text "Item text"\n'
    ), snap["text"]
    assert [n["depth"] for n in snap["nodes"]] == [0, 1, 1, 2]
    assert snap["stats"] == {**snap["stats"], "nodes": 7, "refs": 4}


async def test_open_shadow_dom_is_walked(tab: Tab, servers: Servers) -> None:
    with trio.fail_after(20):
        await tab.goto(servers.put("/shadow", SHADOW))
        snap = await tab.snapshot()
        ref = by_name(snap, "button", "Shadow button")["ref"]
        resolved = await tab.resolve(ref)
    assert '  [e2] heading "Slotted title" level=2\n' in snap["text"], snap["text"]
    assert "fallback" not in snap["text"]
    assert "node" in resolved


async def test_same_origin_iframe_is_inline(tab: Tab, servers: Servers) -> None:
    servers.put("/inner", "<title>Inner</title><button>Inner button</button><p>inner text</p>")
    outer = servers.put(
        "/outer", '<title>Outer</title><iframe title="Embedded" src="/inner"></iframe>'
    )
    with trio.fail_after(20):
        await tab.goto(outer)
        snap = await tab.snapshot()
        inner_ref = by_name(snap, "button", "Inner button")["ref"]
        ok = await tab.resolve(inner_ref)
        await tab.page("document.querySelector('iframe').remove()")
        gone = await tab.resolve(inner_ref)
    assert snap["text"] == (
        '[e1] RootWebArea "Outer"\n'
        '  [e2] iframe "Embedded"\n'
        '    [e3] button "Inner button"\n'
        '    [e4] paragraph\n'
        '      text "inner text"\n'
    ), snap["text"]
    assert snap["frames"] == []
    assert "node" in ok
    assert gone == {"stale": "detached"}


async def test_cross_origin_iframe_is_reported_and_spliced(tab: Tab, servers: Servers) -> None:
    servers.pages.put("/child", "<title>Child</title><button>Pay now</button>")
    page = servers.put(
        "/host",
        '<title>Host</title><nav><iframe title="Payment" '
        f'src="{servers.other}/child"></iframe></nav><a href="/x">after</a>',
    )
    with trio.fail_after(20):
        await tab.goto(page)
        snap = await tab.snapshot()
        tree = await tab.cdp.send("Page.getFrameTree", {}, tab.session)
        child_frame = tree["frameTree"]["childFrames"][0]["frame"]["id"]
        child_ctx = await tab.install(child_frame)
        child = await tab.snapshot(ctx=child_ctx)
        inter = await tab.snapshot(interactive=True)
    assert "Pay now" not in snap["text"]
    iframe = by_name(snap, "iframe", "Payment")
    assert snap["frames"] == [{"ref": iframe["ref"], "index": 0, "depth": iframe["depth"]}]
    assert inter["frames"] == [{"ref": iframe["ref"], "index": 0, "depth": 0}]
    # the child's refs continue the tab's counter
    assert child["text"].startswith(f'[e{snap["nextRef"]}] RootWebArea "Child"')
    spliced = splice_frame_text(snap["text"], iframe["ref"], child["text"], iframe["depth"])
    lines = spliced.splitlines()
    at = next(i for i, line in enumerate(lines) if f"[{iframe['ref']}]" in line)
    pad = "  " * (iframe["depth"] + 1)
    assert lines[at + 1] == f'{pad}[e{snap["nextRef"]}] RootWebArea "Child"'
    assert lines[at + 2].startswith(pad + "  [") and lines[at + 2].endswith('button "Pay now"')
    assert lines[at + 3].strip() == '[e4] link "after" → /x'


async def test_refs_are_stable_and_never_reused(tab: Tab, servers: Servers) -> None:
    with trio.fail_after(20):
        await tab.goto(servers.put("/stable", CONTROLS))
        first = await tab.snapshot()
        second = await tab.snapshot()
        assert second["text"] == first["text"]
        assert second["stats"]["newRefs"] == 0
        top = first["nextRef"] - 1
        await tab.page(
            "document.body.insertAdjacentHTML('afterbegin', '<button>Brand new</button>')"
        )
        third = await tab.snapshot()
        # a caller passing a stale, lower counter still gets fresh numbers
        tab.next_ref = 1
        await tab.page(
            "document.body.insertAdjacentHTML('beforeend', '<a href=\"/z\">Later link</a>')"
        )
        fourth = await tab.snapshot()
    new = by_name(third, "button", "Brand new")["ref"]
    assert int(new[1:]) == top + 1
    assert third["nextRef"] == top + 2
    old = {n["ref"]: (n["role"], n["name"]) for n in first["nodes"]}
    for node in third["nodes"]:
        if node["ref"] in old:
            assert old[node["ref"]] == (node["role"], node["name"])
    assert {n["ref"] for n in first["nodes"]} < {n["ref"] for n in third["nodes"]}
    later = by_name(fourth, "link", "Later link")["ref"]
    assert int(later[1:]) == top + 2
    assert len({n["ref"] for n in fourth["nodes"]}) == len(fourth["nodes"])


async def test_resolve_reports_detached_changed_and_unknown(tab: Tab, servers: Servers) -> None:
    page = servers.put(
        "/resolve",
        '<title>R</title><button id="b">Save</button><button id="k">Keep</button>'
        '<label for="i">Name</label><input id="i">',
    )
    with trio.fail_after(20):
        await tab.goto(page)
        snap = await tab.snapshot()
        save = by_name(snap, "button", "Save")["ref"]
        keep = by_name(snap, "button", "Keep")["ref"]
        field = by_name(snap, "textbox", "Name")["ref"]
        ok = await tab.resolve(keep, "button", "Keep")
        described = await tab.cdp.send(
            "Runtime.callFunctionOn",
            {
                "objectId": ok["node"],
                "functionDeclaration": DESCRIBE_FUNCTION,
                "returnByValue": True,
            },
            tab.session,
        )
        await tab.page("document.getElementById('b').remove()")
        await tab.page("document.querySelector('label').textContent = 'Full name'")
        detached = await tab.resolve(save, "button", "Save")
        changed = await tab.resolve(field, "textbox", "Name")
        recorded = await tab.resolve(field)  # falls back to the recorded role/name
        wrong_role = await tab.resolve(keep, "link", "Keep")
        unknown = await tab.resolve("e999")
        injected = await tab.resolve('e1"); throw 1; ("')
    assert described["result"]["value"] == {"role": "button", "name": "Keep"}
    assert detached == {"stale": "detached"}
    assert changed == {"stale": "changed", "role": "textbox", "name": "Full name"}
    assert recorded == changed
    assert wrong_role == {"stale": "changed", "role": "button", "name": "Keep"}
    assert unknown == {"stale": "unknown"}
    assert injected == {"stale": "unknown"}


async def test_interactive_lists_every_actionable_element(tab: Tab, servers: Servers) -> None:
    with trio.fail_after(20):
        await tab.goto(servers.put("/inter", CONTROLS))
        full = await tab.snapshot()
        inter = await tab.snapshot(interactive=True)
        native = await tab.world(
            "[...document.querySelectorAll('a[href], button, input, select, textarea, summary')]"
            ".filter(e => e.checkVisibility()).length"
        )
    lines = parse(inter["text"])
    assert all(depth == 0 for depth, *_ in lines)
    assert [ref for _, ref, *_ in lines] == [n["ref"] for n in inter["nodes"]]
    actionable = {
        n["ref"]
        for n in full["nodes"]
        if n["role"] not in {"RootWebArea", "option", "group", "img", "paragraph", "list",
                             "listitem", "term", "definition", "code", "heading"}
    }
    assert {n["ref"] for n in inter["nodes"]} == actionable
    # every native control plus the switch, the clickable div/span and the editor
    assert len(inter["nodes"]) == native + 4
    assert "text " not in inter["text"]
    assert inter["stats"]["newRefs"] == 0


async def test_max_chars_and_limit_truncate(tab: Tab, servers: Servers) -> None:
    with trio.fail_after(20):
        await tab.goto(servers.put("/trunc", CONTROLS))
        full = await tab.snapshot()
        capped = await tab.snapshot(max_chars=200)
        limited = await tab.snapshot(limit=3)
        zero = await tab.snapshot(max_chars=0)
    assert full["truncated"] is False
    assert capped["truncated"] is True
    assert len(capped["text"]) <= 200
    assert full["text"].startswith(capped["text"])
    assert capped["text"].endswith("\n")
    assert len(capped["nodes"]) == len(parse(capped["text"]))
    assert limited["truncated"] is True
    assert [n["ref"] for n in limited["nodes"]] == [n["ref"] for n in full["nodes"][:3]]
    assert zero["text"] == "" and zero["truncated"] is True
    assert cap_text(full["text"], 200) == (capped["text"], True)


async def test_scoped_snapshots(tab: Tab, servers: Servers) -> None:
    with trio.fail_after(20):
        await tab.goto(servers.put("/scope", SIGN_IN))
        whole = await tab.snapshot()
        form_ref = by_name(whole, "form", "Login")["ref"]
        by_ref = await tab.snapshot(root_ref=form_ref)
        by_selector = await tab.snapshot(root_selector="form")
        missing = await tab.snapshot(root_selector="#nope")
        bad = await tab.snapshot(root_selector="a[")
        hostile = await tab.snapshot(root_selector='"); alert(1); ("')
        stale = await tab.snapshot(root_ref="e4242")
    assert by_ref["text"].startswith(f'[{form_ref}] form "Login"\n  [')
    assert by_ref["text"] == by_selector["text"]
    assert "Sign in" not in by_ref["text"]
    assert missing == {"error": {"code": "NO_MATCH", "selector": "#nope"}}
    assert bad["error"]["code"] == "BAD_SELECTOR"
    assert hostile["error"]["code"] == "BAD_SELECTOR"
    assert stale == {"error": {"code": "STALE_REF", "reason": "unknown", "ref": "e4242"}}


async def test_walker_is_isolated_and_idempotent(tab: Tab, servers: Servers) -> None:
    page = servers.put(
        "/hostile",
        "<title>Hostile</title><button>Real</button><script>"
        "window.__browserd = {snapshot: () => 'evil'};"
        "Element.prototype.checkVisibility = () => false;"
        "JSON.stringify = () => '{}';"
        "</script>",
    )
    with trio.fail_after(20):
        await tab.goto(page)
        first = await tab.snapshot()
        again = await tab.world(WALKER_SOURCE)
        second = await tab.snapshot()
        page_sees = await tab.page("typeof window.__browserdState")
    assert 'button "Real"' in first["text"]
    assert again == "present"
    assert second["text"] == first["text"] and second["stats"]["newRefs"] == 0
    assert page_sees == "undefined"


async def test_find_by_text_and_describe(tab: Tab, servers: Servers) -> None:
    page = servers.put(
        "/find",
        "<title>F</title><p>Submit your order</p><a href='/o'>Order history</a>"
        "<button id='s'>Submit</button><div style='display:none'><button>Hidden thing</button>"
        "</div><span id='plain'>Just some words</span>",
    )
    with trio.fail_after(20):
        await tab.goto(page)

        async def find(text: str) -> Any:
            call = find_by_text_call(text)
            expr = f"(() => {{ const e = {call}; return e && (e.id || e.textContent); }})()"
            return await tab.world(expr)

        exact = await find("Submit")
        folded = await find("submit")
        contains = await find("history")
        plain = await find("some words")
        hidden = await find("Hidden thing")
        described = await tab.world("__browserd.describe(document.getElementById('s'))")
        root = await tab.world("__browserd.describe(document.documentElement)")
    assert exact == "s"
    assert folded == "s"
    assert contains == "Order history"
    assert plain == "plain"
    assert hidden is None
    assert described == {"role": "button", "name": "Submit"}
    assert root == {"role": "RootWebArea", "name": "F"}


async def test_read_view(tab: Tab, servers: Servers) -> None:
    with trio.fail_after(20):
        url = servers.put("/read", HIDDEN + "<h2>Heading two</h2><p>" + "word " * 400 + "</p>")
        await tab.goto(url)
        view = decode_reply(await tab.world(read_view_call(SnapshotOptions(text_budget=300))))
        big = decode_reply(await tab.world(read_view_call(SnapshotOptions(text_budget=100_000))))
    assert view["title"] == "Hidden" and view["url"] == url
    assert view["truncated"] is True and len(view["text"]) <= 301
    assert big["truncated"] is False
    assert "shown text\n## Heading two\nword word" in big["text"]
    for hidden in ["display none link", "invisible text", "scriptText", "template button"]:
        assert hidden not in big["text"]
    assert "visible link" in big["text"]


async def test_dom_snapshot_shares_refs(tab: Tab, servers: Servers) -> None:
    with trio.fail_after(20):
        await tab.goto(servers.put("/dom", SIGN_IN))
        snap = await tab.snapshot()
        dom = decode_reply(
            await tab.world(dom_snapshot_call(SnapshotOptions(next_ref=tab.next_ref)))
        )
        small = decode_reply(
            await tab.world(dom_snapshot_call(SnapshotOptions(next_ref=dom["nextRef"], limit=5)))
        )
    nodes = {n["ref"]: n for n in dom["nodes"]}
    email = by_name(snap, "textbox", "Email")
    assert nodes[email["ref"]]["tag"] == "input"
    assert nodes[email["ref"]]["id"] == "email"
    assert nodes[email["ref"]]["value"] == "ann@example.com"
    password = next(n for n in dom["nodes"] if n.get("type") == "password")
    assert password["value"] == "••••"
    assert dom["nodes"][0]["parentRef"] is None and dom["nodes"][0]["tag"] == "html"
    for node in dom["nodes"][1:]:
        parent = nodes[node["parentRef"]]
        assert parent["depth"] == node["depth"] - 1
    assert not any(n["tag"] in {"script", "head", "title"} for n in dom["nodes"])
    assert dom["truncated"] is False
    assert small["truncated"] is True and len(small["nodes"]) == 5
    assert dom["nextRef"] > tab.next_ref  # body, labels, … got refs of their own


async def test_ten_thousand_elements(tab: Tab, servers: Servers) -> None:
    with trio.fail_after(60):
        await tab.goto(servers.put("/big", big_page(10_000)))
        count = await tab.page("document.getElementsByTagName('*').length")
        t0 = time.perf_counter()
        snap = await tab.snapshot()
        full_ms = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        inter = await tab.snapshot(interactive=True)
        inter_ms = (time.perf_counter() - t0) * 1000
    print(
        f"\n{count} elements: full {full_ms:.0f} ms ({len(snap['text'])} chars, "
        f"{snap['stats']['refs']} refs), interactive {inter_ms:.0f} ms "
        f"({len(inter['text'])} chars, {inter['stats']['refs']} refs)"
    )
    assert count >= 10_000
    cards = (count - 4) // 17
    assert sum(1 for n in snap["nodes"] if n["role"] == "heading") == cards
    assert sum(1 for n in inter["nodes"] if n["role"] == "link") == cards
    assert sum(1 for n in inter["nodes"] if n["role"] == "textbox") == cards
    assert sum(1 for n in inter["nodes"] if n["role"] == "button") == cards
    assert snap["truncated"] is False


# ------------------------------------------------------- pure helpers


def test_snapshot_call_escapes_user_input() -> None:
    opts = SnapshotOptions(next_ref=7, root_selector='a"); alert(1); //\u2028', max_chars=10)
    expr = snapshot_call(opts)
    assert expr.startswith("JSON.stringify(globalThis.__browserd.snapshot({")
    inner = expr.removeprefix("JSON.stringify(globalThis.__browserd.snapshot(").removesuffix("))")
    assert json.loads(inner)["rootSelector"] == 'a"); alert(1); //\u2028'
    assert "\u2028" not in expr


def test_options_are_validated() -> None:
    from browserd.errors import BadRequest

    with pytest.raises(BadRequest):
        SnapshotOptions(next_ref=0)
    with pytest.raises(BadRequest):
        SnapshotOptions(max_chars=-1)
    with pytest.raises(BadRequest):
        SnapshotOptions(root_ref="e1", root_selector="body")


def test_cap_text() -> None:
    text = "a\nbb\nccc\n"
    assert cap_text(text, None) == (text, False)
    assert cap_text(text, 9) == (text, False)
    assert cap_text(text, 8) == ("a\nbb\n", True)
    assert cap_text(text, 5) == ("a\nbb\n", True)
    assert cap_text(text, 4) == ("a\n", True)
    assert cap_text(text, 1) == ("", True)


def test_splice_frame_text() -> None:
    parent = '[e1] RootWebArea "P"\n  [e2] iframe "F"\n  [e3] link "x"\n'
    child = '[e9] RootWebArea "C"\n  [e10] button "B"\n'
    assert splice_frame_text(parent, "e2", child, 1) == (
        '[e1] RootWebArea "P"\n  [e2] iframe "F"\n'
        '    [e9] RootWebArea "C"\n      [e10] button "B"\n  [e3] link "x"\n'
    )
    assert splice_frame_text(parent, "e7", child, 1) == parent
    assert splice_frame_text(parent, "e2", "", 1) == parent
    # e2 must not match e20
    assert splice_frame_text('[e20] iframe "G"\n', "e2", child, 0) == '[e20] iframe "G"\n'


# ------------------------------------------------- the page functions of tabs/js/
#
# Each is called here as browserd calls it (its self-contained declaration, in the
# browserd world, ``this`` = the element), so every branch an action's answer depends
# on is seen in a real page, not only through the HTTP routes.

FORM_FUNCTIONS = """<!doctype html><title>Form functions</title>
<input id="txt" value="hello"><input id="ro" readonly><input id="cb" type="checkbox">
<textarea id="ta"></textarea><input id="proxy" style="opacity: 0" value="keys">
<input id="sticky" value="stays"><div id="plain">plain</div>
<label id="lab">Pick <input id="file" type="file" multiple></label>
<select id="s"><option value="a">  Apple   pie </option><option value="b" disabled>Banana</option>
<option value="c">Cherry</option></select>
<script>
  window.changes = 0;
  document.getElementById('s').addEventListener('change', () => window.changes++);
  document.getElementById('sticky').addEventListener('input', e => e.target.value = 'back');
</script>
"""


async def test_page_functions_of_fields(tab: Tab, servers: Servers) -> None:
    with trio.fail_after(20):
        await tab.goto(servers.put("/fn-form", FORM_FUNCTIONS))
        typing = {}
        for sel in ("#txt", "#ro", "#cb", "#ta"):
            await tab.page(f"document.querySelector('{sel}').focus()")
            typing[sel] = await tab.on(sel, "typingTarget")
        await tab.page("document.activeElement.blur()")
        typing["#plain"] = await tab.on("#plain", "typingTarget")
        cleared = {sel: await tab.on(sel, "clearField")
                   for sel in ("#txt", "#proxy", "#sticky", "#plain")}
        values = await tab.page("[...document.querySelectorAll('input')].map(i => i.value)")
        chosen = await tab.on("#s", "selectOptions", ["Apple pie"])
        changes = await tab.page("window.changes")
        missing = await tab.on("#s", "selectOptions", ["zzz"])
        several = await tab.on("#s", "selectOptions", ["a", "c"])
        disabled = await tab.on("#s", "selectOptions", ["b"])
        not_select = await tab.on("#lab", "selectOptions", ["a"])
        label_input = await tab.on("#lab", "fileInputOf", by_value=False)
        text_input = await tab.on("#txt", "fileInputOf")
        facts = await tab.on("#file", "fileInputFacts")
    assert typing == {"#txt": "ok", "#ro": "readonly input", "#cb": "input type=checkbox",
                      "#ta": "ok", "#plain": "body"}
    assert cleared == {"#txt": "value", "#proxy": "proxy", "#sticky": "kept", "#plain": "none"}
    assert values[:5] == ["", "", "on", "keys", "back"]
    assert chosen == {"selected": ["a"]} and changes == 1
    assert missing == {"missing": ["zzz"], "available": [
        {"value": "a", "label": "Apple pie"}, {"value": "b", "label": "Banana"},
        {"value": "c", "label": "Cherry"}]}
    assert several == {"notMultiple": 2}
    assert disabled == {"disabledOption": "b"}
    assert not_select == {"notSelect": "label"}
    assert label_input["subtype"] == "node" and label_input["description"].startswith("input#file")
    assert text_input == "input type=text"
    assert facts == {"multiple": True, "disabled": False}


POINTER_FUNCTIONS = """<!doctype html><title>Pointer functions</title>
<style>body { margin: 0 } button { position: absolute; width: 100px; height: 40px }</style>
<button id="free" style="left: 10px; top: 10px">Free</button>
<button id="under" style="left: 10px; top: 100px">Under</button>
<div role="dialog" aria-label="Cookie banner" class="banner  x"
     style="position: absolute; left: 0; top: 90px; width: 300px; height: 80px"></div>
<button id="far" style="left: 10px; top: 5000px">Far</button>
<button id="none" style="display: none">None</button>
<button id="gone" style="left: 200px; top: 10px">Gone</button>
<script>
  window.seen = [];
  for (const t of ['click', 'mouseover', 'mouseenter', 'mousemove'])
    document.getElementById('free').addEventListener(t, e => window.seen.push(e.type));
</script>
"""


async def test_page_functions_of_the_pointer(tab: Tab, servers: Servers) -> None:
    async def point(sel: str) -> Any:
        node = await tab.element(sel)
        quads = (await tab.cdp.send("DOM.getContentQuads", {"objectId": node}, tab.session)
                 ) if sel != "#none" else {"quads": []}
        return await tab.on(sel, "clickPoint", quads["quads"], 0, 0)

    with trio.fail_after(20):
        await tab.goto(servers.put("/fn-pointer", POINTER_FUNCTIONS))
        free, under, far, none = [await point(s) for s in ("#free", "#under", "#far", "#none")]
        gone = await tab.element("#gone")
        await tab.page("document.getElementById('gone').remove()")
        detached = (await tab.cdp.send("Runtime.callFunctionOn", {
            "objectId": gone, "functionDeclaration": page_function("clickPoint").declaration,
            "arguments": [{"value": []}, {"value": 0}, {"value": 0}],
            "returnByValue": True}, tab.session))["result"]["value"]
        await tab.on("#free", "hoverByEvents")
        await tab.on("#free", "clickElement")
        seen = await tab.page("window.seen")
    assert free == {"x": 60, "y": 30}
    assert under == {"x": 60, "y": 120, "covered": {
        "tag": "div", "id": "", "className": "banner x", "role": "dialog",
        "name": "Cookie banner"}}
    assert far == {"offscreen": True}
    assert none == {"noBox": True}
    assert detached == {"detached": True}
    assert seen == ["mouseover", "mouseenter", "mousemove", "click"]


EDITOR_FUNCTIONS = """<!doctype html><title>Editor functions</title>
<div id="ed" contenteditable="true"><p id="first">one</p><p>two</p></div>
<input id="plain">
<div class="monaco-editor" style="position: relative; height: 60px">
  <textarea class="inputarea" style="width: 1px; height: 1px"></textarea>
  <div class="view-lines">
    <div class="view-line" style="position: absolute; top: 20px">second</div>
    <div class="view-line" style="position: absolute; top: 0px">first</div>
  </div>
</div>
"""


async def test_page_functions_of_editors(tab: Tab, servers: Servers) -> None:
    with trio.fail_after(20):
        await tab.goto(servers.put("/fn-editors", EDITOR_FUNCTIONS))
        platform = await tab.page("navigator.platform")
        probe = await tab.on("#first", "editorQuestion", "probe", False)
        plain = await tab.on("#plain", "editorQuestion", "probe", False)
        plain_text = await tab.on("#plain", "editorQuestion", "text", False)
        hidden = await tab.on(".monaco-editor textarea", "editorQuestion", "probe", False)
        monaco_text = await tab.on(".monaco-editor textarea", "editorQuestion", "text", False)
        held = await tab.on("body", "editorQuestion", "probe", True)
        nothing_focused = await tab.call("focusedElement")
        refused = await tab.on("#first", "editorQuestion", "focus", False)  # a <p>: no focus
        focused = await tab.on("#ed", "editorQuestion", "focus", False)
        kept = await tab.on("#first", "editorQuestion", "focus", False)
        active = await tab.page("document.activeElement.id")
        now = await tab._evaluate(page_function("focusedElement").call(), tab.ctx, False)
        surface = await tab.on(".monaco-editor textarea", "editorQuestion", "surface", True,
                               by_value=False)
        text = await tab.on("#ed", "editorQuestion", "text", False)
        world_platform = await tab.call("pagePlatform")
        await tab.page("document.body.contentEditable = 'true'")
        whole = await tab.on("#plain", "editorQuestion", "probe", True)
    assert probe == {"kind": "contenteditable", "hiddenInput": False, "cover": "none",
                     "platform": platform}
    assert plain is None and plain_text == {"none": True}
    assert hidden["kind"] == "monaco" and hidden["hiddenInput"] is True
    assert monaco_text == {"text": "first\nsecond"}
    assert held is None  # an element merely holding an editor is no click's editor
    assert nothing_focused is None
    assert (refused, focused, kept, active) == ("refused", "focused", "kept", "ed")
    assert now["subtype"] == "node" and now["description"] == "div#ed"
    assert surface["subtype"] == "node" and surface["description"] == "div.view-lines"
    assert text == {"text": "one\n\ntwo"}  # innerText: paragraphs apart
    assert world_platform == platform
    assert whole is None  # the whole document is no widget a click aims within


READING_FUNCTIONS = """<!doctype html><title>Reading functions</title>
<form id="f"><input type="password" id="pw" value="hunter2secret"><p>Visible words</p></form>
<p id="hidden" style="display: none">Hidden words</p>
<div id="box" style="height: 100px; overflow: auto"><div style="height: 1000px">
  <span id="inner">inside</span></div></div>
<div style="height: 3000px"></div>
"""


async def test_page_functions_of_reading_and_waiting(tab: Tab, servers: Servers) -> None:
    with trio.fail_after(20):
        url = servers.put("/fn-reading", READING_FUNCTIONS)
        await tab.goto(url)
        query = json.loads(await tab.call("queryMatches", "#f, #pw", 5, 200, 30))
        bad_query = json.loads(await tab.call("queryMatches", "[", 5, 200, 500))
        html = json.loads(await tab.call("documentText", None, "html", 100_000))
        text = json.loads(await tab.call("documentText", "#f", "text", 7))
        no_match = json.loads(await tab.call("documentText", "#nope", "text", 10))
        second = await tab._evaluate(page_function("selectorMatch").call("p", 1), tab.ctx,
                                     False)
        beyond = json.loads(await tab.call("selectorMatch", "p", 5))
        bad = json.loads(await tab.call("selectorMatch", "[", 0))
        waits = [await tab.call("waitCondition", mode, arg) for mode, arg in (
            ("selector", "#pw"), ("selector", "#hidden"), ("selector", "#nope"),
            ("text", "Visible words"), ("text", "Hidden words"), ("gone", "Visible words"),
            ("gone", "Hidden words"))]
        bad_wait = json.loads(await tab.call("waitCondition", "selector", "["))
        ready = await tab.call("readyState")
        identity = json.loads(await tab.call("pageIdentity"))
        inner = await tab.on("#inner", "scrollState", "by", 0, 50)
        page = json.loads(await tab.call("pageScrollState", "to", None, 200))
        read = json.loads(await tab.call("pageScrollState", "read", None, None))
        drawn = await tab.call("twoFramesDrawn", await_promise=True)
    assert query["count"] == 2 and query["matches"][1]["value"] is None
    form = query["matches"][0]
    assert "hunter2secret" not in json.dumps(query) and form["truncated"] is True
    assert form["outerHTML"] == '<form id="f"><input type="pass'
    assert "bad" in bad_query
    assert html["text"].startswith("<!DOCTYPE html>\n<html>") and "hunter2" not in html["text"]
    assert 'id="pw" value=""' in html["text"]
    assert text == {"text": "Visible", "length": len("Visible words")}
    assert no_match == {"none": True}
    assert second["subtype"] == "node" and second["description"] == "p#hidden"
    assert beyond == {"count": 2} and "bad" in bad
    assert waits == [True, False, False, True, False, False, True]
    assert "bad" in bad_wait
    assert ready == "complete" and identity == [url, "Reading functions"]
    assert inner == {"page": False, "x": 0, "y": 50, "maxX": 0, "maxY": 900,
                     "vw": inner["vw"], "vh": 100}
    assert page["page"] is True and page["y"] == 200 and read["y"] == 200
    assert page["maxY"] > 3000 - page["vh"]
    assert drawn is True


async def test_page_functions_of_the_main_world(tab: Tab, servers: Servers) -> None:
    """boundedEval (the /eval size bound) and removeUnheldApis (egress containment) run in
    the page's own world."""
    with trio.fail_after(20):
        await tab.goto(servers.put("/fn-main", "<!doctype html><title>Main</title>"))
        fits = await tab.call("boundedEval", "var kept = 'é€😀'; kept", 100, "mk", False,
                              main=True)
        kept = await tab.page("kept")  # a var of the script became a global, as before
        too_big = await tab.call("boundedEval", "'x'.repeat(500)", 100, "mk", False,
                                 main=True)
        awaited = await tab.call("boundedEval", "Promise.resolve([1, 2])", 100, "mk", True,
                                 main=True, await_promise=True)
        before = await tab.page("typeof SharedWorker + ' ' + typeof RTCPeerConnection")
        await tab.call("removeUnheldApis", main=True)
        after = await tab.page("typeof SharedWorker + ' ' + typeof RTCPeerConnection + ' '"
                               " + ('serviceWorker' in navigator)")
    assert fits == "é€😀" and kept == "é€😀"
    assert too_big == {"mk": 500}
    assert awaited == [1, 2]
    assert before == "function function"
    assert after == "undefined undefined false"


SETTLING_FUNCTIONS = """<!doctype html><title>Settling functions</title>
<style>html { overflow-y: scroll } ::-webkit-scrollbar { width: 12px }</style>
<p id="p">start</p>
"""


async def test_page_functions_of_settling_effects_and_capture(tab: Tab,
                                                              servers: Servers) -> None:
    """domQuiet (settle.py), taskQueueTurned (effects.py), scrollbarGutter (capture.py)
    in the browserd world; pageInfo (page.py) in the page's own."""
    with trio.fail_after(20):
        url = servers.put("/fn-settling", SETTLING_FUNCTIONS)
        await tab.goto(url)
        info = await tab.call("pageInfo", main=True)
        gutter = await tab.call("scrollbarGutter")
        await tab.page("document.documentElement.style.overflow = 'hidden'")
        no_gutter = await tab.call("scrollbarGutter")
        turned = await tab._evaluate(page_function("taskQueueTurned").call(), tab.ctx, True,
                                     await_promise=True)
        # The DOM changes every 20 ms, 10 times: quiet for 400 ms only after the last.
        await tab.page("window.changes = 0; const t = setInterval(() => {"
                       " document.getElementById('p').textContent = ++window.changes;"
                       " if (window.changes === 10) clearInterval(t); }, 20)")
        quiet = await tab.call("domQuiet", 400, 0, await_promise=True)
        changes = await tab.page("window.changes")
        observers = [await tab.world("typeof globalThis.__browserdQuiet"),
                     await tab.page("typeof globalThis.__browserdQuiet")]
        # A young document: quiet only once its load event is `youngMs` old.
        since_load = ("performance.now() - "
                      "performance.getEntriesByType('navigation')[0].loadEventEnd")
        young_ms = int(await tab.world(since_load)) + 300
        young = await tab.call("domQuiet", 10, young_ms, await_promise=True)
        aged = await tab.world(since_load)
        # A response the page draws from (fetch) counts as a change; an image does not:
        # quiet 400 ms after the fetch, but not 400 ms after the image (the DOM's change
        # just before it, 300 ms earlier, decides).
        loaded = ("(url, how) => new Promise(done => { if (how === 'fetch') fetch(url)"
                  ".then(r => r.text()).then(() => done(performance.now())); else {"
                  " const img = new Image(); img.onload = img.onerror = () =>"
                  " done(performance.now()); img.src = url; } })")
        ends: dict[str, tuple[float, float]] = {}
        for how in ("img", "fetch"):
            await tab.page(f"document.getElementById('p').textContent = '{how}'")
            end = (await tab._evaluate(f"({loaded})('{url}?slow=300&{how}', '{how}')", None, True,
                                       await_promise=True))["value"]
            assert await tab.call("domQuiet", 400, 0, await_promise=True) is True
            ends[how] = (end, await tab.world("performance.now()"))
    assert info == {"url": url, "title": "Settling functions", "status": 200}
    assert gutter == 12 and no_gutter == 0
    assert turned == {"type": "undefined"}
    assert quiet is True and changes == 10
    assert observers == ["object", "undefined"]  # kept in browserd's world only
    assert young is True and aged >= young_ms
    image_end, image_quiet = ends["img"]
    fetch_end, fetch_quiet = ends["fetch"]
    assert image_quiet < image_end + 400, ends  # the image did not hold it
    assert fetch_quiet >= fetch_end + 400, ends  # the fetch did
