"""History moves (browserd.tabs.history) against the shared fake CDP peer (no Chromium).

What the real browser cannot show on demand: that nothing is sent at either
end of the history, that the answer waits for the main frame's commit (and
carries the Observer's effects), and that a dialog before the commit comes
out as DialogOpen itself, not wrapped in an exception group.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from browserd.errors import DialogOpen, NoHistory
from browserd.tabs import history
from tests.fakecdp import FakeCdpPeer, running_tab, tab_peer

SID = "S-T1"
A, B = "https://a.test/a", "https://a.test/b"


def history_peer(current: int) -> FakeCdpPeer:
    """A tab at entry ``current`` of [A, B]; moves are accepted (and commit on demand)."""
    peer = tab_peer(url=(A, B)[current])
    peer.on("Page.createIsolatedWorld", lambda p, s: {"executionContextId": 7})
    peer.on("Page.getNavigationHistory", lambda p, s: {"currentIndex": current, "entries": [
        {"id": 11, "url": A, "title": "a"}, {"id": 12, "url": B, "title": "b"}]})
    return peer


async def sent_move(peer: FakeCdpPeer) -> None:
    while not peer.sent("Page.navigateToHistoryEntry"):
        await trio.testing.wait_all_tasks_blocked()
        await trio.sleep(0.01)


async def test_nothing_is_sent_at_either_end() -> None:
    with trio.fail_after(10):
        async with running_tab(history_peer(current=0)) as tab:
            with pytest.raises(NoHistory):
                await history.go_back(tab)
        peer = history_peer(current=1)
        async with running_tab(peer) as tab:
            with pytest.raises(NoHistory):
                await history.go_forward(tab)
        assert peer.sent("Page.navigateToHistoryEntry") == []


async def test_a_move_answers_at_its_commit_with_its_effects() -> None:
    with trio.fail_after(10):
        peer = history_peer(current=1)
        async with running_tab(peer) as tab:
            got: list[dict[str, Any]] = []
            async with trio.open_nursery() as nursery:
                async def move() -> None:
                    got.append(await history.go_back(tab, wait_until="commit"))

                nursery.start_soon(move)
                await sent_move(peer)
                assert peer.sent("Page.navigateToHistoryEntry") == [{"entryId": 11}]
                assert got == []  # no commit yet
                await peer.emit("Page.frameNavigated", {"type": "Navigation", "frame": {
                    "id": "T1", "loaderId": "L2", "url": A}}, SID)
            assert got[0]["url"] == A and got[0]["loadState"] == "load"
            assert got[0]["effects"] == {"navigated": A}


async def test_a_dialog_before_the_commit_is_dialog_open_itself() -> None:
    with trio.fail_after(10):
        peer = history_peer(current=1)
        async with running_tab(peer) as tab:
            async with trio.open_nursery() as nursery:
                async def leave_page() -> None:
                    await sent_move(peer)
                    await peer.emit("Page.javascriptDialogOpening",
                                    {"type": "beforeunload", "message": ""}, SID)

                nursery.start_soon(leave_page)
                with pytest.raises(DialogOpen) as caught:
                    await history.go_back(tab)
            assert caught.value.details["dialog"]["type"] == "beforeunload"
