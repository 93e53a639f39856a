"""What a snapshot or find line carries: link targets, placeholders, names keeping line breaks."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import trio

from browserd.answer_text import format_matches
from tests.conftest import PageServer, add_route
from tests.integration.helpers import html_route, navigate

pytestmark = pytest.mark.chromium

LONG_PATH = "/docs/" + "chapter-" * 15 + "end"


def links_page(other: str) -> str:
    return f"""<!doctype html><title>Lines</title>
<a href="/docs/intro?lang=en#top">Same origin</a>
<a href="{other}/a/b?c=d#frag">Other origin</a>
<a href="#section">Fragment</a>
<a href="?page=2#list">Next page</a>
<a href="{LONG_PATH}">Long</a>
<a href="javascript:void(document.title='x')">Scripted</a>
<a href="/caf%C3%A9">Coffee</a>
<a href="/docs"><div>Block</div><div>children</div></a>
<a href="#">Top</a>
<a href="mailto:ann@example.com">Mail</a>
<a href="{other.replace("://", "://user:secret@")}/in">Credentials</a>
<label>Email <input placeholder="you@example.com"></label>
<input placeholder="Search the docs" type="search">
<textarea aria-label="Notes" placeholder="Anything else?"></textarea>
<dl><dt>Alpha<br>Beta</dt><dd>its definition</dd></dl>
"""


async def snapshot(api: httpx.AsyncClient, tab: str, **fields: Any) -> dict[str, Any]:
    r = await api.post("/snapshot", json={"targetId": tab, **fields})
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def line_of(text: str, start: str) -> str:
    found = [line.split("] ", 1)[1] for line in text.splitlines()
             if "] " in line and line.split("] ", 1)[1].startswith(start)]
    assert len(found) == 1, (start, text)
    return found[0]


@pytest.fixture
async def lines_tab(api: httpx.AsyncClient, tab: str, pages: PageServer,
                    other_origin: PageServer) -> str:
    add_route("/lines/page", html_route(links_page(other_origin.base_url)))
    with trio.fail_after(20):
        await navigate(api, tab, pages.url("/lines/page"))
    return tab


async def test_links_show_their_targets(api: httpx.AsyncClient, lines_tab: str,
                                        other_origin: PageServer) -> None:
    with trio.fail_after(20):
        text = (await snapshot(api, lines_tab))["text"]
    assert line_of(text, 'link "Same origin"') == 'link "Same origin" → /docs/intro?lang=en'
    assert line_of(text, 'link "Other origin"') == (
        f'link "Other origin" → {other_origin.base_url}/a/b?c=d')
    assert line_of(text, 'link "Fragment"') == 'link "Fragment" → #section'
    assert line_of(text, 'link "Next page"') == 'link "Next page" → /lines/page?page=2'
    long = LONG_PATH[:80] + "…"
    assert line_of(text, 'link "Long"') == f'link "Long" → {long}'
    assert line_of(text, 'link "Scripted"') == 'link "Scripted" → javascript:'
    assert line_of(text, 'link "Coffee"') == 'link "Coffee" → /café'
    assert line_of(text, 'link "Top"') == 'link "Top" → #'
    assert line_of(text, 'link "Mail"') == 'link "Mail" → mailto:ann@example.com'
    assert line_of(text, 'link "Credentials"') == (
        f'link "Credentials" → {other_origin.base_url}/in')
    # A name from content keeps a space where a block or a <br> ended.
    assert line_of(text, "link \"Block") == 'link "Block children" → /docs'
    assert line_of(text, "term") == 'term "Alpha Beta"'
    # lineChars cuts targets too.
    short = (await snapshot(api, lines_tab, lineChars=12))["text"]
    assert line_of(short, 'link "Long"') == 'link "Long" → /docs/chapte…'


async def test_fields_show_their_placeholders(api: httpx.AsyncClient, lines_tab: str) -> None:
    with trio.fail_after(20):
        body = await snapshot(api, lines_tab, interactive=True, nodes=True)
    text = body["text"]
    assert line_of(text, 'textbox "Email"') == 'textbox "Email" placeholder="you@example.com"'
    # A placeholder that is already the name is not repeated.
    assert line_of(text, "searchbox") == 'searchbox "Search the docs"'
    assert line_of(text, 'textbox "Notes"') == 'textbox "Notes" placeholder="Anything else?"'
    email = next(n for n in body["nodes"] if n["name"] == "Email")
    assert email["placeholder"] == "you@example.com"
    same = next(n for n in body["nodes"] if n["name"] == "Same origin")
    assert same["href"].endswith("/docs/intro?lang=en#top")
    assert same["target"] == "/docs/intro?lang=en"


async def test_max_chars_counts_targets_and_placeholders(api: httpx.AsyncClient,
                                                         lines_tab: str) -> None:
    with trio.fail_after(20):
        full = (await snapshot(api, lines_tab, maxChars=0))["text"]
        for start in ('link "Long"', 'textbox "Email"'):
            through = full.index(line_of(full, start)) + len(line_of(full, start)) + 1
            fits = await snapshot(api, lines_tab, maxChars=through)
            assert fits["text"] == full[:through] and fits["text"].endswith("\n")
            cut = await snapshot(api, lines_tab, maxChars=through - 1)
            assert cut["truncated"] is True and start not in cut["text"]
            assert full.startswith(cut["text"])


async def test_find_lines_match_snapshot_lines(api: httpx.AsyncClient, lines_tab: str,
                                               other_origin: PageServer) -> None:
    with trio.fail_after(20):
        text = (await snapshot(api, lines_tab))["text"]
        links = (await api.get("/find", params={"targetId": lines_tab, "role": "link",
                                                "limit": 50})).json()
        fields = (await api.get("/find", params={"targetId": lines_tab,
                                                 "name": "Email"})).json()
    other = next(m for m in links["matches"] if m["name"] == "Other origin")
    assert other["target"] == f"{other_origin.base_url}/a/b?c=d"
    assert other["href"] == f"{other_origin.base_url}/a/b?c=d#frag"
    rendered = format_matches(links).splitlines()
    for match, line in zip(links["matches"], rendered, strict=False):
        assert line == f"[{match['ref']}] " + line_of(text, f'link "{match["name"]}"')
    [email] = fields["matches"]
    assert email["placeholder"] == "you@example.com"
    assert format_matches(fields).splitlines()[0] == (
        f'[{email["ref"]}] textbox "Email" placeholder="you@example.com"')
