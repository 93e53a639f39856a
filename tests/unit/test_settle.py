"""Settling (browserd.tabs.settle) against the shared fake CDP peer (no Chromium)."""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

from browserd.tabs import inflight, settle
from browserd.tabs.state import LoadState
from tests.fakecdp import FakeCdpPeer, running_tab, tab_peer

SID = "S-T1"


def scripted_tab(ready_state: str) -> FakeCdpPeer:
    """A tab whose document reports ``ready_state``; isolated worlds can be created."""
    peer = tab_peer(ready_state=ready_state)
    peer.on("Page.createIsolatedWorld", lambda p, s: {"executionContextId": 7})
    return peer


async def test_a_parsed_document_is_read_at_once_without_asking_the_page() -> None:
    with trio.fail_after(10):
        peer = scripted_tab("interactive")
        async with running_tab(peer) as tab:
            assert await settle.settle_document(tab) is LoadState.DOMCONTENTLOADED
            assert peer.sent("Page.createIsolatedWorld") == []


async def test_a_loading_document_is_waited_for_until_it_is_parsed() -> None:
    with trio.fail_after(10):
        peer = scripted_tab("loading")
        async with running_tab(peer) as tab:
            got: list[LoadState] = []
            async with trio.open_nursery() as nursery:
                async def read() -> None:
                    got.append(await settle.settle_document(tab, settle_ms=8000))

                nursery.start_soon(read)
                await trio.testing.wait_all_tasks_blocked()
                assert got == []  # still waiting
                await peer.emit("Page.lifecycleEvent", {"frameId": "T1", "loaderId": "L1",
                                                        "name": "DOMContentLoaded"}, SID)
            assert got == [LoadState.DOMCONTENTLOADED]


async def test_a_document_that_stays_loading_is_reported_not_raised() -> None:
    with trio.fail_after(10):
        async with running_tab(scripted_tab("loading")) as tab:
            assert await settle.settle_document(tab, settle_ms=300) is LoadState.LOADING
            assert await settle.settle_document(tab, settle_ms=0) is LoadState.LOADING


async def test_after_settling_adds_the_load_state_to_the_answer() -> None:
    with trio.fail_after(10):
        async with running_tab(scripted_tab("complete")) as tab:
            async def read() -> dict[str, Any]:
                return {"count": 0}

            answer = await settle.after_settling(tab, 5000, read)
            assert {k: answer[k] for k in ("count", "loadState")} == {
                "count": 0, "loadState": "load"}
            assert isinstance(answer["settled"], bool)


async def test_an_action_that_did_not_navigate_gets_no_load_state() -> None:
    with trio.fail_after(10):
        async with running_tab(scripted_tab("loading")) as tab:
            result: dict[str, Any] = {"ok": True, "effects": {}}
            await settle.settle_after_input(tab, result, wait_until="load",
                                            until=trio.current_time() + 5)
            assert result == {"ok": True, "effects": {}}


async def test_an_action_that_navigated_waits_for_its_wait_until() -> None:
    with trio.fail_after(10):
        peer = scripted_tab("loading")
        async with running_tab(peer) as tab:
            result: dict[str, Any] = {"ok": True, "effects": {"navigated": "https://a.test/"}}
            async with trio.open_nursery() as nursery:
                nursery.start_soon(lambda: settle.settle_after_input(
                    tab, result, wait_until="load", until=trio.current_time() + 8))
                await trio.testing.wait_all_tasks_blocked()
                assert "loadState" not in result["effects"]
                peer.on("Runtime.evaluate", lambda p, s: {"result": {
                    "type": "string", "value": "complete"}})
                await peer.emit("Page.lifecycleEvent", {"frameId": "T1", "loaderId": "L1",
                                                        "name": "load"}, SID)
            assert result["effects"] == {"navigated": "https://a.test/", "loadState": "load"}
            none: dict[str, Any] = {"effects": {"navigated": "https://a.test/"}}
            await settle.settle_after_input(tab, none, wait_until="none",
                                            until=trio.current_time() + 5)
            assert none["effects"]["loadState"] == "load"


# -- reads wait for what the page draws from (browserd.tabs.inflight) ---------------------


def _sent(request_id: str, kind: str) -> dict[str, Any]:
    return {"requestId": request_id, "type": kind, "request": {"url": "https://a.test/x"}}


async def test_a_read_waits_for_a_fetch_in_flight_then_for_the_dom() -> None:
    with trio.fail_after(10):
        peer = scripted_tab("complete")
        async with running_tab(peer) as tab:
            await tab.wait_enabled()
            await peer.emit("Network.requestWillBeSent", _sent("R1", "Fetch"), SID)
            await trio.testing.wait_all_tasks_blocked()  # the reader has fed the tab
            assert len(tab.inflight) == 1
            got: list[tuple[Any, bool]] = []
            async with trio.open_nursery() as nursery:
                async def read() -> None:
                    got.append(await settle.settle_read(tab, settle_ms=8000))

                nursery.start_soon(read)
                await trio.testing.wait_all_tasks_blocked()
                assert got == []  # the fetch is still open
                quiet_checks = [p for p in peer.sent("Runtime.evaluate")
                                if "__browserdQuiet" in str(p.get("expression"))]
                assert quiet_checks == []  # nothing asked of the page yet
                await peer.emit("Network.loadingFinished", {"requestId": "R1"}, SID)
            assert got == [(LoadState.LOAD, True)]
            assert [p for p in peer.sent("Runtime.evaluate")
                    if "__browserdQuiet" in str(p.get("expression"))]


async def test_a_long_poll_or_a_socket_does_not_hold_a_read() -> None:
    with trio.fail_after(10):
        peer = scripted_tab("complete")
        async with running_tab(peer) as tab:
            await tab.wait_enabled()
            await peer.emit("Network.requestWillBeSent", _sent("W1", "WebSocket"), SID)
            await peer.emit("Network.requestWillBeSent", _sent("E1", "EventSource"), SID)
            await peer.emit("Network.requestWillBeSent", _sent("I1", "Image"), SID)
            await trio.testing.wait_all_tasks_blocked()
            assert await settle.settle_read(tab, settle_ms=8000) == (LoadState.LOAD, True)
            await peer.emit("Network.requestWillBeSent", _sent("P1", "XHR"), SID)
            await trio.testing.wait_all_tasks_blocked()
            started = trio.current_time()
            # The poll stays open: after LONG_S it no longer counts (a read is not held).
            assert await settle.settle_read(tab, settle_ms=8000) == (LoadState.LOAD, True)
            assert trio.current_time() - started >= inflight.LONG_S - 0.1


async def test_a_read_that_runs_out_of_time_says_unsettled() -> None:
    with trio.fail_after(10):
        peer = scripted_tab("complete")
        async with running_tab(peer) as tab:
            await tab.wait_enabled()
            await peer.emit("Network.requestWillBeSent", _sent("R1", "Document"), SID)
            await trio.testing.wait_all_tasks_blocked()
            assert await settle.settle_read(tab, settle_ms=300) == (LoadState.LOAD, False)


def test_in_flight_bookkeeping() -> None:
    book = inflight.InFlight()
    assert not book.busy(0.0) and book.next_change(0.0) is None
    assert book.on_event("Network.requestWillBeSent", _sent("A", "Script"), 1.0) is False
    assert book.on_event("Network.requestWillBeSent", _sent("B", "Font"), 1.0) is False
    assert book.busy(1.5) and len(book) == 1
    # A redirect keeps the request open and its clock running.
    book.on_event("Network.requestWillBeSent", _sent("A", "Script"), 1.9)
    assert book.next_change(2.0) == 1.0 + inflight.LONG_S
    assert not book.busy(1.0 + inflight.LONG_S)  # open too long: a poll, not waited for
    assert book.on_event("Network.loadingFailed", {"requestId": "B"}, 2.0) is False
    assert book.on_event("Network.loadingFinished", {"requestId": "A"}, 2.0) is True
    assert not book.busy(2.0) and len(book) == 0
    assert book.on_event("Network.loadingFinished", {"requestId": "A"}, 2.1) is False
    assert book.on_event("Network.loadingFinished", {"requestId": 7}, 2.1) is False
    for n in range(600):  # bounded: the oldest are forgotten
        book.on_event("Network.requestWillBeSent", _sent(f"N{n}", "Fetch"), 3.0)
    assert len(book) == 500
    book.forget()
    assert len(book) == 0
