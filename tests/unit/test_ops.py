"""The ops page's sessions and gate, handoffs, live-view input and /metrics, without a browser."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import trio
import trio.testing
from prometheus_client.parser import text_string_to_metric_families

from browserd.errors import BadRequest, HandoffActive
from browserd.handoff import HandoffBoard, HandoffOutcome, wait_handoff_end
from browserd.http.guard import Guard
from browserd.metrics import Metrics, ServiceGauges
from browserd.ui.gate import UiGate, cookie_value, session_of
from browserd.ui.live import LiveViews, input_command
from browserd.ui.sessions import CODE_TTL_S, MAX_CODES, UiSessions
from tests.unit.test_guard import AUTH, GOOD_HOST, TOKEN, Inner, assert_refused, drive, make_scope

ORIGIN = f"http://{GOOD_HOST}"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


# -- sessions ---------------------------------------------------------------------------------


def test_a_code_logs_in_once() -> None:
    sessions = UiSessions(clock=Clock())
    code = sessions.issue_code().code
    session = sessions.redeem(code)
    assert session is not None
    assert sessions.redeem(code) is None, "a used code must not work again"
    assert sessions.lookup(session.session_id, session.key) == session
    assert sessions.count() == 1


def test_an_expired_code_fails() -> None:
    clock = Clock()
    sessions = UiSessions(clock=clock)
    fresh, stale = sessions.issue_code(), sessions.issue_code()
    clock.now += CODE_TTL_S - 0.5
    assert sessions.redeem(fresh.code) is not None
    clock.now += 1.0
    assert sessions.redeem(stale.code) is None


def test_a_session_needs_its_own_key_and_ends() -> None:
    clock = Clock()
    sessions = UiSessions(clock=clock, session_ttl_s=50)
    a = sessions.redeem(sessions.issue_code().code)
    b = sessions.redeem(sessions.issue_code().code)
    assert a is not None and b is not None and a.label != b.label
    assert sessions.lookup(a.session_id, b.key) is None
    assert sessions.lookup(a.session_id, "") is None
    assert sessions.lookup("", a.key) is None
    sessions.end(a)
    assert sessions.lookup(a.session_id, a.key) is None
    clock.now += 50
    assert sessions.lookup(b.session_id, b.key) is None, "sessions expire"


def test_unredeemed_codes_are_bounded() -> None:
    sessions = UiSessions(clock=Clock())
    codes = [sessions.issue_code().code for _ in range(MAX_CODES + 1)]
    assert sessions.redeem(codes[0]) is None
    assert sessions.redeem(codes[-1]) is not None


def test_secrets_stay_out_of_reprs() -> None:
    sessions = UiSessions(clock=Clock())
    login = sessions.issue_code()
    session = sessions.redeem(login.code)
    assert session is not None
    assert login.code not in repr(login)
    assert session.session_id not in repr(session) and session.key not in repr(session)


# -- the gate, alone and in the Guard ---------------------------------------------------------


def test_cookie_values() -> None:
    assert cookie_value(["a=1; browserd_ui=xyz"], "browserd_ui") == "xyz"
    assert cookie_value(["browserd_ui=x", "browserd_ui=y"], "browserd_ui") is None
    assert cookie_value(["other=1"], "browserd_ui") is None


@pytest.fixture
def logged_in() -> tuple[UiSessions, Any]:
    sessions = UiSessions(clock=Clock())
    session = sessions.redeem(sessions.issue_code().code)
    assert session is not None
    return sessions, session


def ui_headers(session: Any, *, origin: bool = True, key: bool = True) -> list[tuple[str, str]]:
    headers = [("host", GOOD_HOST), ("cookie", f"browserd_ui={session.session_id}")]
    if key:
        headers.append(("x-browserd-ui-key", session.key))
    if origin:
        headers.append(("origin", ORIGIN))
    return headers


def test_the_gate_lets_a_session_through_and_says_whose(logged_in: Any) -> None:
    sessions, session = logged_in
    gate = UiGate(sessions)
    scope = make_scope("POST", "/ui/api/browser", ui_headers(session))
    assert gate.check(scope) is None
    assert session_of(scope) == session


@pytest.mark.parametrize(("method", "path", "headers", "code"), [
    ("GET", "/ui/api/state", "no key", "UNAUTHORIZED"),
    ("GET", "/ui/api/state", "bearer only", "UNAUTHORIZED"),
    ("POST", "/ui/api/browser", "no origin", "FORBIDDEN_ORIGIN"),
    ("GET", "/ui/api/state", "wrong key", "UNAUTHORIZED"),
])
def test_the_gate_refuses(logged_in: Any, method: str, path: str, headers: str,
                          code: str) -> None:
    sessions, session = logged_in
    chosen = {
        "no key": ui_headers(session, key=False),
        "bearer only": [("host", GOOD_HOST), AUTH],
        "no origin": ui_headers(session, origin=False),
        "wrong key": [*ui_headers(session, key=False), ("x-browserd-ui-key", "x" * 43)],
    }[headers]
    error = UiGate(sessions).check(make_scope(method, path, chosen))
    assert error is not None and error.code == code


def test_the_page_shell_and_login_are_open_to_get_only(logged_in: Any) -> None:
    gate = UiGate(logged_in[0])
    for path in ("/ui", "/ui/", "/ui/app.js", "/ui/app.css", "/ui/login"):
        assert gate.check(make_scope("GET", path, [("host", GOOD_HOST)])) is None
    assert gate.check(make_scope("POST", "/ui/login", [("host", GOOD_HOST)])) is not None
    assert gate.applies("/ui") and gate.applies("/ui/api/state")
    assert not gate.applies("/ui-codes") and not gate.applies("/uix")


def test_a_websocket_brings_its_key_as_a_subprotocol(logged_in: Any) -> None:
    sessions, session = logged_in
    gate = UiGate(sessions)
    scope = make_scope(path="/ui/api/live", headers=ui_headers(session, key=False),
                       kind="websocket")
    assert gate.check(scope) is not None
    scope["subprotocols"] = ["browserd-ui", f"key.{session.key}"]
    assert gate.check(scope) is None
    no_origin = make_scope(path="/ui/api/live", headers=ui_headers(session, key=False,
                                                                   origin=False),
                           kind="websocket")
    no_origin["subprotocols"] = ["browserd-ui", f"key.{session.key}"]
    error = gate.check(no_origin)
    assert error is not None and error.code == "FORBIDDEN_ORIGIN"


async def test_in_the_guard_the_token_never_opens_ui_and_the_cookie_no_agent_route(
    logged_in: Any,
) -> None:
    sessions, session = logged_in
    inner = Inner()
    guard = Guard(inner, token=TOKEN, control_port=int(GOOD_HOST.split(":")[1]),
                  session_gate=UiGate(sessions))
    resp, _ = await drive(guard, make_scope("GET", "/ui/api/state", [("host", GOOD_HOST), AUTH]))
    assert_refused(resp, inner, 401, "UNAUTHORIZED")
    resp, _ = await drive(guard, make_scope("GET", "/status", ui_headers(session)))
    assert_refused(resp, inner, 401, "UNAUTHORIZED")
    resp, _ = await drive(guard, make_scope("POST", "/ui/api/browser", [
        *ui_headers(session, origin=False), ("origin", "http://evil.test")]))
    assert_refused(resp, inner, 403, "FORBIDDEN_ORIGIN")
    resp, _ = await drive(guard, make_scope("GET", "/ui/api/state", ui_headers(session)))
    assert resp.status == 200 and len(inner.calls) == 1
    assert guard.auth_failures == 1, "only the agent route's refusal counts as a token failure"


# -- live-view input --------------------------------------------------------------------------


def test_viewer_messages_become_input_commands() -> None:
    assert input_command({"type": "mouse", "event": "down", "x": 10, "y": 20.5}) == (
        "Input.dispatchMouseEvent", {"type": "mousePressed", "x": 10.0, "y": 20.5,
                                     "modifiers": 0, "button": "left", "clickCount": 1})
    assert input_command({"type": "mouse", "event": "wheel", "x": 1, "y": 1, "deltaY": 120})[1][
        "deltaY"] == 120.0
    assert input_command({"type": "key", "event": "down", "key": "a", "code": "KeyA",
                          "keyCode": 65}) == ("Input.dispatchKeyEvent", {
        "type": "keyDown", "key": "a", "code": "KeyA", "windowsVirtualKeyCode": 65,
        "modifiers": 0, "text": "a", "unmodifiedText": "a"})
    _, enter = input_command({"type": "key", "event": "down", "key": "Enter"})
    assert (enter["type"], enter["text"], enter["windowsVirtualKeyCode"]) == ("keyDown", "\r", 13)
    _, backspace = input_command({"type": "key", "event": "down", "key": "Backspace"})
    assert backspace["type"] == "rawKeyDown" and "text" not in backspace
    _, chord = input_command({"type": "key", "event": "down", "key": "a", "modifiers": 2})
    assert chord["type"] == "rawKeyDown", "Control+a is a shortcut, not text"
    assert input_command({"type": "text", "text": "pasted"}) == (
        "Input.insertText", {"text": "pasted"})
    assert input_command({"type": "dialog", "accept": False}) == (
        "Page.handleJavaScriptDialog", {"accept": False})
    assert input_command({"type": "dialog", "accept": True, "promptText": "x"})[1] == {
        "accept": True, "promptText": "x"}


@pytest.mark.parametrize("message", [
    [], {"type": "eval", "js": "1"}, {"type": "mouse", "event": "down", "x": -1, "y": 0},
    {"type": "mouse", "event": "down", "x": float("nan"), "y": 0},
    {"type": "mouse", "event": "drag", "x": 1, "y": 1},
    {"type": "mouse", "event": "down", "x": 1, "y": 1, "button": "back"},
    {"type": "key", "event": "down", "key": ""}, {"type": "key", "event": "down", "key": "x" * 41},
    {"type": "key", "event": "press", "key": "a"}, {"type": "text", "text": 5},
    {"type": "mouse", "event": "up", "x": 1, "y": 1, "modifiers": 16},
    {"type": "mouse", "event": "up", "x": 1, "y": 1, "clicks": True},
    {"type": "dialog", "accept": "yes"}, {"type": "dialog", "accept": True, "promptText": 1},
])
def test_bad_viewer_messages_are_refused(message: Any) -> None:
    with pytest.raises(BadRequest):
        input_command(message)


def test_the_newest_live_view_decides_the_front() -> None:
    views = LiveViews()
    views.opened("A")
    views.opened("B")
    views.opened("A")
    assert views.front() == "A"
    views.closed("A")
    assert views.front() == "B" and views.count() == 2
    views.closed("B")
    views.closed("A")
    assert views.front() is None


# -- handoffs ---------------------------------------------------------------------------------


def test_a_handoff_blocks_input_until_it_ends() -> None:
    board = HandoffBoard(clock=lambda: 5.0)
    board.check_input("T1")
    first = board.request("T1", "solve the captcha")
    again = board.request("T1", "solve it, please")
    assert again.since == first.since and again.reason == "solve it, please"
    with pytest.raises(HandoffActive) as caught:
        board.check_input("T1")
    assert caught.value.to_dict()["handoff"] == {"reason": "solve it, please", "since": 5.0}
    board.check_input("T2")
    ended = board.end("T1", HandoffOutcome.DONE, by="ui:abc")
    assert ended is not None and ended.to_json()["outcome"] == "done"
    assert board.end("T1", HandoffOutcome.DONE, by="ui:abc") is None
    board.check_input("T1")
    assert board.last_end("T1") == ended


def test_handoffs_of_gone_tabs_end_as_closed() -> None:
    board = HandoffBoard()
    board.request("gone", "x")
    board.request("here", "y")
    board.prune(["here"])
    assert [h.target_id for h in board.all_active()] == ["here"]
    last = board.last_end("gone")
    assert last is not None and last.outcome == HandoffOutcome.CLOSED


class FakeTab:
    def __init__(self, target_id: str) -> None:
        self.target_id = target_id
        self.closed = False
        self._changed = trio.Event()

    def view(self) -> SimpleNamespace:
        return SimpleNamespace(closed=self.closed)

    async def wait_changed(self) -> None:
        await self._changed.wait()

    def close(self) -> None:
        self.closed = True
        self._changed.set()


async def test_waiting_for_a_handoff_ends_with_done_or_with_the_tab() -> None:
    board = HandoffBoard()
    tab: Any = FakeTab("T1")
    outcomes: list[str] = []
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            handoff = board.request("T1", "log in")

            async def wait() -> None:
                outcomes.append(str((await wait_handoff_end(board, tab, handoff)).outcome))

            nursery.start_soon(wait)
            await trio.testing.wait_all_tasks_blocked()
            assert outcomes == []
            board.end("T1", HandoffOutcome.DONE, by="ui:x")
        assert outcomes == ["done"]
        second = board.request("T1", "again")
        async with trio.open_nursery() as nursery:
            async def wait_again() -> None:
                outcomes.append(str((await wait_handoff_end(board, tab, second)).outcome))

            nursery.start_soon(wait_again)
            await trio.testing.wait_all_tasks_blocked()
            tab.close()
        assert outcomes == ["done", "closed"]
        assert board.active("T1") is None


# -- metrics ----------------------------------------------------------------------------------


def gauges(**changes: Any) -> ServiceGauges:
    base: dict[str, Any] = dict(
        profile="clawd", state="running", states=("stopped", "running", "failed"), restarts=2,
        spawns=3, browser_uptime_s=12.5, service_uptime_s=20.0, tabs=4, handoffs=1,
        cdp_pending=0, cdp_sent=10, cdp_replies=9, cdp_events=30, media_files=2,
        media_bytes=2048, downloads_in_progress=0, downloads_completed=1, downloads_canceled=1,
        download_bytes=4096, ui_sessions=1)
    base.update(changes)
    return ServiceGauges(**base)


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def test_the_exposition_parses_and_says_what_happened() -> None:
    metrics = Metrics()
    metrics.observe_request("/tabs/<targetId>", "DELETE", 200, 0.02)
    metrics.observe_request("/click", "POST", 409, 0.001)
    metrics.observe_request("/click", "POST", 409, 0.003)
    got = samples(metrics.exposition(gauges()).decode())
    assert got[("browserd_http_requests_total", (("method", "POST"), ("route", "/click"),
                                                ("status", "409")))] == 2
    assert got[("browserd_http_request_duration_seconds_count", (("route", "/click"),))] == 2
    assert got[("browserd_http_request_duration_seconds_bucket",
                (("le", "0.005"), ("route", "/click")))] == 2
    profile = (("profile", "clawd"),)
    assert got[("browserd_browser_state", (("profile", "clawd"), ("state", "running")))] == 1
    assert got[("browserd_browser_state", (("profile", "clawd"), ("state", "failed")))] == 0
    assert got[("browserd_browser_restarts_total", profile)] == 2
    assert got[("browserd_tabs", profile)] == 4
    assert got[("browserd_handoffs", profile)] == 1
    assert got[("browserd_cdp_pending_commands", profile)] == 0
    assert got[("browserd_media_bytes", ())] == 2048
    assert got[("browserd_download_bytes", profile)] == 4096
    assert got[("browserd_ui_sessions", ())] == 1


def test_each_service_counts_alone_and_a_stopped_browser_has_no_cdp_numbers() -> None:
    one, two = Metrics(), Metrics()
    one.observe_request("/status", "GET", 200, 0.01)
    got = samples(two.exposition(gauges(state="stopped", cdp_pending=None,
                                        browser_uptime_s=None)).decode())
    assert not [k for k in got if k[0] == "browserd_http_requests_total"]
    assert not [k for k in got if k[0].startswith("browserd_cdp_")]
    assert got[("browserd_browser_up", (("profile", "clawd"),))] == 0
