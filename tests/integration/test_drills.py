"""The fast fault drills of supervision/ in CI: each drill's own checks are the assertions.

Each test runs one drill end to end (a private browserd on a real Chromium,
one injected fault, recovery and the invariants checked, a graceful stop)
and fails with the drill's report. ``python -m supervision`` runs them all. Latency
limits are not judged here (only recorded): a loaded CI machine is slow, not broken.

Eight fast drills stay out of the suite, for its time, because suite tests show
the same behaviour more cheaply: F3 (SIGTERM: ``test_lifecycle``'s
``test_sigterm_exits_zero_after_closing_the_browser``), F8 (a hung renderer:
``test_input``'s hung-page click), F9 (a dialog never hangs a call: the dialog
tests of ``test_snapshot``, ``test_hostile`` and ``test_navigation``), F11 (a crash
loop backs off and gives up: ``test_profiles``' crash loop and
``tests/unit/test_supervisor.py``), P1 (one profile killed while the others
serve: ``test_profiles``) and F16 (a SIGSTOPped browser is found, refused fast
and replaced: ``test_crash_account``'s real-Chromium SIGSTOP test), F17 (tabs
restored after a kill -9: ``test_restore``) and F18 (an event flood: ``test_flood``).
``python -m supervision`` runs them with the rest.
"""

from __future__ import annotations

import pytest
import trio
from supervision.drill import DrillResult
from supervision.drills import run_drill

pytestmark = pytest.mark.chromium


async def drill(key: str) -> DrillResult:
    with trio.fail_after(180):
        result = await run_drill(key, fast=True, judge_latency=False)
    assert result.outcome == "PASS", result.report()
    return result


async def test_f1_browser_killed_with_requests_in_flight() -> None:
    await drill("F1")


async def test_f5_stale_singleton_lock_does_not_block_a_start() -> None:
    await drill("F5")


async def test_f7_renderer_crash_fails_that_tab_only() -> None:
    await drill("F7")


async def test_f14_closing_the_last_tab_keeps_the_browser_usable() -> None:
    await drill("F14")


async def test_s11_hostile_neighbour_gets_nothing() -> None:
    await drill("S11")

