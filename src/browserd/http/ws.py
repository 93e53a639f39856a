"""``GET /ws``: JSON-RPC 2.0 over one WebSocket, on the same handlers as HTTP.

The Guard has already checked the handshake (Host, Origin, the token in the
``Authorization`` header). A request is ``{"jsonrpc": "2.0", "id", "method",
"params"}`` with ``method`` an operation name of :mod:`browserd.http.catalog`
(the name the route declares: ``eval``, ``tabs_open``, ``cookies_get``; the
former spellings ``tabs/open``, ``cookies/get`` still work) and ``params`` its
fields as an object.
Each request runs in its own task, so many are in flight per connection
(at most :data:`MAX_IN_FLIGHT`; more are answered OVERLOADED at once); answers
go out as they finish, matched by ``id``. A request without an ``id`` is a
notification: it runs, nothing is answered.

The calls work in the profile and session the handshake names in its
``X-Browserd-Profile`` / ``X-Browserd-Session`` headers (a bad value: each
call is -32602 BAD_REQUEST), else in the default profile and the token's own
session (a token bound to one session). Every call is counted in
``/metrics`` (lane ``ws``: its route's name, or ``subscribe``/``unsubscribe``,
or ``other``; its code).

Two methods of the lane itself: ``subscribe {types?, profile?, lastEventId?}``
(one subscription per connection; a second replaces the first) pushes every
event as a notification ``{"method": "event", "params": {id, type, …}}``;
``unsubscribe`` stops it. A subscriber that falls behind is dropped by the hub
and told so with ``{"method": "subscription.dropped", "params": {lastEventId}}``.

Errors: -32700 for text that is not JSON, -32600 for a message that is not a
request (batches are not supported: send calls concurrently instead), -32601
for an unknown method, and browserd's own errors as -32602 (400s: bad params)
or -32000 with ``data: {code, status, hint, …}``. A message over
:data:`MAX_MESSAGE_BYTES` closes the connection (1009).

A client that stops reading: its calls wait for room in the outbox, its
subscription is dropped by the hub, and once one write to it has been stuck
for :data:`WRITE_STALL_S` its connection is cut
(:func:`~browserd.http.connections.abort_connection`; the server's write would
otherwise never return). When the service stops, a connection that has not
closed within :data:`ABORT_GRACE_S` is cut the same way.

Cancellation: when the client goes away (or the service stops) every call in
flight is cancelled, as a closed HTTP request would be, and the subscription
ends.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import orjson
import trio

from .. import jsontext
from ..errors import BadRequest, BrowserdError, NotFound, Overloaded
from ..events import Subscription, parse_types
from ..principals import OWNER, principal_of, require
from ..system import System
from .catalog import Operation, catalog, lookup
from .connections import WatchedSender, abort_connection
from .dispatch import audit, call_operation, header_binding
from .guard import Receive, Scope, Send

__all__ = ["ABORT_GRACE_S", "MAX_IN_FLIGHT", "MAX_MESSAGE_BYTES", "PARSE_ERROR",
           "WRITE_STALL_S", "WsLane", "rpc_error"]

log = logging.getLogger(__name__)

MAX_IN_FLIGHT = 64
WRITE_STALL_S = 30.0
ABORT_GRACE_S = 2.0
MAX_MESSAGE_BYTES = 1024 * 1024
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, SERVER_ERROR = (
    -32700, -32600, -32601, -32602, -32000)
_TOO_BIG = 1009
_LANE_METHODS = frozenset({"subscribe", "unsubscribe"})


def rpc_error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _domain_rpc_error(request_id: Any, exc: BrowserdError) -> dict[str, Any]:
    data = {**exc.to_dict(), "status": exc.status}
    data.pop("error", None)
    code = INVALID_PARAMS if exc.status == 400 else SERVER_ERROR
    return rpc_error(request_id, code, exc.message, data)


class WsLane:
    """The ``/ws`` endpoint of one service (module docstring)."""

    def __init__(self, system: System) -> None:
        self.system = system
        self.operations: dict[str, Operation] = catalog()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        first = await receive()
        if first["type"] != "websocket.connect":
            return
        principal = principal_of(scope)
        if principal is None:
            await send({"type": "websocket.close", "code": 1008})
            return
        await send({"type": "websocket.accept"})
        audit(self.system, who=principal.name, method="WS", path="/ws", args={}, outcome="open",
              started=time.perf_counter())
        await _Connection(self, scope, send).run(receive)


class _Connection:
    """One WebSocket: its calls in flight, its writes and its subscription."""

    def __init__(self, lane: WsLane, scope: Scope, send: Send) -> None:
        self._lane = lane
        self._scope = scope
        self._system = lane.system
        self._principal = principal_of(scope) or OWNER
        self._send = send
        # One frame at a time, FIFO (answers keep their order); a stuck write cuts it off.
        self._writer = WatchedSender(scope, send, stall_s=WRITE_STALL_S)
        self._in_flight = 0
        self._subscription: Subscription | None = None
        self._nursery: trio.Nursery | None = None

    async def run(self, receive: Receive) -> None:
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._watch_service_stop)
                nursery.start_soon(self._writer.watch)
                while True:
                    message = await receive()
                    kind = message["type"]
                    if kind == "websocket.disconnect":
                        break
                    if kind != "websocket.receive":
                        continue
                    raw = message.get("text")
                    data = raw.encode() if isinstance(raw, str) else message.get("bytes") or b""
                    if len(data) > MAX_MESSAGE_BYTES:
                        await self._send({"type": "websocket.close", "code": _TOO_BIG})
                        break
                    await self._on_message(data)
                nursery.cancel_scope.cancel()
        finally:
            if self._subscription is not None:
                self._subscription.close()

    async def _watch_service_stop(self) -> None:
        """End the connection when the service stops (the hub closes): 1001 going away."""
        await self._system.events.wait_closed()
        assert self._nursery is not None
        self._nursery.cancel_scope.cancel()

        async def cut_when_stuck() -> None:
            await trio.sleep(ABORT_GRACE_S)
            abort_connection(self._scope)

        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as closing:
                closing.start_soon(cut_when_stuck)
                await self._send({"type": "websocket.close", "code": 1001})
                closing.cancel_scope.cancel()

    async def _answer(self, body: dict[str, Any]) -> None:
        """Write one frame (callers wait their turn: a client that stops reading holds
        them up, its subscription is dropped, and a write stuck too long cuts it off)."""
        frame = jsontext.dumps(body, option=orjson.OPT_NON_STR_KEYS).decode()
        await self._writer.send_text(frame)

    async def _on_message(self, data: bytes) -> None:
        try:
            message = jsontext.loads(data)
        except ValueError as exc:
            self._count("", BadRequest.code, time.perf_counter())
            await self._answer(rpc_error(None, PARSE_ERROR, f"parse error: {exc}"))
            return
        if not isinstance(message, dict):
            self._count("", BadRequest.code, time.perf_counter())
            await self._answer(rpc_error(None, INVALID_REQUEST, "a request must be a JSON "
                                         "object (batches are not supported; send calls "
                                         "concurrently instead)"))
            return
        request_id = message.get("id")
        method = message.get("method")
        if message.get("jsonrpc") != "2.0" or not isinstance(method, str) or not (
                request_id is None or isinstance(request_id, (str, int))) or isinstance(
                request_id, bool):
            self._count("", BadRequest.code, time.perf_counter())
            await self._answer(rpc_error(request_id if isinstance(request_id, (str, int))
                                         else None, INVALID_REQUEST,
                                         'not a JSON-RPC 2.0 request: {"jsonrpc": "2.0", '
                                         '"id", "method", "params"}'))
            return
        params = message.get("params", {})
        if self._in_flight >= MAX_IN_FLIGHT:
            error = Overloaded(f"{MAX_IN_FLIGHT} calls are already in flight on this "
                               "connection", hint="wait for answers, or open another connection")
            self._count(method, error.code, time.perf_counter())
            if request_id is not None:
                await self._answer(_domain_rpc_error(request_id, error))
            return
        self._in_flight += 1
        assert self._nursery is not None
        self._nursery.start_soon(self._call, request_id, method, params)

    async def _call(self, request_id: Any, method: str, params: Any) -> None:
        started = time.perf_counter()
        code = "cancelled"
        try:
            try:
                result = await self._dispatch(method, params)
                code = "ok"
            except _MethodNotFound:
                code = NotFound.code
                answer = rpc_error(request_id, METHOD_NOT_FOUND, f"no method {method!r}",
                                   {"hint": "methods are the routes' names, e.g. eval, "
                                            "tabs_open (x-browserd-name in GET "
                                            "/openapi.json)"})
            except BrowserdError as exc:
                code = exc.code
                answer = _domain_rpc_error(request_id, exc)
            else:
                answer = {"jsonrpc": "2.0", "id": request_id, "result": result}
            if request_id is not None:
                await self._answer(answer)
        finally:
            self._in_flight -= 1
            self._count(method, code, started)

    def _count(self, method: str, code: str, started: float) -> None:
        """The call in ``/metrics``: by its route's name (or lane method, or ``other``) and
        code."""
        op = lookup(self._lane.operations, method)
        route, verb = ((op.name, op.http_method) if op is not None
                       else (method, "WS") if method in _LANE_METHODS else ("other", "WS"))
        self._system.metrics.observe_call("ws", route, verb, code,
                                          time.perf_counter() - started)

    async def _dispatch(self, method: str, params: Any) -> Any:
        if method == "subscribe":
            return self._subscribe(params)
        if method == "unsubscribe":
            had = self._subscription is not None
            if self._subscription is not None:
                self._subscription.close()
                self._subscription = None
            return {"ok": True, "subscribed": had}
        op = lookup(self._lane.operations, method)
        if op is None:
            raise _MethodNotFound
        profile, session = header_binding(self._scope)
        return await call_operation(self._system, op, params, lane="WS",
                                    principal=self._principal, profile=profile,
                                    session=session)

    def _subscribe(self, params: Any) -> dict[str, Any]:
        require(self._principal, "read", what="WS subscribe")  # events carry titles and URLs
        if params is None:
            params = {}
        if not isinstance(params, dict) or set(params) - {"types", "profile", "lastEventId"}:
            raise BadRequest("subscribe takes {types?, profile?, lastEventId?}", field="params")
        types_raw = params.get("types") or []
        last_id = params.get("lastEventId")
        profile = params.get("profile")
        if not isinstance(types_raw, list) or not all(isinstance(t, str) for t in types_raw):
            raise BadRequest("types must be a list of event types", field="types")
        if last_id is not None and (isinstance(last_id, bool) or not isinstance(last_id, int)
                                    or last_id < 0):
            raise BadRequest("lastEventId must be an event id", field="lastEventId")
        if profile is not None and not isinstance(profile, str):
            raise BadRequest("profile must be a string", field="profile")
        try:
            types = parse_types(types_raw)
        except ValueError as exc:
            raise BadRequest(str(exc), field="types") from None
        if self._subscription is not None:
            self._subscription.close()
        hub = self._system.events
        profile = self._principal.events_profile(profile)  # a limited token: its profiles
        sub = hub.subscribe(last_id=last_id, types=types, profile=profile)
        self._subscription = sub
        assert self._nursery is not None
        self._nursery.start_soon(self._forward, sub)
        return {"ok": True, "lastEventId": hub.last_id}

    async def _forward(self, sub: Subscription) -> None:
        """Push ``sub``'s events as notifications until it ends; say so if it was dropped."""
        last = 0
        async for event in sub:
            last = event.id or last
            await self._answer({"jsonrpc": "2.0", "method": "event", "params": event.to_json()})
        if sub.dropped:
            await self._answer({"jsonrpc": "2.0", "method": "subscription.dropped",
                                "params": {"lastEventId": last}})


class _MethodNotFound(Exception):
    pass
