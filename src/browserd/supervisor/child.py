"""The supervised child: one way to restart anything browserd keeps running.

Every restart loop in browserd — the browser (:class:`~.supervisor.BrowserSupervisor`),
each profile's subtree and each profile's CDP gateway
(:class:`~browserd.profiles.manager.ProfileManager`) — asks the same question
when its child ends: start it again, after how long, or give up and why?

- :class:`RestartType` says which ends are restarted: ``permanent`` (any end,
  a clean return included), ``transient`` (only a failure) or ``temporary``
  (none).
- :class:`RestartTracker` answers that question from the child's
  :class:`~.policy.RestartPolicy` (backoff with jitter, the healthy reset, the
  budget, the refusals) and what it has seen so far: a
  :class:`RestartDecision` with the delay or the reason for giving up. Plain
  code, no I/O: the times are given to it.
- :func:`run_child` is the loop itself for a child that needs nothing more
  (the profile subtree, the gateway): run it, ask the tracker, sleep, again.
  The browser supervisor keeps its own loop (it is also a handle: ``/start``,
  ``/stop``, states) but decides with the same tracker.
"""

from __future__ import annotations

import enum
import logging
import random
from collections.abc import Awaitable, Callable

import attrs
import trio

from ..errors import BrowserdError
from .policy import RestartHistory, RestartPolicy

__all__ = ["ChildSpec", "Outcome", "RestartDecision", "RestartTracker", "RestartType",
           "run_child"]

log = logging.getLogger(__name__)


class RestartType(enum.StrEnum):
    """Which ends of a child are followed by a restart (OTP's restart types)."""

    PERMANENT = "permanent"  # every end: a failure or a clean return
    TRANSIENT = "transient"  # a failure only; a clean return is the child's own end
    TEMPORARY = "temporary"  # never


class Outcome(enum.StrEnum):
    """What :meth:`RestartTracker.after` decided."""

    RESTART = "restart"  # start it again after ``delay_s``
    DONE = "done"  # it ended and its restart type does not restart that end
    REFUSED = "refused"  # a refusal of the policy's: no retry can fix it
    BUDGET = "budget"  # more restarts within the window than the budget allows


@attrs.frozen(kw_only=True)
class RestartDecision:
    """The answer for one end: restart after ``delay_s``, or not and ``reason`` why."""

    outcome: Outcome
    delay_s: float = 0.0
    reason: str = ""

    @property
    def restart(self) -> bool:
        return self.outcome == Outcome.RESTART


@attrs.define
class RestartTracker:
    """A child's restarts so far, judged by its policy; owned by the child's loop.

    Not thread-safe, never blocks; ``rng`` gives the jitter (``random.random``
    unless a test fixes it).
    """

    policy: RestartPolicy
    restart: RestartType = RestartType.PERMANENT
    rng: Callable[[], float] = random.random
    #: Restarts decided so far (never reset: ``/status.restarts``).
    restarts: int = 0
    _backoff: float = attrs.field(init=False)
    _history: RestartHistory = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._backoff = self.policy.backoff_start_s
        self._history = RestartHistory(self.policy)

    @property
    def backoff_s(self) -> float:
        """The backoff the next restart waits (before jitter)."""
        return self._backoff

    def reset_backoff(self) -> None:
        """A new start (wanted again after a stop): earlier failures set no delay."""
        self._backoff = self.policy.backoff_start_s

    def clear_history(self) -> None:
        """A new try after giving up: the whole budget again."""
        self._history.clear()

    def after(self, error: BaseException | None, *, ran_for_s: float,
              now: float) -> RestartDecision:
        """Decide about an end: ``error`` (None: a clean return) after ``ran_for_s`` seconds.

        A child that ran ``healthy_reset_s`` or longer starts over with the
        first backoff and a whole budget. Each restart decided counts in the
        budget; the one over it is ``BUDGET``. Never raises.
        """
        policy = self.policy
        if self.restart == RestartType.TEMPORARY:
            return RestartDecision(outcome=Outcome.DONE, reason="a temporary child is "
                                                                "never restarted")
        if error is None and self.restart == RestartType.TRANSIENT:
            return RestartDecision(outcome=Outcome.DONE, reason="it ended cleanly")
        if isinstance(error, BrowserdError) and policy.is_refusal(error):
            return RestartDecision(outcome=Outcome.REFUSED,
                                   reason=f"refused: {error.message}")
        if ran_for_s >= policy.healthy_reset_s:
            self.reset_backoff()
            self.clear_history()
        if not self._history.record(now):
            return RestartDecision(
                outcome=Outcome.BUDGET,
                reason=f"restarted {policy.budget} times in {policy.window_s:.0f} s; "
                       f"giving up: {describe(error)}")
        delay = policy.delay(self._backoff, self.rng)
        self._backoff = policy.next_backoff(self._backoff)
        self.restarts += 1
        return RestartDecision(outcome=Outcome.RESTART, delay_s=delay,
                               reason=describe(error))


def describe(error: BaseException | None) -> str:
    """An end in words: a BrowserdError's message, another error's repr, or ``ended``."""
    if error is None:
        return "ended"
    return error.message if isinstance(error, BrowserdError) else repr(error)


def _always() -> bool:
    return True


@attrs.frozen(kw_only=True)
class ChildSpec:
    """A child for :func:`run_child`: what to run and how it is restarted.

    ``run`` is called as ``run(task_status=…)`` for each attempt; the first
    attempt gets the caller's ``task_status``. ``failures`` are the errors
    that count as a failure (anything else propagates, as does
    cancellation). A failure before the first attempt reported started
    propagates when ``raise_before_started`` (the caller hears that the
    child could not start), else the start is reported and the child is
    retried. ``wanted`` is asked before each restart (False: return).
    ``on_failure`` is told each failure and the decision about it.
    """

    name: str
    run: Callable[..., Awaitable[None]]
    restart: RestartType = RestartType.PERMANENT
    policy: RestartPolicy = attrs.field(factory=RestartPolicy)
    failures: tuple[type[Exception], ...] = (Exception,)
    raise_before_started: bool = True
    wanted: Callable[[], bool] = _always
    on_failure: Callable[[Exception, RestartDecision], None] | None = None
    rng: Callable[[], float] = random.random


class _Started:
    """The ``task_status`` of one attempt: passes the first ``started()`` on, notes it."""

    def __init__(self, outer: trio.TaskStatus[None] | None) -> None:
        self._outer = outer

    @property
    def reported(self) -> bool:
        return self._outer is None

    def started(self, value: None = None) -> None:
        if self._outer is not None:
            outer, self._outer = self._outer, None
            outer.started()


async def run_child(spec: ChildSpec, *, task_status: trio.TaskStatus[None]
                    = trio.TASK_STATUS_IGNORED) -> RestartDecision:
    """Run ``spec``'s child, restarting it as its restart type and policy say.

    Returns the decision that ended it (``DONE``, ``REFUSED`` or ``BUDGET``,
    logged as an error for the last two); returns ``DONE`` at once when a
    restart is due and it is no longer ``wanted``. Raises what is not one of
    its ``failures``, and a failure before started (``raise_before_started``).
    Cancellation propagates at once, from the child or from the backoff wait.
    """
    tracker = RestartTracker(spec.policy, spec.restart, spec.rng)
    status = _Started(task_status)
    while True:
        began = trio.current_time()
        error: Exception | None = None
        try:
            await spec.run(task_status=status)
        except spec.failures as exc:
            if not status.reported and spec.raise_before_started:
                raise
            error = exc
        decision = tracker.after(error, ran_for_s=trio.current_time() - began,
                                 now=trio.current_time())
        status.started()  # (a no-op once reported)
        if error is not None and spec.on_failure is not None:
            spec.on_failure(error, decision)
        if not decision.restart:
            if decision.outcome != Outcome.DONE:
                log.error("%s: not restarted (%s)", spec.name, decision.reason)
            return decision
        if not spec.wanted():
            return RestartDecision(outcome=Outcome.DONE, reason="no longer wanted")
        log.warning("%s: %s; restarting in %.2f s", spec.name, decision.reason,
                    decision.delay_s,  # (a bug's traceback; a domain error says enough)
                    exc_info=None if isinstance(error, BrowserdError | None) else error)
        await trio.sleep(decision.delay_s)
        status = _Started(None)
        if not spec.wanted():
            return RestartDecision(outcome=Outcome.DONE, reason="no longer wanted")
