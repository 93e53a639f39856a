"""Reading what Chromium hands back from a page: exception details and remote objects.

Plain functions over CDP JSON (no I/O, never raise): the one place that
turns ``exceptionDetails`` into text, so every caller reports a thrown page
error the same way. Page content is untrusted data: the text is capped.
"""

from __future__ import annotations

from typing import Any

__all__ = ["exception_text", "remote_text"]


def exception_text(details: dict[str, Any], *, limit: int = 500, fallback: str = "error") -> str:
    """The message of a ``Runtime.ExceptionDetails``, at most ``limit`` characters.

    The thrown value's ``description`` (an Error's stack-bearing text) or its
    primitive ``value``, else the details' own ``text``, else ``fallback``.
    """
    thrown = details.get("exception") or {}
    text = thrown.get("description") or thrown.get("value") or details.get("text") or fallback
    return str(text)[:limit]


def remote_text(arg: dict[str, Any]) -> str:
    """A ``Runtime.RemoteObject`` as console text: strings as themselves, others repr'd."""
    if "value" in arg:
        value = arg["value"]
        return value if isinstance(value, str) else repr(value)
    return str(arg.get("description") or arg.get("unserializableValue") or arg.get("type", ""))
