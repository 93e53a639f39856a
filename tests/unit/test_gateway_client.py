"""GatewayClient's bookkeeping against a fake browser: ids, owned sessions, refusals, detach."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import trio
import trio.testing

from browserd.cdp.connection import open_cdp_over
from browserd.errors import BrowserGone
from browserd.gateway.client import GatewayClient
from browserd.urlpolicy import UrlPolicy

ROOT, CHILD, OTHER = "ROOT-SESSION", "CHILD-SESSION", "BROWSERD-OWN-SESSION"


class FakeBrowser:
    """A Transport whose far end is the test: it sees what browserd sends, and speaks."""

    description = "fake"

    def __init__(self) -> None:
        self.to_browser_send, self.to_browser = trio.open_memory_channel[bytes](100)
        self.from_browser, self.from_browser_recv = trio.open_memory_channel[bytes](100)

    async def send(self, data: bytes) -> None:
        await self.to_browser_send.send(data)

    async def receive(self) -> bytes:
        try:
            return await self.from_browser_recv.receive()
        except trio.EndOfChannel:
            raise BrowserGone("fake browser gone") from None

    async def aclose(self) -> None:
        self.from_browser.close()

    async def next_command(self) -> dict[str, Any]:
        return dict(orjson.loads(await self.to_browser.receive()))

    async def say(self, message: dict[str, Any]) -> None:
        await self.from_browser.send(orjson.dumps(message))


async def test_client_gets_its_ids_its_sessions_events_and_browserds_rules() -> None:
    browser = FakeBrowser()
    to_client_send, to_client = trio.open_memory_channel[str](100)
    from_client, from_client_recv = trio.open_memory_channel[str | None](100)
    policy = UrlPolicy(blocked_ports=frozenset({18791, 18792}))

    async def client_says(message: dict[str, Any]) -> None:
        await from_client.send(orjson.dumps(message).decode())

    async def client_hears() -> dict[str, Any]:
        return dict(orjson.loads(await to_client.receive()))

    with trio.fail_after(5):
        async with open_cdp_over(browser, "fake") as conn, trio.open_nursery() as nursery:
            client = GatewayClient(conn, policy, root=ROOT, describe="test",
                                   downloads_dir=Path("/srv/browserd/downloads/clawd"))
            nursery.start_soon(client.run, from_client_recv.receive, to_client_send.send)
            await trio.testing.wait_all_tasks_blocked()

            # No sessionId: the client's root session; its id 1 is its own.
            await client_says({"id": 1, "method": "Target.setAutoAttach",
                               "params": {"autoAttach": True, "flatten": True}})
            sent = await browser.next_command()
            assert sent["sessionId"] == ROOT and sent["method"] == "Target.setAutoAttach"
            # A child attaches; its first event follows at once, in the same read.
            await browser.say({"method": "Target.attachedToTarget", "sessionId": ROOT,
                               "params": {"sessionId": CHILD, "targetInfo": {
                                   "targetId": "T-CHILD", "type": "page", "url": "https://a.test/",
                                   "browserContextId": "CTX"}}})
            await browser.say({"method": "Page.lifecycleEvent", "sessionId": CHILD,
                               "params": {"name": "init"}})
            await browser.say({"method": "Page.lifecycleEvent", "sessionId": OTHER,
                               "params": {"name": "not yours"}})
            await browser.say({"id": sent["id"], "result": {}, "sessionId": ROOT})
            attached = await client_hears()
            assert attached["method"] == "Target.attachedToTarget" and "sessionId" not in attached
            child_event = await client_hears()
            assert child_event == {"method": "Page.lifecycleEvent", "sessionId": CHILD,
                                   "params": {"name": "init"}}
            assert await client_hears() == {"id": 1, "result": {}}  # not OTHER's event

            # Its child session is usable; browserd's own is not, nor are the refused methods.
            await client_says({"id": 2, "method": "Runtime.evaluate", "sessionId": CHILD,
                               "params": {"expression": "1"}})
            sent = await browser.next_command()
            assert sent["sessionId"] == CHILD
            await browser.say({"id": sent["id"], "sessionId": CHILD,
                               "error": {"code": -32000, "message": "boom"}})
            assert await client_hears() == {"id": 2, "sessionId": CHILD,
                                            "error": {"code": -32000, "message": "boom"}}
            for message, code in (
                ({"id": 3, "method": "Runtime.evaluate", "sessionId": OTHER}, -32001),
                ({"id": 4, "method": "Target.detachFromTarget",
                  "params": {"sessionId": OTHER}}, -32000),
                ({"id": 5, "method": "Browser.close"}, -32000),
                ({"id": 5, "method": "Target.sendMessageToTarget", "params": {
                    "sessionId": CHILD, "message": '{"id":1,"method":"Browser.crash"}'}},
                 -32000),
                ({"id": 5, "method": "Browser.crash", "sessionId": CHILD}, -32000),
                ({"id": 6, "method": "Page.navigate", "params": {"url": "file:///etc/x"}},
                 -32000),
                ({"id": 7, "method": "Target.createTarget",
                  "params": {"url": "http://127.0.0.1:18792/json/list"}}, -32000),
                ({"id": "x", "method": "Runtime.enable"}, -32600),
                ({"id": 8, "method": "Browser.setDownloadBehavior",
                  "params": {"behavior": "default"}}, -32000),
            ):
                await client_says(message)
                reply = await client_hears()
                assert reply["error"]["code"] == code, (message, reply)
            assert browser.to_browser.statistics().current_buffer_used == 0  # none forwarded

            # Downloads may only go to browserd's own directory.
            await client_says({"id": 9, "method": "Browser.setDownloadBehavior", "params": {
                "behavior": "allowAndName", "downloadPath": "/root/.ssh"}})
            sent = await browser.next_command()
            assert sent["params"]["downloadPath"] == "/srv/browserd/downloads/clawd"
            await browser.say({"id": sent["id"], "result": {}, "sessionId": ROOT})
            assert await client_hears() == {"id": 9, "result": {}}

            # The client goes: its sessions are detached, the child through its root.
            await from_client.send(None)
            detaches = []
            for _ in range(2):
                command = await browser.next_command()
                detaches.append((command["params"]["sessionId"], command.get("sessionId")))
                await browser.say({"id": command["id"], "result": {},
                                   **({"sessionId": command["sessionId"]}
                                      if "sessionId" in command else {})})
            assert detaches == [(CHILD, ROOT), (ROOT, None)]


async def test_a_reply_reaches_the_client_before_the_events_that_followed_it() -> None:
    """Wire order: Page.getFrameTree's reply, then the contexts Runtime.enable reports.

    Playwright ignores an execution context whose frame it does not know yet,
    so an event overtaking the reply it followed left its page without a main
    world and every ``evaluate`` hanging.
    """
    browser = FakeBrowser()
    to_client_send, to_client = trio.open_memory_channel[str](100)
    from_client, from_client_recv = trio.open_memory_channel[str | None](100)

    with trio.fail_after(5):
        async with open_cdp_over(browser, "fake") as conn, trio.open_nursery() as nursery:
            client = GatewayClient(conn, UrlPolicy(blocked_ports=frozenset()), root=ROOT,
                                   describe="test",
                                   downloads_dir=Path("/srv/browserd/downloads/clawd"))
            nursery.start_soon(client.run, from_client_recv.receive, to_client_send.send)
            for call_id, method in ((1, "Page.getFrameTree"), (2, "Runtime.enable")):
                await from_client.send(orjson.dumps({"id": call_id, "method": method}).decode())
            tree = await browser.next_command()
            enable = await browser.next_command()
            # Everything arrives in one burst, before any task of the client runs.
            await browser.say({"id": tree["id"], "sessionId": ROOT,
                               "result": {"frameTree": {"frame": {"id": "F"}}}})
            await browser.say({"method": "Runtime.executionContextCreated", "sessionId": ROOT,
                               "params": {"context": {"id": 1, "auxData": {"frameId": "F"}}}})
            await browser.say({"id": enable["id"], "sessionId": ROOT, "result": {}})
            await browser.say({"method": "Runtime.consoleAPICalled", "sessionId": ROOT,
                               "params": {"type": "log"}})
            heard = [orjson.loads(await to_client.receive()) for _ in range(4)]
            assert [m.get("id") or m["method"] for m in heard] == [
                1, "Runtime.executionContextCreated", 2, "Runtime.consoleAPICalled"]
            await from_client.send(None)  # the client goes; its root session is detached
            detach = await browser.next_command()
            await browser.say({"id": detach["id"], "result": {}})
