"""What the in-page snapshot walker shows, against a real headless Chromium: roles,
names and states of a page's elements, what is hidden or lifted, shadow DOM and
iframes (same-origin inline, cross-origin reported and spliced), the interactive
list, truncation, scoped snapshots, a page of ten thousand elements; and the pure
helpers that build the walker's call and cut its text.

Refs, resolving them and the walker's other reads: test_walker_refs.py; the page
functions of ``tabs/js/``: test_walker_pagejs.py. The fixtures: _walker_tab.py.
"""

from __future__ import annotations

import json
import time

import pytest
import trio

from browserd.snapshot import SnapshotOptions, cap_text, snapshot_call, splice_frame_text
from tests.integration._walker_tab import (
    CONTROLS,
    HIDDEN,
    SIGN_IN,
    Servers,
    Tab,
    browser_url,
    by_name,
    parse,
    servers,
    stripped_lines,
    tab,
)

__all__ = ["browser_url", "servers", "tab"]

pytestmark = pytest.mark.chromium


# ------------------------------------------------------------------ pages

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

