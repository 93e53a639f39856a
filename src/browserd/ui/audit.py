"""The audit tail the ops page shows: the newest lines of ``browserd.audit``, in memory.

:class:`AuditTail` is a logging handler the service adds to the
``browserd.audit`` logger (and removes when it stops). It keeps the last
:data:`AUDIT_LINES` formatted lines; the same :class:`RedactingFilter` as
the log files runs first, so no URL in it keeps userinfo, query or fragment.
The lines are the audit log's own (method, route, tab, outcome, duration,
the caller: a token id or ``ui:<session label>``), never a secret.

Health checks (``GET /healthz``, polled by monitors and by every client
before it sends its token) would crowd everything else out, so they are kept
apart: only the last :data:`HEALTH_LINES` of them, and :meth:`AuditTail.lines`
mixes in those of the period its other lines cover. The ops page hides them
unless asked (its "health checks" toggle recognizes them by
:data:`HEALTH_CHECK`).
"""

from __future__ import annotations

import logging
import re
import threading
from collections import deque

from ..redact import RedactingFilter

__all__ = ["AUDIT_LINES", "HEALTH_CHECK", "HEALTH_LINES", "AuditTail"]

AUDIT_LINES = 200
HEALTH_LINES = 20
#: An audit message of a health check (the ops page's script has the same pattern).
HEALTH_CHECK = re.compile(r"^who=\S+ profile=\S+ session=\S+ (?:GET|HEAD) /healthz ")


class AuditTail(logging.Handler):
    """Ring buffers of recent audit lines (thread-safe: logging's handler lock)."""

    def __init__(self, capacity: int = AUDIT_LINES, health_capacity: int = HEALTH_LINES,
                 ) -> None:
        super().__init__(level=logging.INFO)
        self._lines: deque[tuple[int, str]] = deque(maxlen=capacity)
        self._health: deque[tuple[int, str]] = deque(maxlen=health_capacity)
        self._count = 0  # the order of arrival, across both buffers
        self._guard = threading.Lock()
        self.addFilter(RedactingFilter())
        self.setFormatter(logging.Formatter("%(asctime)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
            health = HEALTH_CHECK.match(record.getMessage()) is not None
        except Exception:
            self.handleError(record)
            return
        with self._guard:
            self._count += 1
            (self._health if health else self._lines).append((self._count, line[:2000]))

    def lines(self, limit: int = AUDIT_LINES) -> list[str]:
        """The newest ``limit`` lines other than health checks, oldest first, with the
        health checks kept since the oldest of them (or all kept, when there are fewer)."""
        if limit <= 0:
            return []
        with self._guard:
            others = list(self._lines)[-limit:]
            health = list(self._health)
        if len(others) == limit:
            health = [item for item in health if item[0] > others[0][0]]
        return [line for _, line in sorted(others + health)]
