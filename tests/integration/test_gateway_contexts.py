"""A gateway client's target scope against a real Chromium (GatewayClient in this process).

Chromium is launched by hand with a DevTools port, so the test can see
everything the browser has — its ``browser_ui`` targets, pages of several
browser contexts — over a raw connection of its own, while a
:class:`~browserd.gateway.client.GatewayClient` on a browserd connection to
the same browser serves a client bound to one context (as a token bound to
one session is) or to none. The bound client sees and attaches only its
context's pages and the contexts it creates; neither client ever sees or
attaches the UI, by listing, auto-attach or id; sessions the browser
auto-attached out of scope are detached again.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest
import trio

from browserd.cdp import CdpConnection
from browserd.cdp.connection import open_cdp_connection
from browserd.gateway.client import GatewayClient, attach_root
from browserd.urlpolicy import UrlPolicy
from tests.integration._rawcdp import RawCdp, launch_chromium, open_cdp

pytestmark = pytest.mark.chromium

NO_TARGET = {"code": -32602, "message": "No target with given id found"}


@pytest.fixture(scope="module")
def chromium() -> Iterator[str]:
    with launch_chromium() as ws_url:
        yield ws_url


class Client:
    """The client's side of one in-process GatewayClient."""

    def __init__(self) -> None:
        self.to_client_send, self.to_client = trio.open_memory_channel[str](1000)
        self.from_client, self.from_client_recv = trio.open_memory_channel[str | None](100)
        self.events: list[dict[str, Any]] = []
        self.next_id = 0

    async def call(self, method: str, params: dict[str, Any] | None = None,
                   session: str | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        await self.from_client.send(orjson.dumps(message).decode())
        with trio.fail_after(20):
            while True:
                got = dict(orjson.loads(await self.to_client.receive()))
                if got.get("id") == self.next_id:
                    return got
                self.events.append(got)

    async def ok(self, method: str, params: dict[str, Any] | None = None,
                 session: str | None = None) -> dict[str, Any]:
        reply = await self.call(method, params, session)
        assert "result" in reply, (method, reply)
        return dict(reply["result"])

    async def targets(self) -> set[str]:
        return {t["targetId"] for t in (await self.ok("Target.getTargets"))["targetInfos"]}


@asynccontextmanager
async def gateway_client(conn: CdpConnection, tmp_path: Path,
                         contexts: frozenset[str] | None) -> AsyncIterator[Client]:
    root = await attach_root(conn, None)
    gateway = GatewayClient(conn, UrlPolicy(blocked_ports=frozenset()), root=root,
                            describe="test", downloads_dir=tmp_path, contexts=contexts)
    client = Client()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(gateway.run, client.from_client_recv.receive,
                           client.to_client_send.send)
        yield client
        await client.from_client.send(None)


async def attached(raw: RawCdp, target: str) -> bool:
    infos = (await raw.send("Target.getTargets"))["targetInfos"]
    return any(t["targetId"] == target and t["attached"] for t in infos)


async def test_a_bound_client_sees_its_context_only_and_nobody_sees_the_ui(
    chromium: str, tmp_path: Path,
) -> None:
    async with open_cdp(chromium) as raw, open_cdp_connection(chromium) as conn:
        infos = (await raw.send("Target.getTargets"))["targetInfos"]
        ui = [t["targetId"] for t in infos if t["type"] == "browser_ui"]
        assert ui, f"the control: a real Chromium has browser_ui targets ({infos})"
        ctx_a = (await raw.send("Target.createBrowserContext"))["browserContextId"]
        ctx_b = (await raw.send("Target.createBrowserContext"))["browserContextId"]
        page_a, page_b, page_d = [(await raw.send("Target.createTarget", {
            "url": "about:blank", **({"browserContextId": c} if c else {})}))["targetId"]
            for c in (ctx_a, ctx_b, None)]

        async with gateway_client(conn, tmp_path, frozenset({ctx_a})) as client:
            assert await client.targets() == {page_a}
            assert (await client.ok("Target.getBrowserContexts"))["browserContextIds"] == [ctx_a]
            for target in (*ui, page_b, page_d):
                reply = await client.call("Target.attachToTarget",
                                          {"targetId": target, "flatten": True})
                assert reply["error"] == NO_TARGET, (target, reply)
                assert (await client.call("Target.closeTarget",
                                          {"targetId": target}))["error"] == NO_TARGET
            session = (await client.ok("Target.attachToTarget",
                                       {"targetId": page_a, "flatten": True}))["sessionId"]
            value = await client.ok("Runtime.evaluate",
                                    {"expression": "6 * 7", "returnByValue": True}, session)
            assert value["result"]["value"] == 42

            # Auto-attach: the browser attaches everything; the client gets its page only,
            # and the sessions out of its scope are detached again.
            await client.ok("Target.setAutoAttach", {
                "autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True})
            with trio.fail_after(10):
                while await attached(raw, page_b) or await attached(raw, page_d):
                    await trio.sleep(0.05)
            await client.ok("Browser.getVersion")
            got = {e["params"]["targetInfo"]["targetId"] for e in client.events
                   if e.get("method") == "Target.attachedToTarget"}
            assert got == {page_a}, client.events  # (its attachToTarget's, auto-attach's)

            # Its own context is in scope; another's is not, nor the default one.
            own = (await client.ok("Target.createBrowserContext"))["browserContextId"]
            page_own = (await client.ok("Target.createTarget", {
                "url": "about:blank", "browserContextId": own}))["targetId"]
            assert await client.targets() == {page_a, page_own}
            for params in ({"url": "about:blank"},
                           {"url": "about:blank", "browserContextId": ctx_b}):
                assert "error" in await client.call("Target.createTarget", params)
            assert "error" in await client.call("Storage.getCookies", {"browserContextId": ctx_b})
            assert "cookies" in await client.ok("Storage.getCookies", {"browserContextId": ctx_a})
            await client.ok("Target.disposeBrowserContext", {"browserContextId": own})
            refused = await client.call("Target.disposeBrowserContext",
                                        {"browserContextId": ctx_a})
            assert "only a browser context this client created" in refused["error"]["message"]

        async with gateway_client(conn, tmp_path, None) as client:
            seen = await client.targets()
            assert {page_a, page_b, page_d} <= seen and not seen & set(ui)
            for target in ui:
                reply = await client.call("Target.attachToTarget",
                                          {"targetId": target, "flatten": True})
                assert reply["error"] == NO_TARGET
            await client.ok("Target.setDiscoverTargets", {"discover": True})
            await client.ok("Browser.getVersion")
            announced = {e["params"]["targetInfo"]["targetId"] for e in client.events
                         if e.get("method") == "Target.targetCreated"}
            assert {page_a, page_b, page_d} <= announced and not announced & set(ui)
        for target in ui:  # still there: the client was refused, not the browser broken
            assert target in {t["targetId"] for t in
                              (await raw.send("Target.getTargets"))["targetInfos"]}
