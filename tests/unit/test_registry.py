"""Tab resolution rules of the TabRegistry (no browser: the lookup is plain code)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from browserd.config import Settings
from browserd.errors import AmbiguousTarget, BadRequest, TabNotFound
from browserd.tabs.registry import TabRegistry


class FakeTab:
    def __init__(self, target_id: str, focused: float | None = None) -> None:
        self.target_id = target_id
        self.last_focused_at = focused


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
