"""The control API's gatekeeper: one ASGI middleware in front of everything.

:class:`Guard` wraps the whole ASGI app, so every route, every 404, every
``OPTIONS`` and every websocket handshake passes through it. A request the
guard refuses never reaches the app (no side effect); the refusal is a JSON
error body ``{"error", "code", "hint"}``.

Checks, in order (http scopes; websockets get a-d):

a. ``Host`` must be ``127.0.0.1:PORT``, ``localhost:PORT`` or ``[::1]:PORT``
   (PORT = the control port; case-insensitive; exactly one header). Anything
   else, or none, is 421 MISDIRECTED_HOST: this is what defeats DNS rebinding.
   Over TLS (the connection's ASGI ``scheme`` is ``https``/``wss``) port 443
   may be left out, as port 80 may over plain HTTP.
b. ``Origin``, when present, must be ``http://`` + one of those hosts
   (``https://`` over TLS: the scheme of the connection it came in on); any
   other (``null``, another port, another site) is 403 FORBIDDEN_ORIGIN, and
   so is ``Sec-Fetch-Site: cross-site`` or ``same-site`` (another local port
   is "same-site").
c. ``GET``/``HEAD`` on an open path (``/healthz``) passes without a token.
   Paths a :class:`SessionGate` claims (the ops page, ``/ui``) are decided
   by that gate instead of d (a person's session, never the bearer token).
d. ``Authorization: Bearer <token>``, looked up in the
   :class:`~browserd.principals.TokenStore` (the owner token, the default
   agent token, minted tokens by hash; constant-time compares); a token in
   the query string is ignored. Missing or wrong is 401 UNAUTHORIZED with
   ``WWW-Authenticate: Bearer``; a revoked or expired minted token is 401
   TOKEN_REVOKED / TOKEN_EXPIRED. Once 20 wrong credentials arrived within
   10 s, further wrong ones are answered 429 TOO_MANY_AUTH_FAILURES until the
   window has 20 or fewer again (every wrong attempt counts, so a client that
   keeps guessing stays blocked). A request without any Authorization header
   is not a guess and is always a plain 401. A right token always passes.
   The request's :class:`~browserd.principals.Principal` (the person for the
   owner token and the ops page's sessions, else the agent) is left in the
   ASGI scope under :data:`~browserd.principals.PRINCIPAL_KEY`; what it may
   do is decided per route (the scope it needs, :attr:`Route.needs`), on every
   lane alike. The app runs inside the store's cancel scope for that
   principal, so revoking a token ends its open requests and connections.
e. ``OPTIONS`` (CORS preflight) is 405; no CORS headers are ever sent.
f. A request with a body (``Content-Length`` > 0 or ``Transfer-Encoding``)
   must be ``Content-Type: application/json`` (parameters allowed), else 415;
   a body-less request may carry any type or none. A declared length above
   ``max_body_bytes`` is 413 up front; a streamed body is counted as the app
   reads it and, past the limit, answered 413 (if the response has not
   started) while the app is told the client disconnected.
g. Every response (the app's and the guard's) loses any ``Access-Control-*``
   header and gains ``X-Content-Type-Options: nosniff``,
   ``Cache-Control: no-store`` and ``Referrer-Policy: no-referrer``.

Neither token ever appears in a response or a log line (refusals are logged at
INFO with method, path and reason; any occurrence of the token is redacted).

Cancellation: the guard holds no resources of its own; a cancelled request
unwinds through it unchanged. Errors raised by the wrapped app propagate to
the server unchanged.
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any, Protocol

import attrs
import orjson
import trio

from ..errors import (
    BadRequest,
    BodyTooLarge,
    BrowserdError,
    ConfigError,
    Forbidden,
    MethodNotAllowed,
    MisdirectedHost,
    Unauthorized,
    UnsupportedMediaType,
)
from ..principals import OWNER, PRINCIPAL_KEY, Principal, TokenStore
from ..token import MIN_TOKEN_CHARS, tokens_equal

__all__ = [
    "AUTH_FAILURE_LIMIT", "AUTH_FAILURE_WINDOW_S", "WS_POLICY_VIOLATION", "WS_TOKEN_REVOKED",
    "ASGIApp", "Guard", "Headers", "Message", "Receive", "Scope", "Send", "SessionGate",
    "header_values", "secure_headers",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]

AUTH_FAILURE_LIMIT = 20
AUTH_FAILURE_WINDOW_S = 10.0
WS_POLICY_VIOLATION = 1008
#: The close code of a WebSocket whose token was revoked (or expired) while it was open.
WS_TOKEN_REVOKED = 4401

log = logging.getLogger(__name__)

_SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"cache-control", b"no-store"),
    (b"referrer-policy", b"no-referrer"),
)
_REPLACED = frozenset(name for name, _ in _SECURITY_HEADERS)
_OPEN_METHODS = frozenset({"GET", "HEAD"})
_CROSS_SITE = frozenset({"cross-site", "same-site"})


class SessionGate(Protocol):
    """Decides the requests of its own paths in place of the bearer token (check d)."""

    def applies(self, path: str) -> bool:
        """True when the request path is this gate's."""
        ...

    def check(self, scope: Scope) -> BrowserdError | None:
        """None to let the request through, else the error to refuse it with."""
        ...


def secure_headers(headers: Iterable[Iterable[bytes]]) -> Headers:
    """``headers`` without ``Access-Control-*`` (and ours), plus the security headers."""
    out: Headers = []
    for pair in headers:
        name, value = pair
        lname = bytes(name).lower()
        if lname.startswith(b"access-control-") or lname in _REPLACED:
            continue
        out.append((bytes(name), bytes(value)))
    out.extend(_SECURITY_HEADERS)
    return out


@attrs.frozen(kw_only=True)
class _Refusal:
    """A response the guard sends instead of calling the app."""

    status: int
    code: str
    body: bytes
    headers: tuple[tuple[bytes, bytes], ...] = ()

    @classmethod
    def of(cls, err: BrowserdError, *headers: tuple[bytes, bytes]) -> _Refusal:
        return cls(status=err.status, code=err.code, body=orjson.dumps(err.to_dict()),
                   headers=headers)


@attrs.define
class _Exchange:
    """Per-request bookkeeping shared by the wrapped receive and send."""

    response_started: bool = False
    guard_responded: bool = False
    body_cut_off: bool = False
    body_bytes: int = 0


def _may_have_body(scope: Scope) -> bool:
    """True unless the request declares no body (no Transfer-Encoding, length 0 or none)."""
    if header_values(scope, b"transfer-encoding"):
        return True
    lengths = header_values(scope, b"content-length")
    return bool(lengths) and lengths[0] not in ("0", "")


def header_values(scope: Scope, name: bytes) -> list[str]:
    """Every value of header ``name`` (lowercase bytes) in an ASGI scope, stripped."""
    return [
        bytes(v).decode("latin-1").strip()
        for n, v in scope.get("headers", ())
        if bytes(n).lower() == name
    ]


class Guard:
    """ASGI middleware enforcing the control API's request policy (module docstring).

    ``auth_failures`` counts requests refused 401/429 for a missing or wrong
    token since construction. Raises ConfigError on construction for a token
    shorter than 20 characters or a port outside 1..65535.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str,
        control_port: int,
        open_paths: frozenset[str] = frozenset({"/healthz"}),
        max_body_bytes: int = 1_048_576,
        clock: Callable[[], float] = time.monotonic,
        extra_hosts: Iterable[str] = (),
        session_gate: SessionGate | None = None,
        owner_token: str | None = None,
        tokens: TokenStore | None = None,
    ) -> None:
        """``extra_hosts``: further ``host:port`` names to accept (only for an
        explicitly opted-in non-loopback control URL). ``session_gate``: the
        ops page's gate for its paths (None: every path needs the token).
        ``owner_token``: the person's token (None: there is no person's
        credential). ``tokens``: the service's token store (None: one of
        ``token`` and ``owner_token`` alone)."""
        if len(token) < MIN_TOKEN_CHARS:
            raise ConfigError("the API token is missing or too short; refusing to serve")
        if not 1 <= control_port <= 65535:
            raise ConfigError(f"control port {control_port} is out of range")
        self._app = app
        self._token = token
        if owner_token is not None and (len(owner_token) < MIN_TOKEN_CHARS
                                        or tokens_equal(owner_token, token)):
            raise ConfigError("the owner token is missing, too short or the agent's token")
        self._owner_token = owner_token
        self._tokens = tokens if tokens is not None else TokenStore(
            None, agent_token=token, owner_token=owner_token)
        self._port = control_port
        hosts = (f"127.0.0.1:{control_port}", f"localhost:{control_port}",
                 f"[::1]:{control_port}")
        self._hosts = frozenset(hosts) | {h.lower() for h in extra_hosts}
        bare = {h.rsplit(":", 1)[0] for h in self._hosts}  # the default port left out
        self._tls_hosts = self._hosts | (bare if control_port == 443 else set())
        if control_port == 80:
            self._hosts |= {"127.0.0.1", "localhost", "[::1]"}
        self._origins = frozenset(f"http://{h}" for h in self._hosts)
        self._tls_origins = frozenset(f"https://{h}" for h in self._tls_hosts)
        self._open_paths = frozenset(open_paths)
        self._max_body = max_body_bytes
        self._clock = clock
        self._session_gate = session_gate
        self._recent_failures: deque[float] = deque(maxlen=AUTH_FAILURE_LIMIT)
        self.auth_failures = 0

    def __repr__(self) -> str:
        return f"<Guard port={self._port} open_paths={sorted(self._open_paths)}>"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the request, then run the app or send the refusal.

        Raises RuntimeError for an ASGI scope type other than http, websocket
        or lifespan (nothing unknown is passed through).
        """
        kind = scope["type"]
        if kind == "lifespan":
            await self._app(scope, receive, send)
            return
        scope.pop(PRINCIPAL_KEY, None)  # only this guard says who is asking
        if kind == "websocket":
            await self._websocket(scope, receive, send)
            return
        if kind != "http":
            raise RuntimeError(f"Guard: unsupported ASGI scope type {kind!r}")
        refusal = self._check_request(scope) or self._check_http_extras(scope)
        if refusal is not None:
            self._log_refusal(scope, refusal)
            await self._send_http_refusal(scope, send, refusal)
            return
        await self._run_http(scope, receive, send)

    # -- checks ----------------------------------------------------------------

    def _check_request(self, scope: Scope) -> _Refusal | None:
        """Checks a-d, shared by http and websocket; None means "let it through"."""
        port = self._port
        tls = scope.get("scheme") in ("https", "wss")
        hosts = header_values(scope, b"host")
        if len(hosts) != 1 or hosts[0].lower() not in (self._tls_hosts if tls else self._hosts):
            return _Refusal.of(MisdirectedHost(
                "this request is not addressed to browserd's control host",
                hint=f"use http{'s' if tls else ''}://127.0.0.1:{port} (or localhost / [::1] "
                     f"with port {port})",
            ))
        origins = header_values(scope, b"origin")
        allowed = self._tls_origins if tls else self._origins
        if len(origins) > 1 or (origins and origins[0].lower() not in allowed):
            return _Refusal.of(Forbidden(
                "cross-origin requests are refused",
                hint="browserd's API serves local programs, not web pages",
            ))
        fetch_sites = {v.lower() for v in header_values(scope, b"sec-fetch-site")}
        if fetch_sites & _CROSS_SITE:
            return _Refusal.of(Forbidden(
                "cross-site requests are refused",
                hint="browserd's API serves local programs, not web pages",
            ))
        gate = self._session_gate
        if gate is not None and gate.applies(str(scope.get("path", ""))):
            error = gate.check(scope)
            if error is None:
                scope[PRINCIPAL_KEY] = OWNER  # the ops page's sessions are the person's
            return None if error is None else _Refusal.of(error)
        if (
            scope["type"] == "http"
            and scope.get("method") in _OPEN_METHODS
            and scope.get("path") in self._open_paths
        ):
            return None
        return self._check_auth(scope)

    def _check_auth(self, scope: Scope) -> _Refusal | None:
        values = header_values(scope, b"authorization")
        if len(values) == 1:
            scheme, _, credentials = values[0].partition(" ")
            if scheme.lower() == "bearer" and credentials.strip():
                found = self._tokens.authenticate(credentials.strip())
                if isinstance(found, Principal):
                    scope[PRINCIPAL_KEY] = found
                    return None
                if found.code != "UNAUTHORIZED":  # revoked or expired: say so, no guessing
                    return _Refusal.of(found, (b"www-authenticate", b"Bearer"))
        self.auth_failures += 1
        if values:
            now = self._clock()
            window = self._recent_failures
            while window and now - window[0] >= AUTH_FAILURE_WINDOW_S:
                window.popleft()
            limited = len(window) >= AUTH_FAILURE_LIMIT
            window.append(now)
            if limited:
                retry_after = max(1, math.ceil(window[0] + AUTH_FAILURE_WINDOW_S - now))
                body = {
                    "error": "too many failed authentication attempts; wait, then retry "
                             "with the right token",
                    "code": "TOO_MANY_AUTH_FAILURES",
                    "hint": "`browserd token` prints the token",
                }
                return _Refusal(
                    status=429, code="TOO_MANY_AUTH_FAILURES", body=orjson.dumps(body),
                    headers=((b"retry-after", str(retry_after).encode("ascii")),),
                )
        return _Refusal.of(
            Unauthorized("missing or invalid bearer token"),
            (b"www-authenticate", b"Bearer"),
        )

    def _check_http_extras(self, scope: Scope) -> _Refusal | None:
        """Checks e-f (after authentication)."""
        method = scope.get("method", "")
        if method == "OPTIONS":
            return _Refusal.of(MethodNotAllowed(
                "OPTIONS is not supported; browserd sends no CORS headers",
                hint="call the API from a local program, not from a web page",
            ))
        lengths = {v for raw in header_values(scope, b"content-length") for v in raw.split(",")}
        length = 0
        if lengths:
            text = lengths.pop().strip() if len(lengths) == 1 else ""
            if not text.isascii() or not text.isdigit():
                return _Refusal.of(BadRequest("invalid Content-Length header"))
            length = int(text)
        if length > self._max_body:
            return _Refusal.of(BodyTooLarge(
                f"the request body is larger than {self._max_body} bytes",
                hint="send a smaller JSON body",
            ))
        chunked = bool(header_values(scope, b"transfer-encoding"))
        if length > 0 or chunked:
            types = header_values(scope, b"content-type")
            media = types[0].partition(";")[0].strip().lower() if len(types) == 1 else ""
            if media != "application/json":
                return _Refusal.of(UnsupportedMediaType(
                    "request bodies must be JSON (Content-Type: application/json)",
                ))
        return None

    # -- http --------------------------------------------------------------------

    async def _run_http(self, scope: Scope, receive: Receive, send: Send) -> None:
        ex = _Exchange()

        async def guarded_receive() -> Message:
            if ex.body_cut_off:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                ex.body_bytes += len(message.get("body", b""))
                if ex.body_bytes > self._max_body:
                    ex.body_cut_off = True
                    if not ex.response_started:
                        refusal = _Refusal.of(BodyTooLarge(
                            f"the request body is larger than {self._max_body} bytes",
                            hint="send a smaller JSON body",
                        ))
                        self._log_refusal(scope, refusal)
                        ex.response_started = ex.guard_responded = True
                        await self._send_http_refusal(scope, send, refusal)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            if ex.guard_responded:
                return  # the guard already answered (413); drop the app's output
            if message["type"] == "http.response.start":
                ex.response_started = True
                message = {**message, "headers": secure_headers(message.get("headers", ()))}
            await send(message)

        await self._run_as_principal(scope, guarded_receive, guarded_send)

    async def _run_as_principal(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The app, inside the store's cancel scope for the request's principal."""
        principal = scope.get(PRINCIPAL_KEY)
        if not isinstance(principal, Principal):
            await self._app(scope, receive, send)  # an open path (/healthz)
            return
        accepted = False

        async def watched_send(message: Message) -> None:
            nonlocal accepted
            accepted = accepted or message["type"] == "websocket.accept"
            await send(message)

        with self._tokens.open_use(principal) as use:
            await self._app(scope, receive, watched_send)
        if use.cancelled_caught and accepted:
            # Revoked (or expired) mid-connection: say so rather than the server's 1011.
            with trio.CancelScope(shield=True, deadline=trio.current_time() + 1):
                try:
                    await send({"type": "websocket.close", "code": WS_TOKEN_REVOKED,
                                "reason": "token revoked or expired"})
                    while (await receive())["type"] != "websocket.disconnect":
                        pass  # the client's closing handshake, then the server closes TCP
                except Exception:  # the client is already gone
                    pass

    async def _send_http_refusal(self, scope: Scope, send: Send, refusal: _Refusal) -> None:
        headers = self._refusal_headers(refusal)
        if _may_have_body(scope):
            # The unread body makes the connection unusable for a next request:
            # say so, or a keep-alive client would send one into a closing socket.
            headers.append((b"connection", b"close"))
        await send({
            "type": "http.response.start",
            "status": refusal.status,
            "headers": headers,
        })
        body = b"" if scope.get("method") == "HEAD" else refusal.body
        await send({"type": "http.response.body", "body": body, "more_body": False})

    @staticmethod
    def _refusal_headers(refusal: _Refusal) -> Headers:
        return secure_headers([
            (b"content-type", b"application/json"),
            (b"content-length", str(len(refusal.body)).encode("ascii")),
            *refusal.headers,
        ])

    # -- websocket ---------------------------------------------------------------

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = self._check_request(scope)
        if refusal is None:
            async def guarded_send(message: Message) -> None:
                if message["type"] in ("websocket.accept", "websocket.http.response.start"):
                    message = {**message, "headers": secure_headers(message.get("headers", ()))}
                await send(message)

            await self._run_as_principal(scope, receive, guarded_send)
            return
        self._log_refusal(scope, refusal)
        first = await receive()
        if first["type"] != "websocket.connect":
            return  # the client went away before the handshake
        if "websocket.http.response" in scope.get("extensions", {}):
            await send({
                "type": "websocket.http.response.start",
                "status": refusal.status,
                "headers": self._refusal_headers(refusal),
            })
            await send({"type": "websocket.http.response.body", "body": refusal.body})
        else:
            await send({"type": "websocket.close", "code": WS_POLICY_VIOLATION})

    # -- logging -----------------------------------------------------------------

    def _log_refusal(self, scope: Scope, refusal: _Refusal) -> None:
        if not log.isEnabledFor(logging.INFO):
            return
        client = scope.get("client")
        peer = f"{client[0]}:{client[1]}" if client else "?"
        what = f"{scope.get('method', 'WEBSOCKET')} {scope.get('path', '')!r}"[:300]
        line = f"refused {what} from {peer}: {refusal.status} {refusal.code}"
        if self._owner_token is not None:
            line = line.replace(self._owner_token, "[redacted]")
        log.info("%s", line.replace(self._token, "[redacted]"))
