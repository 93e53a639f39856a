"""The supervised-child helper (supervisor/child.py) under trio's MockClock."""

from __future__ import annotations

import itertools

import pytest
import trio
import trio.testing

from browserd.errors import BrowserGone, PortInUse
from browserd.supervisor.child import (
    ChildSpec,
    Outcome,
    RestartDecision,
    RestartTracker,
    RestartType,
    run_child,
)
from browserd.supervisor.policy import RestartPolicy

#: Virtual seconds: a loop that never gives up fails the test instead of spinning.
VIRTUAL_DEADLINE_S = 3600.0
FAST = RestartPolicy(backoff_start_s=1.0, backoff_max_s=8.0, budget=3, window_s=60.0)


def no_jitter() -> float:
    return 0.5  # the delay is the backoff itself


class Crashing:
    """A child that fails (or returns) at once, noting when each attempt began."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.began: list[float] = []

    async def __call__(self, *, task_status: trio.TaskStatus[None]) -> None:
        self.began.append(trio.current_time())
        task_status.started()
        if self.error is not None:
            raise self.error


async def test_budget_exhausted_gives_up_with_the_reason(
        autojump_clock: trio.testing.MockClock) -> None:
    child = Crashing(BrowserGone("exited with code 1"))
    failures: list[tuple[Exception, RestartDecision]] = []
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        decision = await run_child(ChildSpec(
            name="test", run=child, policy=FAST, rng=no_jitter,
            on_failure=lambda exc, d: failures.append((exc, d))))
    assert decision.outcome == Outcome.BUDGET and not decision.restart
    assert decision.reason == "restarted 3 times in 60 s; giving up: exited with code 1"
    assert len(child.began) == 4  # the first try and three restarts
    assert [d.outcome for _, d in failures] == [Outcome.RESTART] * 3 + [Outcome.BUDGET]


async def test_backoff_doubles_to_its_cap(autojump_clock: trio.testing.MockClock) -> None:
    child = Crashing(BrowserGone("crashed"))
    policy = RestartPolicy(backoff_start_s=1.0, backoff_max_s=4.0, budget=5, window_s=1000.0)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        await run_child(ChildSpec(name="test", run=child, policy=policy, rng=no_jitter))
    gaps = [round(b - a, 3) for a, b in itertools.pairwise(child.began)]
    assert gaps == [1.0, 2.0, 4.0, 4.0, 4.0]


async def test_a_transient_child_that_returns_is_not_restarted(
        autojump_clock: trio.testing.MockClock) -> None:
    child = Crashing()
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        decision = await run_child(ChildSpec(name="test", run=child, policy=FAST,
                                             restart=RestartType.TRANSIENT))
    assert decision.outcome == Outcome.DONE and len(child.began) == 1


async def test_a_transient_child_that_fails_is_restarted(
        autojump_clock: trio.testing.MockClock) -> None:
    calls = 0

    async def once_failing(*, task_status: trio.TaskStatus[None]) -> None:
        nonlocal calls
        calls += 1
        task_status.started()
        if calls == 1:
            raise BrowserGone("port flapped")

    with trio.fail_after(VIRTUAL_DEADLINE_S):
        decision = await run_child(ChildSpec(name="test", run=once_failing, policy=FAST,
                                             restart=RestartType.TRANSIENT, rng=no_jitter))
    assert decision.outcome == Outcome.DONE and calls == 2


async def test_a_permanent_child_is_restarted_after_a_clean_return_too(
        autojump_clock: trio.testing.MockClock) -> None:
    child = Crashing()
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        decision = await run_child(ChildSpec(name="test", run=child, policy=FAST,
                                             rng=no_jitter))
    assert decision.outcome == Outcome.BUDGET and "giving up: ended" in decision.reason
    assert len(child.began) == 4


async def test_a_temporary_child_is_never_restarted(
        autojump_clock: trio.testing.MockClock) -> None:
    child = Crashing(BrowserGone("crashed"))
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        decision = await run_child(ChildSpec(name="test", run=child, policy=FAST,
                                             restart=RestartType.TEMPORARY))
    assert decision.outcome == Outcome.DONE and len(child.began) == 1


async def test_a_refusal_is_not_retried(autojump_clock: trio.testing.MockClock) -> None:
    child = Crashing(PortInUse("port 9222 is taken"))
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        decision = await run_child(ChildSpec(name="test", run=child, policy=FAST))
    assert decision.outcome == Outcome.REFUSED and "port 9222" in decision.reason
    assert len(child.began) == 1


async def test_without_a_budget_it_never_gives_up(
        autojump_clock: trio.testing.MockClock) -> None:
    child = Crashing(BrowserGone("crashed"))
    policy = RestartPolicy(backoff_start_s=0.1, backoff_max_s=0.1, budget=None)
    with trio.move_on_after(100):
        await run_child(ChildSpec(name="test", run=child, policy=policy, rng=no_jitter))
    assert len(child.began) > 500


async def test_cancellation_propagates_from_the_backoff_wait(
        autojump_clock: trio.testing.MockClock) -> None:
    child = Crashing(BrowserGone("crashed"))
    policy = RestartPolicy(backoff_start_s=30.0, backoff_max_s=30.0, budget=None)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        with trio.move_on_after(45) as scope:
            await run_child(ChildSpec(name="test", run=child, policy=policy, rng=no_jitter))
    assert scope.cancelled_caught and len(child.began) == 2  # at 0 s and 30 s


async def test_cancellation_propagates_from_the_child(
        autojump_clock: trio.testing.MockClock) -> None:
    began: list[float] = []

    async def forever(*, task_status: trio.TaskStatus[None]) -> None:
        began.append(trio.current_time())
        task_status.started()
        await trio.sleep_forever()

    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(run_child, ChildSpec(name="test", run=forever, policy=FAST))
            await trio.sleep(5)
            nursery.cancel_scope.cancel()
    assert began == [0.0]  # cancelled, not restarted


async def test_a_failure_before_started_propagates_unless_told_to_retry(
        autojump_clock: trio.testing.MockClock) -> None:
    async def refusing(*, task_status: trio.TaskStatus[None]) -> None:
        raise BrowserGone("cannot bind")

    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            with pytest.raises(BrowserGone, match="cannot bind"):
                await nursery.start(run_child, ChildSpec(name="test", run=refusing,
                                                         policy=FAST))
            # Told to retry: the start is reported at the first failure, then it retries.
            await nursery.start(run_child, ChildSpec(name="test", run=refusing, policy=FAST,
                                                     raise_before_started=False))
            assert trio.current_time() == 0.0


async def test_errors_that_are_not_failures_propagate(
        autojump_clock: trio.testing.MockClock) -> None:
    async def buggy(*, task_status: trio.TaskStatus[None]) -> None:
        task_status.started()
        raise KeyError("bug")

    with trio.fail_after(VIRTUAL_DEADLINE_S), pytest.raises(KeyError):
        await run_child(ChildSpec(name="test", run=buggy, policy=FAST,
                                  failures=(BrowserGone,)))


async def test_no_restart_once_it_is_no_longer_wanted(
        autojump_clock: trio.testing.MockClock) -> None:
    child = Crashing(BrowserGone("crashed"))
    wanted = True

    def stop_after_first(exc: Exception, decision: RestartDecision) -> None:
        nonlocal wanted
        wanted = False

    with trio.fail_after(VIRTUAL_DEADLINE_S):
        decision = await run_child(ChildSpec(name="test", run=child, policy=FAST,
                                             wanted=lambda: wanted,
                                             on_failure=stop_after_first))
    assert decision.outcome == Outcome.DONE and len(child.began) == 1


def test_a_healthy_run_resets_the_backoff_and_the_budget() -> None:
    tracker = RestartTracker(FAST, rng=no_jitter)
    crash = BrowserGone("crashed")
    delays = [tracker.after(crash, ran_for_s=0.0, now=float(t)).delay_s for t in range(3)]
    assert delays == [1.0, 2.0, 4.0]
    assert tracker.after(crash, ran_for_s=0.0, now=3.0).outcome == Outcome.BUDGET
    # Ran 60 s (healthy_reset_s): the first backoff again, and a whole budget.
    again = tracker.after(crash, ran_for_s=60.0, now=70.0)
    assert again.outcome == Outcome.RESTART and again.delay_s == 1.0
    assert tracker.restarts == 4


def test_reset_backoff_and_clear_history_are_separate() -> None:
    tracker = RestartTracker(FAST, rng=no_jitter)
    crash = BrowserGone("crashed")
    for t in range(3):
        tracker.after(crash, ran_for_s=0.0, now=float(t))
    tracker.reset_backoff()
    assert tracker.backoff_s == 1.0
    assert tracker.after(crash, ran_for_s=0.0, now=4.0).outcome == Outcome.BUDGET
    tracker.clear_history()
    assert tracker.after(crash, ran_for_s=0.0, now=5.0).outcome == Outcome.RESTART
