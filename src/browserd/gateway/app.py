"""The CDP gateway's ASGI app and its server on the CDP port.

Routes (every one behind :class:`~browserd.http.guard.Guard`: bearer token,
Host must be ``127.0.0.1|localhost|[::1]:<cdp port>``, no foreign Origin):

- ``GET /json/version`` — ``{"Browser", "Protocol-Version", "User-Agent",
  "webSocketDebuggerUrl"}``; the URL names this gateway (Host as sent).
- ``GET /json/list`` and ``GET /json`` — the *listed* tabs (as ``/tabs``
  shows them) of the client's reach, each with ``webSocketDebuggerUrl`` on
  this gateway.
- WebSocket ``/devtools/browser/<id>`` (``<id>`` from ``/json/version``) and
  ``/devtools/page/<targetId>`` (a listed tab's exact id) — see
  :mod:`browserd.gateway.client`.

Who may: the request's principal (the Guard leaves it in the ASGI scope
under :data:`~browserd.principals.PRINCIPAL_KEY`; absent, an agent bound to
no session) needs the ``cdp`` scope (403 SCOPE_REQUIRED otherwise, the
person's owner token included) and to see this gateway's profile (404
PROFILE_NOT_FOUND otherwise, as if it did not exist). A token bound to sessions reaches their
browser contexts only (and those its client creates): ``/json/list`` lists
their tabs, a page endpoint of any other tab is 404, and the client's
targets are scoped to them (:mod:`browserd.gateway.targets`); a token bound
to no session reaches every context.

Anything else is 404; a method other than GET/HEAD is 405. With no running
browser the answer is the control API's 503 (BROWSER_NOT_RUNNING …), for
a WebSocket handshake too (as an HTTP response, before any upgrade).

Cancellation: a cancelled connection detaches its sessions (shielded,
bounded) and ends; the server itself stops with ``shutdown``.
"""

from __future__ import annotations

import errno
import logging
import secrets
import time
from collections.abc import MutableMapping
from typing import Any

import orjson
import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio import serve as hypercorn_serve

from ..browser.ports import find_port_holder, port_is_free
from ..errors import (
    BrowserdError,
    MethodNotAllowed,
    NotFound,
    PortInUse,
    ProfileNotFound,
    TabNotFound,
)
from ..http.guard import Guard, secure_headers
from ..principals import PRINCIPAL_KEY, Principal, require
from ..supervisor.runtime import BrowserRuntime
from ..system import System
from ..tabs.actor import TabInfo
from ..tabs.scope import TabScope
from ..tls import server_tls
from .client import ClientGone, GatewayClient, attach_root

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]

DRAIN_S = 2.0
#: Largest message a gateway client may send (commands are small; files via
#: DOM.setFileInputFiles name paths, not bytes).
MAX_CLIENT_MESSAGE_BYTES = 64 * 1024 * 1024
WS_NORMAL, WS_GOING_AWAY, WS_INTERNAL, WS_TRY_AGAIN = 1000, 1001, 1011, 1013
PROTOCOL_VERSION = "1.3"
#: The principal of a request the Guard did not name one for.
_UNBOUND_AGENT = Principal(kind="agent", name="gateway")
_JSON_ROUTES = frozenset({"/json/version", "/json/list", "/json"})


class GatewayApp:
    """ASGI app of the gateway (unguarded: :func:`serve_gateway` wraps it)."""

    def __init__(self, system: System) -> None:
        self._system = system
        #: The id in ``/devtools/browser/<id>``: one per service run.
        self.browser_id = secrets.token_hex(16)
        self.clients = 0

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await _lifespan(receive, send)
        elif kind == "http":
            await self._http(scope, send)
        elif kind == "websocket":
            await self._websocket(scope, receive, send)

    # -- HTTP --------------------------------------------------------------------

    async def _http(self, scope: Scope, send: Any) -> None:
        started, code = time.perf_counter(), "ok"
        try:
            if scope.get("method") not in ("GET", "HEAD"):
                raise MethodNotAllowed("the CDP gateway answers GET only")
            body: Any = self._json_route(scope)
            status = 200
        except BrowserdError as exc:
            body, status, code = exc.to_dict(), exc.status, exc.code
        path, method = str(scope.get("path", "")).rstrip("/"), scope.get("method")
        self._system.metrics.observe_call(
            "cdp", path if path in _JSON_ROUTES else "other",
            method if method in ("GET", "HEAD") else "other", code, time.perf_counter() - started)
        data = orjson.dumps(body)
        await send({"type": "http.response.start", "status": status, "headers": secure_headers([
            (b"content-type", b"application/json"),
            (b"content-length", str(len(data)).encode()),
        ])})
        await send({"type": "http.response.body",
                    "body": b"" if scope.get("method") == "HEAD" else data})

    def _json_route(self, scope: Scope) -> Any:
        self._admit(scope)
        path = str(scope.get("path", "")).rstrip("/")
        host = _host(scope)
        ws = "wss" if scope.get("scheme") == "https" else "ws"  # the gateway on TLS: wss
        if path == "/json/version":
            runtime = self._system.require_runtime()
            return {
                "Browser": runtime.version,
                "Protocol-Version": PROTOCOL_VERSION,
                "User-Agent": runtime.user_agent,
                "webSocketDebuggerUrl": f"{ws}://{host}/devtools/browser/{self.browser_id}",
            }
        if path in ("/json", "/json/list"):
            runtime = self._system.require_runtime()
            return [{
                "description": "",
                "id": info.target_id,
                "title": info.title,
                "type": "page",
                "url": info.url,
                "webSocketDebuggerUrl": f"{ws}://{host}/devtools/page/{info.target_id}",
            } for info in self._listed(runtime, self._reach(scope, runtime))]
        raise NotFound("no such CDP gateway route",
                       hint="GET /json/version, GET /json/list, or a /devtools/… WebSocket")

    # -- WebSocket ---------------------------------------------------------------

    async def _websocket(self, scope: Scope, receive: Any, send: Any) -> None:
        first = await receive()
        if first["type"] != "websocket.connect":
            return
        path = str(scope.get("path", ""))
        try:
            self._admit(scope)
            runtime = self._system.require_runtime()
            contexts = self._reach(scope, runtime)
            target_id = self._endpoint(path, runtime, contexts)
            if target_id is None:
                await runtime.tabs.suspend_spare()
            try:
                root = await attach_root(runtime.connection, target_id)
            except BaseException:
                if target_id is None:
                    runtime.tabs.resume_spare()
                raise
        except BrowserdError as exc:
            await _refuse_handshake(scope, send, exc)
            return
        self.clients += 1
        # The service's policy (every profile's gateway port is blocked) and this
        # profile's downloads directory.
        client = GatewayClient(runtime.connection, self._system.url_policy, root=root,
                               describe=f"{'browser' if target_id is None else 'page'} endpoint",
                               downloads_dir=self._system.downloads.directory,
                               downloads_enabled=self._system.downloads.enabled,
                               downloads=runtime.downloads, navguard=runtime.navguard,
                               contexts=contexts, uploads=self._system.uploads.resolve,
                               browser_root=target_id is None, observe=self._count_command)
        close_code = WS_NORMAL
        try:
            await send({"type": "websocket.accept"})
            await client.run(_receiver(receive), _sender(send))
            if client.overflowed:
                close_code = WS_TRY_AGAIN
            elif runtime.connection.is_closed:
                close_code = WS_GOING_AWAY
        finally:
            self.clients -= 1
            if target_id is None:
                runtime.tabs.resume_spare()
            with trio.CancelScope(shield=True, deadline=trio.current_time() + 1):
                try:
                    await send({"type": "websocket.close", "code": close_code})
                except Exception:  # the client is already gone
                    pass

    def _count_command(self, method: str, code: str, seconds: float) -> None:
        """One gateway command in ``/metrics`` (lane ``cdp``; ``method``: allowlisted or other)."""
        self._system.metrics.observe_call("cdp", method, "CDP", code, seconds)

    def _admit(self, scope: Scope) -> None:
        """Raise ScopeRequired (no ``cdp`` scope) or ProfileNotFound (not its profile)."""
        principal = _principal(scope)
        require(principal, "cdp", what="the CDP gateway")
        name = self._system.profile.name
        if not principal.sees_profile(name):
            raise ProfileNotFound(f"no profile {name!r}", hint="GET /profiles lists them")

    def _reach(self, scope: Scope, runtime: BrowserRuntime) -> frozenset[str] | None:
        """The browser contexts the request's principal reaches (None: every one)."""
        sessions = _principal(scope).sessions
        if sessions is None:
            return None
        return frozenset(s.context_id for s in self._system.profile.sessions.live(runtime)
                         if s.session_id in sessions)

    def _scopes(self, runtime: BrowserRuntime, contexts: frozenset[str] | None,
                ) -> list[TabScope]:
        """The tab scopes of ``contexts`` (None: the default scope and every session's)."""
        if contexts is None:
            contexts = frozenset(s.context_id
                                 for s in self._system.profile.sessions.live(runtime))
            return [runtime.tabs, *(runtime.scope(c) for c in sorted(contexts))]
        return [runtime.scope(c) for c in sorted(contexts)]

    def _listed(self, runtime: BrowserRuntime, contexts: frozenset[str] | None,
                ) -> list[TabInfo]:
        return [info for tabs in self._scopes(runtime, contexts) for info in tabs.infos()]

    def _endpoint(self, path: str, runtime: BrowserRuntime,
                  contexts: frozenset[str] | None) -> str | None:
        """The target a WebSocket path names (None: the browser).

        Raises NotFound (TabNotFound for a page out of the client's reach).
        """
        kind, _, ident = path.removeprefix("/devtools/").partition("/")
        if kind == "browser" and path.startswith("/devtools/") and ident == self.browser_id:
            return None
        if kind == "page" and path.startswith("/devtools/") and ident:
            if any(ident in tabs.target_ids() for tabs in self._scopes(runtime, contexts)):
                return ident
            raise TabNotFound(f"no tab {ident!r}", hint="use an id from /json/list")
        raise NotFound("no such CDP endpoint",
                       hint="take webSocketDebuggerUrl from /json/version or /json/list")


def _principal(scope: Scope) -> Principal:
    """Who is asking, as the Guard found it; absent (no guard): an agent bound to no session."""
    found = scope.get(PRINCIPAL_KEY)
    return found if isinstance(found, Principal) else _UNBOUND_AGENT


def _receiver(receive: Any) -> Any:
    async def next_message() -> str | bytes | None:
        message = await receive()
        if message["type"] != "websocket.receive":
            return None
        text = message.get("text")
        return text if text is not None else message.get("bytes") or b""
    return next_message


def _sender(send: Any) -> Any:
    async def send_text(text: str) -> None:
        try:
            await send({"type": "websocket.send", "text": text})
        except Exception as exc:  # hypercorn: the client went away
            raise ClientGone(str(exc)) from None
    return send_text


def _host(scope: Scope) -> str:
    for name, value in scope.get("headers", ()):
        if bytes(name).lower() == b"host":
            return bytes(value).decode("latin-1").strip().lower()
    return "127.0.0.1"


async def _refuse_handshake(scope: Scope, send: Any, exc: BrowserdError) -> None:
    log.info("gateway refused %s: %s %s", str(scope.get("path", ""))[:120], exc.status, exc.code)
    if "websocket.http.response" in scope.get("extensions", {}):
        body = orjson.dumps(exc.to_dict())
        await send({"type": "websocket.http.response.start", "status": exc.status,
                    "headers": secure_headers([(b"content-type", b"application/json"),
                                               (b"content-length", str(len(body)).encode())])})
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008})


async def _lifespan(receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def check_gateway_port(port: int) -> None:
    """Raise PortInUse naming the holder when ``127.0.0.1:port`` is taken."""
    if not port_is_free(port):
        holder = find_port_holder(port)
        raise PortInUse(
            f"CDP gateway port {port} is already held by {holder.describe()}",
            hint="stop that process, choose another cdp_port, or set cdp_gateway = false",
        )


async def serve_gateway(
    system: System, token: str, shutdown: trio.Event, *,
    task_status: trio.TaskStatus[Any] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the guarded gateway on ``127.0.0.1:<cdp port>`` until ``shutdown``.

    ``task_status.started`` once the socket is bound. Raises PortInUse when
    the port is taken (checked first, and again if the bind itself fails).
    """
    port = system.settings.effective_cdp_port
    check_gateway_port(port)
    app: Any = Guard(GatewayApp(system), token=token, control_port=port, open_paths=frozenset(),
                     owner_token=system.owner_token, tokens=system.tokens)
    config = HypercornConfig()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    config.graceful_timeout = DRAIN_S
    config.websocket_max_message_size = MAX_CLIENT_MESSAGE_BYTES
    tls = server_tls(system.settings, system.paths)
    if tls is not None:
        tls.apply(config)  # the control API's certificate: https:// and wss:// here too
    try:
        await hypercorn_serve(app, config, shutdown_trigger=shutdown.wait,
                              task_status=task_status)
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        holder = find_port_holder(port)
        raise PortInUse(f"CDP gateway port {port} is already held by {holder.describe()}",
                        hint="choose another cdp_port, or set cdp_gateway = false") from None


__all__ = ["GatewayApp", "check_gateway_port", "serve_gateway"]
