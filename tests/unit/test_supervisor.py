"""The restart loop's policy (backoff, budget, refusals, stop) under trio's MockClock."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import trio
import trio.testing

from browserd.config import Settings
from browserd.errors import (
    BrowserDisabled,
    BrowserGone,
    BrowserNotRunning,
    PortInUse,
)
from browserd.paths import Paths
from browserd.supervisor import BrowserSupervisor


def make(tmp_path: Path, subtree, **settings) -> BrowserSupervisor:  # type: ignore[no-untyped-def]
    paths = Paths.resolve({"BROWSERD_HOME": str(tmp_path)})
    return BrowserSupervisor(Settings(**settings), paths, rng=lambda: 0.5, subtree=subtree)


async def test_crash_loop_backs_off_exponentially_then_fails_with_the_reason(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    attempts: list[float] = []

    async def crashing(sup: BrowserSupervisor) -> None:
        attempts.append(trio.current_time())
        raise BrowserGone("exited with code 1", stderr="fatal: no display")

    sup = make(tmp_path, crashing)
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
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await sup.start()
        while sup.state != "restarting":
            await trio.sleep(0.01)
        await sup.stop()
        seen = attempts
        await trio.sleep(300)
        nursery.cancel_scope.cancel()
    assert sup.state == "stopped"
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
