"""InFlight: the requests a page is still waiting for, so a read can wait until it has drawn.

A single-page app fetches after its load event and draws from the answers;
until those answers are in, a read sees its "Loading…" shell. The page
itself cannot tell browserd what is in flight (Resource Timing lists a
request only once it has ended), so :class:`InFlight` follows the tab's
``Network.*`` events (fed by the actor from the connection's reader, like
the network ring; every tab's Network domain is on for it, keeping no
bodies until the network routes ask for them) and keeps the open requests
a page draws from: documents (the main frame's and its iframes'), fetch
and XHR, and scripts (code split into chunks that load after start-up,
and then draw). WebSocket, EventSource, images, fonts and the like are not
counted (a socket stays open; an image does not change the text).

A request open longer than :data:`LONG_S` no longer counts: long polls,
streams and a stalled third-party script must not hold every read to its
``settleMs``. Plain bookkeeping: no I/O, no clock of its own (the caller
passes trio time), quick and never raising, so the reader can call it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["COUNTED_TYPES", "LONG_S", "InFlight"]

COUNTED_TYPES = frozenset({"Document", "XHR", "Fetch", "Script"})
"""The ``Network.requestWillBeSent`` resource types a page draws from."""
LONG_S = 2.0
"""A request open longer than this (seconds) is a long poll or a stall: not waited for."""
_KEPT = 500
"""At most this many open requests are remembered (the oldest are forgotten first)."""


class InFlight:
    """The tab's open requests of :data:`COUNTED_TYPES`, by CDP ``requestId``."""

    def __init__(self) -> None:
        self._open: dict[str, float] = {}  # requestId -> when it was sent (trio time)

    def on_event(self, method: str, params: Mapping[str, Any], now: float) -> bool:
        """Apply one ``Network.*`` event seen at trio time ``now``; True when the set of
        open requests became empty (the caller wakes the tab's waiters then)."""
        request_id = params.get("requestId")
        if not isinstance(request_id, str):
            return False
        if method == "Network.requestWillBeSent":
            # A redirect reuses its requestId: the request stays open, its clock too.
            if request_id not in self._open and params.get("type") in COUNTED_TYPES:
                if len(self._open) >= _KEPT:
                    self._open.pop(next(iter(self._open)))
                self._open[request_id] = now
            return False
        if method in ("Network.loadingFinished", "Network.loadingFailed"):
            return self._open.pop(request_id, None) is not None and not self._open
        return False

    def busy(self, now: float) -> bool:
        """True while a counted request sent less than :data:`LONG_S` ago is open."""
        return any(now - sent < LONG_S for sent in self._open.values())

    def next_change(self, now: float) -> float | None:
        """When :meth:`busy` turns false by itself (the youngest open request turns long),
        or None when it is not busy."""
        young = [sent for sent in self._open.values() if now - sent < LONG_S]
        return max(young) + LONG_S if young else None

    def forget(self) -> None:
        """Forget every open request (the tab's renderer is gone, or the tab closed)."""
        self._open.clear()

    def __len__(self) -> int:
        return len(self._open)
