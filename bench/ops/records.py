"""What every side's operation returns, and the constants the sides share.

:class:`Result` is one timed operation's samples (wall clock, ms) and its
``info``; :class:`ConcResult` one concurrency run; :class:`RouteMissing`
is raised by the browserd side for a route the service does not have.
"""

from __future__ import annotations

import math
from typing import Any

import attrs

__all__ = ["BIG", "CONC_EVAL_JS", "EVAL_JS", "ConcResult", "Result", "RouteMissing"]

EVAL_JS = "1+1"
CONC_EVAL_JS = "document.querySelectorAll('a').length"
BIG = 20_000_000


class RouteMissing(Exception):
    """browserd answered 404 "no route" for this path (another helper is still building it)."""


@attrs.frozen(kw_only=True)
class Result:
    samples: list[float]
    info: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ConcResult:
    """``k`` busy tabs for ``seconds``: ``requests`` done; CPU seconds by process group."""

    k: int
    requests: int
    seconds: float
    cpu: dict[str, float]

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def cpu_ms_per_request(self, group: str) -> float:
        return 1000 * self.cpu.get(group, 0.0) / self.requests if self.requests else math.nan
