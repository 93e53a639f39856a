"""A gateway client sees and attaches only the targets of its scope (a fake browser).

The browser (tests/fakecdp.py) holds pages of two browser contexts, the
browser's own UI (``browser_ui`` at ``chrome://omnibox-popup.top-chrome/``)
and an extension's page. A client bound to one context sees only that
context's pages (plus the contexts it creates); an unbound one sees every
context's pages; neither ever sees the UI or the extension, gets a session
the browser auto-attached to one, or can attach, activate, close or describe
one by id. And with downloads_enabled = false the client's ``allow`` reaches
the browser as ``deny``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import orjson
import trio
import trio.testing

from browserd.gateway.client import GatewayClient
from browserd.urlpolicy import UrlPolicy
from tests.fakecdp import FakeCdpPeer, Params, Refuse, connected

ROOT = "CLIENT-ROOT"
TARGETS = {
    "A1": {"type": "page", "url": "https://a.test/", "browserContextId": "CTX-A"},
    "A2": {"type": "iframe", "url": "https://frame.test/", "browserContextId": "CTX-A"},
    "B1": {"type": "page", "url": "https://b.test/", "browserContextId": "CTX-B"},
    "UI": {"type": "browser_ui", "url": "chrome://omnibox-popup.top-chrome/",
           "browserContextId": "CTX-B"},
    "EXT": {"type": "page", "url": "chrome-extension://abcdef/popup.html",
            "browserContextId": "CTX-B"},
}


def target_info(target: str, targets: dict[str, dict[str, str]] = TARGETS) -> dict[str, Any]:
    return {"targetId": target, "title": "", "attached": False, **targets[target]}


def browser() -> FakeCdpPeer:
    made: list[str] = []
    targets = dict(TARGETS)

    def get_info(params: Params, session: str | None) -> Params | Refuse:
        target = params.get("targetId")
        if target in targets:
            return {"targetInfo": target_info(str(target), targets)}
        return Refuse("No target with given id found", -32602)

    def create_target(params: Params, session: str | None) -> Params:
        target = f"NEW{len(made)}"
        made.append(target)
        targets[target] = {"type": "page", "url": "about:blank",
                           "browserContextId": params.get("browserContextId", "CTX-B")}
        return {"targetId": target}

    return FakeCdpPeer({
        "Target.getTargets": lambda p, s: {
            "targetInfos": [target_info(t, targets) for t in targets]},
        "Target.getTargetInfo": get_info,
        "Target.attachToTarget": lambda p, s: {"sessionId": f"S-{p['targetId']}"},
        "Target.createBrowserContext": lambda p, s: {"browserContextId": "CTX-OWN"},
        "Target.createTarget": create_target,
        "Target.getBrowserContexts": lambda p, s: {
            "browserContextIds": ["CTX-A", "CTX-B", "CTX-OWN"]},
    })


class Client:
    """The test's side of one gateway client."""

    def __init__(self, gateway: GatewayClient) -> None:
        self.gateway = gateway
        self.to_client_send, self.to_client = trio.open_memory_channel[str](100)
        self.from_client, self.from_client_recv = trio.open_memory_channel[str | None](100)
        self.events: list[dict[str, Any]] = []
        self.next_id = 0

    async def call(self, method: str, params: Params | None = None,
                   session: str | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        await self.from_client.send(orjson.dumps(message).decode())
        while True:
            got = dict(orjson.loads(await self.to_client.receive()))
            if got.get("id") == self.next_id:
                return got
            self.events.append(got)

    async def settle(self) -> None:
        """Take every event that reached the client so far (after a round trip)."""
        await self.call("Runtime.evaluate", {"expression": "1"})


@asynccontextmanager
async def gateway_client(peer: FakeCdpPeer, **kw: Any) -> AsyncIterator[Client]:
    async with connected(peer) as conn, trio.open_nursery() as nursery:
        client = Client(GatewayClient(
            conn, UrlPolicy(blocked_ports=frozenset()), root=ROOT, describe="test",
            downloads_dir=Path("/srv/browserd/downloads/clawd"), **kw))
        nursery.start_soon(client.gateway.run, client.from_client_recv.receive,
                           client.to_client_send.send)
        yield client
        await client.from_client.send(None)


def ids(reply: dict[str, Any]) -> set[str]:
    return {t["targetId"] for t in reply["result"]["targetInfos"]}


async def test_a_session_bound_client_sees_and_attaches_its_contexts_targets_only() -> None:
    peer = browser()
    async with gateway_client(peer, contexts=frozenset({"CTX-A"})) as client:
        assert ids(await client.call("Target.getTargets")) == {"A1", "A2"}
        contexts = await client.call("Target.getBrowserContexts")
        assert contexts["result"] == {"browserContextIds": ["CTX-A"]}

        # Out of scope by id: Chromium's own answer for an unknown id, nothing forwarded.
        for method in ("Target.attachToTarget", "Target.activateTarget", "Target.closeTarget",
                       "Target.getTargetInfo", "Browser.getWindowForTarget"):
            for target in ("B1", "UI", "EXT", "NO-SUCH"):
                reply = await client.call(method, {"targetId": target, "flatten": True})
                assert reply["error"] == {"code": -32602,
                                          "message": "No target with given id found"}, reply
        assert [p["targetId"] for p in peer.sent("Target.attachToTarget")] == []
        assert peer.sent("Target.closeTarget") == peer.sent("Target.activateTarget") == []
        attached = await client.call("Target.attachToTarget", {"targetId": "A1", "flatten": True})
        assert attached["result"] == {"sessionId": "S-A1"}
        page = await client.call("Runtime.evaluate", {"expression": "2"}, session="S-A1")
        assert "result" in page

        # Events about targets out of scope never reach the client.
        for target in ("B1", "UI", "EXT", "A2"):
            await peer.emit("Target.targetCreated", {"targetInfo": target_info(target)}, ROOT)
            await peer.emit("Target.targetInfoChanged", {"targetInfo": target_info(target)},
                            ROOT)
        for target in ("B1", "UI", "A2"):
            await peer.emit("Target.targetDestroyed", {"targetId": target}, ROOT)
        # A session auto-attached to a target out of scope is not the client's: detached.
        await peer.emit("Target.attachedToTarget", {
            "sessionId": "S-UI", "targetInfo": target_info("UI"),
            "waitingForDebugger": True}, ROOT)
        await peer.emit("Page.frameNavigated", {"frame": {"url": "chrome://x"}}, "S-UI")
        await peer.emit("Target.detachedFromTarget", {"sessionId": "S-UI"}, ROOT)
        await client.settle()
        heard = [(e["method"], (e["params"].get("targetInfo") or e["params"]).get("targetId"))
                 for e in client.events]
        assert heard == [("Target.targetCreated", "A2"), ("Target.targetInfoChanged", "A2"),
                         ("Target.targetDestroyed", "A2")], client.events
        with trio.fail_after(5):
            while not peer.sent("Target.detachFromTarget"):
                await trio.sleep(0.01)
        assert peer.sent("Target.detachFromTarget") == [{"sessionId": "S-UI"}]
        assert [m.get("sessionId") for m in peer.received
                if m.get("method") == "Target.detachFromTarget"] == [ROOT]
        stray = await client.call("Runtime.evaluate", {"expression": "1"}, session="S-UI")
        assert stray["error"]["code"] == -32001

        # Its own context is in scope: a page there is listed and may be attached.
        made = await client.call("Target.createBrowserContext")
        assert made["result"] == {"browserContextId": "CTX-OWN"}
        page_made = await client.call("Target.createTarget", {
            "url": "about:blank", "browserContextId": "CTX-OWN"})
        new = page_made["result"]["targetId"]
        assert new in ids(await client.call("Target.getTargets"))
        assert "result" in await client.call("Target.attachToTarget",
                                             {"targetId": new, "flatten": True})
        # The default context and another context are not.
        for params in ({"url": "about:blank"},
                       {"url": "about:blank", "browserContextId": "CTX-B"}):
            assert "error" in await client.call("Target.createTarget", params)
        assert "error" in await client.call("Storage.getCookies", {"browserContextId": "CTX-B"})
        assert "error" in await client.call("Storage.getCookies")
    assert len(peer.sent("Target.createTarget")) == 1
    assert peer.sent("Storage.getCookies") == []


async def test_an_unbound_client_sees_every_contexts_pages_but_never_the_ui() -> None:
    peer = browser()
    async with gateway_client(peer) as client:
        assert ids(await client.call("Target.getTargets")) == {"A1", "A2", "B1"}
        reply = await client.call("Target.attachToTarget", {"targetId": "UI", "flatten": True})
        assert reply["error"]["message"] == "No target with given id found"
        assert "result" in await client.call("Target.attachToTarget",
                                             {"targetId": "B1", "flatten": True})
        assert [p["targetId"] for p in peer.sent("Target.attachToTarget")] == ["B1"]
        contexts = await client.call("Target.getBrowserContexts")
        assert len(contexts["result"]["browserContextIds"]) == 3


async def test_with_downloads_disabled_a_clients_allow_becomes_deny() -> None:
    peer = browser()
    async with gateway_client(peer, downloads_enabled=False) as client:
        for behavior in ("allow", "allowAndName"):
            reply = await client.call("Browser.setDownloadBehavior", {
                "behavior": behavior, "downloadPath": "/tmp/elsewhere",
                "browserContextId": "CTX-A"})
            assert "result" in reply
        reply = await client.call("Page.setDownloadBehavior", {
            "behavior": "allow", "downloadPath": "/tmp/elsewhere"})
        assert "result" in reply
    sent = peer.sent("Browser.setDownloadBehavior") + peer.sent("Page.setDownloadBehavior")
    assert sent == [{"behavior": "deny", "browserContextId": "CTX-A"}] * 2 + [
        {"behavior": "deny"}]


async def test_rules_apply_on_child_sessions_too() -> None:
    """A flat child session's commands get the same rules as the root's."""
    peer = browser()
    async with gateway_client(peer) as client:
        await client.call("Target.attachToTarget", {"targetId": "A1", "flatten": True})
        for method, params in (
            ("Target.sendMessageToTarget", {"sessionId": "S-A1", "message": "{}"}),
            ("Browser.crash", {}),
            ("Page.navigate", {"url": "file:///etc/hostname"}),
            ("DOM.setFileInputFiles", {"files": ["/etc/shadow"], "nodeId": 1}),
            ("Browser.setDownloadBehavior", {"behavior": "default"}),
            ("Target.attachToTarget", {"targetId": "A2"}),
            ("Target.attachToTarget", {"targetId": "UI", "flatten": True}),
        ):
            reply = await client.call(method, params, session="S-A1")
            assert "error" in reply and reply["sessionId"] == "S-A1", (method, reply)
        setting = await client.call("Page.setDownloadBehavior", {
            "behavior": "allow", "downloadPath": "/tmp/elsewhere"}, session="S-A1")
        assert "result" in setting
    forwarded = {m["method"] for m in peer.received if m.get("sessionId") == "S-A1"}
    assert forwarded == {"Page.setDownloadBehavior"}
    assert peer.sent("Page.setDownloadBehavior") == [{
        "behavior": "allowAndName", "downloadPath": "/srv/browserd/downloads/clawd"}]
