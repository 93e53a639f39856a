"""``GET /events``: the event hub as Server-Sent Events (a raw ASGI endpoint).

Query: ``types`` (comma-separated names or ``prefix.*``), ``profile``, and
``lastEventId`` (the ``Last-Event-ID`` header wins). The answer is
``text/event-stream``: ``retry:``, then the ring's events after the last id
(``events.lost`` first when the ring no longer holds them), then live ones,
a heartbeat comment after :data:`HEARTBEAT_S` without an event, and events
that arrive together in one write.

A reader that falls :data:`~browserd.events.SUBSCRIBER_BUFFER` events behind
is dropped by the hub: its stream gets a last comment saying so and ends
(the client reconnects with ``Last-Event-ID`` and resumes from the ring). The
hub never waits for a reader, so a reader that never reads slows nothing.
When the service stops, the hub ends every stream. A stream that has ended but
cannot write its last bytes within :data:`ABORT_GRACE_S` (the client stopped
reading) has its connection cut (:func:`~browserd.http.connections.abort_connection`):
the server's write to it would otherwise never return.

Errors before the stream starts are JSON: 400 BAD_REQUEST (unknown type, bad
id, a field given twice), 405 for a method other than GET. Cancellation (the
client went away, the service stops) ends the stream and its subscription.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import parse_qsl

import trio

from .. import jsontext
from ..errors import BadRequest, BrowserdError, MethodNotAllowed
from ..events import Event, EventHub, Subscription, parse_types, sse_comment, sse_event, sse_retry
from ..events.sse import HEARTBEAT
from ..principals import principal_of
from .connections import abort_connection
from .guard import Receive, Scope, Send

__all__ = ["ABORT_GRACE_S", "BATCH", "HEARTBEAT_S", "send_json", "serve_events",
           "stream_events"]

log = logging.getLogger(__name__)

HEARTBEAT_S = 15.0
ABORT_GRACE_S = 2.0
BATCH = 256
"""Events sent in one write at most."""


async def send_json(send: Send, status: int, body: dict[str, Any],
                    headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    """One complete JSON response on an http scope."""
    data = jsontext.dumps(body)
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(data)).encode()), *headers]})
    await send({"type": "http.response.body", "body": data, "more_body": False})


def _query(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    raw = bytes(scope.get("query_string", b"")).decode("latin-1")
    for key, value in parse_qsl(raw, keep_blank_values=True):
        if key in out:
            raise BadRequest(f"field {key!r} is given more than once", field=key)
        if key not in ("types", "profile", "lastEventId"):
            raise BadRequest(f"unknown field: {key}", field=key,
                             hint="accepted: lastEventId, profile, types")
        out[key] = value
    return out


def _last_event_id(scope: Scope, query: dict[str, str]) -> int | None:
    raw = None
    for name, value in scope.get("headers", ()):
        if bytes(name).lower() == b"last-event-id":
            raw = bytes(value).decode("latin-1").strip()
    if raw is None:
        raw = query.get("lastEventId")
    if raw is None or raw == "":
        return None
    if not raw.isdigit() or len(raw) > 18:
        raise BadRequest("Last-Event-ID must be an event id (a non-negative integer)",
                         field="lastEventId")
    return int(raw)


def open_subscription(hub: EventHub, scope: Scope) -> Subscription:
    """The subscription a ``GET /events`` asks for; BadRequest for a bad query."""
    query = _query(scope)
    try:
        types = parse_types(query.get("types", "").split(","))
    except ValueError as exc:
        raise BadRequest(str(exc), field="types",
                         hint="types are names like tab.opened, or tab.* for a group") from None
    profile = query.get("profile") or None
    principal = principal_of(scope)
    if principal is not None:  # a token limited to some profiles sees only their events
        profile = principal.events_profile(profile)
    return hub.subscribe(last_id=_last_event_id(scope, query), types=types, profile=profile)


async def stream_events(sub: Subscription, write: Any, *,
                        heartbeat_s: float = HEARTBEAT_S) -> None:
    """Write ``sub``'s events with ``write(bytes)`` until it ends; heartbeats when idle.

    Returns after writing the closing comment of a dropped subscription (or
    nothing, for one closed by the service). Cancellation ends it at once.
    """
    while True:
        event: Event | None = None
        with trio.move_on_after(heartbeat_s) as idle:
            event = await sub.receive()
        if idle.cancelled_caught:
            await write(HEARTBEAT)
            continue
        if event is None:
            break
        chunk = [sse_event(event)]
        while len(chunk) < BATCH:
            more = sub.next_nowait()
            if more is None:
                break
            chunk.append(sse_event(more))
        await write(b"".join(chunk))
    if sub.dropped:
        await write(sse_comment("dropped: this reader fell too far behind; reconnect with "
                                "Last-Event-ID to resume"))


async def serve_events(hub: EventHub, scope: Scope, receive: Receive, send: Send) -> None:
    """The ``/events`` endpoint (module docstring)."""
    try:
        if scope.get("method") not in ("GET", "HEAD"):
            raise MethodNotAllowed("/events is GET only")
        sub = open_subscription(hub, scope)
    except BrowserdError as exc:
        await send_json(send, exc.status, exc.to_dict())
        return
    with sub:
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"x-accel-buffering", b"no")]})
        if scope.get("method") == "HEAD":
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return

        async def write(data: bytes) -> None:
            await send({"type": "http.response.body", "body": data, "more_body": True})

        finished = trio.Event()
        async with trio.open_nursery() as nursery:
            async def watch_disconnect() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                nursery.cancel_scope.cancel()

            async def cut_when_stuck() -> None:
                await sub.wait_ended()
                with trio.move_on_after(ABORT_GRACE_S):
                    await finished.wait()
                    return
                abort_connection(scope)

            nursery.start_soon(watch_disconnect)
            nursery.start_soon(cut_when_stuck)
            await write(sse_retry() + sse_comment(f"browserd events after id {hub.last_id}"))
            await stream_events(sub, write)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            finished.set()
            nursery.cancel_scope.cancel()
