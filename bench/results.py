"""The side-by-side bench's records: one :class:`Row` per operation, one :class:`Cell` per side.

A :class:`Goal` states how browserd must compare with another side; the
``fmt_*`` helpers render medians and ratios as the report writes them, and
:func:`short_error` turns an operation's exception into its table cell.
"""

from __future__ import annotations

import math
from typing import Any

import attrs

from . import ops
from .common import Stats

__all__ = ["SIDES", "SIDE_NAMES", "Cell", "Goal", "Row", "fmt_cell", "fmt_ms", "fmt_ratio",
           "short_error"]

SIDES = ("raw", "pw", "bd")
SIDE_NAMES = {"raw": "raw CDP", "pw": "Playwright", "bd": "browserd"}


@attrs.frozen(kw_only=True)
class Goal:
    """browserd's median must be at most ``limit`` x the ``against`` side's median."""

    against: str
    limit: float

    @property
    def text(self) -> str:
        return f"≤ {self.limit:g}x {SIDE_NAMES[self.against]}"

    def judge(self, ratio: float | None) -> tuple[str, bool | None]:
        if ratio is None or math.isnan(ratio):
            return f"{self.text}: not measured", None
        if ratio <= self.limit:
            return f"{self.text}: met", True
        return f"{self.text}: **missed by {100 * (ratio / self.limit - 1):.0f}%**", False


@attrs.define
class Cell:
    samples: list[float] = attrs.field(factory=list)
    info: dict[str, Any] = attrs.field(factory=dict)
    error: str | None = None

    @property
    def stats(self) -> Stats | None:
        return Stats.of(self.samples) if self.samples and self.error is None else None


@attrs.define
class Row:
    group: str
    name: str
    cells: dict[str, Cell]
    goal: Goal | None = None
    note: str = ""

    def ratio(self, other: str) -> float | None:
        mine, theirs = self.cells["bd"].stats, self.cells[other].stats
        if mine is None or theirs is None or theirs.median <= 0:
            return None
        return mine.median / theirs.median


def fmt_ms(x: float) -> str:
    if x < 10:
        return f"{x:.2f}"
    if x < 100:
        return f"{x:.1f}"
    return f"{x:.0f}"


def fmt_cell(cell: Cell) -> str:
    if cell.error:
        return cell.error
    st = cell.stats
    if st is None:
        return "n/a"
    return f"{fmt_ms(st.median)} ({fmt_ms(st.p10)}-{fmt_ms(st.p90)})"


def fmt_ratio(r: float | None) -> str:
    return "-" if r is None else f"{r:.2f}x"


def short_error(exc: BaseException) -> str:
    if isinstance(exc, ops.RouteMissing):
        return "n/a (route missing)"
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ").replace("|", "/")
    return f"error: {text[:160]}"
