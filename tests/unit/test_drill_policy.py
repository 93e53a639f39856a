"""The drill runner's verdicts: undeclared skips fail, latency is judged only when asked."""

from __future__ import annotations

import pytest
from supervision import drills
from supervision.drill import Drill, DrillSkipped
from supervision.drills import DrillSpec, run_drill


def install(monkeypatch: pytest.MonkeyPatch, fn, may_skip: str | None = None) -> None:  # type: ignore[no-untyped-def]
    spec = DrillSpec(key="FX", title="test", expectation="-", fn=fn, fast=True,
                     may_skip=may_skip)
    monkeypatch.setitem(drills.DRILLS, "FX", spec)


async def test_a_skip_without_a_declared_reason_is_a_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def skips(d: Drill) -> None:
        raise DrillSkipped("a route is missing")

    install(monkeypatch, skips)
    result = await run_drill("FX")
    assert result.outcome == "FAIL"
    assert "declares no reason" in result.failures[0]


async def test_a_declared_skip_is_a_skip(monkeypatch: pytest.MonkeyPatch) -> None:
    async def skips(d: Drill) -> None:
        raise DrillSkipped("cannot mount")

    install(monkeypatch, skips, may_skip="needs root")
    result = await run_drill("FX")
    assert result.outcome == "SKIP" and "needs root" in result.notes[0]


async def test_latency_limits_fail_only_when_judged(monkeypatch: pytest.MonkeyPatch) -> None:
    async def slow(d: Drill) -> None:
        d.within(3.0, 2.0, "took 3 s")
        d.within(1.0, 2.0, "took 1 s")

    install(monkeypatch, slow)
    judged = await run_drill("FX", judge_latency=True)
    assert judged.outcome == "FAIL" and judged.failures == ("took 3 s",)
    recorded = await run_drill("FX", judge_latency=False)
    assert recorded.outcome == "PASS"
    assert recorded.notes == ("over the 2 s limit (not judged here): took 3 s",)


async def test_a_failed_check_fails_the_drill(monkeypatch: pytest.MonkeyPatch) -> None:
    async def fails(d: Drill) -> None:
        d.check(False, "broken")

    install(monkeypatch, fails)
    assert (await run_drill("FX")).outcome == "FAIL"
