"""Liveness: is the running browser still answering CDP?

A hung browser (deadlocked, busy-looping, SIGSTOPped) keeps its pipe or
websocket open, so nothing else notices it: each request would wait out its
own deadline and ``/healthz`` would still say "open". :class:`LivenessProbe`
asks the browser a cheap browser-level question (``Browser.getVersion``,
answered by the browser process itself, never by a page) every
``liveness_interval_s`` while it runs, and at once when a request timed out
(:meth:`LivenessProbe.nudge`). No answer within ``liveness_timeout_s`` and the
browser is hung: the probe tells the supervisor (state ``unresponsive``),
fails every call in flight on the connection at once with
:class:`~browserd.errors.BrowserUnresponsive` and raises it, which ends the
attempt (``one_for_all``: the stop ladder for a launched browser, a reconnect
for an attached one); the supervisor restarts it with reason ``hung``.

:class:`AbortableTransport` is how the calls in flight fail at once: it wraps
the connection's transport, and :meth:`AbortableTransport.abort` makes the
connection's reader see the error instead of the next message, so the
connection closes with it as its reason (every pending call and subscription
ends with it, exactly as when the browser goes away).

The policy is data (:class:`LivenessPolicy`); the probe is plain trio code,
unit-tested on trio's MockClock against the fake CDP peer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import attrs
import trio

from ..cdp import CdpConnection, Transport
from ..config import Settings
from ..errors import BrowserdError, BrowserUnresponsive, CdpError

__all__ = ["PROBE_METHOD", "AbortableTransport", "LivenessPolicy", "LivenessProbe"]

log = logging.getLogger(__name__)

#: Answered by the browser process itself (its UI thread), whatever the pages do.
PROBE_METHOD = "Browser.getVersion"
#: How long the probe waits for the connection to close after aborting it (the
#: reader wakes at once: this bounds a bug, not a browser).
ABORT_WAIT_S = 1.0


@attrs.frozen(kw_only=True)
class LivenessPolicy:
    """Probe every ``interval_s`` while running; a probe unanswered for ``timeout_s`` is a hang."""

    interval_s: float = 5.0
    timeout_s: float = 10.0

    @classmethod
    def from_settings(cls, settings: Settings) -> LivenessPolicy:
        return cls(interval_s=settings.liveness_interval_s,
                   timeout_s=settings.liveness_timeout_s)


class AbortableTransport:
    """A :class:`~browserd.cdp.Transport` whose receiving can be ended with an error.

    Everything is delegated to ``inner``; after :meth:`abort`, ``receive``
    raises the abort's error (at once, also when a receive is waiting), so the
    connection reading from it closes with that error as its reason. ``send``
    and ``aclose`` stay the inner transport's (the stop ladder still needs
    the pipe). Cancelling a waiting ``receive`` loses nothing: both transports
    keep what they have read for the next call.
    """

    def __init__(self, inner: Transport) -> None:
        self._inner = inner
        self.description = inner.description
        self._aborted: BrowserdError | None = None
        self._receiving: trio.CancelScope | None = None

    @property
    def aborted(self) -> BrowserdError | None:
        return self._aborted

    def abort(self, error: BrowserdError) -> None:
        """Make the current and every later ``receive`` raise ``error``. Idempotent."""
        if self._aborted is None:
            self._aborted = error
        if self._receiving is not None:
            self._receiving.cancel()

    async def send(self, data: bytes) -> None:
        await self._inner.send(data)

    async def receive(self) -> bytes | str:
        """The inner transport's next message; the abort's error once aborted."""
        if self._aborted is not None:
            raise self._aborted
        with trio.CancelScope() as scope:
            self._receiving = scope
            try:
                return await self._inner.receive()
            finally:
                self._receiving = None
        assert self._aborted is not None  # only abort() cancels this scope
        raise self._aborted

    async def aclose(self) -> None:
        await self._inner.aclose()


class LivenessProbe:
    """Watches one connection until it closes, or until the browser stops answering.

    ``on_unresponsive(error)`` is called (synchronously, before anything is
    torn down) when a probe got no answer in time; then every call in flight
    fails with ``error`` — through ``abortable`` when the connection runs over
    one, else by closing the connection (they fail with BrowserGone) — and
    :meth:`run` raises it.
    """

    def __init__(self, connection: CdpConnection, policy: LivenessPolicy, *,
                 on_unresponsive: Callable[[BrowserUnresponsive], None] | None = None,
                 abortable: AbortableTransport | None = None) -> None:
        self.connection = connection
        self.policy = policy
        self._on_unresponsive = on_unresponsive
        self._abortable = abortable
        self._wake = trio.Event()
        self.probes = 0
        """Probes sent so far (answered or not)."""
        self.nudges = 0

    def nudge(self) -> None:
        """Probe now (a request timed out). Never blocks, never raises; a probe
        already waiting for its answer stands for it."""
        self.nudges += 1
        self._wake.set()

    async def run(self) -> None:
        """Probe until the connection closes (then return).

        Raises BrowserUnresponsive when a probe got no answer within the
        policy's timeout (after ``on_unresponsive`` and failing the calls in
        flight). A probe answered with a protocol error counts as an answer.
        Cancellation ends it at once (a probe in flight is abandoned).
        """
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._wake_on_close)
            try:
                hung = await self._probe_until_closed()
            finally:
                nursery.cancel_scope.cancel()
        if hung is not None:
            await self._fail(hung)
            raise hung

    async def _wake_on_close(self) -> None:
        await self.connection.wait_closed()
        self._wake.set()

    async def _probe_until_closed(self) -> BrowserUnresponsive | None:
        while True:
            with trio.move_on_after(self.policy.interval_s):
                await self._wake.wait()
            if self.connection.is_closed:
                return None
            answered = await self._answered()
            self._wake = trio.Event()  # nudges during that probe were answered by it
            if self.connection.is_closed:
                return None  # it went away while asked: its own reason ends the attempt
            if not answered:
                return BrowserUnresponsive(
                    f"the browser did not answer {PROBE_METHOD} within "
                    f"{self.policy.timeout_s:g} s (hung); it is being restarted",
                    reason="hung")

    async def _answered(self) -> bool:
        """One probe: True when the browser answered (even with an error) in time."""
        self.probes += 1
        with trio.move_on_after(self.policy.timeout_s):
            try:
                await self.connection.send(PROBE_METHOD)
            except CdpError:
                pass  # an error reply is an answer
            except BrowserdError:
                # Closed (the caller sees it), or it stopped reading our commands:
                # the pipe would not take the probe (BrowserGone, the transport's bound).
                return self.connection.is_closed
            return True
        return False

    async def _fail(self, error: BrowserUnresponsive) -> None:
        log.error("browser unresponsive: %s", error.message)
        if self._on_unresponsive is not None:
            self._on_unresponsive(error)
        if self._abortable is not None:
            self._abortable.abort(error)
            with trio.move_on_after(ABORT_WAIT_S):
                await self.connection.wait_closed()
        await self.connection.aclose()  # idempotent; the abort's reason stays the reason
