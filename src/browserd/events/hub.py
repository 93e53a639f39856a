"""EventHub: what happened in the service, for clients that would otherwise poll.

One hub per service. Publishers (the supervisor, the tab registry and its tab
actors, the download store) call :meth:`EventSink.publish` through a sink bound
to their profile; the hub stamps each event with the next id and the time,
keeps the newest :data:`RING_SIZE` in a ring and hands it to every live
subscription. Publishing never blocks and never fails: it runs in the
publisher's task and only appends and ``send_nowait`` s.

A :class:`Subscription` starts with the ring's events after the client's last
seen id (``events.lost`` first when that id is older than the ring, or from a
previous run of the service), then live ones, filtered by type and profile.
Each subscription has a bounded buffer (:data:`SUBSCRIBER_BUFFER`): a
subscriber that lets it fill is dropped at once (its stream ends,
:attr:`Subscription.dropped` is set) rather than slowing the publishers or
growing memory; it can come back with ``Last-Event-ID`` and resume from the ring.

State is changed only by trio tasks of this one service (no locks: publish
and subscribe never await). Cancellation: nothing here waits except a
subscriber iterating its own stream, which cancellation just ends.
"""

from __future__ import annotations

import enum
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

import attrs
import trio

__all__ = ["RING_SIZE", "SUBSCRIBER_BUFFER", "Event", "EventHub", "EventSink", "EventType",
           "HubStatistics", "Subscription", "parse_types"]

RING_SIZE = 1000
"""Events kept for resuming (the newest)."""
SUBSCRIBER_BUFFER = 1000
"""Events one subscriber may have waiting; past it the subscriber is dropped."""


_ENVELOPE = frozenset({"id", "type", "profile", "targetId", "at"})


class EventType(enum.StrEnum):
    """Every event type a client can see (``handoff.*`` are reserved, sent by no one yet)."""

    BROWSER_STATE = "browser.state"
    BROWSER_CRASHED = "browser.crashed"
    TAB_OPENED = "tab.opened"
    TAB_CLOSED = "tab.closed"
    TAB_NAVIGATED = "tab.navigated"
    TAB_CRASHED = "tab.crashed"
    TAB_RESTORED = "tab.restored"
    TAB_LOST = "tab.lost"
    DIALOG_OPENED = "dialog.opened"
    DIALOG_CLOSED = "dialog.closed"
    DOWNLOAD_STARTED = "download.started"
    DOWNLOAD_FINISHED = "download.finished"
    CONSOLE_ERROR = "console.error"
    HANDOFF_REQUESTED = "handoff.requested"
    HANDOFF_DONE = "handoff.done"
    TAB_REQUESTED = "tab.requested"
    TAB_REQUEST_ENDED = "tab.requestEnded"
    CONFIRMATION_REQUESTED = "confirmation.requested"
    CONFIRMATION_ENDED = "confirmation.ended"
    EVENTS_LOST = "events.lost"
    """Not published: the first event of a resume that the ring cannot serve."""


@attrs.frozen(kw_only=True)
class Event:
    """One event. ``data`` holds its own fields (page strings in it are data, never markup)."""

    id: int
    type: EventType
    profile: str
    target_id: str | None
    at: float
    data: Mapping[str, Any] = attrs.field(factory=dict)

    def to_json(self) -> dict[str, Any]:
        """``{id, type, profile, targetId?, at, …data}``."""
        out: dict[str, Any] = {"id": self.id, "type": self.type.value, "profile": self.profile}
        if self.target_id is not None:
            out["targetId"] = self.target_id
        out["at"] = self.at
        out.update(self.data)
        return out


def parse_types(raw: Iterable[str]) -> frozenset[str]:
    """Type filters: exact names or a prefix with ``*`` (``tab.*``); ValueError for unknowns."""
    known = {t.value for t in EventType}
    wanted: set[str] = set()
    for item in raw:
        name = item.strip()
        if not name:
            continue
        if name.endswith(".*"):
            prefix = name[:-1]
            if not any(k.startswith(prefix) for k in known):
                raise ValueError(f"no event type matches {name!r}")
        elif name not in known:
            raise ValueError(f"unknown event type {name!r}")
        wanted.add(name)
    return frozenset(wanted)


def _type_matches(wanted: frozenset[str], event_type: str) -> bool:
    if not wanted or event_type in wanted:
        return True
    return any(w.endswith(".*") and event_type.startswith(w[:-1]) for w in wanted)


@attrs.frozen(kw_only=True)
class HubStatistics:
    """A snapshot of the hub for ``/status``."""

    published: int
    last_id: int
    oldest_id: int | None
    subscribers: int
    dropped: int


class Subscription:
    """One subscriber's stream of events: :meth:`receive` (or iterate), close when done.

    The stream ends when the subscription is closed, dropped (check
    :attr:`dropped`) or the hub closes. Made by :meth:`EventHub.subscribe` only;
    a context manager (sync or async) that closes it.
    """

    def __init__(self, hub: EventHub, *, types: frozenset[str], profile: str | None,
                 buffer: int) -> None:
        self._hub = hub
        self.types = types
        self.profile = profile
        self._send, self._receive = trio.open_memory_channel[Event](buffer)
        self.dropped = False
        self._ended = trio.Event()

    def wants(self, event: Event) -> bool:
        if self.profile is not None and event.profile != self.profile \
                and event.type != EventType.EVENTS_LOST:
            return False
        return _type_matches(self.types, event.type.value)

    def offer(self, event: Event) -> bool:
        """Queue ``event`` if wanted; False when the buffer is full (the caller drops us)."""
        if not self.wants(event):
            return True
        try:
            self._send.send_nowait(event)
        except trio.WouldBlock:
            return False
        except trio.ClosedResourceError:
            return True
        return True

    def end(self, *, dropped: bool = False) -> None:
        """End the stream (idempotent): iteration stops after what is queued."""
        self.dropped = self.dropped or dropped
        self._send.close()
        self._ended.set()

    async def wait_ended(self) -> None:
        """Wait until the stream has ended (closed, dropped or the hub closed)."""
        await self._ended.wait()

    def close(self) -> None:
        """Stop receiving events (idempotent; also what leaving ``async with`` does)."""
        self._hub.unsubscribe(self)
        self.end()

    async def receive(self) -> Event | None:
        """The next event, waiting for it; None once the stream has ended."""
        try:
            return await self._receive.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            return None

    def next_nowait(self) -> Event | None:
        """The next event if one is queued, else None (ended or empty)."""
        try:
            return self._receive.receive_nowait()
        except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
            return None

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Event]:
        while (event := await self.receive()) is not None:
            yield event

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class EventHub:
    """The service's event hub (module docstring). Handle and owner are the same object."""

    def __init__(self, *, ring_size: int = RING_SIZE, clock: Any = time.time,
                 redact: Any = None) -> None:
        """``redact``: applied to every event's data before it is kept (the vault's
        redactor: no event carries a secret's value); None keeps data as it is."""
        self._redact = redact
        self._ring: deque[Event] = deque(maxlen=ring_size)
        self._subscribers: list[Subscription] = []
        self._last_id = 0
        self._published = 0
        self._dropped = 0
        self._clock = clock
        self._closed = trio.Event()

    def sink(self, profile: str) -> EventSink:
        """A publisher's handle, bound to ``profile``."""
        return EventSink(hub=self, profile=profile)

    def publish(self, event_type: EventType, *, profile: str, target_id: str | None = None,
                **data: Any) -> Event:
        """Stamp, keep and deliver one event; drops subscribers whose buffer is full.

        ``data`` may not use the envelope's names (``id``, ``type``, ``profile``,
        ``targetId``, ``at``): a programming error (AssertionError).
        """
        assert not data.keys() & _ENVELOPE, f"event data may not set {data.keys() & _ENVELOPE}"
        if self._redact is not None:
            data = self._redact(data)
        self._last_id += 1
        self._published += 1
        event = Event(id=self._last_id, type=event_type, profile=profile, target_id=target_id,
                      at=round(self._clock(), 3), data=data)
        self._ring.append(event)
        for sub in list(self._subscribers):
            if not sub.offer(event):
                self._dropped += 1
                self._subscribers.remove(sub)
                sub.end(dropped=True)
        return event

    def subscribe(self, *, last_id: int | None = None, types: frozenset[str] = frozenset(),
                  profile: str | None = None, buffer: int = SUBSCRIBER_BUFFER) -> Subscription:
        """A new subscription: the ring after ``last_id`` (None: nothing old), then live.

        ``last_id`` older than the ring holds, or newer than any id of this
        run (the service restarted), first yields an ``events.lost`` event
        (without an id of its own) saying from where the replay starts.
        """
        sub = Subscription(self, types=types, profile=profile,
                           buffer=max(buffer, len(self._ring) + 1))
        if self._closed.is_set():
            sub.end()
            return sub
        if last_id is not None:
            oldest = self._ring[0].id if self._ring else self._last_id + 1
            if last_id > self._last_id or last_id < oldest - 1:
                sub.offer(Event(id=0, type=EventType.EVENTS_LOST, profile=profile or "",
                                target_id=None, at=round(self._clock(), 3),
                                data={"lastEventId": last_id, "resumedFrom": oldest}))
                last_id = 0
            for event in self._ring:
                if event.id > last_id:
                    sub.offer(event)
        self._subscribers.append(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        if sub in self._subscribers:
            self._subscribers.remove(sub)

    def close(self) -> None:
        """End every subscription, now and later (the service is stopping); publishing goes on."""
        self._closed.set()
        for sub in self._subscribers:
            sub.end()
        self._subscribers.clear()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    async def wait_closed(self) -> None:
        """Wait until :meth:`close` (the service is stopping)."""
        await self._closed.wait()

    @property
    def last_id(self) -> int:
        return self._last_id

    def statistics(self) -> HubStatistics:
        return HubStatistics(published=self._published, last_id=self._last_id,
                             oldest_id=self._ring[0].id if self._ring else None,
                             subscribers=len(self._subscribers), dropped=self._dropped)


@attrs.frozen(kw_only=True)
class EventSink:
    """What a publisher holds: the hub and the profile its events belong to."""

    hub: EventHub
    profile: str

    def publish(self, event_type: EventType, *, target_id: str | None = None,
                **data: Any) -> None:
        """Publish one event of this profile (never blocks, never raises)."""
        self.hub.publish(event_type, profile=self.profile, target_id=target_id, **data)
