"""The relay's two endpoints on the control port, in front of the API's Guard.

The API's :class:`~browserd.http.guard.Guard` refuses every
``chrome-extension://`` Origin and wants the agent's bearer token; the
extension has neither a web origin nor that token (and must never get it).
So :class:`RelayDoor` wraps the guarded app and answers two paths itself,
with checks of its own; every other request goes on to the Guard unchanged.

``POST /relay/pair`` ``{"code"}`` → ``{"token", "profile", "color",
"groupColor"}``:

a. ``Host`` must be the control host (``127.0.0.1``/``localhost``/``[::1]``
   with the control port): 421 MISDIRECTED_HOST;
b. ``Origin`` must be exactly one ``chrome-extension://<32 letters a-p>``
   (the whole value: no prefix, suffix, path or port): 403 FORBIDDEN_ORIGIN
   (so no web page can pair, and the extension's id is known: it is
   recorded and the relay accepts only that extension later);
c. ``Content-Type: application/json``, a body of at most 4 KiB: 415 / 413;
d. the connection must not have sent its wrong codes already, and the
   code waits for its slot of the shared pace: 429
   TOO_MANY_PAIRING_FAILURES (with ``Connection: close``) / 429
   PAIRING_THROTTLED (with ``Retry-After``), see
   :mod:`browserd.relay.throttle`;
e. the code must be pending: 403 PAIRING_FAILED (see
   :mod:`browserd.relay.pairing` for single use and expiry); the
   connection's third wrong code is answered 429 TOO_MANY_PAIRING_FAILURES
   and closes it. Wrong codes never revoke the pending one.

``GET /relay`` (WebSocket): checks a, then ``Origin`` must be exactly the
``chrome-extension://`` origin of a paired extension (403 before the
handshake). Browsers cannot put headers on a WebSocket, so the relay token
comes in the first message, ``{"type": "hello", "token", "userAgent"}``,
within :data:`HELLO_TIMEOUT_S` (5 s) — never in the URL, which ends up in
logs and histories. No hello in time, a first message that is not a hello,
a token that is not a relay token (the agent's API token included), or one
paired with another extension id than this connection's Origin: answered
``{"type": "refused", "code": "UNAUTHORIZED"}`` and closed 4401; a second
connection for a profile that has one is answered ``RELAY_BUSY`` and
closed 4409. Accepted: ``{"type": "welcome", "profile", "color",
"groupColor"}``, then relay messages both ways (docs/extension.md); the
relay sends ``{"type": "ping"}`` every :data:`PING_EVERY_S` (the extension
answers ``pong``; the traffic also keeps its service worker alive).

A write to the extension stuck for :data:`WRITE_STALL_S` cuts its
connection. When the connection ends for any reason, its transport learns
(:meth:`~browserd.relay.transport.RelayTransport.extension_gone`) and the
hub forgets it. Nothing here logs a token or a code.

Errors raised by the wrapped app propagate unchanged; cancellation (the
server stops) ends every relay connection and every pairing request that
waits for its slot (the slot stays used, nothing is checked).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any

import orjson
import trio

from ..errors import (
    BadRequest,
    BodyTooLarge,
    BrowserdError,
    Forbidden,
    MethodNotAllowed,
    MisdirectedHost,
    PairingFailed,
    RelayBusy,
    UnsupportedMediaType,
)
from ..http.connections import WatchedSender
from ..http.guard import ASGIApp, Message, Receive, Scope, Send, header_values, secure_headers
from .hub import RelayHub, group_colour
from .pairing import EXTENSION_ID_RE
from .throttle import PairingThrottle, PairingThrottled, TooManyPairingFailures
from .transport import RelayTransport

__all__ = ["HELLO_TIMEOUT_S", "PING_EVERY_S", "RELAY_PAIR_PATH", "RELAY_PATH", "WRITE_STALL_S",
           "RelayDoor"]

log = logging.getLogger(__name__)

RELAY_PATH = "/relay"
RELAY_PAIR_PATH = "/relay/pair"
HELLO_TIMEOUT_S = 5.0
PING_EVERY_S = 20.0
WRITE_STALL_S = 30.0
MAX_PAIR_BODY = 4096
OUTBOX_LIMIT = 1000
CLOSE_UNAUTHORIZED = 4401
CLOSE_BUSY = 4409
_POLICY_VIOLATION = 1008
_ORIGIN_RE = re.compile(f"chrome-extension://({EXTENSION_ID_RE.pattern})")


class RelayDoor:
    """ASGI: ``/relay/pair`` and ``/relay`` here, everything else to ``app`` (module docstring)."""

    def __init__(self, app: ASGIApp, hub: RelayHub, *, control_port: int,
                 extra_hosts: Iterable[str] = (),
                 throttle: PairingThrottle | None = None) -> None:
        """``throttle``: the pace of pairing guesses (None: a new one, the defaults)."""
        self._app = app
        self.hub = hub
        self.throttle = throttle if throttle is not None else PairingThrottle()
        hosts = {f"127.0.0.1:{control_port}", f"localhost:{control_port}",
                 f"[::1]:{control_port}", *(h.lower() for h in extra_hosts)}
        if control_port == 80:
            hosts |= {"127.0.0.1", "localhost", "[::1]"}
        self._hosts = frozenset(hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path")
        if scope["type"] == "http" and path == RELAY_PAIR_PATH:
            await self._pair(scope, receive, send)
        elif scope["type"] == "websocket" and path == RELAY_PATH:
            await self._relay(scope, receive, send)
        else:
            await self._app(scope, receive, send)

    # -- checks ----------------------------------------------------------------

    def _check_host(self, scope: Scope) -> None:
        hosts = header_values(scope, b"host")
        if len(hosts) != 1 or hosts[0].lower() not in self._hosts:
            raise MisdirectedHost("this request is not addressed to browserd's control host")

    @staticmethod
    def _extension_origin(scope: Scope) -> str:
        """The extension id of the request's single chrome-extension:// Origin, else 403."""
        origins = header_values(scope, b"origin")
        match = _ORIGIN_RE.fullmatch(origins[0]) if len(origins) == 1 else None
        if match is None:
            raise Forbidden("the relay serves the browserd extension only",
                            hint="pair from the extension's options page")
        return match.group(1)

    # -- POST /relay/pair --------------------------------------------------------

    async def _pair(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            answer = await self._exchange(scope, receive)
            status = 200
        except BrowserdError as exc:
            log.info("relay: pairing refused: %s %s", exc.status, exc.code)
            answer, status = exc.to_dict(), exc.status
            extra = _refusal_headers(scope, exc)
        else:
            extra = []
        body = orjson.dumps(answer)
        await send({"type": "http.response.start", "status": status,
                    "headers": secure_headers([(b"content-type", b"application/json"),
                                               (b"content-length", str(len(body)).encode()),
                                               *extra])})
        await send({"type": "http.response.body", "body": body, "more_body": False})

    async def _exchange(self, scope: Scope, receive: Receive) -> dict[str, Any]:
        self._check_host(scope)
        extension_id = self._extension_origin(scope)
        if scope.get("method") != "POST":
            raise MethodNotAllowed("pairing is POST /relay/pair {code}")
        types = header_values(scope, b"content-type")
        if len(types) != 1 or types[0].partition(";")[0].strip().lower() != "application/json":
            raise UnsupportedMediaType("the pairing request must be JSON")
        raw = b""
        while True:
            message = await receive()
            if message["type"] != "http.request":
                raise BadRequest("the client went away")
            raw += message.get("body", b"")
            if len(raw) > MAX_PAIR_BODY:
                raise BodyTooLarge("the pairing request is too large")
            if not message.get("more_body"):
                break
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise BadRequest("the body is not JSON") from None
        code = data.get("code") if isinstance(data, dict) else None
        if not isinstance(code, str) or not code.strip():
            raise BadRequest("send {\"code\": \"…\"} from `browserd extension pair`",
                             field="code")
        connection = _connection_of(scope)
        await self.throttle.admit(connection)
        try:
            paired, token = self.hub.pairing.exchange(code, extension_id)
        except PairingFailed:
            self.throttle.failed(connection)  # raises on the connection's last wrong code
            raise
        self.throttle.succeeded(connection)
        log.info("relay: extension %s paired with profile %s", extension_id, paired.profile)
        colour = self.hub.colour(paired.profile)
        return {"token": token, "profile": paired.profile, "color": colour,
                "groupColor": group_colour(colour)}

    # -- the /relay WebSocket ----------------------------------------------------

    async def _relay(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            self._check_host(scope)
            extension_id = self._extension_origin(scope)
            if extension_id not in self.hub.pairing.paired_extension_ids():
                raise Forbidden("this extension is not paired with browserd",
                                hint="pair it from its options page")
        except BrowserdError as exc:
            log.info("relay: connection refused: %s %s", exc.status, exc.code)
            await self._refuse_handshake(scope, receive, send, exc)
            return
        first = await receive()
        if first["type"] != "websocket.connect":
            return
        await send({"type": "websocket.accept"})
        await _RelayConnection(self.hub, scope, send, extension_id).run(receive)

    @staticmethod
    async def _refuse_handshake(scope: Scope, receive: Receive, send: Send,
                                error: BrowserdError) -> None:
        first = await receive()
        if first["type"] != "websocket.connect":
            return
        if "websocket.http.response" in scope.get("extensions", {}):
            body = orjson.dumps(error.to_dict())
            await send({"type": "websocket.http.response.start", "status": error.status,
                        "headers": secure_headers([(b"content-type", b"application/json"),
                                                   (b"content-length",
                                                    str(len(body)).encode())])})
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await send({"type": "websocket.close", "code": _POLICY_VIOLATION})


class _RelayConnection:
    """One accepted extension connection: hello, then both directions until it ends."""

    def __init__(self, hub: RelayHub, scope: Scope, send: Send, extension_id: str) -> None:
        self._hub = hub
        self._scope = scope
        self._send = send
        self._extension_id = extension_id
        self._writer = WatchedSender(scope, send, stall_s=WRITE_STALL_S, on_cut=lambda: log.info(
            "relay: the extension stopped reading; cutting its connection"))

    async def run(self, receive: Receive) -> None:
        hello = await self._hello(receive)
        if hello is None:
            return
        paired = self._hub.pairing.lookup(str(hello.get("token") or ""),
                                          extension_id=self._extension_id)
        if paired is None:
            log.info("relay: refused a connection without a valid relay token")
            await self._refuse("UNAUTHORIZED", "not a relay token of this extension; pair "
                               "again from the options page", CLOSE_UNAUTHORIZED)
            return
        profile = paired.profile
        outbox_send, outbox = trio.open_memory_channel[dict[str, Any]](OUTBOX_LIMIT)
        transport = RelayTransport(profile=profile, to_extension=outbox_send,
                                   user_agent=str(hello.get("userAgent") or ""))
        try:
            self._hub.register(profile, transport)
        except RelayBusy as exc:
            await self._refuse(exc.code, exc.message, CLOSE_BUSY)
            return
        reason = "the extension disconnected"
        try:
            colour = self._hub.colour(profile)
            await self._write({"type": "welcome", "profile": profile, "color": colour,
                               "groupColor": group_colour(colour)})
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._write_out, outbox, nursery.cancel_scope)
                nursery.start_soon(self._ping)
                nursery.start_soon(self._writer.watch)
                reason = await self._read_in(receive, transport)
                nursery.cancel_scope.cancel()
        finally:
            transport.extension_gone(reason)
            self._hub.unregister(profile, transport)

    async def _hello(self, receive: Receive) -> dict[str, Any] | None:
        with trio.move_on_after(HELLO_TIMEOUT_S):
            message = await receive()
            if message["type"] != "websocket.receive":
                return None
            data = _decode(message)
            if isinstance(data, dict) and data.get("type") == "hello":
                return data
            await self._refuse("UNAUTHORIZED", "the first message must be hello {token}",
                               CLOSE_UNAUTHORIZED)
            return None
        await self._refuse("UNAUTHORIZED", f"no hello within {HELLO_TIMEOUT_S:.0f} s",
                           CLOSE_UNAUTHORIZED)
        return None

    async def _refuse(self, code: str, message: str, close_code: int) -> None:
        with trio.move_on_after(2):
            await self._write({"type": "refused", "code": code, "message": message})
            await self._send({"type": "websocket.close", "code": close_code})

    async def _read_in(self, receive: Receive, transport: RelayTransport) -> str:
        """Feed the extension's messages to ``transport`` until it goes; the reason."""
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return f"the extension disconnected (code {message.get('code')})"
            if message["type"] != "websocket.receive":
                continue
            data = _decode(message)
            if not isinstance(data, dict):
                log.info("relay %s: dropped a message that is not a JSON object",
                         transport.profile)
            elif data.get("type") != "pong":
                transport.deliver(data)

    async def _write_out(self, outbox: trio.MemoryReceiveChannel[dict[str, Any]],
                         done: trio.CancelScope) -> None:
        """Write the transport's messages; when browserd closes it, close the socket (1000)."""
        async for message in outbox:
            await self._write(message)
        with trio.move_on_after(2):
            await self._send({"type": "websocket.close", "code": 1000})
        done.cancel()

    async def _ping(self) -> None:
        while True:
            await trio.sleep(PING_EVERY_S)
            await self._write({"type": "ping"})

    async def _write(self, message: dict[str, Any]) -> None:
        """One text frame (FIFO under a lock; :meth:`_watch_stalled_writes` watches it)."""
        frame = orjson.dumps(message).decode()
        await self._writer.send_text(frame)


def _connection_of(scope: Scope) -> tuple[str, int] | None:
    """The request's TCP connection (the client's address and port), None if unknown."""
    client = scope.get("client")
    if isinstance(client, (tuple, list)) and len(client) == 2 and isinstance(client[1], int):
        return str(client[0]), client[1]
    return None


def _refusal_headers(scope: Scope, error: BrowserdError) -> list[tuple[bytes, bytes]]:
    """Headers a throttle refusal adds: ``Retry-After``, ``Connection: close`` (HTTP/1.x)."""
    if isinstance(error, PairingThrottled):
        return [(b"retry-after", str(error.retry_after_s).encode())]
    if isinstance(error, TooManyPairingFailures) and scope.get("http_version", "1.1") in (
            "1.0", "1.1"):  # HTTP/2 forbids the header; the connection stays refused
        return [(b"connection", b"close")]
    return []


def _decode(message: Message) -> Any:
    raw = message.get("text")
    if raw is None:
        raw = message.get("bytes") or b""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None

