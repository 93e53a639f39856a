"""TabActor events and the effects Observer, against the shared fake CDP peer (no Chromium)."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, cast

import orjson
import pytest
import trio

from browserd.errors import (
    BrowserGone,
    BrowserUnresponsive,
    DialogOpen,
    TabBroken,
    TargetCrashed,
)
from browserd.tabs import query
from browserd.tabs.actor import DROPPABLE_QUEUE, EVENT_BUFFER, TabActor
from browserd.tabs.effects import observing
from browserd.tabs.state import CONSOLE_BUFFER, LoadState
from tests.fakecdp import READY_STATE, running_tab, tab_peer

SID = "S-T1"  # the session tab_peer("T1") hands out


async def until(tab: TabActor, condition: Callable[[], bool]) -> None:
    """Wait for the actor's state to satisfy ``condition`` (the caller sets the deadline)."""
    while not condition():
        await tab.wait_changed()


async def test_enable_reads_the_frame_tree_and_the_document_state() -> None:
    with trio.fail_after(10):
        peer = tab_peer(loader_id="L1", url="https://a.test/x", ready_state="interactive")
        async with running_tab(peer) as tab:
            view = tab.view()
            assert (view.main_frame_id, view.loader_id, view.url) == ("T1", "L1",
                                                                       "https://a.test/x")
            assert view.load_state is LoadState.DOMCONTENTLOADED
            assert peer.sent("Page.setLifecycleEventsEnabled") == [{"enabled": True}]


async def test_load_state_follows_the_main_frames_lifecycle_per_document() -> None:
    with trio.fail_after(10):
        peer = tab_peer()
        async with running_tab(peer) as tab:
            assert tab.view().load_state is LoadState.LOAD
            # A new document: its lifecycle may start before frameNavigated.
            await peer.emit("Page.lifecycleEvent", {"frameId": "T1", "loaderId": "L2",
                                                    "name": "init"}, SID)
            await peer.emit("Page.frameNavigated", {"frame": {
                "id": "T1", "loaderId": "L2", "url": "https://a.test/next"}}, SID)
            await until(tab, lambda: tab.view().loader_id == "L2")
            view = tab.view()
            assert view.load_state is LoadState.LOADING and view.navigations == 1
            assert view.url == "https://a.test/next"
            # A subframe's lifecycle does not move the tab's load state.
            await peer.emit("Page.lifecycleEvent", {"frameId": "SUB", "loaderId": "L2",
                                                    "name": "load"}, SID)
            await peer.emit("Page.lifecycleEvent", {"frameId": "T1", "loaderId": "L2",
                                                    "name": "DOMContentLoaded"}, SID)
            await until(tab, lambda: tab.view().load_state is not LoadState.LOADING)
            assert tab.view().load_state is LoadState.DOMCONTENTLOADED
            await peer.emit("Page.lifecycleEvent", {"frameId": "T1", "loaderId": "L2",
                                                    "name": "load"}, SID)
            await until(tab, lambda: tab.view().load_state is LoadState.LOAD)


async def test_a_dialog_blocks_work_until_it_closes() -> None:
    with trio.fail_after(10):
        peer = tab_peer()
        async with running_tab(peer) as tab:
            await peer.emit("Page.javascriptDialogOpening", {
                "type": "confirm", "message": "Sure?", "defaultPrompt": "", "url": "u"}, SID)
            await until(tab, lambda: tab.view().dialog is not None)
            open_dialog = tab.view().dialog
            assert open_dialog is not None and open_dialog.to_json() == {
                "type": "confirm", "message": "Sure?", "defaultPrompt": ""}
            with pytest.raises(DialogOpen):
                tab.check_usable(allow_dialog=False)
            result, dialog = await tab.race_dialog(trio.sleep_forever)
            assert result is None and dialog is open_dialog
            await peer.emit("Page.javascriptDialogClosed", {"result": True}, SID)
            await until(tab, lambda: tab.view().dialog is None)
            tab.check_usable(allow_dialog=False)


async def test_race_dialog_abandons_a_command_the_dialog_blocks() -> None:
    with trio.fail_after(10):
        peer = tab_peer()
        peer.on("Input.dispatchMouseEvent", lambda p, s: None)  # blocked: never answers
        async with running_tab(peer) as tab:
            async def opens_a_dialog() -> None:
                await trio.testing.wait_all_tasks_blocked()
                await peer.emit("Page.javascriptDialogOpening", {"type": "alert",
                                                                 "message": "hi"}, SID)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(opens_a_dialog)
                result, dialog = await tab.race_dialog(
                    lambda: tab.send("Input.dispatchMouseEvent", {"type": "mousePressed"}))
            assert result is None and dialog is not None and dialog.type == "alert"


async def test_console_messages_and_exceptions_land_in_the_ring_buffer() -> None:
    with trio.fail_after(10):
        peer = tab_peer()
        async with running_tab(peer) as tab:
            await peer.emit("Runtime.consoleAPICalled", {
                "type": "warning", "args": [{"type": "string", "value": "low disk"},
                                            {"type": "number", "value": 3}],
                "stackTrace": {"callFrames": [{"url": "https://a.test/app.js",
                                               "lineNumber": 7}]}}, SID)
            await peer.emit("Runtime.consoleAPICalled", {
                "type": "log", "args": [{"type": "object", "description": "Object"}]}, SID)
            await peer.emit("Runtime.exceptionThrown", {"exceptionDetails": {
                "text": "Uncaught", "exception": {"description": "Error: boom"}}}, SID)
            await until(tab, lambda: len(tab.console) == 3)
            entries = tab.console.entries()
            assert [(e.level, e.text, e.source) for e in entries] == [
                ("warn", "low disk 3", "console"), ("log", "Object", "console"),
                ("error", "Error: boom", "exception")]
            assert (entries[0].url, entries[0].line) == ("https://a.test/app.js", 7)
            answer = query.console(tab, level="warn", clear=True)
            assert [m["text"] for m in answer["messages"]] == ["low disk 3", "Error: boom"]
            assert "dropped" not in answer and len(tab.console) == 0


def burst(tab: TabActor, events: list[tuple[str, dict[str, Any]]]) -> None:
    """Hand the connection's reader ``events`` of the tab's session as one read.

    The pipe transport returns every message of a read (up to 1 MiB) without
    a checkpoint, so the actor cannot run until the reader has routed them
    all: exactly what a flood looks like to it.
    """
    for method, params in events:
        tab.connection._protocol.receive(
            orjson.dumps({"method": method, "params": params, "sessionId": SID}))


def log_line(n: int) -> tuple[str, dict[str, Any]]:
    return "Runtime.consoleAPICalled", {"type": "log", "args": [{"type": "string",
                                                                 "value": f"line {n}"}]}


async def test_a_console_flood_drops_the_oldest_lines_but_never_a_navigation_or_dialog() -> None:
    flood = 20_000
    with trio.fail_after(20):
        async with running_tab(tab_peer()) as tab:
            lines = [log_line(n) for n in range(flood)]
            burst(tab, [
                *lines[:flood // 2],
                ("Page.frameNavigated", {"frame": {"id": "T1", "loaderId": "L2",
                                                   "url": "https://a.test/next"}}),
                ("Page.lifecycleEvent", {"frameId": "T1", "loaderId": "L2", "name": "load"}),
                *lines[flood // 2:],
                ("Page.javascriptDialogOpening", {"type": "alert", "message": "end"})])
            await until(tab, lambda: tab.halted() is not None)
            view = tab.view()
            assert not view.closed and view.broken is None and view.dialog is not None
            assert (view.loader_id, view.navigations, view.url) == ("L2", 1,
                                                                     "https://a.test/next")
            assert view.load_state is LoadState.LOAD
            # The newest lines are kept; every other line is counted, none is lost unseen.
            assert [e.text for e in tab.console.entries()] == [
                f"line {n}" for n in range(flood - CONSOLE_BUFFER, flood)]
            assert query.console(tab)["dropped"] == flood - CONSOLE_BUFFER
            assert tab.connection.statistics().dropped_events == flood - DROPPABLE_QUEUE
            with pytest.raises(DialogOpen):
                tab.check_usable(allow_dialog=False)
            await peer_answers(tab)


async def peer_answers(tab: TabActor) -> None:
    """The tab's session still carries commands."""
    assert (await tab.send("Runtime.evaluate", {"expression": "1"}))["result"]["value"] == 0


async def test_an_actor_that_ends_on_its_own_leaves_its_tab_broken_not_gone() -> None:
    with trio.fail_after(20):
        peer = tab_peer()
        async with running_tab(peer) as tab:
            # More essential events than the actor's buffer holds, in one read.
            burst(tab, [("Page.frameStartedLoading", {"frameId": "T1"})] * (EVENT_BUFFER + 1))
            await until(tab, lambda: tab.view().closed)
            assert tab.view().broken == "event subscriber fell behind and was closed"
            with pytest.raises(TabBroken) as info:
                async with tab.work():
                    pass
            assert (info.value.status, info.value.code) == (502, "TAB_BROKEN")
            assert "DELETE /tabs/T1" in info.value.hint
            assert tab.info(active=True).to_json()["broken"] is True
            # Its session is let go: no more events for a tab nothing follows.
            while not peer.sent("Target.detachFromTarget"):
                await trio.sleep(0.01)
            assert peer.sent("Target.detachFromTarget") == [{"sessionId": SID}]
            with pytest.raises(TabBroken):
                await tab.send("Runtime.evaluate", {"expression": "1"})


async def test_a_closed_tab_is_gone_not_broken() -> None:
    with trio.fail_after(10):
        async with running_tab(tab_peer()) as tab:
            tab.close()
            await trio.testing.wait_all_tasks_blocked()
            assert tab.view().broken is None
            assert "broken" not in tab.info(active=True).to_json()
            with pytest.raises(BrowserGone) as info:
                tab.check_usable()
            assert info.value.code == "BROWSER_GONE"


async def test_a_crash_fails_calls_in_flight_and_refuses_new_work_but_navigation() -> None:
    with trio.fail_after(10):
        peer = tab_peer()
        answers_readiness = peer.handlers["Runtime.evaluate"]
        peer.on("Runtime.evaluate", lambda p, s: answers_readiness(p, s)
                if p.get("expression") == READY_STATE else None)  # then hangs
        peer.on("Page.reload", lambda p, s: {})
        async with running_tab(peer) as tab:
            failures: list[BaseException] = []

            async def in_flight() -> None:
                try:
                    await tab.send("Runtime.evaluate", {"expression": "1"})
                except TargetCrashed as exc:
                    failures.append(exc)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(in_flight)
                await trio.testing.wait_all_tasks_blocked()
                await peer.emit("Inspector.targetCrashed", {}, SID)
            assert tab.view().crashed and len(failures) == 1
            with pytest.raises(TargetCrashed):
                await tab.send("Runtime.evaluate", {"expression": "1"})
            with pytest.raises(TargetCrashed):
                tab.check_usable()
            assert await tab.send("Page.reload") == {}  # a navigation revives the tab
            await peer.emit("Inspector.targetReloadedAfterCrash", {}, SID)
            await until(tab, lambda: not tab.view().crashed)


async def test_observer_reports_a_navigation_the_action_caused() -> None:
    with trio.fail_after(10):
        peer = tab_peer()
        async with running_tab(peer) as tab:
            with observing(tab) as observer:
                await peer.emit("Page.frameRequestedNavigation", {
                    "frameId": "T1", "url": "https://a.test/b", "disposition": "currentTab"},
                    SID)
                await peer.emit("Page.frameNavigated", {"frame": {
                    "id": "T1", "loaderId": "L2", "url": "https://a.test/b"}}, SID)
                effects = await observer.settle()
            assert effects == {"navigated": "https://a.test/b"}


async def test_observer_reports_new_tabs_opened_by_this_tab_only() -> None:
    with trio.fail_after(10):
        peer = tab_peer()
        async with running_tab(peer) as tab:
            with observing(tab) as observer:
                for target_id, opener in (("N1", "T1"), ("N2", "OTHER"), ("N1", "T1")):
                    await peer.emit("Target.targetCreated", {"targetInfo": {
                        "targetId": target_id, "type": "page", "openerId": opener}})
                effects = await observer.settle()
            assert effects == {"newTabs": ["N1"]}


async def test_observer_reports_a_dialog_and_a_pending_navigation() -> None:
    with trio.fail_after(10):
        peer = tab_peer()
        async with running_tab(peer) as tab:
            with observing(tab) as observer:
                await peer.emit("Page.frameRequestedNavigation", {
                    "frameId": "T1", "url": "https://a.test/slow"}, SID)
                await peer.emit("Page.javascriptDialogOpening", {
                    "type": "beforeunload", "message": ""}, SID)
                effects = await observer.settle()
            assert effects == {"navigationPending": "https://a.test/slow",
                               "dialog": {"type": "beforeunload", "message": ""}}


async def test_observer_sees_nothing_when_nothing_happens() -> None:
    with trio.fail_after(10):
        async with running_tab(tab_peer()) as tab:
            with observing(tab) as observer:
                assert await observer.settle(quiet_s=0.01) == {}


async def test_work_queued_behind_a_hang_is_told_the_browser_hung() -> None:
    """A call still waiting for the tab when the browser was found hung gets the cause
    (503 BROWSER_UNRESPONSIVE), not "the tab was closed"; any other end stays BROWSER_GONE."""
    def closed_tab(reason: BaseException) -> TabActor:
        connection = SimpleNamespace(session=lambda sid: SimpleNamespace(session_id=sid),
                                     is_closed=True, close_reason=reason)
        tab = TabActor(cast(Any, connection), "T1")
        tab.close()
        return tab

    with pytest.raises(BrowserUnresponsive, match="no answer in 5 s"):
        closed_tab(BrowserUnresponsive("no answer in 5 s")).check_usable()
    with pytest.raises(BrowserGone, match="the tab was closed"):
        closed_tab(BrowserGone("the browser connection closed")).check_usable()
