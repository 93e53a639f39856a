"""The ``confirm`` rules and the board of held actions, as plain code (no browser).

Written for the mutants of ``confirm/rules.py`` and ``confirm/board.py``
(``python -m supervision.mutants --only confirm-rules,confirm-board``): which
actions a rule holds, what the person's answer does, and what is forgotten.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import trio
import trio.testing

from browserd.confirm import ConfirmationBoard, ConfirmRule, HeldState, first_match, parse_rules
from browserd.confirm.board import ANSWERED_KEPT_S, MAX_HELD
from browserd.confirm.rules import KINDS
from browserd.errors import Conflict, Denied, RequestNotFound

# -- rules ------------------------------------------------------------------------------


@pytest.mark.parametrize(("rule", "action", "held"), [
    ({"kind": "click"}, ("click", None, None), True),
    ({"kind": "click"}, ("type", None, None), False),
    ({"origin": "https://*.shop.test"}, ("click", "https://a.shop.test", None), True),
    ({"origin": "https://*.shop.test"}, ("click", "https://shop.evil.test", None), False),
    ({"origin": "https://*.shop.test"}, ("click", None, None), False),  # no origin known
    ({"name": "pay|buy"}, ("click", None, "Pay now"), True),  # searched, case-insensitive
    ({"name": "pay|buy"}, ("click", None, "BUY"), True),
    ({"name": "pay|buy"}, ("click", None, "Cancel"), False),
    ({"name": "pay"}, ("click", None, None), False),  # no name known
    ({"name": "pay"}, ("click", None, "x" * 500 + "pay"), False),  # beyond the 500 read
    ({"name": "pay"}, ("click", None, "x" * 497 + "pay"), True),
    ({"name": "pay"}, ("click", None, "x" * 498 + "pay"), False),  # "pa" within 500
    ({"kind": "click", "name": "pay"}, ("click", None, "Pay"), True),
    ({"kind": "click", "name": "pay"}, ("type", None, "Pay"), False),
    ({"kind": "click", "name": "pay"}, ("click", None, "Help"), False),
    ({"kind": "navigate", "origin": "https://bank.test"},
     ("navigate", "https://bank.test", None), True),
    ({"kind": "navigate", "origin": "https://bank.test"},
     ("navigate", "https://other.test", None), False),
])
def test_a_rule_holds_an_action_when_every_field_it_gives_matches(
        rule: dict[str, str], action: tuple[str, str | None, str | None], held: bool) -> None:
    (parsed,) = parse_rules([rule])
    kind, origin, name = action
    assert parsed.matches(kind=kind, origin=origin, name=name) is held
    assert (first_match([parsed], kind=kind, origin=origin, name=name) is parsed) is held


def test_the_first_matching_rule_is_the_one_named() -> None:
    rules = parse_rules('[{"kind": "eval"}, {"name": "delete"}, {"kind": "click"}]')
    assert first_match(rules, kind="click", origin=None, name="Delete all") is rules[1]
    assert first_match(rules, kind="click", origin=None, name="Open") is rules[2]
    assert first_match(rules, kind="press", origin=None, name="Open") is None
    assert first_match((), kind="click", origin=None, name=None) is None


def test_rules_come_from_toml_lists_or_json_text() -> None:
    assert parse_rules("") == ()
    assert parse_rules("   ") == ()
    assert parse_rules([]) == ()
    assert parse_rules('[{"kind": "upload", "origin": "https://a.test"}]') == (
        ConfirmRule(kind="upload", origin="https://a.test"),)
    assert parse_rules([{"name": "pay"}])[0].to_json() == {"name": "pay"}
    assert ConfirmRule(kind="click", origin="https://a.test", name="x").to_json() == {
        "kind": "click", "origin": "https://a.test", "name": "x"}
    assert ConfirmRule().to_json() == {}
    assert {"click", "navigate", "eval", "submit"} <= KINDS


@pytest.mark.parametrize("raw", [
    {"kind": "click"},  # not a list
    ({"kind": "click"},),  # a tuple is not what TOML or JSON gives either
    '{"kind": "click"}',
    [{}],  # a rule with no field would hold everything
    [{"kind": "click", "when": "always"}],  # unknown key
    ["click"],
    [{"kind": ""}],
    [{"kind": 3}],
    [{"kind": "hover"}],  # not a kind
    [{"name": "(unclosed"}],
    [{"kind": "click"}, {"origin": ""}],
])
def test_bad_rules_are_refused_with_a_reason(raw: Any) -> None:
    with pytest.raises(ValueError):
        parse_rules(raw)


# -- the board --------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def hold(board: ConfirmationBoard, runner: Any = None, *, token: str = "tok",
         summary: str = "click Pay") -> Any:
    async def ran() -> str:
        return "ran"

    return board.hold(kind="click", summary=summary, target={"ref": "e1"}, token=token,
                      profile="work", runner=runner or ran)


async def test_an_approved_action_runs_once_for_its_waiter() -> None:
    clock = Clock()
    board = ConfirmationBoard(clock)
    runs: list[int] = []

    async def runner() -> str:
        runs.append(1)
        return "clicked"

    held = hold(board, runner, summary="x" * 400)
    assert held.state == HeldState.PENDING
    assert re.fullmatch(r"cf_[0-9a-f]{12}", held.confirmation_id)  # 48 random bits
    assert held.summary == "x" * 300 and held.created_at == 1000.0
    assert held.to_json() == {"id": held.confirmation_id, "kind": "click", "summary": "x" * 300,
                              "target": {"ref": "e1"}, "token": "tok", "profile": "work",
                              "state": "pending", "createdAt": 1000.0, "answeredAt": None}
    assert board.listing() == [held] and board.listing(pending_only=True) == [held]
    answered: list[Any] = []
    async with trio.open_nursery() as nursery:
        async def wait() -> None:
            answered.append(await board.wait_answered(held.confirmation_id, token="tok"))

        nursery.start_soon(wait)
        await trio.testing.wait_all_tasks_blocked()
        assert answered == []  # waits for the person
        clock.now = 1005.0
        approved = board.answer(held.confirmation_id, approve=True)
    assert answered == [approved]
    assert (approved.state, approved.answered_at) == (HeldState.APPROVED, 1005.0)
    assert board.listing(pending_only=True) == [] and board.listing() == [approved]
    with pytest.raises(Conflict):
        board.answer(held.confirmation_id, approve=False)  # answered once
    assert await board.run_approved(held.confirmation_id) == "clicked"
    assert board.get(held.confirmation_id).state == HeldState.RAN
    with pytest.raises(Conflict):
        await board.run_approved(held.confirmation_id)
    assert runs == [1]


async def test_a_denied_action_answers_denied_and_never_runs() -> None:
    board = ConfirmationBoard(Clock())
    held = hold(board)
    denied = board.answer(held.confirmation_id, approve=False)
    assert denied.state == HeldState.DENIED
    with pytest.raises(Denied) as info:
        await board.wait_answered(held.confirmation_id, token="tok")
    assert info.value.status == 403 and "click Pay" in info.value.message


async def test_held_actions_are_their_tokens_own() -> None:
    board = ConfirmationBoard(Clock())
    held = hold(board, token="mine")
    assert board.get(held.confirmation_id) == held
    assert board.get(held.confirmation_id, token="mine") == held
    with pytest.raises(RequestNotFound):
        board.get(held.confirmation_id, token="other")
    with pytest.raises(RequestNotFound):
        await board.wait_answered(held.confirmation_id, token="other")
    with pytest.raises(RequestNotFound):
        board.get("cf_unknown")


def test_only_so_many_actions_wait_and_answered_ones_are_forgotten_later() -> None:
    assert (MAX_HELD, ANSWERED_KEPT_S) == (64, 600.0)  # 64 waiting; answers kept 10 min
    clock = Clock()
    board = ConfirmationBoard(clock)
    first = hold(board)
    for _ in range(MAX_HELD - 1):
        hold(board)
    with pytest.raises(Conflict):
        hold(board)
    board.answer(first.confirmation_id, approve=False)
    hold(board)  # an answered one no longer counts
    with pytest.raises(Conflict):
        hold(board)
    clock.now += ANSWERED_KEPT_S  # exactly the time kept: the first answer is still there
    board.answer(board.listing(pending_only=True)[0].confirmation_id, approve=True)
    hold(board)
    assert board.get(first.confirmation_id).state == HeldState.DENIED
    clock.now += 1
    board.answer(board.listing(pending_only=True)[0].confirmation_id, approve=True)
    hold(board)  # the first answer is forgotten now; the second is not yet
    with pytest.raises(RequestNotFound):
        board.get(first.confirmation_id)
    assert len(board.listing()) == MAX_HELD + 2
    assert len(board.listing(pending_only=True)) == MAX_HELD


async def test_an_approved_action_forgotten_before_its_waiter_came_never_runs() -> None:
    clock = Clock()
    board = ConfirmationBoard(clock)
    runs: list[int] = []

    async def runner() -> None:
        runs.append(1)

    held = hold(board, runner)
    board.answer(held.confirmation_id, approve=True)
    clock.now += ANSWERED_KEPT_S + 1
    hold(board)  # any new hold forgets answers older than ANSWERED_KEPT_S
    with pytest.raises(RequestNotFound):
        board.get(held.confirmation_id)
    with pytest.raises(Conflict):
        await board.run_approved(held.confirmation_id)
    assert runs == []
