"""The ops page's gate and sessions, and handoffs, at their edges (no browser).

Written for the mutants of ``ui/gate.py``, ``ui/sessions.py`` and ``handoff.py``
(``python -m supervision.mutants --only ui-gate,ui-sessions,handoff``) and for
the audit's "a handoff blocks ``/act`` and ``/tabs/close``, and a request
already queued on the tab's work slot when the handoff begins".
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import SimpleNamespace
from typing import Any, cast

import pytest
import trio
import trio.testing

from browserd.errors import HandoffActive
from browserd.handoff import (
    ENDED_KEPT,
    REASON_MAX_CHARS,
    HandoffBoard,
    HandoffOutcome,
    wait_handoff_end,
)
from browserd.http.facts import HANDOFF, NOTHING
from browserd.http.routes import all_routes
from browserd.http.tabwork import on_tab
from browserd.system import System
from browserd.ui.gate import KEY_HEADER, SCOPE_KEY, UiGate, cookie_value, session_of
from browserd.ui.sessions import MAX_SESSIONS, SESSION_TTL_S, UiSessions
from tests.unit.test_guard import GOOD_HOST, make_scope

ORIGIN = f"http://{GOOD_HOST}"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


# -- ui sessions -------------------------------------------------------------------------


def test_a_code_is_valid_for_exactly_its_ttl() -> None:
    clock = Clock()
    sessions = UiSessions(clock=clock, code_ttl_s=10)
    code = sessions.issue_code()
    assert code.expires_in_s == 10
    clock.now += 10  # expiry is exclusive: at 10 s it is gone
    assert sessions.redeem(code.code) is None
    early = sessions.issue_code()
    clock.now += 9.999
    assert sessions.redeem(early.code) is not None


def test_a_session_lives_for_exactly_its_ttl() -> None:
    clock = Clock()
    sessions = UiSessions(clock=clock, session_ttl_s=100)
    session = sessions.redeem(sessions.issue_code().code)
    assert session is not None
    assert (session.created, session.expires) == (100.0, 200.0)
    assert session.who == f"ui:{session.label}" and len(session.label) == 8
    clock.now = 199.9
    assert sessions.lookup(session.session_id, session.key) == session
    assert sessions.count() == 1
    clock.now = 200.0
    assert sessions.count() == 0
    assert sessions.lookup(session.session_id, session.key) is None
    assert UiSessions().redeem(UiSessions().issue_code().code) is None  # codes are per store
    assert SESSION_TTL_S == 12 * 3600


def test_an_expired_session_is_forgotten_when_looked_up() -> None:
    clock = Clock()
    sessions = UiSessions(clock=clock, session_ttl_s=100)
    session = sessions.redeem(sessions.issue_code().code)
    assert session is not None
    clock.now += 100
    assert sessions.lookup(session.session_id, session.key) is None
    clock.now -= 50  # even if the clock went back, it stays gone
    assert sessions.lookup(session.session_id, session.key) is None


def test_only_so_many_sessions_are_kept_the_oldest_ends_first() -> None:
    sessions = UiSessions(clock=Clock())
    made = [sessions.redeem(sessions.issue_code().code) for _ in range(MAX_SESSIONS + 1)]
    assert all(m is not None for m in made)
    first, second, last = made[0], made[1], made[-1]
    assert first is not None and second is not None and last is not None
    assert sessions.lookup(first.session_id, first.key) is None
    assert sessions.lookup(second.session_id, second.key) == second
    assert sessions.lookup(last.session_id, last.key) == last
    assert sessions.count() == MAX_SESSIONS


def test_oversized_or_empty_secrets_are_no_session() -> None:
    sessions = UiSessions(clock=Clock())
    assert sessions.redeem("") is None
    assert sessions.redeem("x" * 201) is None
    session = sessions.redeem(sessions.issue_code().code)
    assert session is not None
    assert sessions.lookup(session.session_id, session.key + "x" * 200) is None
    assert sessions.lookup(session.session_id + "x" * 200, session.key) is None
    assert sessions.lookup(session.session_id, session.key[:-1]) is None
    assert sessions.lookup(session.session_id, session.key) == session


def test_a_secret_over_200_characters_is_refused_before_it_is_hashed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The 200-character limit spares hashing a huge secret (a request's query or header
    can carry kilobytes): 200 characters are hashed and looked up, 201 never reach the
    hash. Observed by counting what the module hashes."""
    from browserd.ui import sessions as module

    sessions = UiSessions(clock=Clock())
    session = sessions.redeem(sessions.issue_code().code)
    assert session is not None
    hashed: list[int] = []
    real = module._digest

    def counting(secret: str) -> bytes:
        hashed.append(len(secret))
        return real(secret)

    monkeypatch.setattr(module, "_digest", counting)
    assert sessions.redeem("c" * 200) is None and hashed == [200]
    assert sessions.redeem("c" * 201) is None and hashed == [200]
    hashed.clear()
    assert sessions.lookup("s" * 200, session.key) is None and hashed == [200]
    hashed.clear()
    assert sessions.lookup("s" * 201, session.key) is None and hashed == []
    assert sessions.lookup(session.session_id, "k" * 201) is None and hashed == []
    assert sessions.lookup(session.session_id, "k" * 200) is None
    assert hashed == [len(session.session_id)]
    hashed.clear()
    assert sessions.lookup(session.session_id, session.key) == session and len(hashed) == 1


def test_sixteen_codes_and_thirty_two_sessions_are_kept() -> None:
    """The bounds: 16 unredeemed codes (docs/security.md), 32 sessions (MAX_SESSIONS)."""
    sessions = UiSessions(clock=Clock())
    codes = [sessions.issue_code().code for _ in range(16)]
    assert all(len(c) == 32 for c in codes)  # 24 random bytes, URL-safe base64
    assert sessions.redeem(codes[0]) is not None  # the oldest of 16 still works
    codes = [sessions.issue_code().code for _ in range(17)]
    assert sessions.redeem(codes[0]) is None and sessions.redeem(codes[1]) is not None
    for _ in range(40):
        sessions.redeem(sessions.issue_code().code)
    assert sessions.count() == 32


def test_by_default_a_code_lasts_60_s_and_a_session_has_two_32_byte_secrets() -> None:
    clock = Clock()
    sessions = UiSessions(clock=clock)  # docs/security.md: valid once and for 60 s
    late, fresh = sessions.issue_code(), sessions.issue_code()
    clock.now += 59.9
    session = sessions.redeem(fresh.code)
    assert session is not None
    assert len(session.session_id) == 43 and len(session.key) == 43  # 32 random bytes
    clock.now += 0.1
    assert sessions.redeem(late.code) is None


# -- the gate ----------------------------------------------------------------------------


@pytest.fixture
def login() -> tuple[UiGate, Any]:
    sessions = UiSessions(clock=Clock())
    session = sessions.redeem(sessions.issue_code().code)
    assert session is not None
    return UiGate(sessions), session


def headers(session: Any, *extra: tuple[str, str], key: bool = True,
            origin: bool = True) -> list[tuple[str, str]]:
    out = [("host", GOOD_HOST), ("cookie", f"a=1; browserd_ui={session.session_id}")]
    if key:
        out.append((KEY_HEADER, f" {session.key} "))
    if origin:
        out.append(("origin", ORIGIN))
    return [*out, *extra]


def test_reads_need_no_origin_but_changes_do(login: Any) -> None:
    gate, session = login
    for method in ("GET", "HEAD"):
        scope = make_scope(method, "/ui/api/state", headers(session, origin=False))
        assert gate.check(scope) is None and session_of(scope) == session
    for method in ("POST", "DELETE", "PUT"):
        refused = gate.check(make_scope(method, "/ui/api/state", headers(session, origin=False)))
        assert refused is not None and refused.status == 403
        assert gate.check(make_scope(method, "/ui/api/state", headers(session))) is None
    assert gate.check(make_scope("HEAD", "/ui/app.js", [("host", GOOD_HOST)])) is None


def test_a_request_the_gate_refuses_carries_no_session(login: Any) -> None:
    gate, session = login
    scope = make_scope("POST", "/ui/api/state", headers(session, origin=False))
    assert gate.check(scope) is not None
    assert session_of(scope) is None and SCOPE_KEY not in scope
    assert session_of({SCOPE_KEY: "not a session"}) is None


def test_the_key_header_and_the_cookie_must_each_come_once(login: Any) -> None:
    gate, session = login
    twice = headers(session, (KEY_HEADER, session.key))
    assert gate.check(make_scope("GET", "/ui/api/state", twice)) is not None
    cookies = headers(session, ("cookie", f"browserd_ui={session.session_id}"))
    assert gate.check(make_scope("GET", "/ui/api/state", cookies)) is not None
    assert cookie_value(['browserd_ui="quoted" ; x=y'], "browserd_ui") == "quoted"
    assert cookie_value(["browserd_ui"], "browserd_ui") is None
    assert cookie_value(["xbrowserd_ui=1"], "browserd_ui") is None


def test_a_websocket_needs_the_protocol_and_exactly_one_key(login: Any) -> None:
    gate, session = login

    def ws(protocols: list[str]) -> Any:
        scope = make_scope(path="/ui/api/live", headers=headers(session, key=False),
                           kind="websocket")
        scope["subprotocols"] = protocols
        return gate.check(scope)

    assert ws(["browserd-ui", f" key.{session.key} "]) is None
    assert ws([f"key.{session.key}"]) is not None  # without browserd-ui
    assert ws(["browserd-ui", f"key.{session.key}", "key.other"]) is not None
    assert ws(["browserd-ui"]) is not None
    # A WebSocket is never an open path, even at the page's own address.
    scope = make_scope(path="/ui", headers=[("host", GOOD_HOST)], kind="websocket")
    assert gate.check(scope) is not None


# -- handoffs ----------------------------------------------------------------------------


def test_a_reason_is_kept_to_its_limit_and_a_repeat_keeps_since() -> None:
    clock = Clock()
    board = HandoffBoard(clock=clock)
    first = board.request("T1", "r" * (REASON_MAX_CHARS + 50))
    assert first.reason == "r" * REASON_MAX_CHARS and first.since == 100.0
    assert REASON_MAX_CHARS == 500  # docs/api.md: a reason of at most 500 characters
    assert ENDED_KEPT == 200
    assert first.to_json() == {"reason": "r" * REASON_MAX_CHARS, "since": 100.0}
    clock.now = 150.0
    again = board.request("T1", "again")
    assert (again.since, board.active("T1")) == (100.0, again)
    other = board.request("T2", "other")
    assert other.since == 150.0
    assert board.all_active() == [again, other]  # oldest first
    clock.now = 160.0
    ended = board.end("T1", HandoffOutcome.CANCELLED, by="agent")
    assert ended is not None
    assert ended.to_json() == {"reason": "again", "since": 100.0, "outcome": "cancelled",
                               "endedAt": 160.0}
    assert (ended.by, ended.handoff) == ("agent", again)
    with pytest.raises(HandoffActive):
        board.check_input("T2")


def test_only_the_latest_ends_are_remembered() -> None:
    board = HandoffBoard(clock=Clock())
    for i in range(ENDED_KEPT + 1):
        board.request(f"T{i}", "x")
        board.end(f"T{i}", HandoffOutcome.DONE, by="ui")
    assert board.last_end("T0") is None
    assert board.last_end("T1") is not None
    # A tab's newer end replaces its older one, and counts as the newest.
    board.request("T1", "again")
    board.end("T1", HandoffOutcome.CLOSED, by="browserd")
    board.request("NEW", "x")
    board.end("NEW", HandoffOutcome.DONE, by="ui")
    last = board.last_end("T1")
    assert last is not None and last.outcome is HandoffOutcome.CLOSED
    assert board.last_end("T2") is None  # the oldest other went


async def test_the_board_wakes_its_waiters_on_every_change() -> None:
    board = HandoffBoard(clock=Clock())
    changes = 0

    async def count() -> None:
        nonlocal changes
        while True:
            await board.wait_changed()
            changes += 1

    async with trio.open_nursery() as nursery:
        nursery.start_soon(count)
        await trio.testing.wait_all_tasks_blocked()
        board.request("T1", "x")
        await trio.testing.wait_all_tasks_blocked()
        board.end("T1", HandoffOutcome.DONE, by="ui")
        await trio.testing.wait_all_tasks_blocked()
        board.end("T1", HandoffOutcome.DONE, by="ui")  # nothing to end: no change
        board.prune([])
        await trio.testing.wait_all_tasks_blocked()
        assert changes == 2
        nursery.cancel_scope.cancel()


class WaitTab:
    def __init__(self) -> None:
        self.target_id = "T1"
        self.closed = False

    def view(self) -> SimpleNamespace:
        return SimpleNamespace(closed=self.closed)

    async def wait_changed(self) -> None:
        await trio.sleep_forever()


async def test_a_wait_follows_a_newer_request_and_returns_at_once_when_ended() -> None:
    board = HandoffBoard(clock=Clock())
    tab: Any = WaitTab()
    first = board.request("T1", "first")
    done = board.end("T1", HandoffOutcome.DONE, by="ui")
    with trio.fail_after(5):
        assert await wait_handoff_end(board, tab, first) == done  # already ended
        second = board.request("T1", "second")
        result: list[Any] = []
        async with trio.open_nursery() as nursery:
            async def wait() -> None:
                result.append(await wait_handoff_end(board, tab, second))

            nursery.start_soon(wait)
            await trio.testing.wait_all_tasks_blocked()
            newer = board.request("T1", "second, reworded")  # same since: the same handoff
            await trio.testing.wait_all_tasks_blocked()
            assert result == []
            ended = board.end("T1", HandoffOutcome.CANCELLED, by="agent")
        assert result == [ended] and ended is not None and ended.handoff == newer
        # A handoff that vanished without an end on record reads as closed.
        board.request("T9", "x")
        vanished = board.request("T9", "x")
        tab.target_id = "T9"
        board.prune(["T1"])
        forgotten = HandoffBoard(clock=Clock())
        end = await wait_handoff_end(forgotten, tab, vanished)
        assert (end.outcome, end.by, end.handoff) == (HandoffOutcome.CLOSED, "browserd",
                                                      vanished)


# -- a handoff stops agent input on the tab, also input already queued -------------------


class SlotTab:
    """A tab with one work slot, as TabActor.work holds it."""

    def __init__(self, target_id: str) -> None:
        self.target_id = target_id
        self.lock = trio.Lock()
        self.ran: list[str] = []

    @asynccontextmanager
    async def work(self, **_: Any) -> AsyncIterator[SlotTab]:
        async with self.lock:
            yield self


class Tabs:
    def __init__(self, tab: SlotTab) -> None:
        self.tab = tab
        self.closed: list[str] = []  # never: a handed-over tab is not closed

    async def resolve(self, target_id: str | None) -> SlotTab:
        return self.tab

    def get(self, target_id: str) -> SlotTab:
        return self.tab


class FakeSystem:
    def __init__(self) -> None:
        self.handoffs = HandoffBoard(clock=Clock())
        self.tab = SlotTab("T1")
        self.tabs = Tabs(self.tab)
        self.runtime = type("Runtime", (), {"tabs": self.tabs})()
        self.blocked_by: frozenset[str] | None = None  # set as the running route declares

    def require_runtime(self) -> Any:
        """As :meth:`browserd.system.System.require_runtime`: the one runtime."""
        return self.runtime

    def running(self, blocked_by: frozenset[str] | None) -> FakeSystem:
        """As :meth:`browserd.system.System.running`: this fake, for one route's call."""
        self.blocked_by = blocked_by
        return self


async def test_a_request_queued_when_the_handoff_begins_is_refused() -> None:
    fake = FakeSystem()
    system = cast(System, fake)
    outcome: list[object] = []

    async def click(tab: Any) -> str:
        tab.ran.append("click")
        return "clicked"

    async def queued() -> None:
        try:
            fake.blocked_by = HANDOFF  # what an input route declares, among others
            outcome.append(await on_tab(system, "T1", click, deadline_s=10))
        except HandoffActive as exc:
            outcome.append(exc.code)

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery, fake.tab.lock:  # the slot is busy
            nursery.start_soon(queued)
            await trio.testing.wait_all_tasks_blocked()
            fake.handoffs.request("T1", "a person takes over")
            # leaving frees the slot; the queued request must not act then
        assert outcome == ["HANDOFF_ACTIVE"] and fake.tab.ran == []
        # Reads still run; input runs again once the person is done.

        async def read(tab: Any) -> str:
            return "read"

        fake.blocked_by = NOTHING
        assert await on_tab(system, "T1", read, deadline_s=10) == "read"
        fake.handoffs.end("T1", HandoffOutcome.DONE, by="ui")
        fake.blocked_by = HANDOFF
        assert await on_tab(system, "T1", click, deadline_s=10) == "clicked"


async def call(system: System, path: str, args: dict[str, Any]) -> Any:
    """The POST route's handler as the dispatcher runs it: under what the route declares
    blocks it."""
    (route,) = [r for r in all_routes() if r.path == path and "POST" in r.methods]
    return await route.handler(system.running(route.blocked_by), args)


async def test_a_handoff_refuses_act_and_closing_the_tab() -> None:
    fake = FakeSystem()
    system = cast(System, fake)
    fake.handoffs.request("T1", "a person takes over")
    with trio.fail_after(5):
        with pytest.raises(HandoffActive):
            await call(system, "/act", {"targetId": "T1", "timeoutMs": 5000,
                                        "snapshot": "none",
                                        "actions": [{"kind": "press", "key": "Enter"}]})
        with pytest.raises(HandoffActive):
            await call(system, "/tabs/close", {"targetId": "T1"})
    assert fake.tabs.closed == [] and fake.tab.ran == []
    # Another tab is not handed over: its /act passes the handoff check (and then runs
    # on the stand-in tab, which cannot act: any error but HANDOFF_ACTIVE will do).
    fake.tab.target_id = "T2"
    with trio.fail_after(5), pytest.raises(Exception) as info:
        await call(system, "/act", {"targetId": "T2", "timeoutMs": 5000, "snapshot": "none",
                                    "actions": [{"kind": "press", "key": "Enter"}]})
    assert not isinstance(info.value, HandoffActive)
