"""CdpConnection: the one channel to a browser, many flattened sessions.

The channel is a :class:`~browserd.cdp.transport.Transport`: the
``--remote-debugging-pipe`` of a browser browserd launched, or a websocket
to one it attached to. The connection owns its reader task. Commands carry the caller's deadline
(and a default cap when the caller set none, so no call can wait forever);
when the socket closes every pending command fails at once with
:class:`~browserd.errors.BrowserGone` and every event subscription ends.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import attrs
import trio
import trio_websocket

from ..errors import BrowserdError, BrowserGone, CdpError, Timeout
from .protocol import (
    CdpEvent,
    JsonDict,
    PendingCall,
    Protocol,
    ProtocolStatistics,
    Sink,
    Subscription,
)
from .transport import MAX_MESSAGE_BYTES, Transport, WebSocketTransport

log = logging.getLogger(__name__)

MAX_MESSAGE_SIZE = MAX_MESSAGE_BYTES
#: Bytes read from a websocket at once (trio-websocket's default is 4 KiB: a burst of
#: events or a screenshot would take hundreds of reads and parser wake-ups). The pipe
#: transport reads 1 MiB at a time.
RECEIVE_BUFFER = 256 * 1024
DEFAULT_COMMAND_DEADLINE_S = 30.0
RESUME_DEADLINE_S = 2.0
"""Bound on writing ``Runtime.runIfWaitingForDebugger`` (see :meth:`CdpSession.run_if_waiting`)."""


class CdpConnection:
    """Handle to one live CDP channel. Create with :func:`open_cdp_connection`
    (websocket) or :func:`open_cdp_over` (any transport, e.g. the pipe)."""

    def __init__(self, transport: Transport, url: str, *, close_transport: bool = True) -> None:
        self._transport = transport
        self.url = url
        self._close_transport = close_transport
        self._protocol = Protocol()
        self._closed = trio.Event()

    # -- commands ------------------------------------------------------------

    async def send(
        self, method: str, params: JsonDict | None = None, *, session_id: str | None = None
    ) -> JsonDict:
        """Send one command and wait for its result.

        The caller's deadline applies; with none, a 30 s cap does. On expiry
        the pending entry is dropped and :class:`Timeout` is raised (trio's
        own Cancelled propagates untouched when an outer scope cancels).
        Raises CdpError for a protocol error reply and BrowserGone when the
        connection closes before the reply arrives.
        """
        pending = await self.post(method, params, session_id=session_id)
        return await pending.result()

    async def post(
        self, method: str, params: JsonDict | None = None, *, session_id: str | None = None,
        on_reply: Callable[[PendingCall], None] | None = None,
    ) -> PendingReply:
        """Write one command now; its reply is awaited later with ``PendingReply.result``.

        Commands posted one after another reach the browser in that order,
        so a caller can pipeline a batch (e.g. the domain enables of a new
        tab) and let later commands queue behind it without waiting for the
        replies. ``on_reply`` (set before the command is written) is called
        by the reader the moment the reply arrives, or the connection closes,
        in wire order with the events: a relay forwards the reply from there
        so its client never sees an event that followed the reply before it.
        It must not raise or block. Raises BrowserGone if the connection is
        closed.
        """
        call, call_id, data = self._protocol.encode(method, params, session_id, on_reply)
        try:
            await self._send_frame(data)
        except BaseException:
            self._protocol.forget(call_id)
            raise
        return PendingReply(self._protocol, call, call_id)

    async def _send_frame(self, data: bytes) -> None:
        # The transport writes whole messages only (locked, shielded, bounded):
        # a half-written frame would corrupt the stream for every session.
        try:
            await self._transport.send(data)
        except BrowserGone as reason:
            self._protocol.close(reason)
            raise

    def session(self, session_id: str | None) -> CdpSession:
        return CdpSession(connection=self, session_id=session_id)

    # -- events --------------------------------------------------------------

    def subscribe(
        self,
        session_id: str | None = None,
        methods: frozenset[str] | None = None,
        *,
        buffer: int = 1000,
        droppable: frozenset[str] = frozenset(),
        droppable_limit: int = 1000,
    ) -> Subscription:
        """Events of one session (None: browser-level) in a bounded stream.

        A subscriber that falls behind loses (and counts) only its
        ``droppable`` methods; any other event overflowing ``buffer`` closes
        the stream (see :class:`~browserd.cdp.protocol.Subscription`).
        """
        return self._protocol.subscribe(session_id, methods, buffer, droppable=droppable,
                                        droppable_limit=droppable_limit)

    def unsubscribe(self, sub: Subscription) -> None:
        self._protocol.unsubscribe(sub)

    def add_tap(self, tap: Subscription) -> None:
        """Register a prebuilt subscription whose ``wants``/``deliver`` decide
        routing (the CDP gateway follows a changing set of sessions this way).
        Its ``deliver`` runs in the reader, in wire order; it must not block."""
        self._protocol.add_subscription(tap)

    def add_sink(self, session_id: str | None, methods: frozenset[str],
                 fn: Callable[[CdpEvent], None]) -> Sink:
        """Call ``fn`` from the reader for each of the session's ``methods`` events.

        For high-volume events that only update state: no channel and no task
        switch per event, so ``fn`` must be quick and must not block. A sink
        that raises is removed (its ``error`` says why).
        """
        return self._protocol.add_sink(session_id, methods, fn)

    def remove_sink(self, sink: Sink) -> None:
        self._protocol.remove_sink(sink)

    def fail_session(self, session_id: str, error: BaseException) -> None:
        self._protocol.fail_session(session_id, error)

    def fail_calls(self, session_id: str, error: BaseException) -> None:
        """Fail the session's pending calls only; its event subscriptions stay open."""
        self._protocol.fail_calls(session_id, error)

    async def detach_session(self, session_id: str, error: BaseException) -> None:
        """Let a session go: ``Target.detachFromTarget``, then :meth:`fail_session` with ``error``.

        The browser stops sending the session's events. Best effort: the
        command's reply is not awaited, its write is shielded and bounded
        (:data:`RESUME_DEADLINE_S`), and nothing is raised (a closed
        connection has no session left to detach).
        """
        with trio.CancelScope(shield=True), trio.move_on_after(RESUME_DEADLINE_S):
            try:
                await self.post("Target.detachFromTarget", {"sessionId": session_id})
            except BrowserdError:
                pass
        self._protocol.fail_session(session_id, error)

    # -- lifecycle -----------------------------------------------------------

    @property
    def is_closed(self) -> bool:
        return self._closed.is_set()

    @property
    def close_reason(self) -> BaseException | None:
        return self._protocol.closed_reason

    async def wait_closed(self) -> None:
        await self._closed.wait()

    def statistics(self) -> ProtocolStatistics:
        return self._protocol.statistics()

    async def _reader(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        reason: BaseException = BrowserGone("the browser connection closed")
        try:
            while True:
                message = await self._transport.receive()
                self._protocol.receive(message)
        except BrowserdError as exc:
            reason = exc
        finally:
            self._protocol.close(reason)
            self._closed.set()

    async def aclose(self) -> None:
        """Close the connection (and the transport, if it owns it). Idempotent;
        never raises for an already-dead peer; bounded (the transport's close is)."""
        self._protocol.close(BrowserGone("the browser connection was closed by browserd"))
        if self._closed.is_set():
            return
        if self._close_transport:
            await self._transport.aclose()
        self._closed.set()


class PendingReply:
    """The reply to a posted command."""

    def __init__(self, protocol: Protocol, call: PendingCall, call_id: int) -> None:
        self._protocol, self._call, self._call_id = protocol, call, call_id

    async def result(self) -> JsonDict:
        """Wait (caller's deadline; 30 s cap without one) for the reply."""
        try:
            cap = math.inf if trio.current_effective_deadline() != math.inf else (
                DEFAULT_COMMAND_DEADLINE_S
            )
            with trio.move_on_after(cap) as cap_scope:
                await self._call.done.wait()
            if cap_scope.cancelled_caught:
                raise Timeout(f"{self._call.method} got no reply within {cap:.0f} s")
            return self._call.unwrap()
        finally:
            self._protocol.forget(self._call_id)


@attrs.frozen
class CdpSession:
    """A flattened session on a connection (``session_id`` None = the browser)."""

    connection: CdpConnection
    session_id: str | None

    async def send(self, method: str, params: JsonDict | None = None) -> JsonDict:
        return await self.connection.send(method, params, session_id=self.session_id)

    async def post(self, method: str, params: JsonDict | None = None) -> PendingReply:
        return await self.connection.post(method, params, session_id=self.session_id)

    async def run_if_waiting(self) -> bool:
        """Resume this session's target if ``waitForDebuggerOnStart`` holds it.

        The one way browserd releases a held target (the navigation guard's
        pages, a tab's child targets). The command is written, its reply
        never awaited: it can lag behind the resume itself. Shielded and
        bounded (:data:`RESUME_DEADLINE_S`), so a cancelled caller still
        releases the target. Never raises: False when the command could
        not be written (the connection is gone, and with it every hold).
        """
        with trio.CancelScope(shield=True), trio.move_on_after(RESUME_DEADLINE_S):
            try:
                await self.post("Runtime.runIfWaitingForDebugger")
                return True
            except BrowserdError:
                return False
        return False

    def subscribe(
        self, methods: frozenset[str] | None = None, *, buffer: int = 1000,
        droppable: frozenset[str] = frozenset(), droppable_limit: int = 1000,
    ) -> Subscription:
        return self.connection.subscribe(self.session_id, methods, buffer=buffer,
                                         droppable=droppable, droppable_limit=droppable_limit)


@asynccontextmanager
async def open_cdp_connection(
    ws_url: str, *, headers: dict[str, str] | None = None, handshake_timeout_s: float = 10.0,
) -> AsyncIterator[CdpConnection]:
    """Connect to a browser websocket endpoint and run its reader.

    Sends no Origin header; ``headers`` are added to the handshake (e.g. the
    ``Authorization`` a browserd CDP gateway wants). Raises BrowserGone if the
    handshake fails or takes over ``handshake_timeout_s`` (a user's Chrome
    holds it while it asks its user to allow remote debugging). On exit (or
    cancellation) the socket is closed and pending calls fail with BrowserGone.
    """
    extra = [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    async with trio.open_nursery() as nursery:
        stream: trio.SocketStream | None = None
        try:
            with trio.fail_after(handshake_timeout_s):
                parts = urlsplit(ws_url)
                if parts.scheme == "ws" and parts.hostname:
                    # Our own stream, so a handshake that fails or times out closes it.
                    stream = await trio.open_tcp_stream(parts.hostname, parts.port or 80)
                    resource = parts.path + (f"?{parts.query}" if parts.query else "")
                    ws = await trio_websocket.wrap_client_stream(
                        nursery, stream, parts.netloc, resource or "/",
                        max_message_size=MAX_MESSAGE_SIZE, receive_buffer_size=RECEIVE_BUFFER,
                        extra_headers=extra)
                else:
                    ws = await trio_websocket.connect_websocket_url(
                        nursery, ws_url, max_message_size=MAX_MESSAGE_SIZE,
                        receive_buffer_size=RECEIVE_BUFFER, extra_headers=extra)
        except (trio_websocket.HandshakeError, OSError, trio.TooSlowError) as exc:
            if stream is not None:
                await trio.aclose_forcefully(stream)
            detail = (f"no answer within {handshake_timeout_s:.0f} s"
                      if isinstance(exc, trio.TooSlowError) else str(exc))
            raise BrowserGone(f"cannot connect to the browser at {ws_url}: {detail}") from None
        async with open_cdp_over(ws, ws_url) as conn:
            yield conn
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def open_cdp_over(
    channel: trio_websocket.WebSocketConnection | Transport,
    url: str = "memory",
    *,
    close_transport: bool = True,
) -> AsyncIterator[CdpConnection]:
    """Run a CdpConnection over an open websocket or transport (also the test seam).

    ``close_transport=False`` leaves the transport open on exit (the pipe of a
    launched browser belongs to its BrowserProcess, which still needs it to
    send ``Browser.close``). On exit or cancellation pending calls fail with
    BrowserGone and every subscription ends.
    """
    transport: Transport = (
        WebSocketTransport(channel, url)
        if isinstance(channel, trio_websocket.WebSocketConnection) else channel
    )
    conn = CdpConnection(transport, url, close_transport=close_transport)
    async with trio.open_nursery() as nursery:
        await nursery.start(conn._reader)
        try:
            yield conn
        finally:
            await conn.aclose()
            nursery.cancel_scope.cancel()


__all__ = [
    "CdpConnection",
    "CdpError",
    "CdpEvent",
    "CdpSession",
    "Sink",
    "Subscription",
    "open_cdp_connection",
    "open_cdp_over",
]
