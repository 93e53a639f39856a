"""The service's events: a hub with a ring of the newest, subscriptions, SSE framing.

:mod:`.hub` (``EventHub``, ``EventSink``, ``Event``, ``EventType``) is a leaf:
the supervisor, the tab registry and actors and the download store publish
through an ``EventSink``; ``GET /events`` and the ``/ws`` lane subscribe.
:mod:`.sse` frames events for Server-Sent Events.
"""

from __future__ import annotations

from .hub import (
    RING_SIZE,
    SUBSCRIBER_BUFFER,
    Event,
    EventHub,
    EventSink,
    EventType,
    HubStatistics,
    Subscription,
    parse_types,
)
from .sse import sse_comment, sse_event, sse_retry

__all__ = ["RING_SIZE", "SUBSCRIBER_BUFFER", "Event", "EventHub", "EventSink", "EventType",
           "HubStatistics", "Subscription", "parse_types", "sse_comment", "sse_event",
           "sse_retry"]
