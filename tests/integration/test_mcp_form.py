"""An agent finishes a real form with the default MCP tools, over stdio and over /mcp.

The agent below reads only what the tools answer (snapshot text, refs, effects)
and uses only the ``core`` tools: open, snapshot, type, select, click a
checkbox, attach a file through the file chooser a styled button opens, follow
a link, go back, submit. The page server records what it received; the test
checks every value got there. Then: one bad call answers the same error on
both transports; two ``--isolated`` stdio clients do not see each other's
tabs; ``/mcp`` and ``/ws`` work in the session the X-Browserd-Session header
names, and ``/mcp`` in the session of a token bound to one.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import mcp_types as types
import pytest
import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.stdio import stdio_client as mcp_stdio_client
from mcp.client.streamable_http import streamable_http_client
from trio_websocket import open_websocket_url

from tests.conftest import PageServer, ServiceInfo, add_route
from tests.integration.helpers import html_route
from tests.integration.test_mcp import page_text, text_of

pytestmark = pytest.mark.chromium

FORM = """<!doctype html><title>Apply</title>
<h1>Apply</h1>
<form name="apply" method="post" action="/mcpform/submit">
  <input type="hidden" name="run" value="">
  <input type="hidden" name="cvId" value="">
  <p><label>Full name <input name="fullname"></label></p>
  <p><label>Country <select name="country"><option value="">choose</option>
    <option value="fr">France</option><option value="jp">Japan</option></select></label></p>
  <p><label><input type="checkbox" name="terms" value="yes"> I accept the terms</label>
     (<a href="/mcpform-terms.html">read the terms</a>)</p>
  <p><input type="file" id="cv" hidden><button type="button" id="attach">Attach CV</button>
     <span id="attached"></span></p>
  <p><button type="submit">Send application</button></p>
</form>
<script>
  // Like many real forms: a file is uploaded as soon as it is chosen, and what was
  // entered survives a trip to another page and back (bfcache or not).
  const form = document.forms.apply;
  form.run.value = new URLSearchParams(location.search).get('run') || '';
  const KEY = 'apply:' + form.run.value;
  const fields = ['fullname', 'country', 'cvId'];
  const saved = JSON.parse(sessionStorage.getItem(KEY) || '{}');
  for (const name of fields) if (saved[name]) form[name].value = saved[name];
  if (saved.terms) form.terms.checked = true;
  if (saved.attached) document.getElementById('attached').textContent = saved.attached;
  function save() {
    const state = {terms: form.terms.checked,
                   attached: document.getElementById('attached').textContent};
    for (const name of fields) state[name] = form[name].value;
    sessionStorage.setItem(KEY, JSON.stringify(state));
  }
  form.addEventListener('input', save);
  form.addEventListener('change', save);
  document.getElementById('attach').onclick = () => document.getElementById('cv').click();
  document.getElementById('cv').addEventListener('change', async (event) => {
    const file = event.target.files[0];
    const r = await fetch('/mcpform/file?run=' + encodeURIComponent(form.run.value) +
                          '&name=' + encodeURIComponent(file.name), {method: 'POST', body: file});
    form.cvId.value = (await r.json()).id;
    document.getElementById('attached').textContent =
      'Attached: ' + file.name + ' (' + file.size + ' bytes)';
    save();
  });
</script>"""
TERMS = "<!doctype html><title>Terms</title><h1>Terms</h1><p>Be kind.</p>"

#: What the page server received, by run: {"file": (name, bytes), "form": {field: value}}.
RECEIVED: dict[str, dict[str, Any]] = {}
_lock = threading.Lock()


def _file_handler(req: Any) -> None:
    query = parse_qs(urlsplit(req.path).query)
    data = req.rfile.read(int(req.headers.get("Content-Length") or 0))
    run = query.get("run", [""])[0]
    with _lock:
        RECEIVED.setdefault(run, {})["file"] = (query.get("name", [""])[0], data)
    _answer(req, b'{"id": "cv-' + run.encode() + b'"}', "application/json")


def _submit_handler(req: Any) -> None:
    body = req.rfile.read(int(req.headers.get("Content-Length") or 0)).decode()
    form = {k: v[0] for k, v in parse_qs(body, keep_blank_values=True).items()}
    with _lock:
        RECEIVED.setdefault(form.get("run", ""), {})["form"] = form
    _answer(req, f"<!doctype html><title>Received</title><h1>Thank you, "
                 f"{form.get('fullname', '?')}</h1>".encode(), "text/html; charset=utf-8")


def _answer(req: Any, data: bytes, mime: str) -> None:
    req.send_response(200)
    req.send_header("Content-Type", mime)
    req.send_header("Content-Length", str(len(data)))
    req.end_headers()
    req.wfile.write(data)


add_route("/mcpform.html", html_route(FORM))
add_route("/mcpform-terms.html", html_route(TERMS))
add_route("/mcpform/file", _file_handler)
add_route("/mcpform/submit", _submit_handler)


# -- clients ---------------------------------------------------------------------------------


@asynccontextmanager
async def http_client(service: ServiceInfo, headers: dict[str, str] | None = None,
                      ) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers={**service.headers, **(headers or {})},
                                  timeout=60) as http, \
            Client(streamable_http_client(f"{service.base_url}/mcp", http_client=http)) as client:
        yield client


@asynccontextmanager
async def stdio_client(service: ServiceInfo, *args: str) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "browserd", "mcp", *args],
        env={"BROWSERD_HOME": str(service.home), "BROWSERD_CONTROL_URL": service.base_url,
             "PYTHONPATH": os.pathsep.join(sys.path)})
    with open(service.home / "mcp-form.log", "a") as errlog:
        async with Client(mcp_stdio_client(params, errlog=errlog)) as client:
            yield client


@asynccontextmanager
async def transport(kind: str, service: ServiceInfo) -> AsyncIterator[Client]:
    if kind == "stdio":
        async with stdio_client(service) as client:
            yield client
    else:
        async with http_client(service) as client:
            yield client


@pytest.fixture
def cv(service: ServiceInfo, tmp_path: Path) -> Path:
    """A file under the service's default upload root (``<data>/uploads/``)."""
    folder = service.home / "data" / "uploads" / f"mcpform-{tmp_path.name}"
    folder.mkdir()
    path = folder / "cv.txt"
    path.write_text("Ada Lovelace: analytical engines\n")
    return path


# -- the agent -------------------------------------------------------------------------------


class Agent:
    """Calls tools and reads their text, as a model would: refs come from snapshots."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.tab = ""

    async def call(self, tool: str, **args: Any) -> str:
        if self.tab and tool != "tabs_open":
            args.setdefault("targetId", self.tab)
        result = await self.client.call_tool(tool, args)
        assert not result.is_error, f"{tool} {args}: {text_of(result)}"
        return text_of(result)

    async def snapshot(self, interactive: bool = True) -> str:
        return page_text(await self.call("snapshot", interactive=interactive))

    @staticmethod
    def ref(snapshot: str, role: str, name: str) -> str:
        found = re.search(rf'\[(e\d+)\] {role} "{re.escape(name)}', snapshot)
        assert found, f"no {role} {name!r} in:\n{snapshot}"
        return found.group(1)


async def fill_the_form(client: Client, pages: PageServer, run: str, cv: Path) -> None:
    agent = Agent(client)
    opened = await agent.call("tabs_open", url=pages.url(f"/mcpform.html?run={run}"))
    agent.tab = re.findall(r"\b[0-9A-F]{32}\b", opened)[0]
    try:
        page = await agent.snapshot()
        assert page.startswith("Page: Apply"), page
        await agent.call("type", ref=agent.ref(page, "textbox", "Full name"),
                         text="Ada Lovelace")
        await agent.call("select", ref=agent.ref(page, "combobox", "Country"),
                         values=["Japan"])
        await agent.call("click", ref=agent.ref(page, "checkbox", "I accept the terms"))
        attach = await agent.call("click", ref=agent.ref(page, "button", "Attach CV"))
        assert "fileChooser" in attach, attach  # the click opened a chooser: answer it
        uploaded = await agent.call("upload", files=[str(cv)])
        assert uploaded.startswith("ok") and "cv.txt" in uploaded, uploaded
        await agent.call("wait", text="Attached: cv.txt")

        followed = await agent.call("click", ref=agent.ref(page, "link", "read the terms"))
        assert "/mcpform-terms.html" in followed, followed
        assert (await agent.snapshot()).startswith("Page: Terms")
        await agent.call("back")

        page = await agent.snapshot(interactive=False)  # a new document: new refs
        assert page.startswith("Page: Apply") and "Attached: cv.txt" in page, page
        assert re.search(r'checkbox "I accept the terms".*checked', page), page
        sent = await agent.call("click", ref=agent.ref(page, "button", "Send application"))
        assert "/mcpform/submit" in sent, sent
        done = await agent.snapshot(interactive=False)
        assert "Thank you, Ada Lovelace" in done, done
    finally:
        await client.call_tool("tabs_close", {"targetId": agent.tab})


@pytest.mark.parametrize("kind", ["stdio", "http"])
async def test_an_agent_finishes_a_form_with_the_core_tools(
        kind: str, service: ServiceInfo, pages: PageServer, cv: Path) -> None:
    run = f"{kind}-{secrets.token_hex(4)}"
    with trio.fail_after(120):
        async with transport(kind, service) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            assert {"tabs_open", "snapshot", "type", "select", "click", "upload", "back",
                    "wait", "tabs_close"} <= listed and len(listed) <= 20
            await fill_the_form(client, pages, run, cv)
    got = RECEIVED[run]
    assert got["file"] == ("cv.txt", cv.read_bytes())
    assert got["form"] == {"run": run, "cvId": f"cv-{run}", "fullname": "Ada Lovelace",
                           "country": "jp", "terms": "yes"}


# -- the tools' own words --------------------------------------------------------------------


async def test_the_tools_describe_every_property_in_tool_terms(service: ServiceInfo) -> None:
    with trio.fail_after(60):
        async with http_client(service) as client:
            tools = (await client.list_tools()).tools
    for tool in tools:
        assert tool.description and tool.title and tool.annotations is not None, tool.name
        assert not re.search(r"\b(GET|POST|DELETE) /", tool.description), tool.description
        for name, prop in tool.input_schema["properties"].items():
            text = prop.get("description")
            assert text, f"{tool.name}.{name} has no description"
            assert not re.search(r"\b(GET|POST|DELETE) /|\b[1-5]\d\d [A-Z_]{4,}", text), text
    by_name = {t.name: t for t in tools}
    assert by_name["snapshot"].annotations.read_only_hint is True
    assert by_name["tabs_close"].annotations.destructive_hint is True
    assert by_name["tabs_open"].annotations.destructive_hint is False
    assert "snapshot tool" in by_name["click"].input_schema["properties"]["ref"]["description"]


# -- one error, both transports --------------------------------------------------------------


def _same_words(result: types.CallToolResult) -> tuple[str, Any]:
    """The error's text (its page boundary's nonce blanked) and structured content."""
    assert result.is_error
    text = re.sub(r"<<(/?)page:[0-9A-Za-z_-]+>>", r"<<\1page:N>>", text_of(result))
    return text, json.loads(json.dumps(result.structured_content))


async def test_the_same_bad_call_answers_the_same_error_on_both_transports(
        service: ServiceInfo, pages: PageServer, api: httpx.AsyncClient) -> None:
    r = await api.post("/tabs/open", json={"url": pages.url("/mcpform.html?run=errors")})
    tab = r.json()["targetId"]
    try:
        r = await api.get("/snapshot", params={"targetId": tab, "nodes": "true"})
        ref = next(n["ref"] for n in r.json()["nodes"] if n["role"] == "textbox")
        r = await api.post("/navigate", json={"targetId": tab,
                                              "url": pages.url("/mcpform-terms.html")})
        assert r.status_code == 200, r.text
        calls = [("type", {"targetId": tab, "ref": ref, "text": "x"}),  # a ref of the old page
                 ("click", {"targetId": tab, "ref": "e1", "bogus": 1}),  # an unknown field
                 ("nope", {})]  # an unknown tool
        answers: dict[str, list[tuple[str, Any]]] = {}
        with trio.fail_after(90):
            for kind in ("stdio", "http"):
                async with transport(kind, service) as client:
                    answers[kind] = [_same_words(await client.call_tool(name, args))
                                     for name, args in calls]
    finally:
        await api.post("/tabs/close", json={"targetId": tab})
    assert answers["stdio"] == answers["http"]
    (stale_text, stale), (field_text, field), (_, unknown) = answers["http"]
    assert field_text.startswith("BAD_REQUEST (400): ")
    assert stale["code"] == "STALE_REF" and stale["status"] == 409 and stale["reason"], stale
    assert stale_text.startswith("STALE_REF (409): ") and "details: " in stale_text
    assert field["code"] == "BAD_REQUEST" and field["field"] == "bogus", field
    assert (unknown["code"], unknown["status"]) == ("NOT_FOUND", 404)


# -- sessions ----------------------------------------------------------------------------------


async def test_two_isolated_stdio_clients_do_not_see_each_others_tabs(
        service: ServiceInfo, pages: PageServer) -> None:
    mark = secrets.token_hex(4)
    with trio.fail_after(120):
        async with stdio_client(service, "--isolated") as one, \
                stdio_client(service, "--isolated") as two:
            for client, who in ((one, "one"), (two, "two")):
                opened = await client.call_tool(
                    "tabs_open", {"url": pages.url(f"/mcpform-terms.html?{who}-{mark}")})
                assert not opened.is_error, text_of(opened)
            seen_one = page_text(text_of(await one.call_tool("tabs", {})))
            seen_two = page_text(text_of(await two.call_tool("tabs", {})))
    assert f"one-{mark}" in seen_one and f"two-{mark}" not in seen_one, seen_one
    assert f"two-{mark}" in seen_two and f"one-{mark}" not in seen_two, seen_two


@asynccontextmanager
async def a_session(api: httpx.AsyncClient) -> AsyncIterator[str]:
    r = await api.post("/sessions", json={"name": f"hdr-{secrets.token_hex(3)}"})
    assert r.status_code == 200, r.text
    session = str(r.json()["sessionId"])
    try:
        yield session
    finally:
        await api.delete(f"/sessions/{session}")


async def _tab_urls(api: httpx.AsyncClient, session: str | None = None) -> list[str]:
    r = await api.get("/tabs", params={"session": session} if session else {})
    assert r.status_code == 200, r.text
    return [t["url"] for t in r.json()["tabs"]]


async def test_mcp_works_in_the_session_its_header_names(
        service: ServiceInfo, pages: PageServer, api: httpx.AsyncClient) -> None:
    url = pages.url(f"/mcpform-terms.html?mcp-{secrets.token_hex(4)}")
    with trio.fail_after(90):
        async with a_session(api) as session:
            async with http_client(service, {"X-Browserd-Session": session}) as client:
                opened = await client.call_tool("tabs_open", {"url": url})
                assert not opened.is_error, text_of(opened)
                assert url in page_text(text_of(await client.call_tool("tabs", {})))
            assert url in await _tab_urls(api, session)
            assert url not in await _tab_urls(api)  # not in the default context
        async with http_client(service, {"X-Browserd-Session": "no-such-session"}) as client:
            missing = await client.call_tool("tabs", {})
        assert missing.is_error and missing.structured_content["code"] == "SESSION_NOT_FOUND"
        async with http_client(service, {"X-Browserd-Session": "x" * 65}) as client:
            invalid = await client.call_tool("tabs", {})
        assert invalid.is_error and invalid.structured_content["code"] == "BAD_REQUEST"


async def test_ws_works_in_the_session_its_header_names(
        service: ServiceInfo, pages: PageServer, api: httpx.AsyncClient) -> None:
    url = pages.url(f"/mcpform-terms.html?ws-{secrets.token_hex(4)}")
    with trio.fail_after(60):
        async with a_session(api) as session:
            async with open_websocket_url(f"ws://127.0.0.1:{service.port}/ws", extra_headers=[
                    (b"Authorization", f"Bearer {service.token}".encode()),
                    (b"X-Browserd-Session", session.encode())]) as ws:
                await ws.send_message(json.dumps({"jsonrpc": "2.0", "id": 1,
                                                  "method": "tabs/open",
                                                  "params": {"url": url}}))
                answer = json.loads(await ws.get_message())
                assert "result" in answer, answer
                await ws.send_message(json.dumps({"jsonrpc": "2.0", "id": 2,
                                                  "method": "tabs"}))
                listed = json.loads(await ws.get_message())
            assert url in [t["url"] for t in listed["result"]["tabs"]], listed
            assert url in await _tab_urls(api, session)
            assert url not in await _tab_urls(api)


async def test_mcp_works_in_the_session_of_a_token_bound_to_one(
        service: ServiceInfo, pages: PageServer, api: httpx.AsyncClient) -> None:
    r = await api.post("/tokens", json={"name": f"mcp-bound-{secrets.token_hex(3)}",
                                        "newSession": True})
    assert r.status_code == 200, r.text
    minted = r.json()
    session = minted["sessions"][0]
    url = pages.url(f"/mcpform-terms.html?bound-{secrets.token_hex(4)}")
    try:
        with trio.fail_after(60):
            async with http_client(service, {"Authorization": f"Bearer {minted['token']}"},
                                   ) as client:
                opened = await client.call_tool("tabs_open", {"url": url})
                assert not opened.is_error, text_of(opened)
            assert url in await _tab_urls(api, session)
            assert url not in await _tab_urls(api)
    finally:
        await api.delete(f"/sessions/{session}")
        await api.delete(f"/tokens/{minted['name']}")
