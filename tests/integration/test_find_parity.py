"""find sees every element the snapshot shows: in table cells, terms, shadow roots, frames."""

from __future__ import annotations

import re

import httpx
import pytest

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
