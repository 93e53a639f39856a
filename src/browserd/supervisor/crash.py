"""The crash account: why a running browser went away, as ``/status.lastCrash`` tells it.

When an attempt whose browser was up ends without a requested stop, the
supervisor builds one :class:`CrashAccount` explicitly, from what it knows
rather than from whichever exception won the race out of the attempt's
nursery (the connection's "the pipe closed" usually does):

- the process's own account wins whenever there is a process that ended by
  itself: ``killed`` (by a signal: ``signal``) or ``exited`` (``exitCode``),
  with its stderr tail;
- else ``hung`` when the liveness probe got no answer (the supervisor then
  stopped it, or dropped the connection of an attached browser);
- else ``pipe_closed``: the CDP channel closed while the process (if any) ran
  on (browserd then stopped it), or an attached browser's connection dropped.

:func:`crash_account` is plain code (no I/O, no trio), unit-tested alone;
:class:`CrashWatch` is the supervisor's bookkeeping around it (which runtime
the attempt served, what the serving side saw at its end, the last crash).
"""

from __future__ import annotations

import signal as signals
import time
from typing import TYPE_CHECKING, Any, Literal

import attrs

from ..errors import BrowserdError, BrowserGone, BrowserUnresponsive

if TYPE_CHECKING:
    from .runtime import BrowserRuntime

__all__ = ["EXIT_STATUS_WAIT_S", "CrashAccount", "CrashReason", "CrashWatch", "Ending",
           "crash_account"]

CrashReason = Literal["exited", "killed", "hung", "pipe_closed"]
#: When a launched browser's pipe closes first, how long the supervisor waits for
#: the process's own exit status before its stop ladder runs (a killed browser's
#: is known within milliseconds; one that lives on with a closed pipe is stopped,
#: and its crash is ``pipe_closed``).
EXIT_STATUS_WAIT_S = 1.0


@attrs.define(kw_only=True)
class Ending:
    """What the serving side saw as the attempt ended (noted before the teardown)."""

    at: float
    """Unix time it was noticed."""
    tabs: int
    """Tabs listed at that moment (the ones the crash took away)."""
    how: Literal["closed", "hung"] | None = None
    """``closed``: the connection closed; ``hung``: the probe got no answer;
    None: serving was ended from outside (e.g. the process exited first)."""


@attrs.frozen(kw_only=True)
class CrashAccount:
    """One crash: ``{at, reason, exitCode?, signal?, stderrTail, tabsAffected}`` in JSON."""

    at: float
    reason: CrashReason
    exit_code: int | None = None
    signal: int | None = None
    stderr_tail: str = ""
    tabs_affected: int = 0

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"at": round(self.at, 3), "reason": self.reason}
        if self.exit_code is not None:
            body["exitCode"] = self.exit_code
        if self.signal is not None:
            body["signal"] = self.signal
        body["stderrTail"] = self.stderr_tail
        body["tabsAffected"] = self.tabs_affected
        return body

    def event_data(self) -> dict[str, Any]:
        """The ``browser.crashed`` event's own fields (its envelope has the time)."""
        return {k: v for k, v in self.to_json().items() if k != "at"}

    def describe(self) -> str:
        """One line for the log and ``lastError``."""
        if self.reason == "killed" and self.signal is not None:
            return f"the browser was killed by {signal_name(self.signal)} (signal {self.signal})"
        if self.reason == "exited":
            return f"the browser exited unexpectedly (code {self.exit_code})"
        if self.reason == "hung":
            return "the browser stopped answering CDP (hung)"
        return "the browser's CDP connection closed while it ran"

    def as_error(self, cause: BrowserdError) -> BrowserdError:
        """``lastError`` for this crash: the process's account, else ``cause`` itself.

        A hang stays BrowserUnresponsive and any other end without an exit
        status stays ``cause``; both gain the stderr tail when there is one.
        """
        extra: dict[str, Any] = {"reason": self.reason}
        if self.exit_code is not None:
            extra["exitCode"] = self.exit_code
        if self.signal is not None:
            extra["signal"] = self.signal
        if self.stderr_tail:
            extra["stderr"] = self.stderr_tail
        if self.reason in ("killed", "exited"):
            return BrowserGone(self.describe(), **extra)
        kind = type(cause) if isinstance(cause, BrowserGone | BrowserUnresponsive) else None
        if kind is None:
            return cause
        return kind(cause.message, hint=cause.hint, **{**cause.details, **extra})


def signal_name(number: int) -> str:
    try:
        return signals.Signals(number).name
    except ValueError:
        return f"signal {number}"


def crash_account(*, ending: Ending | None, own_exit: int | None, has_process: bool,
                  stderr_tail: str, at: float) -> CrashAccount | None:
    """The account of an attempt that ended while its browser was up, or None (not a crash).

    ``own_exit`` is the process's exit status if it ended by itself (None:
    still running when browserd stopped it, or no process); ``at`` is used
    when the serving side noted nothing (the process went first).
    """
    when = ending.at if ending is not None else at
    tabs = ending.tabs if ending is not None else 0
    if has_process and own_exit is not None:
        if own_exit < 0:
            return CrashAccount(at=when, reason="killed", signal=-own_exit,
                                stderr_tail=stderr_tail, tabs_affected=tabs)
        return CrashAccount(at=when, reason="exited", exit_code=own_exit,
                            stderr_tail=stderr_tail, tabs_affected=tabs)
    if ending is None or ending.how is None:
        return None
    return CrashAccount(at=when, reason="hung" if ending.how == "hung" else "pipe_closed",
                        stderr_tail=stderr_tail, tabs_affected=tabs)


@attrs.define
class CrashWatch:
    """One supervisor's crash bookkeeping, attempt by attempt (owned by its loop).

    :meth:`begin` at each attempt; :meth:`serving` once the attempt serves a
    runtime; :meth:`note` as soon as serving ends (the first note stands:
    "hung" before the teardown, "closed" when the connection closed, None when
    ended from outside); :meth:`account` when the attempt has ended.
    """

    last: CrashAccount | None = None
    """The last crash (kept across restarts until the next one)."""
    served: BrowserRuntime | None = None
    ending: Ending | None = None

    def begin(self) -> None:
        self.served, self.ending = None, None

    def serving(self, runtime: BrowserRuntime) -> None:
        self.served = runtime

    def note(self, how: Literal["closed", "hung"] | None) -> None:
        if self.ending is None and self.served is not None:
            self.ending = Ending(at=time.time(), tabs=self.served.tab_count(), how=how)

    def account(self) -> CrashAccount | None:
        """The ended attempt's crash (now :attr:`last`), or None when it was not one."""
        served = self.served
        if served is None:
            return None
        process = served.process
        crash = crash_account(
            ending=self.ending, own_exit=process.own_exit if process else None,
            has_process=process is not None,
            stderr_tail=process.stderr_text() if process else "", at=time.time())
        if crash is not None:
            self.last = crash
        return crash
