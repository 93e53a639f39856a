"""The root of the error hierarchy, and the one rule for exception groups.

(The tree is drawn in :mod:`browserd.errors`.)
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..groups import collapse_group

__all__ = [
    "BrowserdError", "unwrap_group"
]



class BrowserdError(Exception):
    """Base of every browserd error; ``status`` and ``code`` are stable."""

    status: ClassVar[int] = 500
    code: ClassVar[str] = "INTERNAL"
    default_hint: ClassVar[str] = ""
    #: Which error of a group is the answer (:func:`unwrap_group`): the lowest rank wins.
    rank: ClassVar[int] = 50

    def __init__(self, message: str, *, hint: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.hint = self.default_hint if hint is None else hint
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        """The JSON error body: ``{error, code, hint, ...details}``.

        A detail can never replace ``error``, ``code`` or ``hint``.
        """
        body: dict[str, Any] = {"error": self.message, "code": self.code}
        if self.hint:
            body["hint"] = self.hint
        for key, value in self.details.items():
            if key not in ("error", "code", "hint"):
                body[key] = value
        return body


def unwrap_group(exc: BaseException) -> BaseException:
    """Collapse an exception group to the one error that matters (:func:`.groups.collapse_group`:
    a lone member is itself; else the first BrowserdError, by :attr:`BrowserdError.rank`)."""
    return collapse_group(exc, domain=BrowserdError,
                          rank=lambda e: getattr(e, "rank", 50))
