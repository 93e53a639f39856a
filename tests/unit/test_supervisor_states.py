"""The restart loop's states under trio's MockClock: what it answers while starting,
failed or stopping, which runtime it hands out, mode changes, and errors in the subtree.

Backoff, budget and stop during a backoff: test_supervisor.py.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import trio
import trio.testing

from browserd.errors import (
    AttachOnly,
    BadRequest,
    BrowserGone,
    BrowserNotRunning,
    BrowserStarting,
    PortInUse,
    unwrap_group,
)
from browserd.supervisor import BrowserSupervisor
from browserd.supervisor.runtime import BrowserRuntime
from browserd.tabs.capture_gate import CaptureGate
from tests.unit._supervisor import VIRTUAL_DEADLINE_S, make


async def test_calls_while_starting_are_told_it_is_starting(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    release = trio.Event()

    async def slow_start(sup: BrowserSupervisor) -> None:
        await release.wait()
        sup.mark_running(None)
        await trio.sleep_forever()

    sup = make(tmp_path, slow_start)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            nursery.start_soon(sup.start)
            while sup.state != "starting":
                await trio.sleep(0.01)
            with pytest.raises(BrowserStarting):
                sup.require_runtime()
            release.set()
            while sup.state != "running":
                await trio.sleep(0.01)
            nursery.cancel_scope.cancel()


async def test_stop_after_failure_leaves_it_stopped_and_says_it_was_not_up(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async def refused(sup: BrowserSupervisor) -> None:
        raise PortInUse("held")

    sup = make(tmp_path, refused)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            with pytest.raises(PortInUse):
                await sup.start()
            assert sup.state == "failed"
            assert await sup.stop() is False
            assert sup.state == "stopped"
            nursery.cancel_scope.cancel()


async def test_headed_start_without_a_display_is_refused(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    launched = 0

    async def launch(sup: BrowserSupervisor) -> None:
        nonlocal launched
        launched += 1
        sup.mark_running(None)
        await trio.sleep_forever()

    sup = make(tmp_path, launch, headless=True)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            with pytest.raises(BadRequest, match="no display"):
                await sup.start(headless=False)
            assert launched == 0 and sup.headless is True
            nursery.cancel_scope.cancel()


async def test_changing_the_mode_of_a_running_browser_relaunches_it(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DISPLAY", ":99")
    modes: list[bool] = []
    ended = 0

    async def launch(sup: BrowserSupervisor) -> None:
        nonlocal ended
        modes.append(sup.headless)
        sup.mark_running(None)
        try:
            await trio.sleep_forever()
        finally:
            ended += 1

    sup = make(tmp_path, launch, headless=True)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            await sup.start()
            await sup.start(headless=False)
            assert sup.state == "running"
            nursery.cancel_scope.cancel()
    assert modes == [True, False] and ended >= 1


async def test_an_unexpected_error_in_the_subtree_is_a_crash_not_a_dead_supervisor(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async def buggy(sup: BrowserSupervisor) -> None:
        raise RuntimeError("bug")

    sup = make(tmp_path, buggy, restart_budget=1)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            with pytest.raises(BrowserGone, match="internal error"):
                await sup.start()
            nursery.cancel_scope.cancel()
    assert sup.state == "failed"


def a_runtime(*, closed: bool) -> BrowserRuntime:
    """The parts of a runtime ``require_runtime`` looks at (a connection, open or closed)."""
    fake: Any = SimpleNamespace(is_closed=closed)
    return BrowserRuntime(connection=fake, registry=fake, process=None, version="Fake/1",
                          user_agent="fake", started_at=0.0,
                          captures=CaptureGate.with_capacity(1))


async def test_require_runtime_hands_out_only_a_live_connection(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    live, dead = a_runtime(closed=False), a_runtime(closed=True)
    serving: list[BrowserRuntime] = [live]

    async def running(sup: BrowserSupervisor) -> None:
        sup.mark_running(serving[0])
        await trio.sleep_forever()

    sup = make(tmp_path, running)
    with pytest.raises(BrowserNotRunning, match="the browser is not running"):
        sup.require_runtime()  # never started
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            await sup.start()
            assert sup.require_runtime() is live
            sup.mark_running(dead)  # its connection closed; the attempt has not ended yet
            with pytest.raises(BrowserNotRunning, match="the browser is not running"):
                sup.require_runtime()
            nursery.cancel_scope.cancel()


async def test_after_a_failure_and_a_stop_it_is_not_running_not_failed(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async def refused(sup: BrowserSupervisor) -> None:
        raise PortInUse("held")

    sup = make(tmp_path, refused)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            with pytest.raises(PortInUse):
                await sup.start()
            with pytest.raises(BrowserNotRunning, match="the browser failed: held"):
                sup.require_runtime()
            await sup.stop()
            with pytest.raises(BrowserNotRunning, match="the browser is not running"):
                sup.require_runtime()
            nursery.cancel_scope.cancel()


async def test_an_attached_browser_cannot_change_its_mode(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    sup = make(tmp_path, None, cdp_url="http://127.0.0.1:9/", headless=True)
    with pytest.raises(AttachOnly):
        await sup.start(headless=False)


async def test_the_state_is_stopping_while_the_browser_is_torn_down(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    release = trio.Event()

    async def slow_to_stop(sup: BrowserSupervisor) -> None:
        sup.mark_running(None)
        try:
            await trio.sleep_forever()
        finally:
            with trio.CancelScope(shield=True):
                await release.wait()  # the stop ladder takes its time

    sup = make(tmp_path, slow_to_stop)
    with trio.fail_after(VIRTUAL_DEADLINE_S):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            await sup.start()
            nursery.start_soon(sup.stop)
            await trio.testing.wait_all_tasks_blocked()
            assert sup.state == "stopping"
            release.set()
            while sup.state != "stopped":
                await trio.sleep(0.01)
            nursery.cancel_scope.cancel()


class Fatal(BaseException):
    """Not an Exception: something the supervisor must never swallow as a 'crash'."""


async def test_a_base_exception_in_the_subtree_is_not_turned_into_a_crash(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async def fatal(sup: BrowserSupervisor) -> None:
        raise Fatal

    sup = make(tmp_path, fatal)
    with pytest.raises(BaseException) as raised:
        with trio.fail_after(VIRTUAL_DEADLINE_S):
            async with trio.open_nursery() as nursery:
                await nursery.start(sup.run)
                await sup.start()
    assert isinstance(unwrap_group(raised.value), Fatal), raised.value
