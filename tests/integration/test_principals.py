"""The person and the agents (S19): scoped, delegated, revocable tokens on every lane.

Against the suite's real service: the owner token is the person, the token
file is the agent ``default``, and tokens minted over ``POST /tokens`` are
checked on HTTP, ``/ws``, ``/mcp`` and the CDP gateway.
"""

from __future__ import annotations

import json
import os
from typing import Any

import httpx
import pytest
import trio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from trio_websocket import ConnectionClosed, open_websocket_url

from tests.conftest import PageServer, ServiceInfo

pytestmark = pytest.mark.chromium


def owner_token(service: ServiceInfo) -> str:
    return (service.home / "config" / "owner-token").read_text().strip()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def mint(api: httpx.AsyncClient, token: str, **body: Any) -> dict[str, Any]:
    r = await api.post("/tokens", json=body, headers=bearer(token))
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    assert answer["token"].startswith("bd_") and answer["name"] == body["name"]
    return answer


def unique(prefix: str) -> str:
    return f"{prefix}-{os.urandom(4).hex()}"


async def test_the_agent_cannot_play_the_person(service: ServiceInfo,
                                                api: httpx.AsyncClient) -> None:
    # No ops-page login for the agent: it would end its own handoff and drive the live view.
    r = await api.post("/ui-codes")
    assert r.status_code == 403 and r.json()["code"] == "OWNER_ONLY", r.text
    owner = bearer(owner_token(service))
    r = await api.post("/ui-codes", headers=owner)
    assert r.status_code == 200 and "/ui/login?code=" in r.json()["url"], r.text
    # The person's token opens the person's routes, not the agent's.
    r = await api.get("/tabs", headers=owner)
    assert r.status_code == 403 and r.json()["code"] == "SCOPE_REQUIRED", r.text
    # Nor is the login an operation of /ws or MCP.
    async with open_websocket_url(f"ws://127.0.0.1:{service.port}/ws",
                                  extra_headers=[(b"Authorization",
                                                  f"Bearer {service.token}".encode())]) as ws:
        await ws.send_message(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ui-codes"}))
        answer = json.loads(await ws.get_message())
        assert answer["error"]["code"] == -32601, answer
    async with httpx.AsyncClient(headers=service.headers, timeout=60) as http, \
            Client(streamable_http_client(f"{service.base_url}/mcp?caps=all",
                                          http_client=http)) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert "ui-codes" not in tools and "ui_codes" not in tools
        assert "tabs_offer" not in tools and "tabs_offerable" not in tools
    # An agent cannot mint a token wider than itself, nor revoke one it did not make.
    small = await mint(api, owner_token(service), name=unique("small"),
                       scopes=["read", "delegate"])
    r = await api.post("/tokens", json={"name": unique("wide"), "scopes": ["read", "act"]},
                       headers=bearer(small["token"]))
    assert r.status_code == 403 and r.json()["code"] == "SCOPE_EXCEEDS_PARENT", r.text
    other = await mint(api, owner_token(service), name=unique("other"), scopes=["read"])
    r = await api.delete(f"/tokens/{other['name']}", headers=bearer(small["token"]))
    assert r.status_code == 404 and r.json()["code"] == "TOKEN_NOT_FOUND", r.text
    r = await api.get("/tokens", headers=bearer(small["token"]))
    assert [t["name"] for t in r.json()["tokens"]] == [small["name"]], r.text
    assert "token" not in r.json()["tokens"][0] and "sha256" not in r.text


async def test_a_read_only_token_reads_and_is_refused_naming_the_scope(
        service: ServiceInfo, api: httpx.AsyncClient, tab: str) -> None:
    reader = await mint(api, owner_token(service), name=unique("reader"), scopes=["read"])
    headers = bearer(reader["token"])
    r = await api.get("/tabs", headers=headers)
    assert r.status_code == 200 and tab in {t["targetId"] for t in r.json()["tabs"]}, r.text
    r = await api.post("/click", json={"targetId": tab, "selector": "body"}, headers=headers)
    assert r.status_code == 403, r.text
    body = r.json()
    assert body["code"] == "SCOPE_REQUIRED" and body["scope"] == "act", body
    assert reader["name"] in body["error"]
    for path, scope in (("/eval", "eval"), ("/cookies", "state")):
        r = await api.post(path, json={"targetId": tab, "js": "1"} if path == "/eval"
                           else {"cookies": []}, headers=headers)
        assert r.status_code == 403 and r.json()["scope"] == scope, r.text
    # The same refusal on MCP: the tool is listed, calling it names the scope.
    async with httpx.AsyncClient(headers=headers, timeout=60) as http, \
            Client(streamable_http_client(f"{service.base_url}/mcp",
                                          http_client=http)) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert "click" in tools
        result = await client.call_tool("click", {"targetId": tab, "selector": "body"})
        assert result.is_error
        assert result.structured_content is not None
        assert result.structured_content["code"] == "SCOPE_REQUIRED"
        assert result.structured_content["scope"] == "act"


async def test_revoking_a_token_closes_its_connections_and_its_children(
        service: ServiceInfo, api: httpx.AsyncClient) -> None:
    parent = await mint(api, owner_token(service), name=unique("parent"),
                        scopes=["read", "act", "cdp", "delegate"], expiresInS=3600)
    child = await mint(api, parent["token"], name=unique("child"), scopes=["read"])
    assert child["parent"] == parent["name"] and child["scopes"] == ["read"]
    assert child["expiresAt"] <= parent["expiresAt"]
    r = await api.post("/tokens", json={"name": unique("late"), "expiresInS": 7200},
                       headers=bearer(parent["token"]))
    assert r.status_code == 403 and r.json()["code"] == "SCOPE_EXCEEDS_PARENT", r.text
    ws_url = f"ws://127.0.0.1:{service.port}/ws"
    gateway = f"ws://127.0.0.1:{service.cdp_port}"
    r = await api.get(f"http://127.0.0.1:{service.cdp_port}/json/version",
                      headers=bearer(parent["token"]))
    assert r.status_code == 200, r.text
    browser_ws = r.json()["webSocketDebuggerUrl"]
    assert browser_ws.startswith(gateway)
    auth = [(b"Authorization", f"Bearer {parent['token']}".encode())]
    child_auth = [(b"Authorization", f"Bearer {child['token']}".encode())]
    async with open_websocket_url(ws_url, extra_headers=auth) as ws, \
            open_websocket_url(ws_url, extra_headers=child_auth) as child_ws, \
            open_websocket_url(browser_ws, extra_headers=auth) as cdp:
        await ws.send_message(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tabs"}))
        assert "result" in json.loads(await ws.get_message())
        await cdp.send_message(json.dumps({"id": 1, "method": "Browser.getVersion"}))
        assert "result" in json.loads(await cdp.get_message())
        r = await api.delete(f"/tokens/{parent['name']}", headers=bearer(owner_token(service)))
        assert r.status_code == 200, r.text
        assert set(r.json()["revoked"]) == {parent["name"], child["name"]}
        with trio.fail_after(1):
            for conn in (ws, child_ws, cdp):
                with pytest.raises(ConnectionClosed) as closed:
                    while True:
                        await conn.get_message()
                if conn is not cdp:  # (the gateway closes with its own code)
                    assert closed.value.reason.code == 4401, closed.value.reason
                # trio-websocket 0.12 leaves its socket open when the server closes
                # first; close it here (else a ResourceWarning at the end of the run).
                await conn._stream.aclose()
    for token in (parent["token"], child["token"]):
        r = await api.get("/tabs", headers=bearer(token))
        assert r.status_code == 401 and r.json()["code"] == "TOKEN_REVOKED", r.text


async def test_a_token_of_its_own_session_sees_only_that_session(
        service: ServiceInfo, api: httpx.AsyncClient, pages: PageServer, tab: str) -> None:
    # Minted by the default agent token (it holds 'delegate'): a child with a session.
    sub = await mint(api, service.token, name=unique("sub"), scopes=["read", "act"],
                     newSession=True)
    assert sub["parent"] == "default" and len(sub["sessions"]) == 1
    headers = bearer(sub["token"])
    r = await api.post("/tabs/open", json={"url": pages.url("hello.html")}, headers=headers)
    assert r.status_code == 200, r.text
    own = r.json()["targetId"]
    r = await api.get("/tabs", headers=headers)
    listed = {t["targetId"] for t in r.json()["tabs"]}
    assert own in listed and tab not in listed, r.text
    # The default context's tab is not there for it; a session it does not hold neither.
    r = await api.post("/navigate", json={"targetId": tab, "url": pages.url("nav_a.html")},
                       headers=headers)
    assert r.status_code == 404, r.text
    r = await api.get("/tabs", params={"session": "s-not-mine"}, headers=headers)
    assert r.status_code == 404 and r.json()["code"] == "SESSION_NOT_FOUND", r.text
    # And the parent (the default token) does not see the child's tab in its own context.
    r = await api.get("/tabs")
    assert own not in {t["targetId"] for t in r.json()["tabs"]}
    r = await api.delete(f"/tokens/{sub['name']}")  # an ancestor revokes its child
    assert r.status_code == 200 and r.json()["revoked"] == [sub["name"]], r.text


async def test_the_gateway_needs_the_cdp_scope(service: ServiceInfo,
                                               api: httpx.AsyncClient) -> None:
    reader = await mint(api, owner_token(service), name=unique("nocdp"), scopes=["read"])
    r = await api.get(f"http://127.0.0.1:{service.cdp_port}/json/version",
                      headers=bearer(reader["token"]))
    assert r.status_code == 403 and r.json()["code"] == "SCOPE_REQUIRED", r.text
    assert r.json()["scope"] == "cdp"
    r = await api.get(f"http://127.0.0.1:{service.cdp_port}/json/version",
                      headers=bearer(owner_token(service)))
    assert r.status_code == 403, r.text


async def test_events_need_the_read_scope(service: ServiceInfo, api: httpx.AsyncClient) -> None:
    actor = await mint(api, owner_token(service), name=unique("actor"), scopes=["act"])
    r = await api.get("/events", headers=bearer(actor["token"]))
    assert r.status_code == 403 and r.json()["scope"] == "read", r.text
    async with open_websocket_url(f"ws://127.0.0.1:{service.port}/ws", extra_headers=[
            (b"Authorization", f"Bearer {actor['token']}".encode())]) as ws:
        await ws.send_message(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "subscribe"}))
        answer = json.loads(await ws.get_message())
        assert answer["error"]["data"]["code"] == "SCOPE_REQUIRED", answer
        assert answer["error"]["data"]["scope"] == "read"


async def test_mcp_isolated_works_in_a_session_of_its_own_that_ends_with_it(
        service: ServiceInfo, api: httpx.AsyncClient, pages: PageServer) -> None:
    import sys

    from mcp.client.stdio import StdioServerParameters
    from mcp.client.stdio import stdio_client as mcp_stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "browserd", "mcp", "--isolated"],
        env={"BROWSERD_HOME": str(service.home), "BROWSERD_CONTROL_URL": service.base_url,
             "PYTHONPATH": os.pathsep.join(sys.path)})
    page = f"/hello.html?{unique('isolated')}"
    with open(service.home / "mcp-isolated.log", "a") as errlog:
        async with Client(mcp_stdio_client(params, errlog=errlog)) as client:
            result = await client.call_tool("tabs_open", {"url": pages.url(page)})
            assert not result.is_error, result
            r = await api.get("/tokens")
            minted = [t for t in r.json()["tokens"]
                      if t["name"].startswith("mcp-") and t["revokedAt"] is None]
            assert len(minted) == 1 and minted[0]["parent"] == "default", r.text
            session = minted[0]["sessions"][0]
            r = await api.get("/tabs", params={"session": session})
            assert any(t["url"].endswith(page) for t in r.json()["tabs"]), r.text
            r = await api.get("/tabs")  # the default context does not have it
            assert not any(t["url"].endswith(page) for t in r.json()["tabs"])
    r = await api.get("/tokens")
    ended = next(t for t in r.json()["tokens"] if t["name"] == minted[0]["name"])
    assert ended["revokedAt"] is not None
    r = await api.get("/tabs", params={"session": session})
    assert r.status_code == 404 and r.json()["code"] == "SESSION_NOT_FOUND", r.text


async def test_a_profile_limited_token_gets_its_profiles_events_only(
        service: ServiceInfo, api: httpx.AsyncClient) -> None:
    limited = await mint(api, owner_token(service), name=unique("oneprofile"),
                         scopes=["read"], profiles=[service.profile])
    r = await api.get("/events", params={"profile": "elsewhere"},
                      headers=bearer(limited["token"]))
    assert r.status_code == 404 and r.json()["code"] == "PROFILE_NOT_FOUND", r.text
    r = await api.get("/status", params={"profile": "elsewhere"},
                      headers=bearer(limited["token"]))
    assert r.status_code == 404, r.text
