"""The TabRegistry: tab resolution rules (plain code) and discovery races (fake CDP peer)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest
import trio
import trio.testing

from browserd.config import Settings
from browserd.errors import AmbiguousTarget, BadRequest, BrowserGone, TabBroken, TabNotFound
from browserd.tabs.registry import TabRegistry, open_tab_registry
from tests.fakecdp import Refuse, connected, tab_peer


class FakeTab:
    def __init__(self, target_id: str, focused: float | None = None) -> None:
        self.target_id = target_id
        self.last_focused_at = focused

    def view(self) -> SimpleNamespace:
        return SimpleNamespace(target_id=self.target_id, last_focused_at=self.last_focused_at)


def registry(*tabs: FakeTab) -> TabRegistry:
    reg = TabRegistry(cast(Any, None), cast(Any, None), settings=Settings(), headless=True)
    for tab in tabs:
        reg._tabs[tab.target_id] = cast(Any, tab)
        reg._order.append(tab.target_id)
    return reg


def test_exact_id_and_unique_case_insensitive_prefix() -> None:
    reg = registry(FakeTab("ABCDEF0123"), FakeTab("ABCD999999"), FakeTab("FF00AA"))
    assert reg.get("ABCDEF0123").target_id == "ABCDEF0123"
    assert reg.get("abcde").target_id == "ABCDEF0123"
    assert reg.get("ff00").target_id == "FF00AA"


def test_ambiguous_prefix_is_409_and_lists_the_matches() -> None:
    reg = registry(FakeTab("ABCDEF0123"), FakeTab("ABCD999999"))
    with pytest.raises(AmbiguousTarget) as info:
        reg.get("abcd")
    assert info.value.status == 409
    assert sorted(info.value.details["matches"]) == ["ABCD999999", "ABCDEF0123"]


@pytest.mark.parametrize("needle", ["abc", "ZZZZ", "ABCDEF01234"])
def test_short_or_unknown_ids_are_not_found(needle: str) -> None:
    reg = registry(FakeTab("ABCDEF0123"))
    with pytest.raises(TabNotFound):
        reg.get(needle)


def test_empty_id_is_a_bad_request() -> None:
    with pytest.raises(BadRequest):
        registry().get("")


def test_active_tab_is_last_used_then_last_focused_then_first() -> None:
    reg = registry(FakeTab("A1111"), FakeTab("B2222", focused=5.0), FakeTab("C3333", focused=9.0))
    assert reg.active_id() == "C3333"
    reg.last_used = "A1111"
    assert reg.active_id() == "A1111"
    reg.last_used = "gone"
    assert reg.active_id() == "C3333"
    assert registry(FakeTab("A1"), FakeTab("B2")).active_id() == "A1"
    assert registry().active_id() is None


def scoped_registry() -> TabRegistry:
    reg = registry(FakeTab("DEF00001"), FakeTab("AAAA0001"), FakeTab("BBBB0001"),
                   FakeTab("GW000001"))
    for target_id, context in {"DEF00001": "default-ctx", "AAAA0001": "ctx-a",
                               "BBBB0001": "ctx-b", "GW000001": "client-ctx"}.items():
        reg._scopes.note_context(target_id, context)
    reg.add_scope("ctx-a")
    reg.add_scope("ctx-b")
    return reg


def test_a_session_scope_sees_only_its_own_tabs() -> None:
    reg = scoped_registry()
    assert reg.target_ids("ctx-a") == ["AAAA0001"]
    assert reg.get("AAAA0001", "ctx-a").target_id == "AAAA0001"
    for other in ("BBBB0001", "DEF00001", "bbbb"):
        with pytest.raises(TabNotFound):
            reg.get(other, "ctx-a")
    # the default scope: every tab of no session (a gateway client's context too)
    assert reg.target_ids() == ["DEF00001", "GW000001"]
    with pytest.raises(TabNotFound):
        reg.get("AAAA0001")
    assert reg.tab_count() == 4


def test_each_scope_has_its_own_current_tab() -> None:
    reg = scoped_registry()
    reg._scopes.set_last_used("ctx-a", "AAAA0001")
    reg.last_used = "GW000001"
    assert reg.active_id("ctx-a") == "AAAA0001"
    assert reg.active_id("ctx-b") == "BBBB0001"
    assert reg.active_id() == "GW000001"
    # a removed scope's tabs never fall back into the default scope
    reg.remove_scope("ctx-a")
    assert "AAAA0001" not in reg.target_ids()


def test_a_session_scope_labels_its_tabs_with_the_session() -> None:
    reg = scoped_registry()
    reg.add_scope("ctx-a", "s-alpha")
    assert reg.session_of("AAAA0001") == "s-alpha"
    assert reg.session_of("BBBB0001") is None  # a scope made without a label
    assert reg.session_of("DEF00001") is None and reg.session_of("GW000001") is None
    assert reg.scope_of_context("ctx-a") == "ctx-a"
    assert reg.scope_of_context("client-ctx") is None and reg.scope_of_context(None) is None


def test_origins_are_remembered_per_scope() -> None:
    reg = scoped_registry()
    for info in ({"type": "page", "url": "https://a.example/x", "browserContextId": "ctx-a"},
                 {"type": "iframe", "url": "http://127.0.0.1:8080/f",
                  "browserContextId": "default-ctx"},
                 {"type": "page", "url": "https://gw.example/", "browserContextId": "cc"},
                 {"type": "service_worker", "url": "https://sw.example/"}):
        reg._scopes.note_origin_of(info)
    reg.remember_origin("https://written.example", "ctx-b")
    assert reg.origins_seen("ctx-a") == ["https://a.example"]
    assert reg.origins_seen("ctx-b") == ["https://written.example"]
    assert reg.origins_seen() == ["http://127.0.0.1:8080", "https://gw.example"]
    # a disposed session's origins are forgotten with it
    reg.remove_scope("ctx-a")
    assert reg.origins_seen("ctx-a") == []


async def test_a_page_destroyed_while_its_actor_attaches_is_never_listed() -> None:
    """A popup the navigation guard closes can be destroyed before its tab actor
    has attached: the attach that completes afterwards must not list a ghost."""
    peer = tab_peer("POP1")
    peer.on("Target.createTarget", lambda p, s: Refuse("no spare here"))
    peer.on("Target.attachToTarget", lambda p, s: None)  # answered by hand below
    with trio.fail_after(10):
        async with connected(peer) as conn, open_tab_registry(
                conn, settings=Settings(), headless=True) as reg:
            await peer.emit("Target.targetCreated", {"targetInfo": {
                "targetId": "POP1", "type": "page", "url": "about:blank", "title": ""}})
            while not peer.sent("Target.attachToTarget"):
                await trio.sleep(0.01)
            waiter: list[BaseException] = []

            async def wait_for_it() -> None:
                try:
                    await reg.wait_tab("POP1")
                except BrowserGone as exc:
                    waiter.append(exc)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(wait_for_it)
                await trio.testing.wait_all_tasks_blocked()
                await peer.emit("Target.targetDestroyed", {"targetId": "POP1"})
                await trio.testing.wait_all_tasks_blocked()
                # a waiter for the page is woken at once, and told it is gone
            assert len(waiter) == 1
            attach = next(m for m in peer.received if m.get("method") == "Target.attachToTarget")
            await peer._send({"id": attach["id"], "result": {"sessionId": "S-POP1"}})
            await trio.testing.wait_all_tasks_blocked()
            assert reg.target_ids() == []
            assert reg.infos() == []


async def test_a_tab_whose_actor_failed_answers_tab_broken_and_still_closes() -> None:
    """An actor that ends for a reason of its own (here a bug: an event it cannot
    read) ends that tab's actor only: the registry goes on, the tab stays listed
    as broken and answers 502 TAB_BROKEN, never BROWSER_GONE, and closing it works."""
    peer = tab_peer("T1")
    peer.on("Target.createTarget", lambda p, s: Refuse("no spare here"))
    with trio.fail_after(10):
        async with connected(peer) as conn, open_tab_registry(
                conn, settings=Settings(), headless=True) as reg:
            await peer.emit("Target.targetCreated", {"targetInfo": {
                "targetId": "T1", "type": "page", "url": "https://a.test/", "title": "A"}})
            tab = await reg.wait_tab("T1")
            await tab.wait_enabled()
            await peer.emit("Page.frameNavigated", {"frame": "not a frame"}, "S-T1")
            while not tab.view().closed:
                await tab.wait_changed()
            broken = tab.view().broken
            assert broken is not None and broken.startswith("AttributeError")
            assert reg.get("T1") is tab
            assert [i.to_json().get("broken") for i in reg.infos()] == [True]
            with pytest.raises(TabBroken) as info:
                async with (await reg.resolve(None)).work():
                    pass
            assert (info.value.status, info.value.code) == (502, "TAB_BROKEN")
            async with trio.open_nursery() as nursery:
                nursery.start_soon(reg.close, tab)
                while not peer.sent("Target.closeTarget"):
                    await trio.sleep(0.01)
                await peer.emit("Target.targetDestroyed", {"targetId": "T1"})
            assert peer.sent("Target.closeTarget") == [{"targetId": "T1"}]
            assert reg.infos() == [] and reg.target_ids() == []
