"""Tab requests as plain state (no browser): asked, answered once, granted to one token.

Written for the mutants of ``tabrequests.py``
(``python -m supervision.mutants --only tabrequests``).
"""

from __future__ import annotations

import re

import pytest
import trio
import trio.testing

from browserd.errors import Conflict, RequestNotFound
from browserd.tabrequests import (
    ENDED_KEPT,
    MAX_PENDING,
    TabRequestBoard,
    TabRequestState,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def ask(board: TabRequestBoard, token: str = "agent", profile: str = "live") -> str:
    return board.ask(profile=profile, token=token, reason="the bank tab", url=None).request_id


async def test_an_approved_request_grants_the_tab_to_its_token_only() -> None:
    clock = Clock()
    board = TabRequestBoard(clock)
    request = board.ask(profile="live", token="agent", reason="the bank tab",
                        url="https://bank.test/")
    assert request.state == TabRequestState.PENDING
    assert re.fullmatch(r"tr_[0-9a-f]{12}", request.request_id)  # 48 random bits
    assert request.to_json() == {
        "requestId": request.request_id, "profile": "live", "token": "agent",
        "reason": "the bank tab", "url": "https://bank.test/", "state": "pending",
        "targetId": None, "createdAt": 100.0, "endedAt": None}
    assert board.listing() == [request] and board.listing(pending_only=True) == [request]
    woken: list[object] = []
    async with trio.open_nursery() as nursery:
        async def wait() -> None:
            woken.append(await board.wait_ended(request.request_id, token="agent"))

        nursery.start_soon(wait)
        await trio.testing.wait_all_tasks_blocked()
        assert woken == []
        clock.now = 130.0
        ended = board.end(request.request_id, TabRequestState.APPROVED, target_id="T1")
    assert woken == [ended]
    assert (ended.state, ended.target_id, ended.ended_at) == (TabRequestState.APPROVED, "T1",
                                                              130.0)
    assert board.listing(pending_only=True) == [] and board.listing() == [ended]
    assert board.hidden_from("other", "live") == frozenset({"T1"})
    assert board.hidden_from("agent", "live") == frozenset()
    assert board.hidden_from("other", "work") == frozenset()  # another profile's tab ids
    with pytest.raises(Conflict):
        board.end(request.request_id, TabRequestState.DENIED)
    board.forget_tab("live", "T1")
    assert board.hidden_from("other", "live") == frozenset()


def test_denied_and_cancelled_requests_grant_nothing() -> None:
    board = TabRequestBoard(Clock())
    denied = board.end(ask(board), TabRequestState.DENIED, target_id="T1")
    cancelled = board.end(ask(board), TabRequestState.CANCELLED)
    assert (denied.state, cancelled.state) == (TabRequestState.DENIED,
                                               TabRequestState.CANCELLED)
    assert board.hidden_from("other", "live") == frozenset()
    approved_blank = board.end(ask(board), TabRequestState.APPROVED)
    assert approved_blank.target_id is None
    assert board.hidden_from("other", "live") == frozenset()


async def test_a_request_is_its_tokens_own() -> None:
    board = TabRequestBoard(Clock())
    request_id = ask(board, token="agent")
    assert board.get(request_id).token == "agent"
    assert board.get(request_id, token="agent").token == "agent"
    with pytest.raises(RequestNotFound):
        board.get(request_id, token="other")
    with pytest.raises(RequestNotFound):
        await board.wait_ended(request_id, token="other")
    with pytest.raises(RequestNotFound):
        board.get("tr_unknown")
    with pytest.raises(RequestNotFound):
        board.end("tr_unknown", TabRequestState.DENIED)


def test_only_so_many_wait_and_only_so_many_ended_are_kept() -> None:
    assert (MAX_PENDING, ENDED_KEPT) == (64, 256)
    board = TabRequestBoard(Clock())
    ids = [ask(board) for _ in range(MAX_PENDING)]
    with pytest.raises(Conflict):
        ask(board)
    board.end(ids[0], TabRequestState.DENIED)
    ask(board)  # an ended request no longer counts
    with pytest.raises(Conflict):
        ask(board)
    # End requests until more than ENDED_KEPT have ended: the oldest ended are dropped.
    ended = [ids[0]]
    while len(ended) < ENDED_KEPT + 2:
        pending = board.listing(pending_only=True)
        board.end(pending[0].request_id, TabRequestState.CANCELLED)
        ended.append(pending[0].request_id)
        ask(board)
    for gone in ended[:2]:
        with pytest.raises(RequestNotFound):
            board.get(gone)
    assert board.get(ended[2]).state == TabRequestState.CANCELLED
    assert len(board.listing()) == ENDED_KEPT + MAX_PENDING
