"""CDP bookkeeping and the connection actor against a fake CDP peer on memory streams."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import orjson
import pytest
import trio
import trio.testing
import trio_websocket

from browserd.cdp.connection import MAX_MESSAGE_SIZE, CdpConnection, open_cdp_over
from browserd.cdp.protocol import Protocol
from browserd.errors import BrowserGone, BrowserUnresponsive, CdpError, Timeout
from tests.fakecdp import FakeCdpPeer, connected

# -- Protocol: plain code, no I/O ---------------------------------------------


def test_ids_are_unique_and_replies_resolve_their_call() -> None:
    proto = Protocol()
    a, id_a, wire_a = proto.encode("A.x", None, None)
    b, id_b, wire_b = proto.encode("B.y", {"k": 1}, "S1")
    assert id_a != id_b
    assert orjson.loads(wire_b) == {"id": id_b, "method": "B.y", "params": {"k": 1},
                                    "sessionId": "S1"}
    assert "sessionId" not in orjson.loads(wire_a)
    proto.receive(orjson.dumps({"id": id_b, "result": {"v": 2}}))
    assert b.done.is_set() and b.unwrap() == {"v": 2}
    assert not a.done.is_set()
    assert proto.statistics().pending == 1


def test_error_reply_becomes_cdp_error_with_method_and_data() -> None:
    proto = Protocol()
    call, call_id, _ = proto.encode("Runtime.evaluate", None, None)
    proto.receive(orjson.dumps({"id": call_id, "error": {"code": -32000, "message": "boom",
                                                          "data": "why"}}))
    with pytest.raises(CdpError) as info:
        call.unwrap()
    assert info.value.cdp_code == -32000
    assert "Runtime.evaluate: boom: why" in str(info.value)


def test_unmatched_and_garbage_frames_are_counted_not_fatal() -> None:
    proto = Protocol()
    proto.receive(b"not json")
    proto.receive(orjson.dumps([1, 2]))
    proto.receive(orjson.dumps({"id": 999, "result": {}}))
    assert proto.statistics().unmatched_replies == 1


async def test_events_are_routed_by_session_and_method() -> None:
    proto = Protocol()
    browser = proto.subscribe(None)
    tab = proto.subscribe("S1", frozenset({"Page.loadEventFired"}))
    proto.receive(orjson.dumps({"method": "Target.targetCreated", "params": {"x": 1}}))
    proto.receive(orjson.dumps({"method": "Page.loadEventFired", "params": {},
                                "sessionId": "S1"}))
    proto.receive(orjson.dumps({"method": "Runtime.consoleAPICalled", "params": {},
                                "sessionId": "S1"}))
    proto.receive(orjson.dumps({"method": "Page.loadEventFired", "params": {},
                                "sessionId": "S2"}))
    with trio.fail_after(1):
        assert (await browser.receive()).method == "Target.targetCreated"
        event = await tab.receive()
    assert (event.method, event.session_id) == ("Page.loadEventFired", "S1")
    with pytest.raises(trio.WouldBlock):
        tab._recv.receive_nowait()


async def test_slow_subscriber_is_closed_loudly_not_silently_dropped() -> None:
    proto = Protocol()
    sub = proto.subscribe(None, buffer=2)
    for i in range(3):
        proto.receive(orjson.dumps({"method": "E.e", "params": {"i": i}}))
    assert sub.overflowed
    with trio.fail_after(1):
        assert (await sub.receive()).params == {"i": 0}
        assert (await sub.receive()).params == {"i": 1}
        with pytest.raises(CdpError, match="fell behind"):
            await sub.receive()


CONSOLE = "Runtime.consoleAPICalled"


def frame(method: str, session_id: str | None = "S1", **params: Any) -> bytes:
    message: dict[str, Any] = {"method": method, "params": params}
    if session_id is not None:
        message["sessionId"] = session_id
    return orjson.dumps(message)


async def test_a_slow_subscriber_drops_the_oldest_droppable_events_and_counts_them() -> None:
    proto = Protocol()
    sub = proto.subscribe("S1", None, buffer=3, droppable=frozenset({CONSOLE}),
                          droppable_limit=2)
    # Nobody reads: console lines 0-4 and two navigations arrive, interleaved.
    for method, n in [(CONSOLE, 0), ("Page.frameNavigated", 1), (CONSOLE, 1), (CONSOLE, 2),
                      (CONSOLE, 3), ("Page.frameNavigated", 2), (CONSOLE, 4)]:
        proto.receive(frame(method, n=n))
    assert not sub.overflowed
    assert sub.dropped == 3 and sub.dropped_by_method == {CONSOLE: 3}
    assert proto.statistics().dropped_events == 3
    with trio.fail_after(1):
        got = [(e.method, e.params["n"]) for e in [await sub.receive() for _ in range(4)]]
    # Every navigation, the newest console lines, all in wire order.
    assert got == [("Page.frameNavigated", 1), (CONSOLE, 3), ("Page.frameNavigated", 2),
                   (CONSOLE, 4)]
    with pytest.raises(trio.TooSlowError), trio.fail_after(0.05):
        await sub.receive()  # nothing left: it waits
    # A subscriber taking its events again loses nothing more.
    proto.receive(frame(CONSOLE, n=5))
    proto.receive(frame("Page.lifecycleEvent", n=6))
    with trio.fail_after(1):
        assert [(await sub.receive()).params["n"] for _ in range(2)] == [5, 6]
    assert sub.dropped == 3


async def test_droppable_events_never_take_the_room_of_the_others() -> None:
    """A flood of droppable events cannot close the subscription, but the other
    events still overflow it loudly: they are never dropped silently."""
    proto = Protocol()
    sub = proto.subscribe("S1", None, buffer=2, droppable=frozenset({CONSOLE}),
                          droppable_limit=1)
    for n in range(10_000):
        proto.receive(frame(CONSOLE, n=n))
    proto.receive(frame("Page.frameNavigated", n=-1))
    proto.receive(frame("Page.frameNavigated", n=-2))
    assert not sub.overflowed and sub.dropped == 9_999
    proto.receive(frame("Page.frameNavigated", n=-3))  # a third: no room
    assert sub.overflowed
    proto.receive(frame(CONSOLE, n=10_000))  # no longer delivered: it is closed
    with trio.fail_after(1):
        assert [(await sub.receive()).params["n"] for _ in range(3)] == [9_999, -1, -2]
        with pytest.raises(CdpError, match="fell behind"):
            await sub.receive()


def test_close_fails_every_pending_call_once() -> None:
    proto = Protocol()
    calls = [proto.encode("X.y", None, None)[0] for _ in range(3)]
    reason = BrowserGone("gone")
    proto.close(reason)
    proto.close(BrowserGone("second"))
    assert all(c.done.is_set() and c.error is reason for c in calls)
    with pytest.raises(BrowserGone):
        proto.encode("X.y", None, None)


def test_fail_session_only_touches_that_session() -> None:
    proto = Protocol()
    mine, _, _ = proto.encode("A.a", None, "S1")
    other, _, _ = proto.encode("A.a", None, "S2")
    proto.fail_session("S1", BrowserGone("crashed"))
    assert mine.done.is_set() and not other.done.is_set()


# -- CdpConnection against a fake peer ----------------------------------------

Responder = Callable[[dict[str, Any]], Any]


@asynccontextmanager
async def fake_browser(
    respond: Responder,
) -> AsyncIterator[tuple[CdpConnection, trio_websocket.WebSocketConnection]]:
    """A CdpConnection wired to a fake peer that answers with ``respond(message)``.

    ``respond`` returns a result dict, an ("error", msg) tuple, or None (no reply).
    """
    client_stream, server_stream = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        server_ws_box: list[trio_websocket.WebSocketConnection] = []

        async def serve() -> None:
            request = await trio_websocket.wrap_server_stream(nursery, server_stream)
            ws = await request.accept()
            server_ws_box.append(ws)
            try:
                while True:
                    message = orjson.loads(await ws.get_message())
                    reply = respond(message)
                    if reply is None:
                        continue
                    if isinstance(reply, tuple):
                        await ws.send_message(orjson.dumps(
                            {"id": message["id"], "error": {"code": -1, "message": reply[1]}}
                        ).decode())
                    else:
                        out = {"id": message["id"], "result": reply}
                        if "sessionId" in message:
                            out["sessionId"] = message["sessionId"]
                        await ws.send_message(orjson.dumps(out).decode())
            except trio_websocket.ConnectionClosed:
                pass

        nursery.start_soon(serve)
        client_ws = await trio_websocket.wrap_client_stream(
            nursery, client_stream, "fake", "/devtools/browser/x",
            max_message_size=MAX_MESSAGE_SIZE)
        while not server_ws_box:
            await trio.sleep(0)
        async with open_cdp_over(client_ws) as conn:
            yield conn, server_ws_box[0]
        nursery.cancel_scope.cancel()


async def test_send_returns_the_result_and_routes_sessions() -> None:
    with trio.fail_after(5):
        async with fake_browser(lambda m: {"echo": m["method"],
                                           "sid": m.get("sessionId")}) as (conn, _):
            assert await conn.send("Browser.getVersion") == {"echo": "Browser.getVersion",
                                                             "sid": None}
            session = conn.session("S9")
            assert (await session.send("Page.enable"))["sid"] == "S9"


async def test_protocol_error_raises_cdp_error() -> None:
    with trio.fail_after(5):
        async with fake_browser(lambda m: ("error", "nope")) as (conn, _):
            with pytest.raises(CdpError, match="nope"):
                await conn.send("Page.navigate", {"url": "x"})


async def test_caller_deadline_applies_and_pending_entry_is_removed() -> None:
    with trio.fail_after(5):
        async with fake_browser(lambda m: None) as (conn, _):
            with trio.move_on_after(0.1) as scope:
                await conn.send("Runtime.evaluate")
            assert scope.cancelled_caught
            assert conn.statistics().pending == 0


async def test_without_a_caller_deadline_the_default_cap_applies(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # The cap is the deadline under test, so the call must see no deadline at
    # all: the shield hides the suite's own per-test deadline (tests/conftest.py).
    # A watchdog beside it (not around it) still fails the test if the cap is
    # gone; the autojump clock makes both pass instantly.
    async def watchdog() -> None:
        await trio.sleep(3600)
        raise AssertionError("no default cap: the call waited an hour")

    with trio.CancelScope(shield=True):
        async with trio.open_nursery() as guard:
            guard.start_soon(watchdog)
            async with fake_browser(lambda m: None) as (conn, _):
                assert trio.current_effective_deadline() == math.inf
                started = trio.current_time()
                with pytest.raises(Timeout):
                    await conn.send("Runtime.evaluate")
                assert trio.current_time() - started == pytest.approx(30.0, abs=0.5)
                assert conn.statistics().pending == 0
            guard.cancel_scope.cancel()


async def test_socket_close_fails_pending_calls_at_once() -> None:
    with trio.fail_after(5):
        async with fake_browser(lambda m: None) as (conn, server_ws):
            errors: list[BaseException] = []

            async def call() -> None:
                try:
                    await conn.send("Runtime.evaluate", {"expression": "new Promise(()=>{})"})
                except BrowserGone as exc:
                    errors.append(exc)

            async with trio.open_nursery() as nursery:
                for _ in range(3):
                    nursery.start_soon(call)
                await trio.testing.wait_all_tasks_blocked()
                started = trio.current_time()
                await server_ws.aclose()
            assert len(errors) == 3
            assert trio.current_time() - started < 1
            assert conn.is_closed
            with pytest.raises(BrowserGone):
                await conn.send("Browser.getVersion")


async def test_events_reach_subscribers_of_their_session() -> None:
    with trio.fail_after(5):
        async with fake_browser(lambda m: {}) as (conn, server_ws):
            sub = conn.subscribe("S1", frozenset({"Page.loadEventFired"}))
            await server_ws.send_message(orjson.dumps(
                {"method": "Page.loadEventFired", "params": {"t": 1}, "sessionId": "S1"}).decode())
            event = await sub.receive()
            assert event.params == {"t": 1}
            await server_ws.aclose()
            with pytest.raises(BrowserGone):
                await sub.receive()


async def test_large_messages_are_accepted() -> None:
    big = "x" * (3 * 1024 * 1024)
    with trio.fail_after(10):
        async with fake_browser(lambda m: {"data": big}) as (conn, _):
            assert len((await conn.send("Page.captureScreenshot"))["data"]) == len(big)


async def test_a_subscriber_that_never_reads_keeps_the_essentials_and_counts_the_rest() -> None:
    """Over a real connection (the shared fake peer): the reader never waits for a
    subscriber that does not read; what it lost is counted, on it and in the statistics."""
    peer = FakeCdpPeer()
    with trio.fail_after(10):
        async with connected(peer) as conn:
            stalled = conn.subscribe("S1", frozenset({CONSOLE, "Page.frameNavigated"}),
                                     buffer=10, droppable=frozenset({CONSOLE}),
                                     droppable_limit=5)
            for n in range(50):
                await peer.emit(CONSOLE, {"n": n}, "S1")
                if n % 20 == 10:
                    await peer.emit("Page.frameNavigated", {"n": -n}, "S1")
            await conn.send("Browser.getVersion")  # answered after every event above
            assert stalled.dropped == 45 and conn.statistics().dropped_events == 45
            got = [(await stalled.receive()).params["n"] for _ in range(7)]
            assert got == [-10, -30, 45, 46, 47, 48, 49]
            assert not stalled.overflowed


def test_a_call_after_a_hang_closed_the_connection_is_told_the_browser_hung() -> None:
    """After the liveness probe closed the connection (the browser hung), a new call fails
    with the cause (503 BROWSER_UNRESPONSIVE); after any other end, BROWSER_GONE."""
    hung = Protocol()
    hung.close(BrowserUnresponsive("no answer to Browser.getVersion within 2 s"))
    with pytest.raises(BrowserUnresponsive, match="within 2 s"):
        hung.encode("Runtime.evaluate", {}, None)
    gone = Protocol()
    gone.close(BrowserGone("the pipe closed"))
    with pytest.raises(BrowserGone, match="the pipe closed"):
        gone.encode("Runtime.evaluate", {}, None)
