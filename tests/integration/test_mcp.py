"""MCP with the SDK's own client: over streamable HTTP (/mcp) and over stdio (browserd mcp)."""

from __future__ import annotations

import base64
import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import httpx2
import mcp_types as types
import pytest
import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.stdio import stdio_client as mcp_stdio_client
from mcp.client.streamable_http import streamable_http_client
from supervision.harness import LOOPBACK_TLS

from browserd.http.catalog import catalog
from tests.conftest import PageServer, ServiceInfo

pytestmark = pytest.mark.chromium

CORE_TOOLS = {op.name for op in catalog().values() if op.group == "core"}


@asynccontextmanager
async def http_client(service: ServiceInfo, caps: str | None = None) -> AsyncIterator[Client]:
    url = f"{service.base_url}/mcp" + (f"?caps={caps}" if caps else "")
    async with httpx2.AsyncClient(headers=service.headers, timeout=60) as http, \
            Client(streamable_http_client(url, http_client=http)) as client:
        yield client


@asynccontextmanager
async def stdio_client(service: ServiceInfo, caps: str = "core") -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "browserd", "mcp", "--caps", caps],
        env={"BROWSERD_HOME": str(service.home), "BROWSERD_CONTROL_URL": service.base_url,
             "PYTHONPATH": os.pathsep.join(sys.path)})
    with open(service.home / "mcp-stdio.log", "a") as errlog:
        async with Client(mcp_stdio_client(params, errlog=errlog)) as client:
            yield client


def page_text(text: str) -> str:
    """``text`` without its page boundary lines (``<<page:NONCE>>`` … ``<</page:NONCE>>``)."""
    lines = text.splitlines()
    if lines and lines[0].startswith("<<page:"):
        nonce = lines[0][len("<<page:"):-2]
        assert f"<</page:{nonce}>>" in lines, text
        return "\n".join(line for line in lines if line not in (f"<<page:{nonce}>>",
                                                                  f"<</page:{nonce}>>"))
    return text


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def exercise(client: Client, pages: PageServer, service: ServiceInfo) -> None:
    """What both transports must do: tools, open, snapshot, click by ref, screenshot, an error."""
    listed = await client.list_tools()
    tools = {t.name: t for t in listed.tools}
    assert set(tools) == CORE_TOOLS and len(tools) <= 20
    nav = tools["navigate"].input_schema
    assert nav["required"] == ["url"] and nav["additionalProperties"] is False
    assert nav["properties"]["waitUntil"]["enum"] == ["load", "domcontentloaded", "commit",
                                                      "none"]
    assert "ref" in tools["click"].input_schema["properties"]
    assert tools["snapshot"].description and tools["snapshot"].annotations.read_only_hint

    opened = await client.call_tool("tabs_open", {"url": pages.url("/fe_counter.html")})
    assert not opened.is_error, text_of(opened)
    tab = re.search(r"\b[0-9A-F]{32}\b", text_of(opened))
    assert tab, text_of(opened)
    target = tab.group(0)
    try:
        snap = await client.call_tool("snapshot", {"targetId": target, "interactive": True})
        text = page_text(text_of(snap))
        assert text_of(snap).startswith("<<page:"), "the page's text is inside its boundary"
        assert not snap.is_error and text.startswith("Page: Counter (http://")
        assert "{" not in text.splitlines()[0], "a snapshot is text, not a JSON wrapper"
        ref = re.search(r'\[(e\d+)\] button "Add one"', text)
        assert ref, text

        clicked = await client.call_tool("click", {"targetId": target, "ref": ref.group(1)})
        assert not clicked.is_error and text_of(clicked).startswith("ok"), text_of(clicked)
        count = await client.call_tool("eval", {"targetId": target,
                                                "js": "document.getElementById('count')"
                                                      ".textContent"})
        assert page_text(text_of(count)) == "1"

        shot = await client.call_tool("screenshot", {"targetId": target})
        assert not shot.is_error, text_of(shot)
        images = [c for c in shot.content if isinstance(c, types.ImageContent)]
        assert len(images) == 1 and images[0].mime_type == "image/png"
        assert base64.b64decode(images[0].data).startswith(b"\x89PNG\r\n\x1a\n")
        media = re.search(r"/media/(\S+\.png)", text_of(shot))
        assert media, text_of(shot)
        # A diff against it: no change, no image; a change, the changed region only.
        same = await client.call_tool("screenshot", {"targetId": target,
                                                     "since": media.group(1)})
        assert f"no change since {media.group(1)}" in text_of(same)
        assert not [c for c in same.content if isinstance(c, types.ImageContent)]
        await client.call_tool("click", {"targetId": target, "ref": ref.group(1)})
        changed = await client.call_tool("screenshot", {"targetId": target,
                                                        "since": media.group(1)})
        assert f"changed since {media.group(1)}: region" in text_of(changed), text_of(changed)
        [crop] = [c for c in changed.content if isinstance(c, types.ImageContent)]
        width = int.from_bytes(base64.b64decode(crop.data)[16:20], "big")
        assert 0 < width < 1280, "the image is the changed region, not the viewport"

        stale = await client.call_tool("click", {"targetId": target, "ref": "e99999"})
        assert stale.is_error
        assert text_of(stale).startswith("REF_NOT_FOUND (404): ")
        assert "\nhint: take a new snapshot" in text_of(stale)
        assert stale.structured_content["code"] == "REF_NOT_FOUND"
        assert stale.structured_content["status"] == 404

        bad = await client.call_tool("navigate", {"targetId": target, "url": 42})
        assert bad.is_error and text_of(bad).startswith("BAD_REQUEST (400)")
    finally:
        async with service.client() as api:
            await api.post("/tabs/close", json={"targetId": target})


async def test_mcp_over_http(service: ServiceInfo, pages: PageServer) -> None:
    with trio.fail_after(90):
        async with http_client(service) as client:
            await exercise(client, pages, service)


async def test_mcp_over_stdio(service: ServiceInfo, pages: PageServer) -> None:
    with trio.fail_after(120):
        async with stdio_client(service) as client:
            await exercise(client, pages, service)


async def test_caps_choose_the_tool_groups(service: ServiceInfo) -> None:
    with trio.fail_after(90):
        async with http_client(service, "core,state") as client:
            names = {t.name for t in (await client.list_tools()).tools}
        assert names > CORE_TOOLS and {"cookies_get", "cookies_set", "state_get"} <= names
        assert "emulate_set" not in names
        async with http_client(service, "all") as client:
            every = {t.name for t in (await client.list_tools()).tools}
            status = await client.call_tool("status", {})
        assert names < every and {"emulate_set", "pdf", "downloads", "find"} <= every
        assert "state: running" in text_of(status)
        async with httpx.AsyncClient(base_url=service.base_url, headers=service.headers,
                                     verify=LOOPBACK_TLS) as h:
            r = await h.post("/mcp?caps=bogus", json={})
            assert (r.status_code, r.json()["code"]) == (400, "BAD_REQUEST")


async def test_mcp_needs_the_token(service: ServiceInfo) -> None:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    with trio.fail_after(30):
        async with httpx.AsyncClient(base_url=service.base_url, timeout=20,
                                     verify=LOOPBACK_TLS) as anon:
            r = await anon.post("/mcp", json=body)
            assert (r.status_code, r.json()["code"]) == (401, "UNAUTHORIZED")
            r = await anon.post("/mcp", json=body, headers={
                **service.headers, "Origin": "https://attacker.example"})
            assert (r.status_code, r.json()["code"]) == (403, "FORBIDDEN_ORIGIN")
            r = await anon.post("/mcp", json=body, headers={
                **service.headers, "Host": f"evil.example:{service.port}"})
            assert r.status_code == 421
        with pytest.raises(BaseException):  # noqa: B017 - the SDK's own error, whatever it is
            async with httpx2.AsyncClient(timeout=20) as http, \
                    Client(streamable_http_client(f"{service.base_url}/mcp",
                                                  http_client=http)) as client:
                await client.list_tools()


async def test_stdio_without_a_running_service_answers_tool_errors(tmp_path) -> None:
    from supervision.harness import free_port_pair

    (tmp_path / "config").mkdir(mode=0o700)
    (tmp_path / "config" / "token").write_text("t" * 43)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "browserd", "mcp"],
        env={"BROWSERD_HOME": str(tmp_path),
             "BROWSERD_CONTROL_URL": f"http://127.0.0.1:{free_port_pair()}",
             "PYTHONPATH": os.pathsep.join(sys.path)})
    with trio.fail_after(60), open(tmp_path / "mcp-stdio.log", "a") as errlog:
        async with Client(mcp_stdio_client(params, errlog=errlog)) as client:
            assert len((await client.list_tools()).tools) == len(CORE_TOOLS)
            result = await client.call_tool("tabs", {})
    assert result.is_error and text_of(result).startswith("UNAVAILABLE (503): ")
    assert "hint: start it with `browserd serve`" in text_of(result)
