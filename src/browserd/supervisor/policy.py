"""Supervision as data: when a dead browser is started again, and when not.

:class:`RestartPolicy` is a frozen record; :class:`RestartHistory` applies it
to the restarts seen so far. Both are plain code (no I/O, no trio calls
beyond the timestamps they are given), unit-testable without a browser.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TypeGuard

import attrs

from ..config import Settings
from ..errors import (
    BrowserdError,
    ConfigError,
    ExecutableNotFound,
    LiveBrowserNotFound,
    PortInUse,
    ProfileInUse,
    ProfileRefused,
)

__all__ = ["REFUSALS", "RestartHistory", "RestartPolicy"]

#: Refusals a retry cannot fix: straight to ``failed``. Any other error
#: (a crash, a browser that exits before DevTools is ready) is retried
#: with backoff within the budget (F11). The user's browser not running with
#: remote debugging (live driver) is the user's to fix: no retry until /start.
REFUSALS: tuple[type[BrowserdError], ...] = (
    PortInUse, ProfileInUse, ProfileRefused, ExecutableNotFound, ConfigError,
    LiveBrowserNotFound,
)


@attrs.frozen(kw_only=True)
class RestartPolicy:
    """Backoff 0.5 s doubling to 30 s (with jitter), reset after 60 s healthy; a budget.

    More than ``budget`` restarts within ``window_s`` seconds, and the
    supervisor gives up (state ``failed``); ``budget=None`` never gives up
    (a child with nothing above it to escalate to). ``refusals`` fail at once.
    Applied by :class:`~.child.RestartTracker`.
    """

    backoff_start_s: float = 0.5
    backoff_max_s: float = 30.0
    healthy_reset_s: float = 60.0
    budget: int | None = 5
    window_s: float = 60.0
    refusals: tuple[type[BrowserdError], ...] = REFUSALS

    @classmethod
    def from_settings(cls, settings: Settings) -> RestartPolicy:
        return cls(budget=settings.restart_budget, window_s=settings.restart_window_s)

    def is_refusal(self, error: BrowserdError | None) -> TypeGuard[BrowserdError]:
        """True for an error no retry can fix."""
        return isinstance(error, self.refusals)

    def delay(self, backoff: float, rng: Callable[[], float]) -> float:
        """The wait before the next attempt: ``backoff`` times a jitter in [0.5, 1.5)."""
        return backoff * (0.5 + rng())

    def next_backoff(self, backoff: float) -> float:
        """The backoff after one more failure: doubled, at most ``backoff_max_s``."""
        return min(backoff * 2, self.backoff_max_s)


@attrs.define
class RestartHistory:
    """The restarts within the policy's window; owned by a :class:`~.child.RestartTracker`."""

    policy: RestartPolicy
    _times: deque[float] = attrs.field(factory=deque)

    def clear(self) -> None:
        self._times.clear()

    def record(self, now: float) -> bool:
        """Count a restart at ``now``; False when that exceeds the budget (never without one)."""
        self._times.append(now)
        while self._times and now - self._times[0] > self.policy.window_s:
            self._times.popleft()
        if self.policy.budget is None:
            return True
        return len(self._times) <= self.policy.budget
