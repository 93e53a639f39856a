"""Pages an agent can read in one go: settling, lean answers, faithful text, roles, /find.

Real Chromium through the HTTP API. Slow documents are streamed by routes on
the test page server (a body sent in chunks over ~1.5 s, with a script that
answers late); the documentation-like page is tests/pages/read_docs.html.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import httpx
import pytest
import trio

from tests.conftest import PageServer, add_route
from tests.integration.helpers import html_route, navigate

pytestmark = pytest.mark.chromium

REF_LINE = re.compile(r'^( *)\[(e\d+)\] (\S+)(?: "((?:\\"|[^"])*)")?')
SLOW_BUTTONS = 60


def slow_page(chunks: int = 6, pause_s: float = 0.25) -> Any:
    """A handler streaming a page body in ``chunks`` (one late script in the middle)."""
    per = SLOW_BUTTONS // chunks

    def handler(req: Any) -> None:
        req.send_response(200)
        req.send_header("Content-Type", "text/html; charset=utf-8")
        req.send_header("Cache-Control", "no-store")
        req.end_headers()
        req.wfile.write(b"<!doctype html><html><head><title>Slow</title></head>"
                        b"<body><h1>Slow page</h1>")
        req.wfile.flush()
        for chunk in range(chunks):
            time.sleep(pause_s)
            body = "".join(f"<button>Button {chunk * per + i}</button>" for i in range(per))
            if chunk == chunks // 2:
                body += '<script src="/read_late.js"></script>'
            req.wfile.write(body.encode())
            req.wfile.flush()
        req.wfile.write(b'<p id="end">The end</p></body></html>')

    return handler


def late_script(req: Any) -> None:
    time.sleep(0.5)
    data = b"document.title = 'Slow page';"
    req.send_response(200)
    req.send_header("Content-Type", "text/javascript")
    req.send_header("Content-Length", str(len(data)))
    req.send_header("Cache-Control", "no-store")
    req.end_headers()
    req.wfile.write(data)


def link_index(links: int = 2000) -> str:
    """A long index: a heading every 100 links (the matches' context)."""
    parts = ["<!doctype html><html><head><title>Index</title></head><body>"
             "<h1>Library index</h1>"]
    for i in range(links):
        if i % 100 == 0:
            parts.append(f"<h2>Section {i // 100}</h2><ul>")
        parts.append(f'<li><a href="/read_target/{i}">Link {i}</a> — module number {i}</li>')
        if i % 100 == 99:
            parts.append("</ul>")
    parts.append("</body></html>")
    return "".join(parts)


@pytest.fixture(scope="module", autouse=True)
def routes() -> None:
    add_route("/read_slow.html", slow_page())
    add_route("/read_late.js", late_script)
    add_route("/read_start.html", html_route(
        '<!doctype html><title>Start</title><h1>Start</h1>'
        '<a href="/read_slow.html">Go slow</a> <a href="/read_slow.html?load">Go slow (load)</a>'
        ' <a href="/read_slow.html?commit">Go slow (commit)</a>'))
    add_route("/read_index.html", html_route(link_index()))


async def snap(api: httpx.AsyncClient, tab: str, **fields: Any) -> dict[str, Any]:
    r = await api.post("/snapshot", json={"targetId": tab, **fields})
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


async def find(api: httpx.AsyncClient, tab: str, **fields: Any) -> dict[str, Any]:
    r = await api.post("/find", json={"targetId": tab, **fields})
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def lines(text: str) -> list[tuple[int, str, str, str | None]]:
    """(depth, ref, role, name) of every ref'd line; names unquoted (only \\" is escaped)."""
    out = []
    for line in text.splitlines():
        m = REF_LINE.match(line)
        if m:
            name = m.group(4).replace('\\"', '"') if m.group(4) is not None else None
            out.append((len(m.group(1)) // 2, m.group(2), m.group(3), name))
    return out


def count_buttons(text: str) -> int:
    return sum(1 for _, _, role, name in lines(text)
               if role == "button" and (name or "").startswith("Button "))


# ---------------------------------------------------------------- settling

async def test_click_to_a_streaming_page_answers_after_domcontentloaded(
        api: httpx.AsyncClient, tab: str, pages: PageServer) -> None:
    with trio.fail_after(60):
        for label, wait_until, want in (("Go slow", None, ("domcontentloaded", "load")),
                                        ("Go slow (load)", "load", ("load",))):
            await navigate(api, tab, pages.url("/read_start.html"))
            link = await find(api, tab, role="link", name=label, exact=True)
            assert link["count"] == 1, link
            body: dict[str, Any] = {"targetId": tab, "ref": link["matches"][0]["ref"]}
            if wait_until:
                body["waitUntil"] = wait_until
            r = await api.post("/click", json=body)
            assert r.status_code == 200, r.text
            effects = r.json()["effects"]
            assert effects["navigated"].startswith(pages.url("/read_slow.html")), effects
            assert effects["loadState"] in want, effects
            # settleMs 0: this snapshot does not wait; the click already did.
            after = await snap(api, tab, settleMs=0)
            assert after["loadState"] in want, after
            assert count_buttons(after["text"]) == SLOW_BUTTONS, after["text"]
            assert 'text "The end"' in after["text"]
            if wait_until == "load":
                assert after["title"] == "Slow page"  # the late script ran


async def test_click_with_wait_until_commit_does_not_wait(
        api: httpx.AsyncClient, tab: str, pages: PageServer) -> None:
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/read_start.html"))
        link = await find(api, tab, role="link", name="Go slow (commit)")
        r = await api.post("/click", json={"targetId": tab, "ref": link["matches"][0]["ref"],
                                           "waitUntil": "commit"})
        assert r.status_code == 200, r.text
        effects = r.json()["effects"]
        assert effects["navigated"].endswith("/read_slow.html?commit")
        assert effects["loadState"] in ("loading", "domcontentloaded", "load")
        # The next read settles by itself: complete, and it says so.
        after = await snap(api, tab)
        assert after["loadState"] in ("domcontentloaded", "load"), after
        assert count_buttons(after["text"]) == SLOW_BUTTONS


async def test_act_step_that_navigates_settles(api: httpx.AsyncClient, tab: str,
                                               pages: PageServer) -> None:
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/read_start.html"))
        r = await api.post("/act", json={"targetId": tab, "actions": [
            {"kind": "click", "text": "Go slow (load)", "waitUntil": "load"},
            {"kind": "press", "key": "Tab"}]})
        assert r.status_code == 200, r.text
        steps = r.json()["steps"]
        assert [s["ok"] for s in steps] == [True, True], steps
        assert steps[0]["result"]["effects"]["loadState"] == "load"
        assert "loadState" not in steps[1]["result"]["effects"]  # it did not navigate
        r = await api.post("/act", json={"targetId": tab, "actions": [
            {"kind": "click", "text": "Go slow", "waitUntil": "sometime"}]})
        assert r.status_code == 400


def gated_page(gate: threading.Event) -> Any:
    """A handler sending half the buttons, then the rest only once ``gate`` is set (≤ 60 s)."""
    half = SLOW_BUTTONS // 2

    def handler(req: Any) -> None:
        req.send_response(200)
        req.send_header("Content-Type", "text/html; charset=utf-8")
        req.send_header("Cache-Control", "no-store")
        req.end_headers()
        first = "".join(f"<button>Button {i}</button>" for i in range(half))
        req.wfile.write(b"<!doctype html><html><head><title>Gated</title></head>"
                        b"<body><h1>Gated page</h1>" + first.encode())
        req.wfile.flush()
        gate.wait(60)
        rest = "".join(f"<button>Button {i}</button>" for i in range(half, SLOW_BUTTONS))
        req.wfile.write(rest.encode() + b'<p id="end">The end</p></body></html>')
        req.wfile.flush()

    return handler


async def test_reads_settle_or_say_loading(api: httpx.AsyncClient, tab: str,
                                          pages: PageServer) -> None:
    # The document's end is held back by the server until the partial reads are
    # done: "loading" is then certain, not a race against a timed stream.
    gate = threading.Event()
    add_route("/read_gated.html", gated_page(gate))
    try:
        with trio.fail_after(60):
            r = await api.post("/navigate", json={"targetId": tab, "waitUntil": "commit",
                                                  "url": pages.url("/read_gated.html")})
            assert r.status_code == 200, r.text
            assert r.json()["loadState"] == "loading"
            # No settling asked for: a partial page, and the answer says so.
            partial = await snap(api, tab, settleMs=0)
            assert partial["loadState"] == "loading"
            assert count_buttons(partial["text"]) < SLOW_BUTTONS
            found = await find(api, tab, role="button", settleMs=0)
            assert found["loadState"] == "loading"
            # The default settleMs (5 s) covers the rest, sent now.
            gate.set()
            full = await snap(api, tab)
            assert full["loadState"] in ("domcontentloaded", "load")
            assert count_buttons(full["text"]) == SLOW_BUTTONS
            for path, params in (("/query", {"selector": "button"}),
                                 ("/dom", {"format": "text"})):
                r = await api.get(path, params={"targetId": tab, **params})
                assert r.status_code == 200, r.text
                assert r.json()["loadState"] in ("domcontentloaded", "load")
    finally:
        gate.set()


# ---------------------------------------------------------------- lean answers

async def test_snapshot_answer_is_lean(api: httpx.AsyncClient, tab: str,
                                      pages: PageServer) -> None:
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/read_index.html"))
        body = await snap(api, tab)
        assert set(body) == {"snapshotId", "targetId", "url", "title", "format", "loadState",
                             "settled", "text", "truncated", "stats", "hint", "untrusted"}
        assert body["truncated"] is True and len(body["text"]) <= 20_000
        for word in ("root", "/find", "maxChars"):
            assert word in body["hint"]
        whole = await snap(api, tab, maxChars=0, nodes=True)
        assert whole["truncated"] is False and "hint" not in whole
        assert len(whole["text"]) > 20_000
        assert [ref for _, ref, _, _ in lines(whole["text"])] == [n["ref"] for n in whole["nodes"]]
        print(f"\n2,000-link index: aria {len(whole['text'])} chars whole, "
              f"{len(body['text'])} by default; walk {whole['stats']['ms']} ms")


async def test_read_is_small_on_large_pages(api: httpx.AsyncClient, tab: str,
                                           pages: PageServer) -> None:
    with trio.fail_after(60):
        for path in ("/read_index.html", "/read_docs.html"):
            await navigate(api, tab, pages.url(path))
            r = await api.post("/snapshot", json={"targetId": tab, "format": "read"})
            assert r.status_code == 200, r.text
            body = r.json()
            assert len(body["text"]) <= 12_000, (path, len(body["text"]))
            assert body["loadState"] in ("domcontentloaded", "load")
            reading, _, refs = body["text"].partition("\n\nInteractive:\n")
            assert refs, body["text"][-500:]
            assert all(depth == 0 for depth, _, _, _ in lines(refs))
            print(f"\nread {path}: {len(body['text'])} chars of text ({len(reading)} reading), "
                  f"{len(r.text)} of JSON")
        assert "\n# psql\n" in reading
        assert "## Meta-Commands" in reading


# ---------------------------------------------------------------- text and roles

async def test_every_element_shown_has_a_role_and_a_ref(api: httpx.AsyncClient, tab: str,
                                                        pages: PageServer) -> None:
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/read_docs.html"))
        body = await snap(api, tab, maxChars=0)
        roles = {role for _, _, role, _ in lines(body["text"])}
        assert {"paragraph", "code", "list", "term", "definition", "figure", "img", "table",
                "row", "cell", "columnheader", "listitem", "heading", "navigation",
                "main"} <= roles, roles
        terms = [(d, ref, name) for d, ref, role, name in lines(body["text"]) if role == "term"]
        definitions = [d for d, _, role, _ in lines(body["text"]) if role == "definition"]
        assert len(terms) == len(definitions) == 40
        assert terms[0][2] == "\\dcmd0 [ pattern ]"
        # A code block keeps its lines and indentation, by ref, and screenshots by ref.
        code_ref = next(ref for _, ref, role, _ in lines(body["text"]) if role == "code")
        block = await snap(api, tab, root=code_ref)
        assert block["text"].splitlines()[1:] == [
            "  text \"$ psql -c '\\dconfig[+] [ pattern ]'\"",
            '  text "    \\d \\"quoted table\\""',
            '  text "    tabbed line"',
        ], block["text"]
        r = await api.post("/screenshot", json={"targetId": tab, "ref": code_ref})
        assert r.status_code == 200, r.text
        assert r.json()["width"] > 0 and r.json()["height"] > 0


async def test_line_chars_and_backslashes(api: httpx.AsyncClient, tab: str,
                                          pages: PageServer) -> None:
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/read_docs.html"))
        whole_text = await api.post("/eval", json={
            "targetId": tab, "js": "document.getElementById('long').textContent"})
        long = re.sub(r"\s+", " ", whole_text.json()["result"]).strip()
        assert len(long) > 500
        para = await snap(api, tab, root="#long")
        shown = para["text"].splitlines()[1].strip()
        assert shown == f'text "{long[:300]}…"'
        whole = await snap(api, tab, root="#long", lineChars=0)
        assert whole["text"].splitlines()[1].strip() == f'text "{long}"'
        short = await snap(api, tab, root="#long", lineChars=40)
        assert short["text"].splitlines()[1].strip() == f'text "{long[:40]}…"'
        quoted = await snap(api, tab, root="#quoted")
        assert quoted["text"].splitlines()[1].strip() == (
            'text "Type \\"help\\" for help; a backslash starts a meta-command: '
            '\\dconfig[+] [ pattern ]"')
        assert "\\\\" not in quoted["text"]
        # Long names are kept up to lineChars too, and such refs still resolve.
        r = await api.post("/eval", json={"targetId": tab, "js": (
            "const b = document.createElement('button'); b.id = 'longbtn';"
            "b.textContent = 'Press ' + 'x'.repeat(400); document.querySelector('main')"
            ".append(b); 1")})
        assert r.status_code == 200, r.text
        named = await snap(api, tab, root="#longbtn", lineChars=0)
        _, ref, role, name = lines(named["text"])[0]
        assert role == "button" and name == "Press " + "x" * 400
        r = await api.post("/click", json={"targetId": tab, "ref": ref})
        assert r.status_code == 200, r.text
        # Names shown shorter than usual identify their element just the same.
        cut = await snap(api, tab, root="#longbtn", lineChars=20)
        _, cut_ref, _, cut_name = lines(cut["text"])[0]
        assert cut_ref == ref and cut_name == "Press " + "x" * 14 + "…"
        r = await api.post("/click", json={"targetId": tab, "ref": ref})
        assert r.status_code == 200, r.text
        found = await find(api, tab, name="xxxx", role="button", lineChars=10)
        assert [m["name"] for m in found["matches"]] == ["Press xxxx…"]
        r = await api.post("/click", json={"targetId": tab, "ref": found["matches"][0]["ref"]})
        assert r.status_code == 200, r.text


# ---------------------------------------------------------------- /find

async def test_find_on_a_2000_link_page(api: httpx.AsyncClient, tab: str,
                                        pages: PageServer) -> None:
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/read_index.html"))
        r = await api.get("/find", params={"targetId": tab, "role": "link",
                                           "name": "Link 1234", "exact": "true"})
        assert r.status_code == 200, r.text
        body = r.json()
        assert set(body) == {"targetId", "url", "loadState", "settled", "count", "matches",
                             "truncated", "stats", "untrusted"}
        assert body["count"] == 1 and body["truncated"] is False
        match = body["matches"][0]
        assert match["role"] == "link" and match["name"] == "Link 1234"
        assert re.fullmatch(r"\[e\d+\] heading \"Section 12\"", match["context"]), match
        assert len(r.text) < 1000
        print(f"\n/find on 2,000 links: walk {body['stats']['ms']} ms "
              f"({body['stats']['elements']} elements), {body['stats']['totalMs']} ms in all, "
              f"{len(r.text)} chars")
        # The ref is an ordinary ref: clicking it follows that very link.
        r = await api.post("/click", json={"targetId": tab, "ref": match["ref"]})
        assert r.status_code == 200, r.text
        assert r.json()["effects"]["navigated"].endswith("/read_target/1234")


async def test_find_matching_rules(api: httpx.AsyncClient, tab: str,
                                   pages: PageServer) -> None:
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/read_index.html"))
        some = await find(api, tab, name="link 123", limit=5)
        assert some["count"] == 11 and some["truncated"] is True  # 123, 1230 … 1239
        assert [m["name"] for m in some["matches"]] == ["Link 123"] + [
            f"Link {n}" for n in range(1230, 1234)]
        # text: the name, or the element's own visible text (here the list item's), its
        # inline link's words kept in reading order.
        by_text = await find(api, tab, text="Link 77 — Module number 77", exact=True)
        assert [(m["role"], m["text"]) for m in by_text["matches"]] == [
            ("listitem", "Link 77 — module number 77")], by_text
        assert by_text["matches"][0]["context"].endswith('heading "Section 0"')
        none = await find(api, tab, role="button")
        assert none["count"] == 0 and none["matches"] == []
        r = await api.post("/find", json={"targetId": tab})
        assert r.status_code == 400 and r.json()["code"] == "BAD_REQUEST"
        await navigate(api, tab, pages.url("/read_docs.html"))
        code = await find(api, tab, text="\\dconfig")
        roles = [m["role"] for m in code["matches"]]
        assert roles == ["paragraph", "code"], code
        scoped = await find(api, tab, role="term", root="#commands", name="\\dcmd3 [")
        assert scoped["count"] == 1 and scoped["matches"][0]["name"].startswith("\\dcmd3")
        r = await api.post("/screenshot", json={"targetId": tab,
                                                "ref": scoped["matches"][0]["ref"]})
        assert r.status_code == 200, r.text
