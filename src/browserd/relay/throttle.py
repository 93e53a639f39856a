"""How fast pairing codes may be guessed: per connection, and by everyone together.

A pairing code is 8 characters from 31 (31**8 ≈ 8.5e11 codes) and lives
:data:`~browserd.relay.pairing.CODE_TTL_S` (600 s). Any local user can reach
``POST /relay/pair`` (it is on loopback, and outside a browser an
``Origin: chrome-extension://…`` header is one line to forge), so wrong
guesses must never revoke the person's code — that would let anyone on the
machine block pairing. Instead :class:`PairingThrottle` does two things:

- **Per connection**: a connection (the ASGI ``client`` address and port,
  i.e. one TCP connection) may send :data:`FAILURES_PER_CONNECTION` (3)
  wrong codes. The last of them is answered 429 TOO_MANY_PAIRING_FAILURES
  with ``Connection: close`` (HTTP/1.x: the server then closes it), and
  every later request from that connection is refused the same way without
  its code being looked at, until it has been quiet for
  :data:`CONNECTION_MEMORY_S`. This is a clear stop for a person who
  mistypes and for a guesser that keeps one connection; it is not the
  defence against brute force, since new connections are cheap. A request
  without a ``client`` in its scope is counted by the pace below only.
- **One pace for everyone**: every code that is checked takes a slot of a
  token bucket shared by all connections: :data:`GUESS_BURST` (5) at once,
  then :data:`GUESS_RATE_PER_S` (2) per second. A request waits (in arrival
  order) for its slot, at most :data:`MAX_WAIT_S` (10 s); one that would
  have to wait longer is refused at once with 429 PAIRING_THROTTLED and
  ``Retry-After``, and takes no slot. So at most 5 + 2 * 600 = 1205 codes
  can be tried during one code's lifetime, whatever the number of
  connections: a guesser hits a given code with a chance of at most
  1205 / 31**8 ≈ 1.4e-9.

What it cannot do: while a flood goes on, the person's own attempt may
wait up to 10 s or be answered 429 PAIRING_THROTTLED (they retry). The code
stays valid, and once the flood stops pairing works at once.

Bookkeeping is plain code on trio's clock (:func:`trio.current_time`), so
tests drive it with :class:`trio.testing.MockClock`. Nothing here touches
files or the network.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Hashable

import attrs
import trio

from ..errors import BrowserdError

__all__ = ["CONNECTION_MEMORY_S", "FAILURES_PER_CONNECTION", "GUESS_BURST",
           "GUESS_RATE_PER_S", "MAX_CONNECTIONS_TRACKED", "MAX_WAIT_S", "PairingThrottle",
           "PairingThrottled", "ThrottleLimits", "TooManyPairingFailures"]

GUESS_RATE_PER_S = 2.0
"""Codes checked per second, all connections together (after the burst)."""
GUESS_BURST = 5
"""Codes checked back to back before the pace starts."""
MAX_WAIT_S = 10.0
"""The longest a pairing request waits for its slot; beyond: 429 PAIRING_THROTTLED."""
FAILURES_PER_CONNECTION = 3
"""Wrong codes one connection may send; the last one closes it."""
CONNECTION_MEMORY_S = 60.0
"""How long a connection's wrong codes are remembered after its last one."""
MAX_CONNECTIONS_TRACKED = 1024
"""At most this many connections are remembered (the oldest are forgotten first)."""


class TooManyPairingFailures(BrowserdError):
    """429: this connection sent too many wrong pairing codes; browserd closes it."""

    status, code = 429, "TOO_MANY_PAIRING_FAILURES"
    default_hint = ("check the code from `browserd extension pair` (or make a new one) "
                    "and pair again")


class PairingThrottled(BrowserdError):
    """429: pairing codes are being tried faster than the shared pace allows."""

    status, code = 429, "PAIRING_THROTTLED"
    default_hint = "too many pairing attempts on this machine right now; retry shortly"

    def __init__(self, message: str, *, retry_after_s: int) -> None:
        super().__init__(message, retryAfterS=retry_after_s)
        self.retry_after_s = retry_after_s


@attrs.frozen(kw_only=True)
class ThrottleLimits:
    """The numbers of a :class:`PairingThrottle` (defaults: the module's constants)."""

    rate_per_s: float = attrs.field(default=GUESS_RATE_PER_S,
                                    validator=attrs.validators.gt(0))
    burst: int = attrs.field(default=GUESS_BURST, validator=attrs.validators.ge(1))
    max_wait_s: float = attrs.field(default=MAX_WAIT_S, validator=attrs.validators.ge(0))
    failures_per_connection: int = attrs.field(default=FAILURES_PER_CONNECTION,
                                               validator=attrs.validators.ge(1))
    connection_memory_s: float = CONNECTION_MEMORY_S
    max_connections: int = attrs.field(default=MAX_CONNECTIONS_TRACKED,
                                       validator=attrs.validators.ge(1))


@attrs.frozen(kw_only=True)
class _Strikes:
    """One connection's wrong codes and when it was last refused or wrong."""

    failures: int
    last_at: float


class PairingThrottle:
    """The pace of pairing guesses and each connection's wrong codes (module docstring).

    Connections are any hashable key (the door uses the ASGI ``client``
    tuple); None means "unknown connection": paced, never counted.
    """

    def __init__(self, limits: ThrottleLimits | None = None) -> None:
        self.limits = limits if limits is not None else ThrottleLimits()
        self._interval = 1.0 / self.limits.rate_per_s
        self._next_free = -math.inf  # the bucket's theoretical arrival time (GCRA)
        self._strikes: OrderedDict[Hashable, _Strikes] = OrderedDict()
        self.guesses = 0
        self.throttled = 0

    # -- the shared pace ---------------------------------------------------------

    def reserve(self, now: float) -> float:
        """Take the next slot at time ``now``; how many seconds until it starts.

        Raises PairingThrottled (taking nothing) when that would be more
        than ``max_wait_s`` away.
        """
        limits = self.limits
        base = max(self._next_free, now)
        wait = max(0.0, base - (limits.burst - 1) * self._interval - now)
        if wait > limits.max_wait_s:
            self.throttled += 1
            retry = max(1, math.ceil(wait - limits.max_wait_s))
            raise PairingThrottled("too many pairing codes are being tried on this machine; "
                                   f"retry in {retry} s", retry_after_s=retry)
        self._next_free = base + self._interval
        self.guesses += 1
        return wait

    async def admit(self, connection: Hashable | None) -> None:
        """Wait until ``connection`` may have one code checked.

        Raises TooManyPairingFailures at once for a connection that already
        sent its wrong codes, PairingThrottled at once when the wait would
        exceed ``max_wait_s``. Cancelled while waiting, the slot stays used
        (the pace never allows more checks than it promises).
        """
        now = trio.current_time()
        self._forget_old(now)
        if connection is not None:
            known = self._strikes.get(connection)
            if known is not None and known.failures >= self.limits.failures_per_connection:
                self._remember(connection, attrs.evolve(known, last_at=now))
                raise TooManyPairingFailures(
                    f"this connection sent {known.failures} wrong pairing codes; browserd "
                    "closes it")
        wait = self.reserve(now)
        if wait > 0:
            await trio.sleep(wait)

    # -- per connection ----------------------------------------------------------

    def failed(self, connection: Hashable | None) -> None:
        """Count a wrong code from ``connection``.

        Raises TooManyPairingFailures when it was the connection's last
        allowed one (the door closes the connection); returns otherwise.
        """
        if connection is None:
            return
        now = trio.current_time()
        self._forget_old(now)
        known = self._strikes.get(connection)
        failures = (known.failures if known is not None else 0) + 1
        self._remember(connection, _Strikes(failures=failures, last_at=now))
        if failures >= self.limits.failures_per_connection:
            raise TooManyPairingFailures(
                f"wrong pairing code ({failures} on this connection); browserd closes it")

    def succeeded(self, connection: Hashable | None) -> None:
        """``connection`` paired: forget its wrong codes."""
        if connection is not None:
            self._strikes.pop(connection, None)

    def failures(self, connection: Hashable) -> int:
        """The wrong codes remembered for ``connection`` (0 if none)."""
        known = self._strikes.get(connection)
        return known.failures if known is not None else 0

    def _remember(self, connection: Hashable, strikes: _Strikes) -> None:
        self._strikes[connection] = strikes
        self._strikes.move_to_end(connection)
        while len(self._strikes) > self.limits.max_connections:
            self._strikes.popitem(last=False)

    def _forget_old(self, now: float) -> None:
        cutoff = now - self.limits.connection_memory_s
        while self._strikes:
            oldest = next(iter(self._strikes.values()))
            if oldest.last_at > cutoff:
                break
            self._strikes.popitem(last=False)
