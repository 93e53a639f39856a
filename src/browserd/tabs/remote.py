"""Reading what Chromium hands back from a page: exceptions, remote objects, console, dialogs.

Plain functions over CDP JSON (no I/O, never raise): the one place that
turns ``exceptionDetails`` into text, so every caller reports a thrown page
error the same way, and console and dialog events into records
(:class:`~browserd.tabs.state.ConsoleEntry`, :class:`DialogInfo`).
Page content is untrusted data: the text is capped.
"""

from __future__ import annotations

from typing import Any

import attrs

from .state import ConsoleEntry

__all__ = ["CONSOLE_EVENTS", "CONSOLE_TEXT_CHARS", "DialogInfo", "console_entry",
           "dialog_info", "exception_text", "remote_text"]

CONSOLE_EVENTS = frozenset({"Runtime.consoleAPICalled", "Runtime.exceptionThrown"})
"""The events that become console entries (:func:`console_entry`)."""
CONSOLE_TEXT_CHARS = 4000
"""Characters of a console message kept in the tab's ring."""


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


def console_entry(method: str, params: dict[str, Any], *, timestamp: float) -> ConsoleEntry | None:
    """The console entry a :data:`CONSOLE_EVENTS` event stands for (None: another event)."""
    if method == "Runtime.consoleAPICalled":
        text = " ".join(remote_text(a) for a in params.get("args", []))[:CONSOLE_TEXT_CHARS]
        frame = (params.get("stackTrace") or {}).get("callFrames") or [{}]
        return ConsoleEntry(level=_console_level(params.get("type", "log")), text=text,
                            url=frame[0].get("url"), line=frame[0].get("lineNumber"),
                            timestamp=timestamp, source="console")
    if method == "Runtime.exceptionThrown":
        details = params.get("exceptionDetails", {})
        return ConsoleEntry(level="error", text=exception_text(
            details, limit=CONSOLE_TEXT_CHARS, fallback="exception"), url=details.get("url"),
            line=details.get("lineNumber"), timestamp=timestamp, source="exception")
    return None


def _console_level(kind: str) -> str:
    return {"warning": "warn", "assert": "error", "trace": "debug", "dir": "log",
            "table": "log", "count": "log", "timeEnd": "log"}.get(kind, kind)


@attrs.frozen(kw_only=True)
class DialogInfo:
    """A JavaScript dialog open on a page (message and default prompt capped)."""

    type: str
    message: str
    default_prompt: str
    url: str

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "message": self.message, "defaultPrompt": self.default_prompt}


def dialog_info(params: dict[str, Any]) -> DialogInfo:
    """The dialog a ``Page.javascriptDialogOpening`` event announces."""
    return DialogInfo(type=params.get("type", "alert"),
                      message=str(params.get("message", ""))[:2000],
                      default_prompt=str(params.get("defaultPrompt", ""))[:2000],
                      url=params.get("url", ""))
