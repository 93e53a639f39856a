"""What of a call the ``confirm`` rules judge comes from its route's declaration alone."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import trio

from browserd.confirm import parse_rules
from browserd.http.confirmations import _judged, hold_if_confirmed
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
    steps = [{"kind": "click", "ref": "e1"}, {"kind": "mouse", "action": "wheel", "x": 1, "y": 1},
             {"kind": "keyboard", "action": "down", "key": "Enter"},
             {"kind": "navigate", "url": "https://a.test/"}]
    assert judged("act", {"actions": steps}) == [
        ("click", "click", False), ("press", "keyboard", True),
        ("navigate", "navigate", False)]
    assert judged("act", {"actions": None}) == []


def test_a_malformed_batch_is_judged_as_nothing_its_handler_refuses_it_whole() -> None:
    click = {"kind": "click", "role": "button", "name": "Pay"}
    assert judged("act", {"actions": [click]}) == [("click", "click", False)]
    for bad in ("not a step", {"kind": "teleport"}, {**click, "nth": "x"},
                {**click, "within": {"role": "row", "nth": "x"}}, {**click, "exact": "yes"}):
        assert judged("act", {"actions": [click, bad]}) == [], bad


def test_a_step_is_held_no_more_than_its_own_route() -> None:
    steps = [{"kind": "find", "role": "status"}, {"kind": "click", "role": "button", "name": "Pay"},
             {"kind": "find", "text": "Pay"}, {"kind": "hover", "text": "Pay"},
             {"kind": "wait", "text": "Paid"}]
    assert judged("act", {"actions": steps}) == [("click", "click", False)]
    for kind in ("hover", "wait", "find"):  # their own routes: never held
        assert judged(kind, {"text": "Pay"}) == [], kind
    assert ROUTES["act"].confirm.to_json()["unheld"] == ["find", "hover", "wait"]  # type: ignore[union-attr]


async def test_rules_that_would_hold_any_step_let_finds_hovers_and_waits_through() -> None:
    ran: list[bool] = []

    async def run() -> None:
        ran.append(True)

    # A system that fails loudly if the gate looked any further than the call's own steps
    # (the tab, the page's origin, the names of targets).
    system = SimpleNamespace(
        settings=SimpleNamespace(confirm=parse_rules([{"name": "."}, {"origin": "*"}])),
        principal=SimpleNamespace(is_owner=False))
    args = {"actions": [{"kind": "find", "role": "button", "name": "Pay"},
                        {"kind": "hover", "text": "Delete"}, {"kind": "wait", "text": "Done"}]}
    with trio.fail_after(5):
        await hold_if_confirmed(system, ROUTES["act"], args, run)  # type: ignore[arg-type]
    assert ran == []  # not held (and not run: the handler runs it)


def test_a_download_holds_its_file() -> None:
    assert ROUTES["download"].confirm == HeldDownload(field="id")
    assert judged("download", {"id": "d1"}) == []  # (the file is held, not an action)
