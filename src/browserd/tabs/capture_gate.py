"""Capture admission: how many captures run at once, and the browser-wide front lock.

One :class:`CaptureGate` per running browser (it lives on the
``BrowserRuntime``). A capture first passes :meth:`CaptureGate.admit` (503
OVERLOADED at once when the queue is already full), then holds one token of
:attr:`CaptureGate.limiter` while it runs; the Chromium command itself runs
under :attr:`CaptureGate.front_lock`, because a tab must be in front while it
is captured (see :mod:`browserd.tabs.capture`).
"""

from __future__ import annotations

import attrs
import trio

from ..errors import Overloaded

__all__ = ["QUEUE_FACTOR", "CaptureGate"]

QUEUE_FACTOR = 2
"""Waiters allowed per limiter token before new captures are refused."""


@attrs.frozen(kw_only=True)
class CaptureGate:
    """The capture limiter and the front lock of one browser."""

    limiter: trio.CapacityLimiter
    front_lock: trio.Lock = attrs.field(factory=trio.Lock)

    @classmethod
    def with_capacity(cls, max_concurrent: int) -> CaptureGate:
        return cls(limiter=trio.CapacityLimiter(max_concurrent))

    def admit(self) -> None:
        """Refuse at once (503 OVERLOADED) when the capture queue is already full."""
        waiting = self.limiter.statistics().tasks_waiting
        if waiting >= QUEUE_FACTOR * int(self.limiter.total_tokens):
            raise Overloaded(
                f"{waiting} captures are already waiting for one of "
                f"{int(self.limiter.total_tokens)} capture slots",
                hint="too many screenshots at once; retry shortly",
            )
