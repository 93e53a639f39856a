"""Server-Sent Events framing for :class:`~browserd.events.hub.Event` s (pure functions).

An event becomes ``id: N``, ``event: <type>`` and one ``data:`` line of JSON.
The JSON comes from :func:`browserd.jsontext.dumps`, which escapes every
control character inside strings, so page-provided text (a dialog message, a
console line, a URL) can never end the ``data:`` line or start a field of its
own; the framing still refuses a raw CR or LF (defence in depth). The event
type is one of ours and the id an integer, so nothing else in a frame comes
from a page.
"""

from __future__ import annotations

from .. import jsontext
from .hub import Event, EventType

__all__ = ["HEARTBEAT", "RETRY_MS", "sse_comment", "sse_event", "sse_retry"]

RETRY_MS = 2000
"""How long an EventSource waits before reconnecting (the ``retry:`` field)."""
HEARTBEAT = b": heartbeat\n\n"


def _one_line(data: bytes) -> bytes:
    if b"\n" in data or b"\r" in data:  # cannot happen with orjson; never trust it blindly
        data = data.replace(b"\r", b"\\r").replace(b"\n", b"\\n")
    return data


def sse_event(event: Event) -> bytes:
    """One event as an SSE frame; ``events.lost`` has no id (it must not move the resume point)."""
    body = _one_line(jsontext.dumps(event.to_json() if event.type != EventType.EVENTS_LOST
                                    else {k: v for k, v in event.to_json().items() if k != "id"}))
    head = b"" if event.type == EventType.EVENTS_LOST else b"id: %d\n" % event.id
    return head + b"event: " + event.type.value.encode() + b"\ndata: " + body + b"\n\n"


def sse_comment(text: str) -> bytes:
    """A comment line (ignored by clients; keeps proxies and idle timers awake)."""
    return b": " + _one_line(text.encode("utf-8", "replace")) + b"\n\n"


def sse_retry(ms: int = RETRY_MS) -> bytes:
    return b"retry: %d\n\n" % ms
