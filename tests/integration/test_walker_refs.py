"""The snapshot walker's refs and its other reads, against a real headless Chromium:
refs stay stable and are never reused, resolving one reports it detached, changed or
unknown, the walker is isolated from the page and installs once, find-by-text and
describe, the read view, and the DOM snapshot sharing the tree's refs.

What a snapshot shows: test_walker.py. The fixtures: _walker_tab.py.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from browserd.snapshot import (
    DESCRIBE_FUNCTION,
    WALKER_SOURCE,
    SnapshotOptions,
    decode_reply,
    dom_snapshot_call,
    find_by_text_call,
    read_view_call,
)
from tests.integration._walker_tab import (
    CONTROLS,
    HIDDEN,
    SIGN_IN,
    Servers,
    Tab,
    browser_url,
    by_name,
    servers,
    tab,
)

__all__ = ["browser_url", "servers", "tab"]

pytestmark = pytest.mark.chromium


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


