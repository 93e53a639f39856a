"""find sees every element the snapshot shows: in table cells, terms, shadow roots, frames."""

from __future__ import annotations

import re

import httpx
import pytest

from browserd.answer_text import format_matches
from tests.conftest import PageServer, add_route
from tests.integration.helpers import html_route, navigate

pytestmark = pytest.mark.chromium

FRAME = "<!doctype html><a href='/f'>framed link</a>"
PAGE = """<!doctype html><title>parity</title>
<p>Plain <a href="/p">paragraph link</a> here.</p>
<table><tr><td><a href="/c">cell link</a></td><td>plain cell</td></tr></table>
<dl><dt><a href="/t">term link</a></dt><dd>its definition</dd></dl>
<div role="group" aria-label="named group"><a href="/g">group link</a></div>
<div id="host"></div>
<iframe src="/parity/frame"></iframe>
<script>
const root = document.getElementById('host').attachShadow({mode: 'open'});
root.innerHTML = '<a href="/s">shadow link</a>';
</script>"""
add_route("/parity/frame", html_route(FRAME))
add_route("/parity/page", html_route(PAGE))
LINKS = {"paragraph link", "cell link", "term link", "group link", "shadow link",
         "framed link"}


async def test_find_lists_every_link_the_snapshot_shows(
        api: httpx.AsyncClient, pages: PageServer, tab: str) -> None:
    await navigate(api, tab, pages.url("/parity/page"))
    snapshot = (await api.get("/snapshot", params={"targetId": tab})).json()["text"]
    shown = set(re.findall(r'link "([^"]+)"', snapshot))
    assert shown == LINKS, snapshot
    found = (await api.get("/find", params={"targetId": tab, "role": "link",
                                            "limit": 50})).json()
    assert {m["name"] for m in found["matches"]} == LINKS, found
    assert found["count"] == len(LINKS)
    # Text keeps the inline link's words, in reading order.
    sentence = (await api.get("/find", params={"targetId": tab,
                                               "text": "Plain paragraph link here"})).json()
    assert [m["role"] for m in sentence["matches"]] == ["paragraph"], sentence
    assert sentence["matches"][0]["text"] == "Plain paragraph link here."


AROUND = """<!doctype html><title>around</title>
<table><tr><th>package</th><th>version</th><th>notes</th></tr>
<tr><th scope="row">pkg-1</th><td>1.0</td><td></td><td><a href="/n/1">1.0 notes</a></td></tr>
<tr><th scope="row">pkg-2</th><td>2.0</td><td>beta</td><td><a href="/n/2">2.0 notes</a></td></tr>
</table>
<dl><dt>Epoch</dt><dd>A span of terms.</dd><dd>Also a <em>second</em> meaning.</dd>
<dt>Lease</dt><dd>A timed lock.</dd></dl>
<ul><li>first <button>Remove</button></li><li>second</li></ul>
<p>No neighbourhood here.</p>
<div id="host"></div>
<script>
document.getElementById('host').attachShadow({mode: 'open'}).innerHTML =
  '<table><tr><td>shadow cell</td><td><a href="/s">open</a></td></tr></table>';
</script>"""
add_route("/parity/around", html_route(AROUND))


async def test_find_around_answers_the_row_the_definitions_and_the_item(
        api: httpx.AsyncClient, pages: PageServer, tab: str) -> None:
    await navigate(api, tab, pages.url("/parity/around"))

    async def around(**params: object) -> list[dict[str, str]]:
        answer = await api.get("/find", params={"targetId": tab, "around": "true", **params})
        assert answer.status_code == 200, answer.text
        matches: list[dict[str, str]] = answer.json()["matches"]
        return matches

    [row] = await around(role="rowheader", name="pkg-2", exact=True)
    line = row["around"]
    # The CLI and MCP show it under the match's own line.
    assert format_matches({"matches": [row], "count": 1}).splitlines()[1] == f"  \u21b3 {line}"
    assert re.fullmatch(r'pkg-2 \| 2\.0 \| beta \| \[(e\d+)\] link "2\.0 notes"', line), line
    ref = re.search(r"\[(e\d+)\]", line)
    assert ref is not None
    # The row's link ref acts without a snapshot first.
    clicked = await api.post("/click", json={"targetId": tab, "ref": ref.group(1)})
    assert clicked.status_code == 200, clicked.text
    await navigate(api, tab, pages.url("/parity/around"))
    # An empty cell drops out; pkg-1's row has no "beta".
    [row1] = await around(role="rowheader", name="pkg-1", exact=True)
    assert row1["around"].startswith("pkg-1 | 1.0 | [e"), row1
    # A term: the term and every definition of its group, not the next term's.
    [term] = await around(role="term", name="Epoch", exact=True)
    assert term["around"] == "Epoch | A span of terms. | Also a second meaning.", term
    [definition] = await around(text="A timed lock")
    assert definition["around"] == "Lease | A timed lock.", definition
    # A list item, its button as a ref.
    [button] = await around(role="button", name="Remove")
    assert re.fullmatch(r'first \[e\d+\] button "Remove"', button["around"]), button
    # Inside a shadow root, the row is still found; a paragraph has no neighbourhood.
    [shadow] = await around(text="shadow cell")
    assert re.fullmatch(r'shadow cell \| \[e\d+\] link "open"', shadow["around"]), shadow
    [plain] = await around(text="No neighbourhood")
    assert "around" not in plain
    # Without the flag, no match carries it.
    bare = (await api.get("/find", params={"targetId": tab, "role": "rowheader"})).json()
    assert bare["count"] == 2 and all("around" not in m for m in bare["matches"]), bare
