"""The extension relay without a browser: the CDP emulation against a fake extension
peer (trio memory channels), pairing files, the /relay door's checks (ASGI calls)."""

from __future__ import annotations

import json
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio

from browserd.cdp import CdpConnection, open_cdp_over
from browserd.errors import (
    BrowserGone,
    CdpError,
    ExtensionNotConnected,
    PairingFailed,
    RelayBusy,
)
from browserd.relay import PairingStore, RelayHub, RelayTransport, group_colour
from browserd.relay.door import RelayDoor

EXT_ID = "abcdefghijklmnopabcdefghijklmnop"
TARGET = "A1B2C3D4E5F60718"


class FakeExtension:
    """The extension's side of one relay connection: sees requests, answers them."""

    def __init__(self) -> None:
        send, self.requests = trio.open_memory_channel[dict[str, Any]](100)
        self.changes = 0
        self.transport = RelayTransport(profile="work", to_extension=send,
                                        user_agent="Test/1.0", on_change=self._changed)

    def _changed(self) -> None:
        self.changes += 1

    def pin(self, tab_id: int = 7, target_id: str = TARGET) -> None:
        self.transport.deliver({"type": "pinned", "tabId": tab_id, "targetInfo": {
            "targetId": target_id, "type": "page", "title": "Mine", "url": "https://a.test/"}})

    async def next_request(self) -> dict[str, Any]:
        with trio.fail_after(5):
            return await self.requests.receive()

    def answer(self, request: dict[str, Any], result: dict[str, Any]) -> None:
        self.transport.deliver({"type": "result", "id": request["id"], "result": result})


@asynccontextmanager
async def relay() -> AsyncIterator[tuple[FakeExtension, CdpConnection]]:
    ext = FakeExtension()
    with trio.fail_after(10):  # every test here is quick; a missing answer fails it fast
        async with open_cdp_over(ext.transport, ext.transport.description) as conn:
            yield ext, conn


async def test_browser_level_commands_are_answered_by_the_relay() -> None:
    async with relay() as (ext, conn):
        version = await conn.send("Browser.getVersion")
        assert version["userAgent"] == "Test/1.0"
        assert (await conn.send("Target.getTargets"))["targetInfos"] == []
        for method in ("Target.setAutoAttach", "Browser.setDownloadBehavior", "Browser.close",
                       "Target.createBrowserContext"):
            with pytest.raises(CdpError, match="not available over the extension relay"):
                await conn.send(method, {})
        assert ext.requests.statistics().current_buffer_used == 0  # nothing went out


async def test_only_pinned_tabs_are_discovered_and_listed() -> None:
    async with relay() as (ext, conn):
        events = conn.subscribe(None, frozenset({"Target.targetCreated",
                                                 "Target.targetDestroyed"}))
        ext.pin(7, "EARLY")
        await conn.send("Target.setDiscoverTargets", {"discover": True})
        ext.pin(8, "LATER")
        with trio.fail_after(5):
            seen = [await events.receive(), await events.receive()]
        assert [e.params["targetInfo"]["targetId"] for e in seen] == ["EARLY", "LATER"]
        listed = (await conn.send("Target.getTargets"))["targetInfos"]
        assert [t["targetId"] for t in listed] == ["EARLY", "LATER"]
        assert ext.changes == 2
        ext.transport.deliver({"type": "unpinned", "tabId": 7})
        with trio.fail_after(5):
            gone = await events.receive()
        assert (gone.method, gone.params) == ("Target.targetDestroyed", {"targetId": "EARLY"})
        assert [p.target_id for p in ext.transport.pinned_targets()] == ["LATER"]
        with pytest.raises(CdpError, match="No target"):
            await conn.send("Target.attachToTarget", {"targetId": "EARLY", "flatten": True})


async def test_session_commands_and_events_travel_through_the_extension() -> None:
    async with relay() as (ext, conn), trio.open_nursery() as nursery:
        ext.pin()
        with pytest.raises(CdpError, match="flatten"):
            await conn.send("Target.attachToTarget", {"targetId": TARGET})
        session_id = (await conn.send("Target.attachToTarget",
                                      {"targetId": TARGET, "flatten": True}))["sessionId"]
        events = conn.subscribe(session_id)
        answer: list[dict[str, Any]] = []

        async def evaluate() -> None:
            answer.append(await conn.send("Runtime.evaluate", {"expression": "1"},
                                          session_id=session_id))

        nursery.start_soon(evaluate)
        request = await ext.next_request()
        assert request == {"type": "send", "id": request["id"], "tabId": 7,
                           "method": "Runtime.evaluate", "params": {"expression": "1"}}
        ext.transport.deliver({"type": "event", "tabId": 7, "method": "Page.loadEventFired",
                               "params": {"timestamp": 1}})
        ext.answer(request, {"result": {"value": 1}})
        with trio.fail_after(5):
            event = await events.receive()
            while not answer:
                await trio.sleep(0)
        assert (event.method, event.session_id) == ("Page.loadEventFired", session_id)
        assert answer == [{"result": {"value": 1}}]

        # A child (an OOPIF the tab's auto-attach reported) keeps Chromium's own session id.
        ext.transport.deliver({"type": "event", "tabId": 7, "method": "Target.attachedToTarget",
                               "params": {"sessionId": "CHILD", "targetInfo": {
                                   "targetId": "F1", "type": "iframe"},
                                   "waitingForDebugger": True}})
        await conn.post("Runtime.runIfWaitingForDebugger", session_id="CHILD")
        request = await ext.next_request()
        assert (request["tabId"], request["sessionId"]) == (7, "CHILD")


async def test_an_unpinned_tab_fails_its_calls_and_detaches_browserds_sessions() -> None:
    async with relay() as (ext, conn):
        ext.pin()
        await conn.send("Target.setDiscoverTargets", {"discover": True})
        browser_events = conn.subscribe(None, frozenset({"Target.detachedFromTarget",
                                                         "Target.targetDestroyed"}))
        session_id = (await conn.send("Target.attachToTarget",
                                      {"targetId": TARGET, "flatten": True}))["sessionId"]
        pending = await conn.post("Page.navigate", {"url": "https://b.test/"},
                                  session_id=session_id)
        await ext.next_request()
        ext.transport.deliver({"type": "detached", "tabId": 7, "reason": "canceled_by_user"})
        with pytest.raises(CdpError, match="no longer shared"):
            await pending.result()
        with trio.fail_after(5):
            seen = [(await browser_events.receive()).method for _ in range(2)]
        assert seen == ["Target.detachedFromTarget", "Target.targetDestroyed"]
        with pytest.raises(CdpError, match="Session with given id not found"):
            await conn.send("Runtime.evaluate", {}, session_id=session_id)


async def test_a_released_tab_leaves_browserd_and_the_extension_is_told() -> None:
    async with relay() as (ext, conn):
        ext.pin()
        await conn.send("Target.setDiscoverTargets", {"discover": True})
        gone = conn.subscribe(None, frozenset({"Target.targetDestroyed"}))
        assert not await ext.transport.release("UNKNOWN")
        assert await ext.transport.release(TARGET)
        assert await ext.next_request() == {"type": "release", "tabId": 7}
        with trio.fail_after(5):
            assert (await gone.receive()).params == {"targetId": TARGET}
        assert ext.transport.pinned_targets() == []


async def test_agent_tabs_are_created_and_closed_but_the_users_never_closed() -> None:
    async with relay() as (ext, conn), trio.open_nursery() as nursery:
        ext.pin(7, "USERS")
        with pytest.raises(CdpError, match="closes only the tabs it opened"):
            await conn.send("Target.closeTarget", {"targetId": "USERS"})
        activated: list[dict[str, Any]] = []

        async def activate() -> None:
            activated.append(await conn.send("Target.activateTarget", {"targetId": "USERS"}))

        nursery.start_soon(activate)
        request = await ext.next_request()
        assert request == {"type": "activate", "id": request["id"], "tabId": 7}
        ext.answer(request, {})
        with trio.fail_after(5):
            while not activated:
                await trio.sleep(0)
        with pytest.raises(CdpError, match="browser contexts"):
            await conn.send("Target.createTarget", {"url": "about:blank",
                                                    "browserContextId": "X"})
        created: list[dict[str, Any]] = []

        async def create() -> None:
            created.append(await conn.send("Target.createTarget", {"url": "https://c.test/"}))

        nursery.start_soon(create)
        request = await ext.next_request()
        assert (request["type"], request["url"]) == ("create", "https://c.test/")
        ext.answer(request, {"tabId": 9, "targetInfo": {"targetId": "AGENTS", "type": "page",
                                                        "url": "about:blank"}})
        with trio.fail_after(5):
            while not created:
                await trio.sleep(0)
        assert created == [{"targetId": "AGENTS"}]
        agents = [p for p in ext.transport.pinned_targets() if p.target_id == "AGENTS"]
        assert agents[0].agent_created

        closing: list[dict[str, Any]] = []

        async def close() -> None:
            closing.append(await conn.send("Target.closeTarget", {"targetId": "AGENTS"}))

        nursery.start_soon(close)
        request = await ext.next_request()
        assert request == {"type": "close", "id": request["id"], "tabId": 9}
        # The tab's detach can overtake the answer: the close still succeeds.
        ext.transport.deliver({"type": "detached", "tabId": 9, "reason": "target_closed"})
        with trio.fail_after(5):
            while not closing:
                await trio.sleep(0)
        assert closing == [{"success": True}]


async def test_the_extension_going_away_ends_the_connection() -> None:
    async with relay() as (ext, conn):
        ext.pin()
        ext.transport.extension_gone("the extension disconnected (code 1006)")
        with trio.fail_after(5):
            await conn.wait_closed()
        assert isinstance(conn.close_reason, BrowserGone)
        assert ext.transport.pinned_targets() == []
        with pytest.raises(BrowserGone):
            await conn.send("Browser.getVersion")


async def test_closing_the_transport_closes_the_channel_to_the_extension() -> None:
    ext = FakeExtension()
    async with open_cdp_over(ext.transport, "relay"):
        pass
    with trio.fail_after(5), pytest.raises(trio.EndOfChannel):
        await ext.requests.receive()


async def test_a_hub_accepts_one_extension_per_profile() -> None:
    hub = RelayHub(PairingStore(Path("/nonexistent")))
    with pytest.raises(ExtensionNotConnected):
        hub.require_transport("work")
    first, second = FakeExtension(), FakeExtension()
    got: list[RelayTransport] = []

    async def wait() -> None:
        got.append(await hub.wait_transport("work"))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(wait)
        await trio.sleep(0)
        hub.register("work", first.transport)
    assert got == [first.transport]
    with pytest.raises(RelayBusy):
        hub.register("work", second.transport)
    first.transport.extension_gone()
    hub.unregister("work", first.transport)
    hub.register("work", second.transport)
    assert hub.require_transport("work") is second.transport


# -- pairing ---------------------------------------------------------------------------


def test_a_code_works_once_and_its_token_is_stored_as_a_hash(tmp_path: Path) -> None:
    store = PairingStore(tmp_path / "config")
    code = store.new_code("work")
    paired, token = store.exchange(code.code.lower().replace("-", " "), EXT_ID)
    assert (paired.profile, paired.extension_id) == ("work", EXT_ID)
    with pytest.raises(PairingFailed):
        store.exchange(code.code, EXT_ID)
    assert store.lookup(token) == paired
    assert store.lookup("x" + token) is None
    assert store.paired_extension_ids() == {EXT_ID}
    directory = tmp_path / "config" / "relay"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "config").stat().st_mode) == 0o700
    for path in directory.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert token not in path.read_text()
        assert code.code.replace("-", "") not in path.read_text()


def test_an_expired_code_fails(tmp_path: Path) -> None:
    now = [1000.0]
    store = PairingStore(tmp_path, clock=lambda: now[0])
    code = store.new_code("work")
    now[0] += 601
    with pytest.raises(PairingFailed):
        store.exchange(code.code, EXT_ID)


def test_wrong_codes_never_revoke_a_pending_code(tmp_path: Path) -> None:
    """Anyone local can send wrong codes: they are counted, never a reason to revoke
    (the door paces them: tests/unit/test_relay_pairing.py)."""
    store = PairingStore(tmp_path)
    code = store.new_code("work")
    for _ in range(50):
        with pytest.raises(PairingFailed):
            store.exchange("AAAA-AAAA", EXT_ID)
    assert store.failed_exchanges == 50
    paired, token = store.exchange(code.code, EXT_ID)
    assert paired.profile == "work" and store.lookup(token) == paired


def test_pairing_again_replaces_the_old_token(tmp_path: Path) -> None:
    store = PairingStore(tmp_path)
    _, old = store.exchange(store.new_code("work").code, EXT_ID)
    _, new = store.exchange(store.new_code("work").code, EXT_ID)
    assert store.lookup(old) is None and store.lookup(new) is not None
    assert store.unpair("work") and store.lookup(new) is None


def test_group_colours_are_chromes_nearest() -> None:
    assert group_colour("#C71585") == "pink"
    assert group_colour("#0066CC") == "blue"
    assert group_colour("#2E8B57") == "green"
    assert group_colour("nonsense") == "blue"


# -- the door ----------------------------------------------------------------------------


async def _post_pair(door: RelayDoor, headers: list[tuple[bytes, bytes]],
                     body: bytes) -> tuple[int, dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/relay/pair", "headers": headers}
    await door(scope, receive, send)
    return sent[0]["status"], json.loads(sent[1]["body"])


async def _unreachable(scope: Any, receive: Any, send: Any) -> None:
    raise AssertionError("the door passed a relay request on")


async def test_pairing_needs_the_control_host_and_an_extension_origin(tmp_path: Path) -> None:
    store = PairingStore(tmp_path)
    door = RelayDoor(_unreachable, RelayHub(store, colour_of=lambda p: "#C71585"),
                     control_port=18791)
    good = [(b"host", b"127.0.0.1:18791"), (b"content-type", b"application/json")]
    code = store.new_code("work").code
    body = json.dumps({"code": code}).encode()
    status, answer = await _post_pair(door, [*good, (b"origin", b"https://evil.test")], body)
    assert (status, answer["code"]) == (403, "FORBIDDEN_ORIGIN")
    status, answer = await _post_pair(door, [(b"host", b"evil.test:18791"),
                                             (b"content-type", b"application/json"),
                                             (b"origin", f"chrome-extension://{EXT_ID}".encode())],
                                      body)
    assert (status, answer["code"]) == (421, "MISDIRECTED_HOST")
    origin = (b"origin", f"chrome-extension://{EXT_ID}".encode())
    status, answer = await _post_pair(door, [*good, origin], b'{"code": "ZZZZ-ZZZZ"}')
    assert (status, answer["code"]) == (403, "PAIRING_FAILED")
    status, answer = await _post_pair(door, [*good, origin], body)
    assert status == 200
    assert (answer["profile"], answer["color"], answer["groupColor"]) == (
        "work", "#C71585", "pink")
    assert store.lookup(answer["token"]) is not None


class FakeSocket:
    """One WebSocket client of the door, as ASGI messages."""

    def __init__(self) -> None:
        self.client_send, self.server_receive = trio.open_memory_channel[dict[str, Any]](100)
        self.server_send, self.client_receive = trio.open_memory_channel[dict[str, Any]](100)

    async def receive(self) -> dict[str, Any]:
        return await self.server_receive.receive()

    async def send(self, message: Any) -> None:
        await self.server_send.send(dict(message))

    async def say(self, **message: Any) -> None:
        await self.client_send.send({"type": "websocket.receive", "text": json.dumps(message)})

    async def heard(self) -> dict[str, Any]:
        message = await self.client_receive.receive()
        assert message["type"] == "websocket.send", message
        decoded: dict[str, Any] = json.loads(message["text"])
        return decoded


async def test_one_extension_per_profile_and_its_messages_reach_the_transport(
        tmp_path: Path) -> None:
    store = PairingStore(tmp_path)
    _, token = store.exchange(store.new_code("work").code, EXT_ID)
    hub = RelayHub(store)
    door = RelayDoor(_unreachable, hub, control_port=18791)
    scope = {"type": "websocket", "path": "/relay", "headers": [
        (b"host", b"127.0.0.1:18791"), (b"origin", f"chrome-extension://{EXT_ID}".encode())]}
    first, second = FakeSocket(), FakeSocket()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(door, scope, first.receive, first.send)
            await first.client_send.send({"type": "websocket.connect"})
            assert (await first.client_receive.receive())["type"] == "websocket.accept"
            await first.say(type="hello", token=token, userAgent="UA")
            welcome = await first.heard()
            assert (welcome["type"], welcome["profile"]) == ("welcome", "work")

            nursery.start_soon(door, scope, second.receive, second.send)
            await second.client_send.send({"type": "websocket.connect"})
            assert (await second.client_receive.receive())["type"] == "websocket.accept"
            await second.say(type="hello", token=token)
            assert (await second.heard())["code"] == "RELAY_BUSY"
            assert await second.client_receive.receive() == {"type": "websocket.close",
                                                             "code": 4409}

            await first.say(type="pinned", tabId=5, targetInfo={"targetId": "T5"})
            transport = await hub.wait_transport("work")
            while not transport.pinned_targets():
                await trio.sleep(0)
            assert transport.pinned_targets()[0].target_id == "T5"
            assert transport.user_agent == "UA"

            await first.client_send.send({"type": "websocket.disconnect", "code": 1001})
            while hub.transport("work") is not None:
                await trio.sleep(0)
            assert transport.is_closed
