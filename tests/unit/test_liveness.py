"""Liveness and the crash account: probe → unresponsive → restart (hung), and why it died.

The probe's timing runs on trio's MockClock against the shared fake CDP peer
(tests/fakecdp.py); the supervisor's reaction is driven through a subtree
that serves a fake-peer connection with :meth:`BrowserSupervisor.serve_runtime`,
the helper the real attempts use. The crash account's classification is plain
code, tested as a table. Tests with real processes — a fake browser and
Chromium, SIGSTOPped and killed — are in tests/integration/test_crash_account.py.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import orjson
import pytest
import trio
import trio.testing

from browserd.cdp import open_cdp_over
from browserd.config import Settings, load_settings
from browserd.errors import (
    BrowserGone,
    BrowserUnresponsive,
    CdpError,
    ConfigError,
)
from browserd.events import EventType
from browserd.paths import Paths
from browserd.supervisor import BrowserSupervisor
from browserd.supervisor.crash import CrashAccount, Ending, crash_account
from browserd.supervisor.liveness import (
    PROBE_METHOD,
    AbortableTransport,
    LivenessPolicy,
    LivenessProbe,
)
from browserd.supervisor.runtime import BrowserRuntime
from browserd.tabs.capture_gate import CaptureGate
from tests.fakecdp import FakeCdpPeer, Refuse, connected

POLICY = LivenessPolicy(interval_s=5.0, timeout_s=10.0)


def hung_peer() -> FakeCdpPeer:
    """A browser that takes every command and answers none (a SIGSTOPped one)."""
    return FakeCdpPeer(default=lambda p, s: None)


def probes(peer: FakeCdpPeer) -> int:
    return len(peer.sent(PROBE_METHOD))


# -- the probe alone -------------------------------------------------------------------------


async def test_the_probe_asks_every_interval_while_the_browser_answers(
    autojump_clock: trio.testing.MockClock
) -> None:
    peer = FakeCdpPeer()
    async with connected(peer) as conn, trio.open_nursery() as nursery:
        nursery.start_soon(LivenessProbe(conn, POLICY).run)
        start = trio.current_time()
        await trio.sleep(4.9)
        assert probes(peer) == 0
        await trio.sleep(0.2)
        assert probes(peer) == 1
        await trio.sleep_until(start + 15.1)
        assert probes(peer) == 3
        nursery.cancel_scope.cancel()


async def test_a_nudge_probes_at_once_and_a_probe_in_flight_stands_for_it(
    autojump_clock: trio.testing.MockClock
) -> None:
    peer = FakeCdpPeer()
    async with connected(peer) as conn, trio.open_nursery() as nursery:
        probe = LivenessProbe(conn, POLICY)
        nursery.start_soon(probe.run)
        await trio.sleep(1.0)
        probe.nudge()
        await trio.sleep(0.01)
        assert probes(peer) == 1  # at once, not at the 5 s mark
        # A browser slow to answer: nudges while a probe waits add no probe of their own.
        peer.on(PROBE_METHOD, lambda p, s: None)
        probe.nudge()
        await trio.sleep(0.01)
        probe.nudge()
        probe.nudge()
        await trio.sleep(2.0)
        assert probes(peer) == 2 and probe.nudges == 4
        nursery.cancel_scope.cancel()


async def test_an_answer_just_within_the_timeout_is_not_a_hang(
    autojump_clock: trio.testing.MockClock
) -> None:
    peer = FakeCdpPeer()
    waiting: list[int] = []

    def slow(params: dict[str, Any], session: str | None) -> None:
        waiting.append(len(peer.received))  # the reply is sent later, by the test
        return None

    peer.on(PROBE_METHOD, slow)
    async with connected(peer) as conn, trio.open_nursery() as nursery:
        nursery.start_soon(LivenessProbe(conn, POLICY).run)
        await trio.sleep(5.01)
        assert len(waiting) == 1
        await trio.sleep(9.9)  # 0.1 s before the verdict
        call_id = peer.received[-1]["id"]
        await peer._send({"id": call_id, "result": {"product": "Fake/1"}})
        peer.on(PROBE_METHOD, lambda p, s: {"product": "Fake/1"})
        await trio.sleep(60)
        assert not conn.is_closed and len(waiting) == 1 and probes(peer) > 5
        nursery.cancel_scope.cancel()


async def test_an_error_reply_is_an_answer(autojump_clock: trio.testing.MockClock) -> None:
    peer = FakeCdpPeer({PROBE_METHOD: lambda p, s: Refuse("not allowed here")})
    async with connected(peer) as conn, trio.open_nursery() as nursery:
        nursery.start_soon(LivenessProbe(conn, POLICY).run)
        await trio.sleep(120)
        assert probes(peer) >= 8 and not conn.is_closed
        nursery.cancel_scope.cancel()


async def test_no_answer_is_a_hang_at_interval_plus_timeout_and_fails_calls_in_flight(
    autojump_clock: trio.testing.MockClock
) -> None:
    peer = hung_peer()
    told: list[tuple[float, bool]] = []
    failed: list[tuple[float, BaseException]] = []
    async with connected(peer) as conn:
        probe = LivenessProbe(conn, POLICY, on_unresponsive=lambda e: told.append(
            (trio.current_time(), conn.is_closed)))

        async def in_flight() -> None:
            try:
                await conn.send("Runtime.evaluate", {"expression": "1"})
            except BrowserGone as exc:
                failed.append((trio.current_time(), exc))

        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(in_flight)
            with pytest.raises(BrowserUnresponsive, match="within 10 s") as raised:
                await probe.run()
    assert raised.value.details["reason"] == "hung"
    assert told == [(start + 15.0, False)]  # told first, while the connection was still open
    assert [t for t, _ in failed] == [start + 15.0]  # the call failed then, not at its 30 s cap
    assert conn.is_closed


async def test_a_connection_that_closes_ends_the_probe_quietly(
    autojump_clock: trio.testing.MockClock
) -> None:
    peer = FakeCdpPeer()
    async with connected(peer) as conn:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(LivenessProbe(conn, POLICY).run)
            await trio.sleep(7)
            await peer.close()
        assert conn.is_closed and probes(peer) == 1


class SilentTransport:
    """A transport to a browser that reads every command and never writes (hung)."""

    description = "silent"

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self._never = trio.Event()

    async def send(self, data: bytes) -> None:
        self.sent.append(data)

    async def receive(self) -> bytes:
        await self._never.wait()
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        pass


async def test_over_an_abortable_transport_calls_in_flight_fail_as_unresponsive(
    autojump_clock: trio.testing.MockClock
) -> None:
    """The pipe's way: the reader sees the probe's verdict, so every pending call gets it."""
    inner = SilentTransport()
    pipe = AbortableTransport(inner)
    failed: list[BaseException] = []
    async with open_cdp_over(pipe, "pipe", close_transport=False) as conn:

        async def in_flight() -> None:
            try:
                await conn.send("Page.captureScreenshot", session_id="S1")
            except (BrowserGone, BrowserUnresponsive) as exc:
                failed.append(exc)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(in_flight)
            with pytest.raises(BrowserUnresponsive):
                await LivenessProbe(conn, POLICY, abortable=pipe).run()
        assert len(failed) == 1 and isinstance(failed[0], BrowserUnresponsive)
        assert isinstance(conn.close_reason, BrowserUnresponsive)
        assert pipe.aborted is conn.close_reason
        with pytest.raises(BrowserUnresponsive):
            await pipe.receive()  # and so it stays
    methods = [orjson.loads(m)["method"] for m in inner.sent]
    assert methods == ["Page.captureScreenshot", PROBE_METHOD]


# -- the supervisor's reaction ------------------------------------------------------------------


class FakeRegistry:
    def __init__(self, tabs: int) -> None:
        self.tabs = tabs

    def tab_count(self) -> int:
        return self.tabs


class Recorder:
    """An event sink that keeps what is published."""

    def __init__(self) -> None:
        self.events: list[tuple[EventType, dict[str, Any]]] = []

    def publish(self, event_type: EventType, *, target_id: str | None = None,
                **data: Any) -> None:
        self.events.append((event_type, data))

    def of(self, event_type: EventType) -> list[dict[str, Any]]:
        return [d for t, d in self.events if t == event_type]


class Serving:
    """A subtree serving the next peer's connection (the last one again and again).

    When serving ends with a hang, it notes (trio time, state, require_runtime's
    error code) at that moment: the attempt is not torn down yet.
    """

    def __init__(self, peers: list[FakeCdpPeer], *, tabs: int = 2) -> None:
        self.peers, self.tabs = peers, tabs
        self.attempts = itertools.count()
        self.hangs: list[tuple[float, str, str | None]] = []
        self.hung = trio.Event()

    async def __call__(self, sup: BrowserSupervisor) -> None:
        peer = self.peers[min(next(self.attempts), len(self.peers) - 1)]
        async with connected(peer) as conn:
            try:
                await sup.serve_runtime(BrowserRuntime(
                    connection=conn, registry=FakeRegistry(self.tabs),  # type: ignore[arg-type]
                    process=None, version="Fake/1", user_agent="fake", started_at=0.0,
                    captures=CaptureGate.with_capacity(1)))
            except BrowserUnresponsive:
                try:
                    sup.require_runtime()
                    code = None
                except BrowserUnresponsive as exc:
                    code = exc.code
                self.hangs.append((trio.current_time(), sup.state, code))
                self.hung.set()
                raise


def supervisor(tmp_path: Path, subtree: Serving, events: Recorder | None = None,
               **settings: Any) -> BrowserSupervisor:
    paths = Paths.resolve({"BROWSERD_HOME": str(tmp_path)})
    return BrowserSupervisor(Settings(**settings), paths, rng=lambda: 0.5, subtree=subtree,
                             events=events)  # type: ignore[arg-type]


async def test_a_hung_browser_goes_unresponsive_then_is_restarted_with_reason_hung(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    hung, healthy = hung_peer(), FakeCdpPeer()
    events = Recorder()
    serving = Serving([hung, healthy], tabs=3)
    sup = supervisor(tmp_path, serving, events)
    restarting: list[str] = []
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await sup.start()
        started = trio.current_time()
        first = sup.require_runtime()
        await serving.hung.wait()
        while sup.state != "running" or sup.runtime is first:
            if sup.state == "restarting":
                with pytest.raises(BrowserUnresponsive) as raised:
                    sup.require_runtime()  # until it runs again
                restarting.append(raised.value.code)
            await trio.sleep(0.05)
        await trio.sleep(6)  # the new connection is probed too
        assert probes(healthy) == 1 and sup.state == "running"
        nursery.cancel_scope.cancel()
    assert serving.hangs == [(started + 15.0, "unresponsive", "BROWSER_UNRESPONSIVE")]
    assert restarting and set(restarting) == {"BROWSER_UNRESPONSIVE"}
    assert sup.restarts == 1 and sup.last_error is None
    crash = sup.statistics().last_crash
    assert crash is not None and crash["reason"] == "hung" and crash["tabsAffected"] == 3
    assert "exitCode" not in crash and "signal" not in crash  # nothing of a process: attached
    assert events.of(EventType.BROWSER_CRASHED) == [
        {"reason": "hung", "stderrTail": "", "tabsAffected": 3}]
    states = [d["state"] for d in events.of(EventType.BROWSER_STATE)]
    assert states[states.index("unresponsive") - 1:] == [
        "running", "unresponsive", "restarting", "running"]
    unresponsive = events.of(EventType.BROWSER_STATE)[states.index("unresponsive")]
    assert unresponsive["error"]["code"] == "BROWSER_UNRESPONSIVE"


async def test_hangs_count_in_the_restart_budget(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    peer = hung_peer()
    sup = supervisor(tmp_path, Serving([peer]), restart_budget=2, restart_window_s=1000.0)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await sup.start()
        while sup.state != "failed":
            await trio.sleep(1)
        nursery.cancel_scope.cancel()
    assert sup.restarts == 2
    assert sup.last_error is not None and "giving up" in sup.last_error.message
    assert sup.last_error.details["reason"] == "hung"


async def test_a_nudge_finds_a_hang_within_the_timeout(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    serving = Serving([hung_peer()])
    sup = supervisor(tmp_path, serving, liveness_interval_s=30.0, liveness_timeout_s=30.0)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await sup.start()
        await trio.sleep(1.0)
        nudged = trio.current_time()
        sup.nudge_liveness()  # a request timed out
        await serving.hung.wait()
        while sup.state != "restarting":
            await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    assert serving.hangs[0][0] == nudged + 30.0  # the timeout after the nudge, not 30 + 30


async def test_nudge_liveness_without_a_browser_is_a_no_op(tmp_path: Path) -> None:
    sup = supervisor(tmp_path, Serving([FakeCdpPeer()]))
    sup.nudge_liveness()  # nothing runs: nothing to probe, nothing raised
    assert sup.state == "stopped"


async def test_a_stop_while_it_answers_is_no_crash(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    sup = supervisor(tmp_path, Serving([FakeCdpPeer()]))
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await sup.start()
        await trio.sleep(60)
        await sup.stop()
        nursery.cancel_scope.cancel()
    assert sup.state == "stopped" and sup.statistics().last_crash is None


# -- the crash account as a table ----------------------------------------------------------------


@pytest.mark.parametrize(("own_exit", "how", "has_process", "expected"), [
    (-9, "closed", True, {"reason": "killed", "signal": 9}),
    (-9, None, True, {"reason": "killed", "signal": 9}),  # the process noticed first
    (-11, "hung", True, {"reason": "killed", "signal": 11}),  # its own account wins
    (1, "closed", True, {"reason": "exited", "exitCode": 1}),
    (0, "closed", True, {"reason": "exited", "exitCode": 0}),
    (None, "hung", True, {"reason": "hung"}),
    (None, "closed", True, {"reason": "pipe_closed"}),
    (None, "closed", False, {"reason": "pipe_closed"}),
    (None, "hung", False, {"reason": "hung"}),
    (None, None, True, None),  # ended from outside, the process alive: not a crash
])
def test_the_crash_account(own_exit: int | None, how: Any, has_process: bool,
                           expected: dict[str, Any] | None) -> None:
    ending = Ending(at=100.0, tabs=4, how=how)
    crash = crash_account(ending=ending, own_exit=own_exit, has_process=has_process,
                          stderr_tail="fatal: oops", at=200.0)
    if expected is None:
        assert crash is None
        return
    assert crash is not None
    assert crash.to_json() == {"at": 100.0, **expected, "stderrTail": "fatal: oops",
                               "tabsAffected": 4}


def test_the_crash_account_is_the_attempts_answer() -> None:
    killed = CrashAccount(at=1.0, reason="killed", signal=9, stderr_tail="bye")
    error = killed.as_error(BrowserGone("the browser pipe closed"))
    assert isinstance(error, BrowserGone)
    assert error.message == "the browser was killed by SIGKILL (signal 9)"
    assert error.details == {"reason": "killed", "signal": 9, "stderr": "bye"}
    exited = CrashAccount(at=1.0, reason="exited", exit_code=3).as_error(CdpError("x"))
    assert exited.message == "the browser exited unexpectedly (code 3)"
    hung = CrashAccount(at=1.0, reason="hung", stderr_tail="last words")
    kept = hung.as_error(BrowserUnresponsive("no answer", reason="hung"))
    assert isinstance(kept, BrowserUnresponsive) and kept.message == "no answer"
    assert kept.details == {"reason": "hung", "stderr": "last words"}
    other = CdpError("a protocol error")
    assert CrashAccount(at=1.0, reason="pipe_closed").as_error(other) is other


# -- settings --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("env", "problem"), [
    ({"BROWSERD_LIVENESS_INTERVAL_S": "0"}, "liveness_interval_s"),
    ({"BROWSERD_LIVENESS_TIMEOUT_S": "-1"}, "liveness_timeout_s"),
    ({"BROWSERD_LIVENESS_INTERVAL_S": "5", "BROWSERD_LIVENESS_TIMEOUT_S": "2"},
     "at least liveness_interval_s"),
])
def test_liveness_settings_are_validated(tmp_path: Path, env: dict[str, str],
                                         problem: str) -> None:
    paths = Paths.resolve({"BROWSERD_HOME": str(tmp_path)})
    with pytest.raises(ConfigError, match=problem):
        load_settings(paths, environ=env)


def test_liveness_defaults_and_small_values(tmp_path: Path) -> None:
    paths = Paths.resolve({"BROWSERD_HOME": str(tmp_path)})
    assert LivenessPolicy.from_settings(load_settings(paths, environ={})) == LivenessPolicy(
        interval_s=5.0, timeout_s=10.0)
    small = load_settings(paths, environ={"BROWSERD_LIVENESS_INTERVAL_S": "0.5",
                                          "BROWSERD_LIVENESS_TIMEOUT_S": "2"})
    assert (small.liveness_interval_s, small.liveness_timeout_s) == (0.5, 2.0)
