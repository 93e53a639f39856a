"""The liveness probe and the crash account at their edges (trio's MockClock, no browser).

Written for the mutants of ``supervisor/liveness.py`` and ``supervisor/crash.py``
(``python -m supervision.mutants --only liveness,crash``).
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
import trio
import trio.testing

from browserd.config import load_settings
from browserd.errors import BrowserGone, BrowserUnresponsive, Timeout
from browserd.paths import Paths
from browserd.supervisor.crash import CrashAccount, Ending, crash_account
from browserd.supervisor.liveness import AbortableTransport, LivenessPolicy, LivenessProbe
from tests.fakecdp import FakeCdpPeer, connected
from tests.unit.test_liveness import POLICY, SilentTransport, probes

# -- the probe ---------------------------------------------------------------------------


async def test_probes_are_counted_from_zero(autojump_clock: trio.testing.MockClock) -> None:
    peer = FakeCdpPeer()
    async with connected(peer) as conn, trio.open_nursery() as nursery:
        probe = LivenessProbe(conn, POLICY)
        assert probe.probes == 0 and probe.nudges == 0
        nursery.start_soon(probe.run)
        await trio.sleep(POLICY.interval_s * 2 + 0.5)
        assert probe.probes == probes(peer) == 2
        nursery.cancel_scope.cancel()


async def test_a_connection_that_closes_ends_the_probe_at_once(
        autojump_clock: trio.testing.MockClock) -> None:
    peer = FakeCdpPeer()
    async with connected(peer) as conn:
        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(LivenessProbe(conn, POLICY).run)
            await trio.sleep(1)
            await peer.close()
        # Ended when the connection closed, not at the next probe's 5 s mark.
        assert trio.current_time() - start < POLICY.interval_s
        assert probes(peer) == 0


def test_the_policys_defaults_are_the_settings_defaults(tmp_path: Path) -> None:
    paths = Paths.resolve({"BROWSERD_HOME": str(tmp_path)})
    assert LivenessPolicy() == LivenessPolicy.from_settings(load_settings(paths, environ={}))


class ClosingTransport(SilentTransport):
    def __init__(self) -> None:
        super().__init__()
        self.closed = False

    async def aclose(self) -> None:
        self.closed = True


async def test_the_abortable_transport_is_its_inner_transport_until_aborted() -> None:
    inner = ClosingTransport()
    pipe = AbortableTransport(inner)
    assert pipe.description == "silent" and pipe.aborted is None
    await pipe.send(b"x")
    assert inner.sent == [b"x"]
    error = BrowserUnresponsive("hung", reason="hung")
    pipe.abort(error)
    pipe.abort(BrowserUnresponsive("later"))  # idempotent: the first error stays
    assert pipe.aborted is error
    with pytest.raises(BrowserUnresponsive) as raised:
        await pipe.receive()
    assert raised.value is error
    await pipe.send(b"y")  # the stop ladder still needs the pipe
    await pipe.aclose()
    assert inner.sent == [b"x", b"y"] and inner.closed


# -- the crash account -------------------------------------------------------------------


def test_each_crash_is_described_by_what_happened() -> None:
    killed = CrashAccount(at=1.0, reason="killed", signal=signal.SIGKILL)
    assert killed.describe() == "the browser was killed by SIGKILL (signal 9)"
    assert CrashAccount(at=1.0, reason="killed", signal=99).describe() == (
        "the browser was killed by signal 99 (signal 99)")
    assert CrashAccount(at=1.0, reason="exited", exit_code=3).describe() == (
        "the browser exited unexpectedly (code 3)")
    assert CrashAccount(at=1.0, reason="hung").describe() == (
        "the browser stopped answering CDP (hung)")
    assert CrashAccount(at=1.0, reason="pipe_closed").describe() == (
        "the browser's CDP connection closed while it ran")
    assert CrashAccount(at=1.0, reason="hung", signal=9).describe() == (
        "the browser stopped answering CDP (hung)")
    assert CrashAccount(at=1.0, reason="killed").describe() == (
        "the browser's CDP connection closed while it ran")  # no signal known


def test_the_account_in_json() -> None:
    account = CrashAccount(at=1.23456, reason="exited", exit_code=0)
    assert account.to_json() == {"at": 1.235, "reason": "exited", "exitCode": 0,
                                 "stderrTail": "", "tabsAffected": 0}
    assert CrashAccount(at=2.0, reason="killed", signal=15, tabs_affected=2).event_data() == {
        "reason": "killed", "signal": 15, "stderrTail": "", "tabsAffected": 2}


def test_an_attempt_noted_by_nobody_affected_no_tabs() -> None:
    crash = crash_account(ending=None, own_exit=-9, has_process=True, stderr_tail="", at=5.0)
    assert crash is not None and (crash.at, crash.tabs_affected, crash.signal) == (5.0, 0, 9)
    assert crash_account(ending=None, own_exit=None, has_process=True, stderr_tail="",
                         at=5.0) is None
    noted = Ending(at=3.0, tabs=4, how="closed")
    crash = crash_account(ending=noted, own_exit=None, has_process=False, stderr_tail="x",
                          at=5.0)
    assert crash is not None and (crash.reason, crash.at, crash.tabs_affected) == (
        "pipe_closed", 3.0, 4)


def test_the_error_on_record_for_a_crash() -> None:
    cause = BrowserGone("the connection closed", hint="h")
    hung = CrashAccount(at=1.0, reason="hung", stderr_tail="tail").as_error(
        BrowserUnresponsive("no answer", reason="hung"))
    assert isinstance(hung, BrowserUnresponsive) and hung.details["stderr"] == "tail"
    closed = CrashAccount(at=1.0, reason="pipe_closed").as_error(cause)
    assert type(closed) is BrowserGone and closed.details["reason"] == "pipe_closed"
    assert "stderr" not in closed.details and closed.hint == "h"
    other = Timeout("slow")
    assert CrashAccount(at=1.0, reason="pipe_closed").as_error(other) is other
    exited = CrashAccount(at=1.0, reason="exited", exit_code=2).as_error(other)
    assert type(exited) is BrowserGone and exited.details["exitCode"] == 2
