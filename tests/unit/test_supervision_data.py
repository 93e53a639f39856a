"""Supervision as data: the restart policy, the stop budgets, capture admission."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from browserd import service_install
from browserd.config import Settings
from browserd.errors import BrowserGone, Overloaded, PortInUse, ProfileInUse
from browserd.supervisor import budgets
from browserd.supervisor.policy import RestartHistory, RestartPolicy
from browserd.tabs.capture_gate import QUEUE_FACTOR, CaptureGate


def test_policy_comes_from_settings_and_knows_refusals() -> None:
    policy = RestartPolicy.from_settings(Settings(restart_budget=3, restart_window_s=10.0))
    assert (policy.budget, policy.window_s) == (3, 10.0)
    assert policy.is_refusal(PortInUse("taken")) and policy.is_refusal(ProfileInUse("used"))
    assert not policy.is_refusal(BrowserGone("crashed")) and not policy.is_refusal(None)


def test_backoff_doubles_to_its_cap_and_jitters_around_it() -> None:
    policy = RestartPolicy(backoff_start_s=0.5, backoff_max_s=4.0)
    seen = [policy.backoff_start_s]
    for _ in range(5):
        seen.append(policy.next_backoff(seen[-1]))
    assert seen == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    assert policy.delay(2.0, lambda: 0.0) == 1.0
    assert policy.delay(2.0, lambda: 0.999) == pytest.approx(2.998)


def test_history_counts_restarts_within_the_window_only() -> None:
    history = RestartHistory(RestartPolicy(budget=2, window_s=10.0))
    assert history.record(0.0) and history.record(1.0)
    assert not history.record(2.0)  # a third within 10 s: over the budget
    history.clear()
    assert history.record(3.0)
    assert history.record(20.0) and history.record(21.0)  # 3.0 left the window
    assert not history.record(22.0)


def test_the_policy_defaults_are_the_documented_ones() -> None:
    """docs/architecture.md: 0.5 s doubling to 30 s, reset after 60 s healthy, 5 in 60 s."""
    policy = RestartPolicy()
    assert (policy.backoff_start_s, policy.backoff_max_s, policy.healthy_reset_s) == (
        0.5, 30.0, 60.0)
    assert (policy.budget, policy.window_s) == (5, 60.0)
    assert RestartPolicy.from_settings(Settings()) == policy  # the settings agree


def test_a_restart_exactly_window_s_after_the_first_still_counts() -> None:
    history = RestartHistory(RestartPolicy(budget=1, window_s=10.0))
    assert history.record(0.0)
    assert not history.record(10.0)  # 10 s apart: still inside the window
    history.clear()
    assert history.record(0.0)
    assert history.record(10.5)  # the first one has left the window


def test_stop_budgets_are_derived_and_the_service_managers_wait_longer() -> None:
    assert budgets.BROWSER_STOP_S < budgets.SUPERVISOR_STOP_S < budgets.SERVICE_STOP_S
    assert budgets.SERVICE_STOP_S == (budgets.SUPERVISOR_STOP_S + budgets.HTTP_DRAIN_S + 1)
    assert service_install.STOP_BUDGET_S == budgets.SERVICE_STOP_S
    assert service_install.ServiceSpec.__attrs_attrs__.stop_timeout_s.default > (
        budgets.SERVICE_STOP_S)


async def test_capture_admission_refuses_once_the_queue_is_full() -> None:
    with trio.fail_after(10):
        gate = CaptureGate.with_capacity(1)
        gate.admit()
        release = trio.Event()

        async def capture() -> None:
            async with gate.limiter:
                await release.wait()

        async with trio.open_nursery() as nursery:
            for _ in range(1 + QUEUE_FACTOR):  # one runs, QUEUE_FACTOR wait
                nursery.start_soon(capture)
            await trio.testing.wait_all_tasks_blocked()
            with pytest.raises(Overloaded):
                gate.admit()
            release.set()
        gate.admit()
