"""An extension profile's supervisor over fake extension peers: browserd's registry and tab
actors run unchanged over the relay, and extensions may come and go."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from browserd.config import Settings
from browserd.paths import Paths
from browserd.relay import PairingStore, RelayHub, RelayTransport
from browserd.relay.subtree import extension_subtree
from browserd.supervisor import BrowserSupervisor
from tests.integration.helpers import poll


class AnsweringExtension:
    """A fake extension that answers every command like a blank page would."""

    def __init__(self) -> None:
        send, self.requests = trio.open_memory_channel[dict[str, Any]](100)
        self.transport = RelayTransport(profile="work", to_extension=send, user_agent="Fake/1")
        self.methods: list[str] = []

    async def serve(self) -> None:
        async for request in self.requests:
            method = request.get("method", request["type"])
            self.methods.append(method)
            result: dict[str, Any] = {}
            if method == "Page.getFrameTree":
                result = {"frameTree": {"frame": {"id": "T1", "loaderId": "L1",
                                                  "url": "https://a.test/"}}}
            elif method == "Runtime.evaluate":
                result = {"result": {"type": "string", "value": "complete"}}
            self.transport.deliver({"type": "result", "id": request["id"], "result": result})


async def _wait_running(sup: BrowserSupervisor, target_id: str) -> None:
    await poll(lambda: sup.runtime is not None and target_id in sup.runtime.tabs.target_ids(),
               every=0.01)


async def test_the_supervisor_serves_each_extension_connection_in_turn(tmp_path: Path) -> None:
    hub = RelayHub(PairingStore(tmp_path))
    paths = Paths.resolve({"BROWSERD_HOME": str(tmp_path)})
    sup = BrowserSupervisor(Settings(profile="work"), paths, subtree=extension_subtree(hub))
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            nursery.start_soon(sup.start)
            first = AnsweringExtension()
            nursery.start_soon(first.serve)
            hub.register("work", first.transport)
            first.transport.deliver({"type": "pinned", "tabId": 3, "targetInfo": {
                "targetId": "T1", "title": "Mine", "url": "https://a.test/"}})
            await _wait_running(sup, "T1")
            assert sup.state == "running"
            # The tab actor enabled its domains through the extension.
            assert {"Page.enable", "Runtime.enable", "Page.getFrameTree"} <= set(first.methods)

            first.transport.extension_gone()
            hub.unregister("work", first.transport)
            while sup.runtime is not None:
                await trio.sleep(0.01)

            # Nothing carries over: the next connection lists only what is pinned on it.
            second = AnsweringExtension()
            nursery.start_soon(second.serve)
            hub.register("work", second.transport)
            second.transport.deliver({"type": "pinned", "tabId": 4, "targetInfo": {
                "targetId": "T2", "title": "Other", "url": "https://b.test/"}})
            await _wait_running(sup, "T2")
            assert sup.runtime is not None
            assert sup.runtime.tabs.target_ids() == ["T2"]
            assert sup.restarts == 0
            nursery.cancel_scope.cancel()
