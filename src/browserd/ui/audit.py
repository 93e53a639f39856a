"""The audit tail the ops page shows: the newest lines of ``browserd.audit``, in memory.

:class:`AuditTail` is a logging handler the service adds to the
``browserd.audit`` logger (and removes when it stops). It keeps the last
:data:`AUDIT_LINES` formatted lines; the same :class:`RedactingFilter` as
the log files runs first, so no URL in it keeps userinfo, query or fragment.
The lines are the audit log's own (method, route, tab, outcome, duration,
the caller: a token id or ``ui:<session label>``), never a secret.
"""

from __future__ import annotations

import logging
import threading
from collections import deque

from ..redact import RedactingFilter

__all__ = ["AUDIT_LINES", "AuditTail"]

AUDIT_LINES = 200


class AuditTail(logging.Handler):
    """A ring buffer of recent audit lines (thread-safe: logging's handler lock)."""

    def __init__(self, capacity: int = AUDIT_LINES) -> None:
        super().__init__(level=logging.INFO)
        self._lines: deque[str] = deque(maxlen=capacity)
        self._guard = threading.Lock()
        self.addFilter(RedactingFilter())
        self.setFormatter(logging.Formatter("%(asctime)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except Exception:
            self.handleError(record)
            return
        with self._guard:
            self._lines.append(line[:2000])

    def lines(self, limit: int = AUDIT_LINES) -> list[str]:
        """The newest ``limit`` lines, oldest first."""
        with self._guard:
            items = list(self._lines)
        return items[-limit:] if limit > 0 else []
