"""CDP bookkeeping as plain code: command ids, pending replies, event routing.

Nothing here does I/O, so it is tested without a socket. :class:`CdpConnection`
feeds every received frame to :meth:`Protocol.receive` and sends what
:meth:`Protocol.encode` returns.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable
from typing import Any

import attrs
import orjson
import trio

from .. import jsontext as decoding
from ..errors import BrowserdError, BrowserGone, BrowserUnresponsive, CdpError, CdpUndecodable

JsonDict = dict[str, Any]


@attrs.frozen(kw_only=True)
class CdpEvent:
    """One protocol event; ``session_id`` is None for browser-level events."""

    method: str
    params: JsonDict
    session_id: str | None


@attrs.define(eq=False)
class PendingCall:
    """A command awaiting its reply; resolved once, by reply or by closure.

    ``on_resolve``, when set, is called synchronously at resolution (in the
    connection's reader, so in wire order with the events around the reply);
    it must not raise or block.
    """

    method: str
    session_id: str | None
    done: trio.Event = attrs.field(factory=trio.Event)
    result: JsonDict | None = None
    error: BaseException | None = None
    on_resolve: Callable[[PendingCall], None] | None = None

    def resolve(self, result: JsonDict | None, error: BaseException | None) -> None:
        if self.done.is_set():
            return
        self.result, self.error = result, error
        self.done.set()
        if self.on_resolve is not None:
            self.on_resolve(self)

    def unwrap(self) -> JsonDict:
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


@attrs.frozen(kw_only=True)
class ProtocolStatistics:
    sent: int
    received_replies: int
    received_events: int
    pending: int
    unmatched_replies: int
    undecodable: int
    skipped_events: int
    dropped_events: int
    """Droppable events subscribers lost because they were behind (:class:`Subscription`)."""


class Subscription:
    """A bounded stream of events for one session (or the browser), in wire order.

    The reader delivers (:meth:`deliver`) and never waits for the subscriber.
    One that falls ``buffer`` events behind is closed with ``overflowed =
    True``: its ``receive`` raises :class:`CdpError` after the queued events —
    such events are never silently dropped. Methods in ``droppable``
    (high-volume kinds a subscriber may lose, e.g. console lines) wait apart,
    at most ``droppable_limit`` of them: beyond that the oldest waiting one is
    dropped and counted (:attr:`dropped`, per method in
    :attr:`dropped_by_method`). A flood of them never closes the subscription
    nor takes the other events' room, and the subscriber gets the newest.
    """

    def __init__(
        self, session_id: str | None, methods: frozenset[str] | None, buffer: int, *,
        droppable: frozenset[str] = frozenset(), droppable_limit: int = 1000,
    ) -> None:
        self.session_id = session_id
        self.methods = methods
        self.overflowed = False
        self.droppable = droppable
        self.droppable_limit = max(0, droppable_limit)
        self.dropped = 0
        self.dropped_by_method: dict[str, int] = {}
        self._send, self._recv = trio.open_memory_channel[CdpEvent](buffer)
        # With droppable methods: their events (and the wire position of the others
        # in the channel), so receive hands both out in wire order.
        self._lossy: collections.deque[tuple[int, CdpEvent]] = collections.deque()
        self._positions: collections.deque[int] = collections.deque()
        self._position = 0
        self._ended = False
        self._arrived = trio.Event()

    def wants(self, event: CdpEvent) -> bool:
        if event.session_id != self.session_id:
            return False
        return self.methods is None or event.method in self.methods

    def deliver(self, event: CdpEvent) -> bool:
        """Queue ``event``; False (and closed) when the subscriber is full or gone.

        A droppable event is always taken (True) while the subscription is
        open: when ``droppable_limit`` of them already wait, the oldest goes.
        """
        if event.method in self.droppable:
            if self._ended:
                return False
            if len(self._lossy) >= self.droppable_limit:
                lost = self._lossy.popleft()[1] if self._lossy else event
                self.dropped += 1
                self.dropped_by_method[lost.method] = self.dropped_by_method.get(lost.method, 0) + 1
                if lost is event:
                    return True
            self._lossy.append((self._position, event))
            self._position += 1
            self._arrived.set()
            return True
        try:
            self._send.send_nowait(event)
        except trio.WouldBlock:
            self.overflowed = True
            self.close()
            return False
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            return False
        if self.droppable:
            self._positions.append(self._position)
            self._position += 1
            self._arrived.set()
        return True

    def close(self) -> None:
        self._ended = True
        self._send.close()
        self._arrived.set()

    async def receive(self) -> CdpEvent:
        """Next event (wire order). Raises CdpError on overflow, BrowserGone once closed.

        Cancelled while it waits, it takes nothing: no event is lost.
        """
        if self.droppable:
            return await self._receive_in_order()
        try:
            return await self._recv.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise self._end_error() from None

    async def _receive_in_order(self) -> CdpEvent:
        """The older of the next droppable and the next other event (waits for either)."""
        await trio.lowlevel.checkpoint_if_cancelled()
        while True:
            if self._lossy and (not self._positions or self._lossy[0][0] < self._positions[0]):
                event = self._lossy.popleft()[1]
                break
            try:
                event = self._recv.receive_nowait()
            except trio.WouldBlock:
                self._arrived = trio.Event()
                await self._arrived.wait()
                continue
            except (trio.EndOfChannel, trio.ClosedResourceError):
                raise self._end_error() from None
            self._positions.popleft()
            break
        await trio.lowlevel.cancel_shielded_checkpoint()
        return event

    def _end_error(self) -> BrowserdError:
        if self.overflowed:
            return CdpError("event subscriber fell behind and was closed")
        return BrowserGone("the CDP connection closed")

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> CdpEvent:
        try:
            return await self.receive()
        except BrowserGone:
            raise StopAsyncIteration from None

    def unsubscribe(self) -> None:
        self._ended = True
        self._lossy.clear()
        self._send.close()
        self._recv.close()
        self._arrived.set()


class Sink:
    """A synchronous consumer of one session's events (see :meth:`Protocol.add_sink`).

    ``fn`` runs in the connection's reader for each matching event, so it
    must be quick and bounded (it updates state, nothing more). If it raises,
    the sink is removed and the exception kept in ``error``.
    """

    def __init__(self, session_id: str | None, methods: frozenset[str],
                 fn: Callable[[CdpEvent], None]) -> None:
        self.session_id = session_id
        self.methods = methods
        self.fn = fn
        self.error: BaseException | None = None


_EVENT_PREFIX = '{"method":"'


def _peek_method(data: bytes | str) -> str | None:
    """An event's method read from its first bytes, without parsing (None: not that shape).

    Chromium writes events as ``{"method":"Domain.event",…}``; anything else
    (replies, other spacing) is parsed in full.
    """
    text = data[:128] if isinstance(data, str) else data[:128].decode("latin-1")
    if not text.startswith(_EVENT_PREFIX):
        return None
    end = text.find('"', len(_EVENT_PREFIX))
    return text[len(_EVENT_PREFIX):end] if end > 0 else None


class Protocol:
    """Ids, pending replies and subscriptions of one CDP connection.

    Events that no subscription or sink asks for (Chromium sends many:
    ``Network.dataReceived``, ``*ExtraInfo``…) are recognised from their
    first bytes and dropped without being parsed.
    """

    def __init__(self, *, on_unroutable: Callable[[CdpEvent], None] | None = None) -> None:
        self._next_id = 0
        self._pending: dict[int, PendingCall] = {}
        self._subscriptions: list[Subscription] = []
        self._sinks: dict[str | None, list[Sink]] = {}  # by session: O(1) per event
        self._wanted: frozenset[str] | None = None  # methods someone wants; None: parse all
        self._skipped = 0
        self._dropped = 0
        self._closed: BaseException | None = None
        self._on_unroutable = on_unroutable
        self._sent = self._replies = self._events = self._unmatched = self._undecodable = 0

    @property
    def closed_reason(self) -> BaseException | None:
        return self._closed

    def encode(
        self, method: str, params: JsonDict | None, session_id: str | None,
        on_resolve: Callable[[PendingCall], None] | None = None,
    ) -> tuple[PendingCall, int, bytes]:
        """Register a pending call and return it with its id and wire bytes.

        ``on_resolve`` is set on the call before anything can resolve it.

        Raises BrowserGone if the connection has already closed (BrowserUnresponsive
        when it closed because the browser hung: a call made after that gets the cause).
        """
        if self._closed is not None:
            if isinstance(self._closed, BrowserUnresponsive):
                raise BrowserUnresponsive(self._closed.message)
            raise BrowserGone(f"the browser connection is closed ({self._closed})")
        self._next_id += 1
        call_id = self._next_id
        message: JsonDict = {"id": call_id, "method": method, "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        call = PendingCall(method=method, session_id=session_id, on_resolve=on_resolve)
        self._pending[call_id] = call
        self._sent += 1
        return call, call_id, orjson.dumps(message)

    def forget(self, call_id: int) -> None:
        """Drop a pending entry (the caller was cancelled or finished)."""
        self._pending.pop(call_id, None)

    def receive(self, data: bytes | str) -> None:
        """Route one received frame to its pending call, its subscribers and sinks.

        Events nobody wants are recognised from their first bytes and dropped
        unparsed (counted in ``skipped_events``). Page data never makes a
        message vanish: lone surrogates and invalid UTF-8 are decoded as
        U+FFFD (see :mod:`browserd.jsontext`). A frame that is still not JSON
        is counted; if it is a reply, its own pending command fails at once
        with :class:`CdpUndecodable` instead of waiting out its deadline.
        """
        if self._wanted is not None and self._on_unroutable is None:
            method = _peek_method(data)
            if method is not None and method not in self._wanted:
                self._skipped += 1
                return
        try:
            message = decoding.loads(data)
        except decoding.UndecodableMessage as exc:
            self._undecodable += 1
            broken_id = decoding.reply_id(data)
            broken = self._pending.pop(broken_id, None) if broken_id is not None else None
            if broken is not None:
                broken.resolve(None, CdpUndecodable(
                    f"{broken.method}: the browser's reply could not be decoded ({exc})",
                    method=broken.method))
            return
        if not isinstance(message, dict):
            return
        call_id = message.get("id")
        if call_id is not None:
            self._replies += 1
            call = self._pending.pop(call_id, None)
            if call is None:
                self._unmatched += 1
                return
            if "error" in message:
                err = message["error"] or {}
                text = str(err.get("message", "protocol error"))
                if err.get("data"):
                    text += f": {err['data']}"
                call.resolve(None, CdpError(f"{call.method}: {text}", cdp_code=err.get("code"),
                                            method=call.method))
            else:
                call.resolve(message.get("result") or {}, None)
            return
        method = message.get("method")
        if not isinstance(method, str):
            return
        self._events += 1
        event = CdpEvent(
            method=method, params=message.get("params") or {}, session_id=message.get("sessionId")
        )
        routed = False
        for sink in self._sinks.get(event.session_id, ()):
            if method in sink.methods:
                routed = True
                try:
                    sink.fn(event)
                except Exception as exc:  # a broken sink must not break the reader
                    sink.error = exc
                    self.remove_sink(sink)
                    break
        for sub in list(self._subscriptions):
            if sub.wants(event):
                routed = True
                dropped = sub.dropped
                if not sub.deliver(event):
                    self._subscriptions.remove(sub)
                    self._update_wanted()
                self._dropped += sub.dropped - dropped
        if not routed and self._on_unroutable is not None:
            self._on_unroutable(event)

    def subscribe(
        self, session_id: str | None, methods: frozenset[str] | None = None, buffer: int = 1000,
        *, droppable: frozenset[str] = frozenset(), droppable_limit: int = 1000,
    ) -> Subscription:
        """A new :class:`Subscription` (already closed if the connection is)."""
        sub = Subscription(session_id, methods, buffer, droppable=droppable,
                           droppable_limit=droppable_limit)
        if self._closed is not None:
            sub.close()
        else:
            self._subscriptions.append(sub)
            self._update_wanted()
        return sub

    def add_subscription(self, sub: Subscription) -> None:
        """Register a prebuilt subscription (its own ``wants`` decides routing).

        Its ``methods`` must cover every method its ``wants`` accepts (None:
        any), since events no one lists are dropped unparsed.
        """
        if self._closed is not None:
            sub.close()
        else:
            self._subscriptions.append(sub)
            self._update_wanted()

    def unsubscribe(self, sub: Subscription) -> None:
        if sub in self._subscriptions:
            self._subscriptions.remove(sub)
            self._update_wanted()
        sub.unsubscribe()

    def add_sink(self, session_id: str | None, methods: frozenset[str],
                 fn: Callable[[CdpEvent], None]) -> Sink:
        """Call ``fn(event)`` from the reader for each of the session's ``methods`` events.

        For high-volume events that only update state (no channel, no task
        switch per event). Sinks end with the connection or :meth:`remove_sink`.
        """
        sink = Sink(session_id, methods, fn)
        if self._closed is None:
            self._sinks.setdefault(session_id, []).append(sink)
            self._update_wanted()
        return sink

    def remove_sink(self, sink: Sink) -> None:
        """Stop calling ``sink`` (idempotent)."""
        same = self._sinks.get(sink.session_id, [])
        if sink in same:
            same.remove(sink)
            if not same:
                del self._sinks[sink.session_id]
            self._update_wanted()

    def _update_wanted(self) -> None:
        wanted: set[str] = set()
        for sub in self._subscriptions:
            if sub.methods is None:
                self._wanted = None
                return
            wanted |= sub.methods
        for sinks in self._sinks.values():
            for sink in sinks:
                wanted |= sink.methods
        self._wanted = frozenset(wanted)

    def fail_calls(self, session_id: str, error: BaseException) -> None:
        """Fail the session's pending calls; its subscriptions go on (a crashed tab)."""
        for call_id, call in list(self._pending.items()):
            if call.session_id == session_id:
                del self._pending[call_id]
                call.resolve(None, error)

    def fail_session(self, session_id: str, error: BaseException) -> None:
        """A session detached: fail its pending calls and end its subscriptions."""
        self.fail_calls(session_id, error)
        for sub in list(self._subscriptions):
            if sub.session_id == session_id:
                self._subscriptions.remove(sub)
                sub.close()
        self._sinks.pop(session_id, None)
        self._update_wanted()

    def close(self, reason: BaseException) -> None:
        """Fail every pending call with ``reason`` and end every subscription. Idempotent."""
        if self._closed is not None:
            return
        self._closed = reason
        pending, self._pending = self._pending, {}
        for call in pending.values():
            call.resolve(None, reason)
        subs, self._subscriptions = self._subscriptions, []
        for sub in subs:
            sub.close()
        self._sinks = {}

    def statistics(self) -> ProtocolStatistics:
        return ProtocolStatistics(
            sent=self._sent,
            received_replies=self._replies,
            received_events=self._events,
            pending=len(self._pending),
            unmatched_replies=self._unmatched,
            undecodable=self._undecodable,
            skipped_events=self._skipped,
            dropped_events=self._dropped,
        )


def deadline_left() -> float:
    """Seconds until the current effective deadline (inf when none)."""
    deadline = trio.current_effective_deadline()
    return math.inf if deadline == math.inf else max(0.0, deadline - trio.current_time())


__all__ = ["CdpEvent", "JsonDict", "PendingCall", "Protocol", "ProtocolStatistics", "Sink",
           "Subscription", "deadline_left"]
