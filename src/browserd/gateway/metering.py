"""How a CDP gateway client's commands are counted in ``/metrics`` (lane ``cdp``).

A :class:`CommandMeter` belongs to one :class:`~.client.GatewayClient`. Each
command the client sends is counted once, when it ends, by its method — only
an allowlisted one (:func:`~.allowlist.allowed`), anything else is ``other``,
so the label set stays bounded whatever a client sends — and its outcome:
``ok``, ``CDP_ERROR`` (the browser answered an error), ``DENIED`` (browserd's
rules refused it), ``BAD_REQUEST`` (not a command, or an unknown session),
``NOT_FOUND`` (a target out of the client's scope), ``TIMEOUT``,
``cancelled`` (the client went before the answer) or the code of the error
browserd met. Plain code: no I/O; ``observe`` must not block or raise.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .allowlist import allowed

__all__ = ["CommandMeter", "Observe", "now"]

Observe = Callable[[str, str, float], None]
"""Told of each finished command: (its method or ``other``, its outcome code, seconds)."""

now = time.perf_counter


class CommandMeter:
    """Counts one gateway client's commands (the module docstring)."""

    def __init__(self, observe: Observe | None) -> None:
        self._observe = observe
        self._method = ""
        self._since = now()

    def begin(self, message: Any) -> None:
        """A client message arrived (parsed; anything): the one a refusal then counts."""
        method = message.get("method") if isinstance(message, dict) else None
        self._method = method if isinstance(method, str) else ""
        self._since = now()

    def refused(self, code: str) -> None:
        """The message :meth:`begin` saw was refused with ``code``."""
        self.count(self._method, code, self._since)

    def answered(self, method: str, result: Any, error: BaseException | None,
                 started: float) -> None:
        """The browser's (or browserd's) answer to ``method``: ok, or the error's code."""
        ok = error is None and result is not None
        self.count(method, "ok" if ok else str(getattr(error, "code", "INTERNAL")), started)

    def count(self, method: str, code: str, started: float) -> None:
        if self._observe is not None:
            self._observe(method if allowed(method) else "other", code, now() - started)
