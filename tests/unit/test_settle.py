"""Settling (browserd.tabs.settle) against the shared fake CDP peer (no Chromium)."""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

from browserd.tabs import settle
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
