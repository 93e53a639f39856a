"""/snapshot through the HTTP API: text and refs, scoping, frames, staleness, size."""

from __future__ import annotations

import re
import time
from typing import Any

import httpx
import pytest
import trio

from tests.conftest import PageServer, add_route
from tests.integration.helpers import html_route, navigate

pytestmark = pytest.mark.chromium

REF_LINE = re.compile(r"^( *)\[(e\d+)\] (.*)$")


def big_page(elements: int) -> str:
    """A page with ``elements`` elements in rows of five (div, span, a, button, input)."""
    rows = "".join(
        f'<div class="row"><span>Item {i}</span> <a href="#r{i}">Link {i}</a> '
        f'<button type="button">Button {i}</button> <input aria-label="Field {i}"></div>'
        for i in range(elements // 5)
    )
    return (f"<!doctype html><html><head><title>Big {elements}</title></head>"
            f"<body>{rows}</body></html>")


async def snap(api: httpx.AsyncClient, tab: str, **fields: Any) -> dict[str, Any]:
    """A snapshot with its ``nodes`` (asked for unless ``nodes`` is given)."""
    r = await api.post("/snapshot", json={"targetId": tab, "nodes": True, **fields})
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def lines_of(text: str) -> list[tuple[int, str, str]]:
    """(indent, ref, rest) for every ref'd line."""
    out = []
    for line in text.splitlines():
        m = REF_LINE.match(line)
        if m:
            out.append((len(m.group(1)), m.group(2), m.group(3)))
    return out


def ref_of(text: str, rest: str) -> str:
    hits = [ref for _, ref, r in lines_of(text) if r == rest]
    assert len(hits) == 1, (rest, text)
    return hits[0]


def ref_number(ref: str) -> int:
    return int(ref[1:])


async def test_sign_in_form(api: httpx.AsyncClient, tab: str, pages: PageServer) -> None:
    with trio.fail_after(30):
        await navigate(api, tab, pages.url("/snap_form.html"))
        r = await api.post("/snapshot", json={"targetId": tab, "nodes": True})
        assert r.status_code == 200, r.text
        assert "hunter2-secret" not in r.text
        body = r.json()
        assert re.fullmatch(r"s\d+", body["snapshotId"])
        assert body["targetId"] == tab
        assert body["url"] == pages.url("/snap_form.html")
        assert body["title"] == "Sign in"
        text = body["text"]
        rests = [(indent, rest) for indent, _, rest in lines_of(text)]
        assert rests[0] == (0, 'RootWebArea "Sign in"')
        for expected in ['heading "Sign in" level=1', 'textbox "Email" value="ada@example.test"',
                         'textbox "Password" value="••••"', 'checkbox "Remember me" checked',
                         'button "Continue"', 'paragraph']:
            assert (2, expected) in rests, text
        assert (4, 'link "Forgot password?" → /snap_help.html') in rests, text
        assert 'text "Trouble signing in?"' in text
        assert "Hidden button" not in text
        text_refs = [ref for _, ref, _ in lines_of(text)]
        assert [n["ref"] for n in body["nodes"]] == text_refs
        email = next(n for n in body["nodes"] if n["name"] == "Email")
        assert email["role"] == "textbox" and email["value"] == "ada@example.test"
        assert email["depth"] == 1
        assert body["truncated"] is False
        assert body["stats"]["refs"] == len(body["nodes"])
        assert body["stats"]["chars"] == len(text)


async def test_refs_stable_and_never_reused(api: httpx.AsyncClient, tab: str,
                                            pages: PageServer) -> None:
    with trio.fail_after(30):
        await navigate(api, tab, pages.url("/snap_form.html"))
        first = await snap(api, tab)
        second = await snap(api, tab)
        assert first["text"] == second["text"]
        assert first["snapshotId"] != second["snapshotId"]
        assert second["stats"]["newRefs"] == 0
        # A scoped snapshot of the same document reuses the same refs.
        scoped = await snap(api, tab, root="#login")
        continue_ref = ref_of(first["text"], 'button "Continue"')
        assert ref_of(scoped["text"], 'button "Continue"') == continue_ref
        highest = max(ref_number(n["ref"]) for n in second["nodes"])
        await navigate(api, tab, pages.url("/snap_help.html"))
        after = await snap(api, tab)
        assert 'heading "Help" level=1' in after["text"]
        assert min(ref_number(n["ref"]) for n in after["nodes"]) > highest
        # Back to the first page: a new document, so new refs again.
        await navigate(api, tab, pages.url("/snap_form.html"))
        again = await snap(api, tab)
        assert ref_of(again["text"], 'button "Continue"') != continue_ref


async def test_get_takes_query_parameters(api: httpx.AsyncClient, tab: str,
                                          pages: PageServer) -> None:
    with trio.fail_after(30):
        await navigate(api, tab, pages.url("/snap_form.html"))
        posted = await snap(api, tab, interactive=True)
        r = await api.get("/snapshot", params={"targetId": tab, "interactive": "true"})
        assert r.status_code == 200, r.text
        assert r.json()["text"] == posted["text"]
        r = await api.get("/snapshot", params={"targetId": tab, "format": "nope"})
        assert r.status_code == 400
        r = await api.get("/snapshot", params={"targetId": tab, "bogus": "1"})
        assert r.status_code == 400


async def test_interactive_lists_every_control(api: httpx.AsyncClient, tab: str,
                                               pages: PageServer) -> None:
    with trio.fail_after(30):
        await navigate(api, tab, pages.url("/snap_form.html"))
        body = await snap(api, tab, interactive=True)
        rests = [rest for _, _, rest in lines_of(body["text"])]
        assert rests == ['textbox "Email" value="ada@example.test"',
                         'textbox "Password" value="••••"',
                         'checkbox "Remember me" checked', 'button "Continue"',
                         'link "Forgot password?" → /snap_help.html']
        assert "heading" not in body["text"] and "text " not in body["text"]


async def test_max_chars_and_limit_truncate(api: httpx.AsyncClient, tab: str,
                                            pages: PageServer) -> None:
    with trio.fail_after(30):
        await navigate(api, tab, pages.url("/snap_form.html"))
        full = await snap(api, tab)
        cut = await snap(api, tab, maxChars=90)
        assert cut["truncated"] is True
        assert 0 < len(cut["text"]) <= 90
        assert full["text"].startswith(cut["text"])
        assert [n["ref"] for n in cut["nodes"]] == [ref for _, ref, _ in lines_of(cut["text"])]
        limited = await snap(api, tab, limit=2)
        assert limited["truncated"] is True
        assert len(limited["nodes"]) == 2
        unlimited = await snap(api, tab, maxChars=0)
        assert unlimited["text"] == full["text"] and unlimited["truncated"] is False
        assert "hint" not in unlimited and "root" in cut["hint"] and "/find" in cut["hint"]
        r = await api.post("/snapshot", json={"targetId": tab, "maxChars": -1})
        assert r.status_code == 400


async def test_open_shadow_dom(api: httpx.AsyncClient, tab: str, pages: PageServer) -> None:
    with trio.fail_after(30):
        await navigate(api, tab, pages.url("/snap_shadow.html"))
        body = await snap(api, tab)
        rests = [rest for _, _, rest in lines_of(body["text"])]
        assert 'heading "Outside" level=1' in rests
        assert 'heading "Card title" level=2' in rests
        assert 'button "Shadow button"' in rests
        shadow_ref = ref_of(body["text"], 'button "Shadow button"')
        scoped = await snap(api, tab, root=shadow_ref)
        assert lines_of(scoped["text"]) == [(0, shadow_ref, 'button "Shadow button"')]


async def test_same_origin_iframe_inline(api: httpx.AsyncClient, tab: str,
                                         pages: PageServer) -> None:
    with trio.fail_after(30):
        await navigate(api, tab, pages.url("/snap_frames.html"))
        body = await snap(api, tab)
        found = {rest: indent for indent, _, rest in lines_of(body["text"])}
        assert found['iframe "Same origin frame"'] == 2
        assert found['button "Inner button"'] == 4
        assert found['link "Frame link" → /snap_help.html'] == 4
        assert found['button "After frame"'] == 2
        inner = ref_of(body["text"], 'button "Inner button"')
        scoped = await snap(api, tab, root=inner)
        assert lines_of(scoped["text"]) == [(0, inner, 'button "Inner button"')]


async def test_cross_origin_iframe_spliced(api: httpx.AsyncClient, tab: str, pages: PageServer,
                                           other_origin: PageServer) -> None:
    child_url = other_origin.url("/snap_child.html")
    add_route("/snap_xo.html", html_route(
        "<!doctype html><html><head><title>Cross</title></head><body><h1>Host page</h1>"
        f'<iframe title="Other site" src="{child_url}" width="400" height="200"></iframe>'
        '<iframe title="Sandboxed" sandbox src="/snap_child.html"></iframe>'
        "<button>Host button</button></body></html>"))
    with trio.fail_after(30):
        await navigate(api, tab, pages.url("/snap_xo.html"))
        body = await snap(api, tab)
        text = body["text"]
        lines = lines_of(text)
        rests = [rest for _, _, rest in lines]
        assert rests.count('RootWebArea "Child frame"') == 2, text
        assert rests.count('button "Inner button"') == 2, text
        xo_at = rests.index('iframe "Other site"')
        assert lines[xo_at][0] == 2
        assert lines[xo_at + 1][0] == 4 and lines[xo_at + 1][2] == 'RootWebArea "Child frame"'
        assert lines[xo_at + 3][0] == 6 and lines[xo_at + 3][2] == 'button "Inner button"'
        assert body["stats"]["frames"] == 2
        assert [n["ref"] for n in body["nodes"]] == [ref for _, ref, _ in lines]
        assert len(set(n["ref"] for n in body["nodes"])) == len(body["nodes"])
        # A ref inside the out-of-process frame resolves in that frame's session.
        inner = lines[xo_at + 3][1]
        scoped = await snap(api, tab, root=inner)
        assert lines_of(scoped["text"]) == [(0, inner, 'button "Inner button"')]
        # Scoping to the iframe element itself still shows its document.
        framed = await snap(api, tab, root=lines[xo_at][1])
        assert 'button "Inner button"' in framed["text"]
        # Interactive mode reaches into both frames.
        interactive = await snap(api, tab, interactive=True)
        rests = [rest for _, _, rest in lines_of(interactive["text"])]
        assert rests.count('button "Inner button"') == 2
        assert 'button "Host button"' in rests


async def stale(api: httpx.AsyncClient, tab: str, ref: str) -> dict[str, Any]:
    r = await api.post("/snapshot", json={"targetId": tab, "root": ref})
    assert r.status_code == 409, r.text
    body: dict[str, Any] = r.json()
    assert body["code"] == "STALE_REF"
    assert "snapshot" in body["hint"]
    return body


async def test_stale_refs(api: httpx.AsyncClient, tab: str, pages: PageServer) -> None:
    with trio.fail_after(30):
        await navigate(api, tab, pages.url("/snap_dynamic.html"))
        body = await snap(api, tab)
        remove = ref_of(body["text"], 'button "Remove me"')
        relabel = ref_of(body["text"], 'button "Label A"')
        steady = ref_of(body["text"], 'button "Steady"')
        r = await api.post("/eval", json={
            "targetId": tab,
            "js": "document.getElementById('rm').click(); "
                  "document.getElementById('relabel').click()"})
        assert r.status_code == 200, r.text
        assert (await stale(api, tab, remove))["reason"] == "detached"
        changed = await stale(api, tab, relabel)
        assert changed["reason"] == "changed"
        assert changed["was"] == {"role": "button", "name": "Label A"}
        assert changed["now"] == {"role": "button", "name": "Label B"}
        # Untouched elements keep working.
        assert lines_of((await snap(api, tab, root=steady))["text"])[0][1] == steady
        await navigate(api, tab, pages.url("/snap_help.html"))
        assert (await stale(api, tab, steady))["reason"] == "navigated"
        # After a fresh snapshot of the new page the old refs stay stale.
        await snap(api, tab)
        gone = await stale(api, tab, steady)
        assert gone["reason"] == "navigated" and "has navigated since" in gone["error"], gone
        r = await api.post("/snapshot", json={"targetId": tab, "root": "e999999"})
        assert r.status_code == 404
        assert r.json()["code"] == "REF_NOT_FOUND"


async def test_root_selector(api: httpx.AsyncClient, tab: str, pages: PageServer) -> None:
    with trio.fail_after(30):
        await navigate(api, tab, pages.url("/snap_form.html"))
        body = await snap(api, tab, root="#login")
        assert 'button "Continue"' in body["text"]
        assert "heading" not in body["text"] and "Forgot" not in body["text"]
        r = await api.post("/snapshot", json={"targetId": tab, "root": "#nothing-here"})
        assert r.status_code == 404 and r.json()["code"] == "NO_MATCH"
        r = await api.post("/snapshot", json={"targetId": tab, "root": "div[["})
        assert r.status_code == 400 and r.json()["code"] == "BAD_REQUEST"


async def test_read_format(api: httpx.AsyncClient, tab: str, pages: PageServer) -> None:
    with trio.fail_after(30):
        await navigate(api, tab, pages.url("/snap_form.html"))
        body = await snap(api, tab, format="read")
        assert body["title"] == "Sign in"
        assert body["url"] == pages.url("/snap_form.html")
        assert "Trouble signing in?" in body["text"]
        assert "Hidden button" not in body["text"]
        reading, _, refs_list = body["text"].partition("\n\nInteractive:\n")
        assert 'button "Continue"' in refs_list and "Trouble signing in?" in reading
        assert [n["ref"] for n in body["nodes"]] == [r for _, r, _ in lines_of(refs_list)]
        assert all(indent == 0 for indent, _, _ in lines_of(refs_list))


async def test_dom_snapshot_format(api: httpx.AsyncClient, tab: str, pages: PageServer) -> None:
    with trio.fail_after(30):
        await navigate(api, tab, pages.url("/snap_form.html"))
        aria = await snap(api, tab)
        body = await snap(api, tab, format="domSnapshot")
        nodes = body["nodes"]
        assert nodes[0]["tag"] == "html" and nodes[0]["parentRef"] is None
        by_ref = {n["ref"]: n for n in nodes}
        button = next(n for n in nodes if n.get("id") == "go")
        assert button["tag"] == "button" and button["text"] == "Continue"
        assert by_ref[button["parentRef"]]["id"] == "login"
        # The same element keeps its ref across formats of one document.
        assert button["ref"] == ref_of(aria["text"], 'button "Continue"')
        assert "hunter2-secret" not in str(nodes)
        small = await snap(api, tab, format="domSnapshot", limit=3)
        assert len(small["nodes"]) == 3 and small["truncated"] is True


async def test_dialog_blocks_snapshot_but_not_console(api: httpx.AsyncClient, tab: str,
                                                      pages: PageServer) -> None:
    with trio.fail_after(30):
        await navigate(api, tab, pages.url("/snap_form.html"))
        r = await api.post("/eval", json={"targetId": tab,
                                          "js": "setTimeout(() => alert('hello'), 50); 1"})
        assert r.status_code == 200, r.text
        while True:
            r = await api.post("/snapshot", json={"targetId": tab})
            if r.status_code == 409:
                break
            assert r.status_code == 200, r.text
            await trio.sleep(0.05)
        assert r.json()["code"] == "DIALOG_OPEN"
        assert r.json()["dialog"]["message"] == "hello"
        r = await api.get("/console", params={"targetId": tab})
        assert r.status_code == 200, r.text
        assert any(m["text"] == "form ready" for m in r.json()["messages"])


async def timed_snapshot(api: httpx.AsyncClient, tab: str, url: str
                         ) -> tuple[float, dict[str, Any]]:
    await navigate(api, tab, url)
    started = time.perf_counter()
    body = await snap(api, tab, maxChars=0)
    return time.perf_counter() - started, body


async def test_large_pages(api: httpx.AsyncClient, tab: str, pages: PageServer) -> None:
    add_route("/snap_big_1k.html", html_route(big_page(1_000)))
    add_route("/snap_big_10k.html", html_route(big_page(10_000)))
    with trio.fail_after(60):
        small_s, small = await timed_snapshot(api, tab, pages.url("/snap_big_1k.html"))
        assert small["stats"]["refs"] == 1 + 3 * 200  # root + link, button, field per row
        # 10,000 elements complete well within the 30 s default deadline.
        big_s, big = await timed_snapshot(api, tab, pages.url("/snap_big_10k.html"))
        assert big["truncated"] is False
        assert big["stats"]["refs"] == 1 + 3 * 2000
        assert 'button "Button 1999"' in big["text"]
        again_started = time.perf_counter()
        again = await snap(api, tab, maxChars=0)
        again_s = time.perf_counter() - again_started
        assert again["stats"]["newRefs"] == 0
        print(f"\nsnapshot over HTTP: 1k elements {small_s * 1000:.0f} ms, "
              f"10k elements {big_s * 1000:.0f} ms (again {again_s * 1000:.0f} ms; "
              f"walker {big['stats']['ms']} ms, {len(big['text'])} chars)")
