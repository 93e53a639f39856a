"""What of a call the ``confirm`` rules judge comes from its route's declaration alone."""

from __future__ import annotations

from typing import Any

from browserd.http.confirmations import _judged
from browserd.http.facts import HeldDownload
from browserd.http.routes import all_routes

ROUTES = {route.name: route for route in all_routes()}


def judged(name: str, args: dict[str, Any]) -> list[tuple[str, str, bool]]:
    return [(a.rule_kind, a.kind, a.raw) for a in _judged(ROUTES[name].confirm, name, args)]


def test_a_call_is_judged_as_its_route_declares() -> None:
    assert judged("click", {"ref": "e1"}) == [("click", "click", False)]
    assert judged("back", {}) == [("navigate", "navigate", False)]
    assert judged("tabs_open", {"url": "https://a.test/"}) == [("navigate", "navigate", False)]
    assert judged("login", {"name": "bank"}) == [("submit", "submit", False)]
    assert judged("snapshot", {}) == [] and judged("hover", {"ref": "e1"}) == []


def test_raw_input_is_judged_by_what_it_does() -> None:
    assert judged("mouse", {"action": "down"}) == [("click", "mouse", True)]
    assert judged("mouse", {"action": "click"}) == [("click", "mouse", True)]
    assert judged("mouse", {"action": "move"}) == []
    assert judged("keyboard", {"action": "down", "key": "a"}) == [("press", "keyboard", True)]
    assert judged("keyboard", {"action": "insertText"}) == [("type", "keyboard", True)]
    assert judged("keyboard", {"action": "up", "key": "a"}) == []


def test_a_batch_is_judged_step_by_step_as_each_kind() -> None:
    steps = [{"kind": "click", "ref": "e1"}, {"kind": "mouse", "action": "wheel"},
             {"kind": "keyboard", "action": "down", "key": "Enter"}, "not a step",
             {"kind": "navigate", "url": "https://a.test/"}]
    assert judged("act", {"actions": steps}) == [
        ("click", "click", False), ("press", "keyboard", True),
        ("navigate", "navigate", False)]
    assert judged("act", {"actions": None}) == []


def test_a_download_holds_its_file() -> None:
    assert ROUTES["download"].confirm == HeldDownload(field="id")
    assert judged("download", {"id": "d1"}) == []  # (the file is held, not an action)
