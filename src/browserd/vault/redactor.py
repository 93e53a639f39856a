"""Keeping vault values out of everything browserd says or writes.

A :class:`Redactor` knows the values of the vault's secrets and replaces each
occurrence of one, in any string, with ``«secret:NAME»``. browserd runs every
answer (HTTP, ``/ws``, MCP), every error, every event and every log line
through the same redactor, so a value the page echoes (a field's value in a
snapshot, ``input.value`` from ``/eval``, a console line, a request body)
never reaches the agent. Only exact occurrences are found: a page that
transforms the value (upper-cases it, splits it, encodes it) can still show
it — docs/security.md says so.

Plain code: one compiled alternation of the values, longest first, rebuilt
when the vault changes (:meth:`Redactor.update`); thread-safe to read (the
pattern is swapped whole).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["MIN_SECRET_CHARS", "Redactor", "SecretFilter", "marker"]

#: Values shorter than this are refused by the vault: redacting them would garble answers.
MIN_SECRET_CHARS = 4


def marker(name: str) -> str:
    """What a secret's value is replaced with."""
    return f"«secret:{name}»"


class Redactor:
    """Replaces the values it was given with their markers."""

    def __init__(self) -> None:
        self._pattern: re.Pattern[str] | None = None
        self._names: dict[str, str] = {}

    def update(self, values: Mapping[str, str]) -> None:
        """Name → value of every secret (replaces what was known)."""
        names = {value: name for name, value in values.items() if len(value) >= MIN_SECRET_CHARS}
        ordered = sorted(names, key=len, reverse=True)
        self._names = names
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    @property
    def active(self) -> bool:
        return self._pattern is not None

    def text(self, value: str) -> str:
        pattern, names = self._pattern, self._names
        if pattern is None or not value:
            return value
        return pattern.sub(lambda m: marker(names[m.group(0)]), value)

    def redact(self, value: Any) -> Any:
        """``value`` (JSON-like: dicts, lists, strings, numbers) with every secret replaced."""
        if self._pattern is None:
            return value
        return self._walk(value)

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self._walk(v)
                    for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._walk(v) for v in value]
        return value


class SecretFilter(logging.Filter):
    """A logging filter: no log line keeps a vault value (the redactor's current ones)."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self._redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._redactor.active:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: leave it to the handler's own error path
            return True
        redacted = self._redactor.text(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_text:
            record.exc_text = self._redactor.text(record.exc_text)
        return True
