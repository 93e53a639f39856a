"""The restart loop's policy (backoff, budget, refusals, stop) under trio's MockClock.

What it says while starting, failed or stopping, mode changes and errors from the
browser's subtree: test_supervisor_states.py.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import trio
import trio.testing

from browserd.config import Settings
from browserd.errors import BrowserDisabled, BrowserGone, BrowserNotRunning, PortInUse
from browserd.paths import Paths
from browserd.supervisor import BrowserSupervisor
from tests.unit._supervisor import VIRTUAL_DEADLINE_S, make


async def test_crash_loop_backs_off_exponentially_then_fails_with_the_reason(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    attempts: list[float] = []

    async def crashing(sup: BrowserSupervisor) -> None:
        attempts.append(trio.current_time())
        raise BrowserGone("exited with code 1", stderr="fatal: no display")

    sup = make(tmp_path, crashing)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            with pytest.raises(BrowserGone, match="giving up"):
                await sup.start()
            nursery.cancel_scope.cancel()
    assert sup.state == "failed"
    # budget 5 in 60 s: the first try plus 5 restarts, then no more spawns
    assert len(attempts) == 6
    gaps = [round(b - a, 3) for a, b in itertools.pairwise(attempts)]
    assert gaps == [0.5, 1.0, 2.0, 4.0, 8.0]  # jitter factor fixed at 1.0
    assert sup.last_error is not None and sup.last_error.details["stderr"] == "fatal: no display"
    with pytest.raises(BrowserNotRunning, match="failed"):
        sup.require_runtime()


async def test_backoff_is_capped(tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    attempts: list[float] = []

    async def crashing(sup: BrowserSupervisor) -> None:
        attempts.append(trio.current_time())
        raise BrowserGone("boom")

    sup = make(tmp_path, crashing, restart_budget=20, restart_window_s=10_000.0)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            with pytest.raises(BrowserGone):
                await sup.start()
            nursery.cancel_scope.cancel()
    gaps = [b - a for a, b in itertools.pairwise(attempts)]
    assert max(gaps) == pytest.approx(30.0)


async def test_refusal_fails_at_once_without_retrying(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    calls = 0

    async def refused(sup: BrowserSupervisor) -> None:
        nonlocal calls
        calls += 1
        raise PortInUse("DevTools port 18792 is already held by pid 7 (nc)")

    sup = make(tmp_path, refused)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            with pytest.raises(PortInUse, match="pid 7"):
                await sup.start()
            await trio.sleep(120)
            nursery.cancel_scope.cancel()
    assert calls == 1 and sup.state == "failed"


async def test_healthy_run_resets_the_backoff(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    attempts: list[float] = []

    async def runs_a_while(sup: BrowserSupervisor) -> None:
        attempts.append(trio.current_time())
        sup.mark_running(None)
        await trio.sleep(61 if len(attempts) % 2 else 1)
        raise BrowserGone("crashed")

    sup = make(tmp_path, runs_a_while)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            await sup.start()
            while len(attempts) < 5:
                await trio.sleep(1)
            nursery.cancel_scope.cancel()
    # after a ≥60 s healthy run the next restart waits 0.5 s again
    assert attempts[1] - attempts[0] == pytest.approx(61.5)
    assert attempts[3] - attempts[2] == pytest.approx(61.5)
    assert sup.restarts >= 4


async def test_exactly_sixty_healthy_seconds_reset_the_backoff(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    attempts: list[float] = []

    async def runs(sup: BrowserSupervisor) -> None:
        attempts.append(trio.current_time())
        sup.mark_running(None)
        await trio.sleep(60.0 if len(attempts) == 2 else 59.0)
        raise BrowserGone("crashed")

    sup = make(tmp_path, runs)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            await sup.start()
            while len(attempts) < 3:
                await trio.sleep(1)
            nursery.cancel_scope.cancel()
    # 59 s healthy: no reset (0.5 s wait, backoff doubles); exactly 60 s: reset (0.5 s again)
    assert attempts[1] - attempts[0] == pytest.approx(59.5)
    assert attempts[2] - attempts[1] == pytest.approx(60.5)


async def test_stop_during_backoff_ends_restarts(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    attempts = 0

    async def crashing(sup: BrowserSupervisor) -> None:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            sup.mark_running(None)
            await trio.sleep(1)
        raise BrowserGone("crashed")

    sup = make(tmp_path, crashing)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            await sup.start()
            while sup.state != "restarting":
                await trio.sleep(0.01)
            # The backoff wait here is 0.5 s (virtual); with the clock
            # autojumping, a stop that waited it out would let time advance.
            asked_at = trio.current_time()
            await sup.stop()
            stopped_at = trio.current_time()
            seen = attempts
            await trio.sleep(300)
            nursery.cancel_scope.cancel()
    assert sup.state == "stopped"
    assert stopped_at == asked_at, "stop waited for the backoff instead of ending it"
    assert attempts == seen


async def test_stop_cancels_a_running_subtree(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    cancelled = trio.Event()

    async def forever(sup: BrowserSupervisor) -> None:
        sup.mark_running(None)
        try:
            await trio.sleep_forever()
        finally:
            cancelled.set()

    sup = make(tmp_path, forever)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            await sup.start()
            assert sup.state == "running"
            assert await sup.stop() is True
            assert cancelled.is_set() and sup.state == "stopped"
            nursery.cancel_scope.cancel()


async def test_disabled_never_launches_and_answers_at_once(tmp_path: Path) -> None:
    launched = False

    async def launch(sup: BrowserSupervisor) -> None:
        nonlocal launched
        launched = True

    sup = make(tmp_path, launch, enabled=False)
    with trio.fail_after(1):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            with pytest.raises(BrowserDisabled):
                sup.require_runtime()
            with pytest.raises(BrowserDisabled):
                await sup.start()
            nursery.cancel_scope.cancel()
    assert not launched and sup.state == "disabled"


async def test_stop_ends_a_long_backoff_wait_at_once(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Deep in a crash loop (a ~30 s wait), ``stop`` returns without waiting any of it."""
    attempts = 0

    async def crashing(sup: BrowserSupervisor) -> None:
        nonlocal attempts
        attempts += 1
        raise BrowserGone("crashed")

    sup = make(tmp_path, crashing, restart_budget=50, restart_window_s=10_000.0)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            nursery.start_soon(sup.start)
            while attempts < 9:  # backoff now at its 30 s cap
                await trio.sleep(0.1)  # virtual: well inside each wait (0.5 s and more)
            await trio.sleep(0.001)
            assert sup.state == "restarting"
            asked_at = trio.current_time()
            assert await sup.stop() is True
            assert trio.current_time() == asked_at
            seen = attempts
            await trio.sleep(600)
            nursery.cancel_scope.cancel()
    assert sup.state == "stopped" and attempts == seen


async def test_backoff_is_jittered_by_the_random_factor(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Each wait is ``backoff * (0.5 + r)`` for a fresh r: restarts of many services spread out."""
    attempts: list[float] = []
    factors = iter([0.0, 0.99, 0.25, 0.75, 0.1])

    async def crashing(sup: BrowserSupervisor) -> None:
        attempts.append(trio.current_time())
        raise BrowserGone("crashed")

    sup = make(tmp_path, crashing, rng=lambda: next(factors))
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            with pytest.raises(BrowserGone, match="giving up"):
                await sup.start()
            nursery.cancel_scope.cancel()
    gaps = [round(b - a, 6) for a, b in itertools.pairwise(attempts)]
    assert gaps == [0.25, 1.49, 1.5, 5.0, 4.8]


async def test_default_jitter_is_random(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Without an injected rng the waits are not the bare doubling sequence."""
    attempts: list[float] = []

    async def crashing(sup: BrowserSupervisor) -> None:
        attempts.append(trio.current_time())
        raise BrowserGone("crashed")

    paths = Paths.resolve({"BROWSERD_HOME": str(tmp_path)})
    sup = BrowserSupervisor(Settings(), paths, subtree=crashing)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            with pytest.raises(BrowserGone, match="giving up"):
                await sup.start()
            nursery.cancel_scope.cancel()
    gaps = [b - a for a, b in itertools.pairwise(attempts)]
    bases = [0.5, 1.0, 2.0, 4.0, 8.0]
    assert all(0.5 * base <= gap <= 1.5 * base for gap, base in zip(gaps, bases, strict=True))
    assert len({round(gap / base, 9) for gap, base in zip(gaps, bases, strict=True)}) > 1


async def test_restart_budget_counts_only_restarts_inside_the_window(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Crashes spread wider than the window never exhaust the budget."""
    attempts: list[float] = []

    async def crashes_after_a_while(sup: BrowserSupervisor) -> None:
        attempts.append(trio.current_time())
        sup.mark_running(None)
        await trio.sleep(40)  # healthy less than 60 s: the backoff keeps growing
        raise BrowserGone("crashed")

    sup = make(tmp_path, crashes_after_a_while, restart_budget=2, restart_window_s=30.0)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            await sup.start()
            while len(attempts) < 6:
                await trio.sleep(1)
            assert sup.state in ("running", "restarting")
            nursery.cancel_scope.cancel()
    assert sup.restarts >= 5


async def test_budget_of_one_fails_on_the_second_crash(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    attempts = 0

    async def crashing(sup: BrowserSupervisor) -> None:
        nonlocal attempts
        attempts += 1
        raise BrowserGone("crashed")

    sup = make(tmp_path, crashing, restart_budget=1)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            with pytest.raises(BrowserGone, match="restarted 1 times"):
                await sup.start()
            nursery.cancel_scope.cancel()
    assert attempts == 2 and sup.restarts == 1 and sup.state == "failed"


async def test_a_start_after_a_failure_gets_the_whole_budget_again(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    attempts = 0

    async def crashing(sup: BrowserSupervisor) -> None:
        nonlocal attempts
        attempts += 1
        raise BrowserGone("crashed")

    sup = make(tmp_path, crashing, restart_budget=2)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            for _ in range(2):
                with pytest.raises(BrowserGone, match="restarted 2 times"):
                    await sup.start()
            nursery.cancel_scope.cancel()
    assert attempts == 6  # each start: the first try and two restarts


async def test_a_healthy_run_also_forgets_the_restarts_before_it(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Budget 2 in a long window: two quick crashes, a healthy hour, two more: still going."""
    runs = iter([1.0, 1.0, 3600.0, 1.0])
    attempts = 0
    fifth = trio.Event()

    async def crashing(sup: BrowserSupervisor) -> None:
        nonlocal attempts
        attempts += 1
        sup.mark_running(None)
        if attempts == 5:
            fifth.set()
            await trio.sleep_forever()
        await trio.sleep(next(runs))
        raise BrowserGone("crashed")

    sup = make(tmp_path, crashing, restart_budget=2, restart_window_s=100_000.0)
    with trio.fail_after(VIRTUAL_DEADLINE_S * 10):  # without the reset: failed, never a fifth
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            await sup.start()
            await fifth.wait()
            assert sup.state == "running"
            nursery.cancel_scope.cancel()
