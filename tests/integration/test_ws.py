"""GET /ws: JSON-RPC 2.0 on the route handlers, over one WebSocket (real Chromium)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
import trio
from trio_websocket import WebSocketConnection, open_websocket_url

from tests.conftest import PageServer, ServiceInfo
from tests.integration.test_gateway import ws_handshake_status

pytestmark = pytest.mark.chromium


class Rpc:
    """One /ws connection: calls matched by id, notifications kept in order."""

    def __init__(self, ws: WebSocketConnection) -> None:
        self.ws = ws
        self._next = 0
        self._answers: dict[Any, dict[str, Any]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.unmatched: list[dict[str, Any]] = []
        self._changed = trio.Event()

    async def pump(self) -> None:
        while True:
            message = orjson.loads(await self.ws.get_message())
            if "method" in message:
                self.notifications.append(message)
            elif message.get("id") is None:
                self.unmatched.append(message)
            else:
                self._answers[message["id"]] = message
            self._changed.set()
            self._changed = trio.Event()

    async def send_raw(self, text: str) -> None:
        await self.ws.send_message(text)

    async def call(self, method: str, params: Any = None) -> dict[str, Any]:
        self._next += 1
        request_id = self._next
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            body["params"] = params
        await self.ws.send_message(orjson.dumps(body).decode())
        while request_id not in self._answers:
            await self._changed.wait()
        return self._answers.pop(request_id)

    async def wait(self, pred: Any) -> dict[str, Any]:
        while True:
            for item in self.notifications + self.unmatched:
                if pred(item):
                    return item
            await self._changed.wait()


@pytest.fixture
async def rpc(service: ServiceInfo) -> AsyncIterator[Rpc]:
    async with open_websocket_url(
            f"ws://127.0.0.1:{service.port}/ws",
            extra_headers=[(b"Authorization", f"Bearer {service.token}".encode())]) as ws:
        client = Rpc(ws)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client.pump)
            yield client
            nursery.cancel_scope.cancel()


async def test_calls_answer_like_http(rpc: Rpc, pages: PageServer) -> None:
    with trio.fail_after(30):
        opened = await rpc.call("tabs_open", {"url": pages.url("/fe_counter.html")})
        tab = opened["result"]["targetId"]
        try:
            answer = await rpc.call("eval", {"targetId": tab, "js": "1 + 1"})
            assert answer == {"jsonrpc": "2.0", "id": answer["id"],
                              "result": {"ok": True, "targetId": tab,
                                         "url": pages.url("/fe_counter.html"), "result": 2,
                                         "untrusted": ["url", "result"]}}
            snap = await rpc.call("snapshot", {"targetId": tab, "interactive": True})
            assert 'button "Add one"' in snap["result"]["text"]
            cookies = await rpc.call("cookies_get", {})
            assert "cookies" in cookies["result"]
            # The former spelling of a name still calls the same route.
            assert (await rpc.call("cookies/get", {}))["result"] == cookies["result"]
        finally:
            await rpc.call("tabs/close", {"targetId": tab})


async def test_eight_calls_in_flight_on_one_connection(rpc: Rpc, pages: PageServer) -> None:
    """Eight evals that can only finish once all eight are running at the same time."""
    barrier = """new Promise((resolve) => {
      const me = Math.random(), seen = new Set([me]);
      const bc = new BroadcastChannel('fe-barrier');
      bc.onmessage = (e) => { seen.add(e.data); if (seen.size >= 8) done(); };
      const timer = setInterval(() => bc.postMessage(me), 50);
      function done() { setTimeout(() => { clearInterval(timer); bc.close(); resolve(seen.size); },
                                   300); }
    })"""
    with trio.fail_after(60):
        tabs = []
        for _ in range(8):
            opened = await rpc.call("tabs/open", {"url": pages.url("/hello.html")})
            tabs.append(opened["result"]["targetId"])
        answers: list[dict[str, Any]] = []
        try:
            async with trio.open_nursery() as nursery:
                async def one(tab: str) -> None:
                    answers.append(await rpc.call("eval", {"targetId": tab, "js": barrier,
                                                           "await": True, "timeoutMs": 20000}))

                for tab in tabs:
                    nursery.start_soon(one, tab)
        finally:
            for tab in tabs:
                await rpc.call("tabs/close", {"targetId": tab})
    assert len(answers) == 8
    assert all(a.get("result", {}).get("result") == 8 for a in answers), answers


async def test_subscribe_pushes_events_as_notifications(rpc: Rpc) -> None:
    with trio.fail_after(30):
        sub = await rpc.call("subscribe", {"types": ["tab.*"]})
        assert sub["result"]["ok"] is True and isinstance(sub["result"]["lastEventId"], int)
        tab = (await rpc.call("tabs/open", {"url": "about:blank"}))["result"]["targetId"]
        note = await rpc.wait(lambda m: m.get("method") == "event"
                              and m["params"].get("targetId") == tab)
        assert note["params"]["type"] == "tab.opened" and "id" not in note
        await rpc.call("unsubscribe")
        await rpc.call("tabs/close", {"targetId": tab})
        bad = await rpc.call("subscribe", {"types": ["nope"]})
        assert bad["error"]["code"] == -32602 and bad["error"]["data"]["code"] == "BAD_REQUEST"


async def test_protocol_errors(rpc: Rpc) -> None:
    with trio.fail_after(30):
        await rpc.send_raw("{not json")
        parse = await rpc.wait(lambda m: m.get("error", {}).get("code") == -32700)
        assert parse["id"] is None
        await rpc.send_raw("[1, 2]")
        await rpc.wait(lambda m: m.get("error", {}).get("code") == -32600)
        missing = await rpc.call("no/such/method", {})
        assert missing["error"]["code"] == -32601
        bad_params = await rpc.call("eval", {"js": 1})
        assert bad_params["error"]["code"] == -32602
        assert bad_params["error"]["data"] == {"code": "BAD_REQUEST", "status": 400,
                                               "field": "js"}
        unknown_field = await rpc.call("eval", {"js": "1", "bogus": True})
        assert unknown_field["error"]["data"]["field"] == "bogus"
        gone = await rpc.call("tabs/close", {"targetId": "0123456789ABCDEF"})
        assert gone["error"]["code"] == -32000
        assert gone["error"]["data"]["code"] == "TAB_NOT_FOUND"
        assert gone["error"]["data"]["status"] == 404 and gone["error"]["data"]["hint"]
        # A notification (no id) runs, but nothing is answered.
        await rpc.send_raw('{"jsonrpc": "2.0", "method": "status"}')
        status = await rpc.call("status")
        assert status["result"]["state"] == "running"


async def test_the_lane_needs_the_token(service: ServiceInfo) -> None:
    url = f"ws://127.0.0.1:{service.port}/ws"
    good = {"Authorization": f"Bearer {service.token}"}
    with trio.fail_after(15):
        assert await ws_handshake_status(url, {}) == 401
        assert await ws_handshake_status(url, {"Authorization": "Bearer " + "x" * 43}) == 401
        assert await ws_handshake_status(url, {**good,
                                               "Origin": "https://attacker.example"}) == 403
        assert await ws_handshake_status(url, good) == 101


async def test_ws_mcp_and_gateway_calls_are_counted_in_metrics_by_lane_and_code(
        rpc: Rpc, service: ServiceInfo) -> None:
    import httpx
    from prometheus_client.parser import text_string_to_metric_families
    from supervision.harness import LOOPBACK_TLS

    from tests.integration.test_mcp import http_client

    async def counted() -> dict[tuple[str, str, str], float]:
        async with service.client() as api:
            r = await api.get("/metrics")
        assert r.status_code == 200, r.text
        return {(s.labels["lane"], s.labels["route"], s.labels["code"]): s.value
                for family in text_string_to_metric_families(r.text)
                for s in family.samples if s.name == "browserd_requests_total"}

    with trio.fail_after(60):
        before = await counted()
        missing = await rpc.call("tabs/close", {"targetId": "0" * 32})
        assert missing["error"]["data"]["code"] == "TAB_NOT_FOUND", missing
        assert "result" in await rpc.call("tabs", {})
        async with http_client(service) as client:
            stale = await client.call_tool("click", {"ref": "e999999"})
            assert stale.is_error
            mcp_code = stale.structured_content["code"]
            assert not (await client.call_tool("tabs", {})).is_error
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{service.cdp_port}",
                                     headers=service.headers, verify=LOOPBACK_TLS) as gateway:
            assert (await gateway.get("/json/version")).status_code == 200
        after = await counted()

    def grew(lane: str, route: str, code: str) -> float:
        return after.get((lane, route, code), 0) - before.get((lane, route, code), 0)

    # Every lane counts a call by its route's name (the former /ws spelling too).
    assert grew("ws", "tabs_close", "TAB_NOT_FOUND") == 1
    assert grew("ws", "tabs", "ok") == 1
    assert grew("mcp", "click", mcp_code) == 1
    assert grew("mcp", "tabs", "ok") == 1
    assert grew("cdp", "/json/version", "ok") == 1
    assert grew("http", "metrics", "ok") == 1  # the first scrape, counted by the second
