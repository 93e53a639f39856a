"""The TabActor's side of the network ring, against the shared fake CDP peer (no Chromium)."""

from __future__ import annotations

import trio
import trio.testing

from browserd.tabs.actor import TabActor
from browserd.tabs.netlog import NETWORK_QUIET, NetworkControls
from tests.fakecdp import FakeCdpPeer, Refuse, connected, running_tab, tab_peer

SID = "S-T1"


async def barrier(peer: FakeCdpPeer, tab: TabActor) -> None:
    """Every event sent before this one has been handled (the reader keeps their order)."""
    await peer.emit("Page.frameStartedLoading", {"frameId": "T1"}, SID)
    await tab.wait_changed()


async def commands_of(peer: FakeCdpPeer, session: str, count: int) -> list[str]:
    """The first ``count`` methods sent on ``session`` (waits for them; caller's deadline)."""
    while True:
        methods = [m["method"] for m in peer.received if m.get("sessionId") == session]
        if len(methods) >= count:
            return methods[:count]
        await trio.sleep(0.01)


def request(rid: str, url: str) -> dict[str, object]:
    return {"requestId": rid, "timestamp": 1.0, "wallTime": 1.0, "type": "Fetch",
            "request": {"url": url, "method": "GET", "headers": {}}}


async def test_always_records_from_the_start_and_frames_land_with_their_session() -> None:
    with trio.fail_after(10):
        peer = tab_peer()
        async with running_tab(peer, network_capture=True) as tab:
            assert peer.sent("Network.enable") and tab.network.recording
            await peer.emit("Network.requestWillBeSent", request("1", "https://a.test/x"), SID)
            await peer.emit("Network.requestWillBeSent", request("9", "https://b.test/y"),
                            "OTHER-SESSION")  # not the tab's: ignored
            await peer.emit("Target.attachedToTarget", {
                "sessionId": "CHILD", "waitingForDebugger": True,
                "targetInfo": {"targetId": "F1", "type": "iframe"}}, SID)
            # The frame is set up (recording) before it is resumed.
            assert await commands_of(peer, "CHILD", 4) == [
                "Page.enable", "Page.setInterceptFileChooserDialog",
                "Network.enable", "Runtime.runIfWaitingForDebugger"]
            await peer.emit("Network.requestWillBeSent", request("2", "https://c.test/z"), "CHILD")
            await barrier(peer, tab)
            assert [(e.url, e.session_id) for e in tab.network.entries()] == [
                ("https://a.test/x", None), ("https://c.test/z", "CHILD")]
            await peer.emit("Target.detachedFromTarget", {"sessionId": "CHILD"}, SID)
            await barrier(peer, tab)
            await peer.emit("Network.requestWillBeSent", request("3", "https://c.test/w"), "CHILD")
            await barrier(peer, tab)
            assert len(tab.network) == 2  # a detached frame's sink is gone


async def test_on_demand_records_nothing_until_asked_but_still_resumes_children() -> None:
    with trio.fail_after(10):
        peer = tab_peer()
        async with running_tab(peer, network_capture=False) as tab:
            await tab.wait_enabled()
            # The domain is on (what is in flight), keeping no bodies; the ring records nothing.
            assert peer.sent("Network.enable") == [dict(NETWORK_QUIET)]
            assert not tab.network.recording
            await peer.emit("Network.requestWillBeSent", {
                "requestId": "R1", "type": "Fetch", "request": {"url": "https://a.test/x"}}, SID)
            await trio.testing.wait_all_tasks_blocked()
            assert len(tab.inflight) == 1 and len(tab.network) == 0
            await peer.emit("Target.attachedToTarget", {
                "sessionId": "W", "waitingForDebugger": True,
                "targetInfo": {"targetId": "W1", "type": "worker"}}, SID)
            assert await commands_of(peer, "W", 1) == ["Runtime.runIfWaitingForDebugger"]
            # Once recording, a new frame gets the tab's controls before it runs.
            tab.network.mark_recording(1.0)
            tab.network.set_controls(NetworkControls(blocked=("*://*:*/*.png",),
                                                     extra_headers={"X-A": "1"}))
            await peer.emit("Target.attachedToTarget", {
                "sessionId": "F", "waitingForDebugger": True,
                "targetInfo": {"targetId": "F2", "type": "iframe"}}, SID)
            assert await commands_of(peer, "F", 6) == [
                "Page.enable", "Page.setInterceptFileChooserDialog", "Network.enable",
                "Network.setBlockedURLs", "Network.setExtraHTTPHeaders",
                "Runtime.runIfWaitingForDebugger"]


async def test_a_frame_whose_set_up_fails_is_resumed_all_the_same() -> None:
    with trio.fail_after(10):
        peer = tab_peer()
        peer.on("Network.enable",
                lambda p, s: Refuse("no such session") if s == "GONE" else {})
        async with running_tab(peer, network_capture=True) as tab:
            await peer.emit("Target.attachedToTarget", {
                "sessionId": "GONE", "waitingForDebugger": True,
                "targetInfo": {"targetId": "F3", "type": "iframe"}}, SID)
            assert await commands_of(peer, "GONE", 4) == [
                "Page.enable", "Page.setInterceptFileChooserDialog",
                "Network.enable", "Runtime.runIfWaitingForDebugger"]
            assert tab.child_sessions == {"F3": "GONE"}


async def test_a_frames_file_chooser_reaches_the_tab() -> None:
    with trio.fail_after(10):
        peer = tab_peer()
        async with running_tab(peer, network_capture=False) as tab:
            await peer.emit("Target.attachedToTarget", {
                "sessionId": "FC", "waitingForDebugger": True,
                "targetInfo": {"targetId": "F9", "type": "iframe"}}, SID)
            assert await commands_of(peer, "FC", 3) == [
                "Page.enable", "Page.setInterceptFileChooserDialog",
                "Runtime.runIfWaitingForDebugger"]
            await peer.emit("Page.fileChooserOpened", {
                "frameId": "F9", "backendNodeId": 7, "mode": "selectMultiple"}, "FC")
            with trio.fail_after(5):
                while tab.input.chooser is None:
                    await trio.sleep(0.01)
            chooser = tab.input.chooser
            assert chooser.session_id == "FC" and chooser.multiple
            await peer.emit("Target.detachedFromTarget", {"sessionId": "FC"}, SID)
            with trio.fail_after(5):
                while tab.input.chooser is not None:
                    await trio.sleep(0.01)


async def test_a_held_target_is_released_even_by_a_cancelled_caller() -> None:
    with trio.fail_after(10):
        peer = tab_peer()
        async with connected(peer) as conn:
            with trio.CancelScope() as scope:
                scope.cancel()
                assert await conn.session("HELD").run_if_waiting() is True
            assert await commands_of(peer, "HELD", 1) == ["Runtime.runIfWaitingForDebugger"]
