"""S1, S3, S4, S5: the control API guard, driven as an ASGI callable and under hypercorn.

Every refusal asserts that the wrapped app was never called (no side effect)
and that no ``Access-Control-*`` header was sent.
"""

from __future__ import annotations

import hmac
import json
import logging
import socket
from collections.abc import Iterable
from typing import Any

import attrs
import hypercorn.config
import hypercorn.trio
import pytest
import trio

from browserd.errors import ConfigError
from browserd.http.guard import AUTH_FAILURE_LIMIT, Guard, Message, Receive, Scope, Send

TOKEN = "Zk3x9PqV7mN2sT8wY4bH6jL1cR5dF0gA-_eUoIiKlMn"
PORT = 18791
GOOD_HOST = f"127.0.0.1:{PORT}"
AUTH = ("authorization", f"Bearer {TOKEN}")
JSON = ("content-type", "application/json")


class Inner:
    """A tiny ASGI app that records calls, reads the body and answers 200.

    It also sets headers the guard must strip or replace.
    """

    def __init__(self) -> None:
        self.calls: list[Scope] = []
        self.bodies: list[bytes] = []
        self.saw_disconnect = False
        self.respond_before_reading = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                if msg["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif msg["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        self.calls.append(scope)
        if scope["type"] == "websocket":
            await receive()
            await send({
                "type": "websocket.accept",
                "headers": [(b"access-control-allow-origin", b"*"), (b"x-ws", b"1")],
            })
            await send({"type": "websocket.close", "code": 1000})
            return
        headers = [
            (b"content-type", b"application/json"),
            (b"access-control-allow-origin", b"*"),
            (b"Access-Control-Allow-Credentials", b"true"),
            (b"cache-control", b"max-age=3600"),
            (b"x-inner", b"yes"),
        ]
        if self.respond_before_reading:
            await send({"type": "http.response.start", "status": 200, "headers": headers})
        body = b""
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                self.saw_disconnect = True
                break
            body += msg.get("body", b"")
            if not msg.get("more_body", False):
                break
        self.bodies.append(body)
        payload = json.dumps({"ok": True, "path": scope["path"]}).encode()
        if not self.respond_before_reading:
            await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": payload})


@attrs.frozen(kw_only=True)
class Response:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> list[str]:
        return [v for n, v in self.headers if n == name.lower()]

    def json(self) -> Any:
        return json.loads(self.body)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_scope(
    method: str = "GET",
    path: str = "/tabs",
    headers: Iterable[tuple[str, str]] = (("host", GOOD_HOST), AUTH),
    *,
    query: bytes = b"",
    kind: str = "http",
    extensions: dict[str, Any] | None = None,
) -> Scope:
    scope: Scope = {
        "type": kind,
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "scheme": "http" if kind == "http" else "ws",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "root_path": "",
        "headers": [(n.lower().encode("latin-1"), v.encode("latin-1")) for n, v in headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", PORT),
        "extensions": extensions or {},
    }
    if kind == "http":
        scope["method"] = method
    return scope


async def drive(
    guard: Guard, scope: Scope, chunks: Iterable[bytes] = (b"",)
) -> tuple[Response, list[Message]]:
    """Run one exchange through ``guard``; return the response and all messages sent."""
    if scope["type"] == "websocket":
        incoming: list[Message] = [{"type": "websocket.connect"}]
    else:
        parts = list(chunks)
        incoming = [
            {"type": "http.request", "body": c, "more_body": i < len(parts) - 1}
            for i, c in enumerate(parts)
        ]
    sent: list[Message] = []

    async def receive() -> Message:
        if incoming:
            return incoming.pop(0)
        return {"type": "http.disconnect" if scope["type"] == "http" else "websocket.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    with trio.fail_after(5):
        await guard(scope, receive, send)
    status, headers, body = 0, [], b""
    for m in sent:
        if m["type"] in ("http.response.start", "websocket.http.response.start"):
            status = m["status"]
            headers = [(n.decode().lower(), v.decode()) for n, v in m["headers"]]
        elif m["type"] in ("http.response.body", "websocket.http.response.body"):
            body += m.get("body", b"")
    return Response(status=status, headers=headers, body=body), sent


def assert_secure(resp: Response) -> None:
    names = [n for n, _ in resp.headers]
    assert not [n for n in names if n.startswith("access-control-")], names
    assert resp.header("x-content-type-options") == ["nosniff"]
    assert resp.header("cache-control") == ["no-store"]
    assert resp.header("referrer-policy") == ["no-referrer"]
    assert TOKEN.encode() not in resp.body
    assert not [v for _, v in resp.headers if TOKEN in v]


def assert_refused(resp: Response, inner: Inner, status: int, code: str) -> None:
    assert resp.status == status, (resp.status, resp.body)
    assert inner.calls == [], "the app must not be called for a refused request"
    body = resp.json()
    assert body["code"] == code
    assert body["error"]
    assert resp.header("content-type") == ["application/json"]
    assert resp.header("content-length") == [str(len(resp.body))]
    assert_secure(resp)


@pytest.fixture
def inner() -> Inner:
    return Inner()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def guard(inner: Inner, clock: FakeClock) -> Guard:
    return Guard(inner, token=TOKEN, control_port=PORT, max_body_bytes=1000, clock=clock)


# -- a. Host ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "host", [f"127.0.0.1:{PORT}", f"localhost:{PORT}", f"[::1]:{PORT}", f"LOCALHOST:{PORT}"]
)
async def test_good_hosts_pass(guard: Guard, inner: Inner, host: str) -> None:
    resp, _ = await drive(guard, make_scope(headers=[("host", host), AUTH]))
    assert resp.status == 200
    assert len(inner.calls) == 1
    assert_secure(resp)


@pytest.mark.parametrize(
    "hosts",
    [
        [],
        ["evil.test"],
        [f"evil.test:{PORT}"],
        [f"127.0.0.1.nip.io:{PORT}"],
        ["127.0.0.1"],
        ["localhost"],
        ["127.0.0.1:8000"],
        [f"127.0.0.1:{PORT + 1}"],
        [f"127.0.0.1:{PORT}.evil.test"],
        [f"127.1:{PORT}"],
        [f"0.0.0.0:{PORT}"],
        [f"[::ffff:127.0.0.1]:{PORT}"],
        [f"user@127.0.0.1:{PORT}"],
        [""],
        [GOOD_HOST, "evil.test"],
        [GOOD_HOST, GOOD_HOST],
    ],
)
@pytest.mark.parametrize("path", ["/tabs", "/healthz"])
async def test_bad_host_is_421(guard: Guard, inner: Inner, hosts: list[str], path: str) -> None:
    headers = [("host", h) for h in hosts] + [AUTH]
    resp, _ = await drive(guard, make_scope(path=path, headers=headers))
    assert_refused(resp, inner, 421, "MISDIRECTED_HOST")
    assert guard.auth_failures == 0


def test_port_80_allows_portless_host() -> None:
    g = Guard(Inner(), token=TOKEN, control_port=80)
    assert "localhost" in g._hosts and "http://localhost" in g._origins
    g2 = Guard(Inner(), token=TOKEN, control_port=PORT)
    assert "localhost" not in g2._hosts


# -- b. Origin and Sec-Fetch-Site --------------------------------------------------


@pytest.mark.parametrize(
    "origin", [f"http://127.0.0.1:{PORT}", f"http://localhost:{PORT}", f"http://[::1]:{PORT}",
               f"HTTP://LOCALHOST:{PORT}"],
)
async def test_own_origin_passes(guard: Guard, inner: Inner, origin: str) -> None:
    headers = [("host", GOOD_HOST), ("origin", origin), AUTH]
    resp, _ = await drive(guard, make_scope(headers=headers))
    assert resp.status == 200
    assert len(inner.calls) == 1


@pytest.mark.parametrize(
    "origin",
    [
        "null",
        "https://evil.test",
        "http://127.0.0.1:8000",
        f"http://127.0.0.1:{PORT + 1}",
        f"https://127.0.0.1:{PORT}",
        f"http://127.0.0.1:{PORT}.evil.test",
        f"http://127.0.0.1:{PORT}/",
        "",
    ],
)
@pytest.mark.parametrize("path", ["/tabs", "/healthz"])
async def test_foreign_origin_is_403(guard: Guard, inner: Inner, origin: str, path: str) -> None:
    headers = [("host", GOOD_HOST), ("origin", origin), AUTH]
    resp, _ = await drive(guard, make_scope("POST", path, headers=headers))
    assert_refused(resp, inner, 403, "FORBIDDEN_ORIGIN")


async def test_two_origins_are_403(guard: Guard, inner: Inner) -> None:
    own = f"http://127.0.0.1:{PORT}"
    headers = [("host", GOOD_HOST), ("origin", own), ("origin", "https://evil.test"), AUTH]
    resp, _ = await drive(guard, make_scope(headers=headers))
    assert_refused(resp, inner, 403, "FORBIDDEN_ORIGIN")


@pytest.mark.parametrize("site", ["cross-site", "same-site", "Cross-Site"])
async def test_sec_fetch_site_cross_is_403(guard: Guard, inner: Inner, site: str) -> None:
    headers = [("host", GOOD_HOST), ("sec-fetch-site", site), AUTH]
    resp, _ = await drive(guard, make_scope(path="/healthz", headers=headers))
    assert_refused(resp, inner, 403, "FORBIDDEN_ORIGIN")


@pytest.mark.parametrize("site", ["same-origin", "none"])
async def test_sec_fetch_site_same_origin_passes(guard: Guard, inner: Inner, site: str) -> None:
    headers = [("host", GOOD_HOST), ("sec-fetch-site", site), AUTH]
    resp, _ = await drive(guard, make_scope(headers=headers))
    assert resp.status == 200
    assert len(inner.calls) == 1


# -- c. open paths -------------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "HEAD"])
async def test_healthz_needs_no_token(guard: Guard, inner: Inner, method: str) -> None:
    resp, _ = await drive(guard, make_scope(method, "/healthz", headers=[("host", GOOD_HOST)]))
    assert resp.status == 200
    assert len(inner.calls) == 1
    assert guard.auth_failures == 0
    assert_secure(resp)


@pytest.mark.parametrize(("method", "path"), [("POST", "/healthz"), ("GET", "/healthz/"),
                                              ("GET", "/healthz/x"), ("OPTIONS", "/healthz")])
async def test_open_path_is_exact_and_read_only(
    guard: Guard, inner: Inner, method: str, path: str
) -> None:
    resp, _ = await drive(guard, make_scope(method, path, headers=[("host", GOOD_HOST)]))
    assert_refused(resp, inner, 401, "UNAUTHORIZED")


# -- d. auth ---------------------------------------------------------------------------


def _off_by_one(token: str) -> str:
    last = token[-1]
    return token[:-1] + ("A" if last != "A" else "B")


@pytest.mark.parametrize(
    "auth_headers",
    [
        [],
        [("authorization", "Bearer wrong-token-wrong-token-wrong")],
        [("authorization", f"Bearer {_off_by_one(TOKEN)}")],
        [("authorization", f"Bearer {TOKEN[:-1]}")],
        [("authorization", f"Bearer {TOKEN}x")],
        [("authorization", f"Basic {TOKEN}")],
        [("authorization", TOKEN)],
        [("authorization", "Bearer")],
        [("authorization", "Bearer ")],
        [("authorization", f"Bearer {TOKEN}"), ("authorization", "Bearer x")],
        [("x-token", TOKEN), ("cookie", f"token={TOKEN}")],
    ],
)
@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/tabs"), ("POST", "/eval"), ("GET", "/does-not-exist"), ("OPTIONS", "/tabs"),
     ("DELETE", "/tabs/ABCD")],
)
async def test_unauthenticated_is_401_everywhere(
    guard: Guard, inner: Inner, auth_headers: list[tuple[str, str]], method: str, path: str
) -> None:
    resp, _ = await drive(guard, make_scope(method, path, headers=[("host", GOOD_HOST),
                                                                  *auth_headers]))
    assert_refused(resp, inner, 401, "UNAUTHORIZED")
    assert resp.header("www-authenticate") == ["Bearer"]
    assert guard.auth_failures == 1


async def test_token_in_query_string_is_ignored(guard: Guard, inner: Inner) -> None:
    scope = make_scope(headers=[("host", GOOD_HOST)], query=f"token={TOKEN}".encode())
    resp, _ = await drive(guard, scope)
    assert_refused(resp, inner, 401, "UNAUTHORIZED")


@pytest.mark.parametrize("value", [f"Bearer {TOKEN}", f"bearer {TOKEN}", f"BEARER  {TOKEN} "])
async def test_bearer_scheme_case_insensitive(guard: Guard, inner: Inner, value: str) -> None:
    headers = [("host", GOOD_HOST), ("authorization", value)]
    resp, _ = await drive(guard, make_scope(headers=headers))
    assert resp.status == 200
    assert len(inner.calls) == 1


async def test_compare_is_constant_time(
    guard: Guard, inner: Inner, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[bytes, bytes]] = []

    def spy(a: bytes, b: bytes) -> bool:
        seen.append((a, b))
        return a == b

    monkeypatch.setattr(hmac, "compare_digest", spy)
    resp, _ = await drive(guard, make_scope())
    assert resp.status == 200
    assert seen == [(TOKEN.encode(), TOKEN.encode())]


async def test_auth_failure_rate_limit(guard: Guard, inner: Inner, clock: FakeClock) -> None:
    wrong = [("host", GOOD_HOST), ("authorization", "Bearer nope-nope-nope-nope-nope")]
    for _ in range(AUTH_FAILURE_LIMIT):
        resp, _ = await drive(guard, make_scope(headers=wrong))
        assert resp.status == 401
        clock.now += 0.1
    resp, _ = await drive(guard, make_scope(headers=wrong))
    assert_refused(resp, inner, 429, "TOO_MANY_AUTH_FAILURES")
    # the oldest guess (2 s ago) leaves the 10 s window in 8 s
    assert 7 <= int(resp.header("retry-after")[0]) <= 9
    # The right token is never blocked.
    resp, _ = await drive(guard, make_scope())
    assert resp.status == 200
    assert len(inner.calls) == 1
    # No Authorization at all is not a guess: plain 401.
    resp, _ = await drive(guard, make_scope(headers=[("host", GOOD_HOST)]))
    assert resp.status == 401
    assert guard.auth_failures == AUTH_FAILURE_LIMIT + 2
    # Still within the window of the recent guesses: blocked.
    clock.now += 5
    resp, _ = await drive(guard, make_scope(headers=wrong))
    assert resp.status == 429
    # A quiet period longer than the window unblocks.
    clock.now += 10.01
    resp, _ = await drive(guard, make_scope(headers=wrong))
    assert resp.status == 401


async def test_slow_failures_never_rate_limited(
    guard: Guard, inner: Inner, clock: FakeClock
) -> None:
    wrong = [("host", GOOD_HOST), ("authorization", "Bearer nope-nope-nope-nope-nope")]
    for _ in range(3 * AUTH_FAILURE_LIMIT):
        resp, _ = await drive(guard, make_scope(headers=wrong))
        assert resp.status == 401
        clock.now += 0.6  # 20 failures span 11.4 s > 10 s
    assert guard.auth_failures == 3 * AUTH_FAILURE_LIMIT
    assert inner.calls == []


# -- e. OPTIONS -------------------------------------------------------------------------


async def test_options_is_405_even_authenticated(guard: Guard, inner: Inner) -> None:
    headers = [("host", GOOD_HOST), AUTH, ("origin", f"http://127.0.0.1:{PORT}"),
               ("access-control-request-method", "POST")]
    resp, _ = await drive(guard, make_scope("OPTIONS", "/eval", headers=headers))
    assert_refused(resp, inner, 405, "METHOD_NOT_ALLOWED")


# -- f. bodies ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ctype",
    [
        None,
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=xyz",
        "application/jsonx",
        "application/json-patch+json",
        "text/json",
    ],
)
@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
async def test_non_json_body_is_415(
    guard: Guard, inner: Inner, ctype: str | None, method: str
) -> None:
    headers = [("host", GOOD_HOST), AUTH, ("content-length", "2")]
    if ctype is not None:
        headers.append(("content-type", ctype))
    resp, _ = await drive(guard, make_scope(method, "/eval", headers=headers), [b"{}"])
    assert_refused(resp, inner, 415, "UNSUPPORTED_MEDIA_TYPE")


async def test_chunked_body_without_json_is_415(guard: Guard, inner: Inner) -> None:
    headers = [("host", GOOD_HOST), AUTH, ("transfer-encoding", "chunked"),
               ("content-type", "text/plain")]
    resp, _ = await drive(guard, make_scope("POST", "/eval", headers=headers), [b"{}"])
    assert_refused(resp, inner, 415, "UNSUPPORTED_MEDIA_TYPE")


async def test_two_content_types_are_415(guard: Guard, inner: Inner) -> None:
    headers = [("host", GOOD_HOST), AUTH, ("content-length", "2"), JSON,
               ("content-type", "text/plain")]
    resp, _ = await drive(guard, make_scope("POST", "/eval", headers=headers), [b"{}"])
    assert_refused(resp, inner, 415, "UNSUPPORTED_MEDIA_TYPE")


@pytest.mark.parametrize(
    "ctype",
    ["application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8"],
)
async def test_json_body_passes(guard: Guard, inner: Inner, ctype: str) -> None:
    headers = [("host", GOOD_HOST), AUTH, ("content-type", ctype), ("content-length", "11")]
    resp, _ = await drive(guard, make_scope("POST", "/eval", headers=headers), [b'{"js": "1"}'])
    assert resp.status == 200
    assert inner.bodies == [b'{"js": "1"}']
    assert_secure(resp)


@pytest.mark.parametrize(
    "extra",
    [[], [("content-length", "0")], [("content-length", "0"), ("content-type", "text/plain")]],
)
async def test_bodyless_post_any_type(
    guard: Guard, inner: Inner, extra: list[tuple[str, str]]
) -> None:
    headers = [("host", GOOD_HOST), AUTH, *extra]
    resp, _ = await drive(guard, make_scope("POST", "/stop", headers=headers))
    assert resp.status == 200
    assert len(inner.calls) == 1


async def test_declared_body_too_large_is_413(guard: Guard, inner: Inner) -> None:
    headers = [("host", GOOD_HOST), AUTH, JSON, ("content-length", "1001")]
    resp, _ = await drive(guard, make_scope("POST", "/eval", headers=headers), [b"x" * 1001])
    assert_refused(resp, inner, 413, "BODY_TOO_LARGE")


async def test_body_at_limit_passes(guard: Guard, inner: Inner) -> None:
    headers = [("host", GOOD_HOST), AUTH, JSON, ("content-length", "1000")]
    resp, _ = await drive(guard, make_scope("POST", "/eval", headers=headers), [b"x" * 1000])
    assert resp.status == 200
    assert inner.bodies == [b"x" * 1000]


@pytest.mark.parametrize("value", ["abc", "-1", "1, 2", "1e3", "", "\u00b2"])
async def test_bad_content_length_is_400(guard: Guard, inner: Inner, value: str) -> None:
    headers = [("host", GOOD_HOST), AUTH, JSON, ("content-length", value)]
    resp, _ = await drive(guard, make_scope("POST", "/eval", headers=headers))
    assert_refused(resp, inner, 400, "BAD_REQUEST")


async def test_streamed_body_over_limit_is_413(guard: Guard, inner: Inner) -> None:
    headers = [("host", GOOD_HOST), AUTH, JSON, ("transfer-encoding", "chunked")]
    resp, sent = await drive(guard, make_scope("POST", "/eval", headers=headers),
                             [b"x" * 600, b"x" * 600, b"x" * 10])
    assert resp.status == 413
    assert resp.json()["code"] == "BODY_TOO_LARGE"
    assert_secure(resp)
    # The app saw a disconnect, never the whole body, and its response was dropped.
    assert inner.saw_disconnect
    assert inner.bodies == [b"x" * 600]
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]


async def test_streamed_body_over_limit_after_response_started(
    guard: Guard, inner: Inner
) -> None:
    inner.respond_before_reading = True
    headers = [("host", GOOD_HOST), AUTH, JSON, ("transfer-encoding", "chunked")]
    resp, _ = await drive(guard, make_scope("POST", "/eval", headers=headers),
                          [b"x" * 600, b"x" * 600])
    assert resp.status == 200  # too late for a 413; the app is told to stop reading
    assert inner.saw_disconnect
    assert_secure(resp)


async def test_streamed_body_under_limit_passes(guard: Guard, inner: Inner) -> None:
    headers = [("host", GOOD_HOST), AUTH, JSON, ("transfer-encoding", "chunked")]
    resp, _ = await drive(guard, make_scope("POST", "/eval", headers=headers),
                          [b"x" * 500, b"x" * 500])
    assert resp.status == 200
    assert inner.bodies == [b"x" * 1000]
    assert not inner.saw_disconnect


# -- g. outgoing headers, HEAD, lifespan, misc ---------------------------------------------


async def test_app_cors_headers_stripped_and_security_headers_set(
    guard: Guard, inner: Inner
) -> None:
    resp, _ = await drive(guard, make_scope())
    assert resp.status == 200
    assert_secure(resp)
    assert resp.header("x-inner") == ["yes"]
    assert resp.json() == {"ok": True, "path": "/tabs"}


async def test_head_refusal_has_no_body(guard: Guard, inner: Inner) -> None:
    resp, _ = await drive(guard, make_scope("HEAD", "/tabs", headers=[("host", GOOD_HOST)]))
    assert resp.status == 401
    assert resp.body == b""
    assert inner.calls == []


async def test_lifespan_passes_through(guard: Guard, inner: Inner) -> None:
    msgs: list[Message] = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    out: list[Message] = []

    async def receive() -> Message:
        return msgs.pop(0)

    async def send(m: Message) -> None:
        out.append(m)

    with trio.fail_after(5):
        await guard({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send)
    assert [m["type"] for m in out] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]


async def test_unknown_scope_type_refused(guard: Guard, inner: Inner) -> None:
    async def receive() -> Message:
        raise AssertionError

    async def send(m: Message) -> None:
        raise AssertionError

    with pytest.raises(RuntimeError, match="unsupported"):
        await guard({"type": "webtransport"}, receive, send)
    assert inner.calls == []


def test_short_token_refused() -> None:
    with pytest.raises(ConfigError):
        Guard(Inner(), token="", control_port=PORT)
    with pytest.raises(ConfigError):
        Guard(Inner(), token="x" * 19, control_port=PORT)
    with pytest.raises(ConfigError):
        Guard(Inner(), token=TOKEN, control_port=0)


def test_repr_hides_token(guard: Guard) -> None:
    assert TOKEN not in repr(guard)
    assert TOKEN not in str(guard)


async def test_refusal_logs_never_contain_token(
    guard: Guard, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    await drive(guard, make_scope(path=f"/x/{TOKEN}", headers=[("host", GOOD_HOST)],
                                  query=f"token={TOKEN}".encode()))
    await drive(guard, make_scope(path=f"/{TOKEN}", headers=[("host", f"{TOKEN}:1"), AUTH]))
    await drive(guard, make_scope(headers=[("host", GOOD_HOST),
                                           ("authorization", f"Bearer {TOKEN}x")]))
    assert "refused" in caplog.text
    assert TOKEN not in caplog.text


# -- websockets ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ([("host", "evil.test"), AUTH], 421),
        ([("host", GOOD_HOST), ("origin", "https://evil.test"), AUTH], 403),
        ([("host", GOOD_HOST), ("origin", "null"), AUTH], 403),
        ([("host", GOOD_HOST)], 401),
        ([("host", GOOD_HOST), ("authorization", f"Bearer {_off_by_one(TOKEN)}")], 401),
    ],
)
async def test_websocket_refused_before_accept(
    guard: Guard, inner: Inner, headers: list[tuple[str, str]], status: int
) -> None:
    _, sent = await drive(guard, make_scope(kind="websocket", path="/tabs", headers=headers))
    assert sent == [{"type": "websocket.close", "code": 1008}]
    assert inner.calls == []
    ext: dict[str, Any] = {"websocket.http.response": {}}
    resp, sent = await drive(
        guard, make_scope(kind="websocket", path="/tabs", headers=headers, extensions=ext)
    )
    assert resp.status == status
    assert not [m for m in sent if m["type"] == "websocket.accept"]
    assert_secure(resp)
    assert inner.calls == []


async def test_websocket_with_token_reaches_app(guard: Guard, inner: Inner) -> None:
    _, sent = await drive(guard, make_scope(kind="websocket", path="/events"))
    assert len(inner.calls) == 1
    accept = sent[0]
    assert accept["type"] == "websocket.accept"
    names = [n for n, _ in accept["headers"]]
    assert b"x-ws" in names
    assert not [n for n in names if n.startswith(b"access-control-")]


async def test_websocket_token_in_query_ignored(guard: Guard, inner: Inner) -> None:
    scope = make_scope(kind="websocket", headers=[("host", GOOD_HOST)],
                       query=f"token={TOKEN}".encode())
    _, sent = await drive(guard, scope)
    assert sent == [{"type": "websocket.close", "code": 1008}]
    assert inner.calls == []


# -- through a real server ---------------------------------------------------------------


def _parse(raw: bytes) -> Response:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = []
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers.append((name.strip().lower(), value.strip()))
    if ("transfer-encoding", "chunked") in headers:
        body = _dechunk(body)
    return Response(status=status, headers=headers, body=body)


def _dechunk(data: bytes) -> bytes:
    out = b""
    while True:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            return out
        out, data = out + data[:size], data[size + 2 :]


async def _exchange(port: int, request: bytes) -> Response:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        await stream.send_all(request)
        raw = b""
        while chunk := await stream.receive_some(65536):
            raw += chunk
    return _parse(raw)


def _request(port: int, method: str, target: str, headers: list[tuple[str, str]],
             body: bytes = b"", *, host: str | None = "own", version: str = "1.1") -> bytes:
    lines = [f"{method} {target} HTTP/{version}"]
    if host == "own":
        lines.append(f"Host: 127.0.0.1:{port}")
    elif host is not None:
        lines.append(f"Host: {host}")
    lines += [f"{n}: {v}" for n, v in headers]
    if body:
        lines.append(f"Content-Length: {len(body)}")
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


async def test_under_hypercorn_raw_sockets() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    token = TOKEN
    inner = Inner()
    guard = Guard(inner, token=token, control_port=port)
    served: Any = guard  # hypercorn types its app with TypedDict scopes
    config = hypercorn.config.Config()
    config.bind = [f"fd://{sock.detach()}"]
    config.accesslog = None
    config.graceful_timeout = 1
    shutdown = trio.Event()
    auth = ("Authorization", f"Bearer {token}")
    off_by_one = ("Authorization", f"Bearer {_off_by_one(token)}")
    own_origin = ("Origin", f"http://127.0.0.1:{port}")
    multipart = (b"--xyz\r\nContent-Disposition: form-data; name=\"js\"\r\n\r\n1\r\n--xyz--\r\n")

    refusals: list[tuple[str, bytes, int]] = [
        ("Host evil.test", _request(port, "GET", "/tabs", [auth], host="evil.test"), 421),
        ("Host nip.io", _request(port, "GET", "/tabs", [auth],
                                 host=f"127.0.0.1.nip.io:{port}"), 421),
        ("missing Host (HTTP/1.0)", _request(port, "GET", "/tabs", [auth], host=None,
                                             version="1.0"), 421),
        ("Origin null", _request(port, "POST", "/tabs/open", [auth, ("Origin", "null"),
                                 ("Content-Type", "application/json")], b"{}"), 403),
        ("Origin other port", _request(port, "GET", "/tabs",
                                       [auth, ("Origin", "http://127.0.0.1:8000")]), 403),
        ("cross-site fetch", _request(port, "GET", "/healthz",
                                      [("Sec-Fetch-Site", "cross-site")]), 403),
        ("text/plain POST", _request(port, "POST", "/eval", [auth,
                                     ("Content-Type", "text/plain")], b'{"js":"1"}'), 415),
        ("form POST", _request(port, "POST", "/eval", [auth, (
            "Content-Type", "application/x-www-form-urlencoded")], b"js=1"), 415),
        ("multipart POST", _request(port, "POST", "/eval", [auth, (
            "Content-Type", "multipart/form-data; boundary=xyz")], multipart), 415),
        ("token in query", _request(port, "GET", f"/tabs?token={token}", []), 401),
        ("token off by one", _request(port, "GET", "/tabs", [off_by_one]), 401),
        ("preflight", _request(port, "OPTIONS", "/eval", [
            own_origin, ("Access-Control-Request-Method", "POST"),
            ("Access-Control-Request-Headers", "authorization,content-type")]), 401),
        ("foreign preflight", _request(port, "OPTIONS", "/eval", [
            ("Origin", "https://evil.test"), ("Access-Control-Request-Method", "POST")]), 403),
        ("OPTIONS with token", _request(port, "OPTIONS", "/eval", [auth]), 405),
        ("404 without token", _request(port, "GET", "/no/such/route", []), 401),
        ("declared too large", _request(port, "POST", "/eval", [
            auth, ("Content-Type", "application/json"), ("Content-Length", "2000000")]), 413),
    ]

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            await nursery.start(
                lambda task_status: hypercorn.trio.serve(
                    served, config, shutdown_trigger=shutdown.wait, task_status=task_status
                )
            )
            for label, request, status in refusals:
                resp = await _exchange(port, request)
                assert resp.status == status, (label, resp.status, resp.body)
                assert resp.json()["code"], label
                assert_secure(resp)
                assert inner.calls == [], f"{label}: the app was called"

            ok = await _exchange(port, _request(port, "GET", "/healthz", []))
            assert ok.status == 200
            assert_secure(ok)
            ok = await _exchange(port, _request(port, "POST", "/eval", [
                auth, own_origin, ("Content-Type", "application/json; charset=utf-8")],
                b'{"js":"1"}'))
            assert ok.status == 200
            assert ok.json() == {"ok": True, "path": "/eval"}
            assert ok.header("x-inner") == ["yes"]
            assert_secure(ok)
            assert [s["path"] for s in inner.calls] == ["/healthz", "/eval"]
            assert inner.bodies[-1] == b'{"js":"1"}'
            shutdown.set()
    assert guard.auth_failures == 4  # query token, off by one, preflight, 404


async def test_refusal_of_a_request_with_a_body_closes_the_connection(
    guard: Guard, inner: Inner
) -> None:
    """The unread body would poison a kept-alive connection: the refusal says close."""
    with_body = make_scope("POST", "/eval", headers=[
        ("host", GOOD_HOST), ("content-type", "application/json"), ("content-length", "9")])
    resp, _ = await drive(guard, with_body, chunks=[b'{"js":"1"}'])
    assert_refused(resp, inner, 401, "UNAUTHORIZED")
    assert resp.header("connection") == ["close"]
    without_body = make_scope("GET", "/tabs", headers=[("host", GOOD_HOST)])
    resp, _ = await drive(guard, without_body)
    assert resp.status == 401 and resp.header("connection") == []


def test_the_shortest_token_accepted_is_twenty_characters(inner: Inner) -> None:
    Guard(inner, token="t" * 20, control_port=PORT)
    with pytest.raises(ConfigError, match="too short"):
        Guard(inner, token="t" * 19, control_port=PORT)


# -- what the docs promise, to the number ---------------------------------------------------


async def test_the_twenty_first_wrong_token_in_ten_seconds_is_429_and_says_when(
    guard: Guard, inner: Inner, clock: FakeClock
) -> None:
    """docs/security.md: 429 after 20 wrong tokens in 10 s; Retry-After: when a guess leaves."""
    wrong = [("host", GOOD_HOST), ("authorization", "Bearer nope-nope-nope-nope-nope")]
    # Times exact in binary, so the arithmetic below has no rounding.
    for at in [1000.0, 1001.0] + [1001.5 + 0.0625 * k for k in range(18)]:
        clock.now = at
        resp, _ = await drive(guard, make_scope(headers=wrong))
        assert resp.status == 401
    clock.now = 1003.0
    resp, _ = await drive(guard, make_scope(headers=wrong))
    assert resp.status == 429
    # The 20 guesses that count now are those since 1001.0: the next one is let
    # through once that leaves the window, at 1011.0, in 8 s.
    assert resp.header("retry-after") == ["8"]
    clock.now = 1010.75  # now the oldest counted (1001.5) leaves in 0.75 s: say 1, not 0
    resp, _ = await drive(guard, make_scope(headers=wrong))
    assert (resp.status, resp.header("retry-after")) == (429, ["1"])


async def test_a_one_byte_body_must_be_json_too(guard: Guard, inner: Inner) -> None:
    headers = [("host", GOOD_HOST), AUTH, ("content-length", "1")]
    resp, _ = await drive(guard, make_scope("POST", "/eval", headers=headers), [b"x"])
    assert_refused(resp, inner, 415, "UNSUPPORTED_MEDIA_TYPE")


async def test_after_the_cut_the_app_reads_only_disconnects(guard: Guard) -> None:
    """Once a streamed body is over the limit, nothing more of it reaches the app."""
    seen: list[str] = []

    async def greedy(scope: Scope, receive: Receive, send: Send) -> None:
        for _ in range(4):
            message = await receive()
            seen.append(message["type"])

    greedy_guard = Guard(greedy, token=TOKEN, control_port=PORT, max_body_bytes=1000)
    headers = [("host", GOOD_HOST), AUTH, JSON, ("transfer-encoding", "chunked")]
    await drive(greedy_guard, make_scope("POST", "/eval", headers=headers),
                [b"x" * 600, b"x" * 600, b"x" * 10, b"x" * 10])
    assert seen == ["http.request", "http.disconnect", "http.disconnect", "http.disconnect"]


async def test_a_streamed_body_cut_off_is_logged_as_a_refusal(
    guard: Guard, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="browserd")
    headers = [("host", GOOD_HOST), AUTH, JSON, ("transfer-encoding", "chunked")]
    await drive(guard, make_scope("POST", "/eval", headers=headers), [b"x" * 600, b"x" * 600])
    assert "refused POST '/eval' from 127.0.0.1:50000: 413 BODY_TOO_LARGE" in caplog.text


async def test_a_refusal_is_one_complete_response(guard: Guard, inner: Inner) -> None:
    """The body message ends the response (more_body false): a server would wait otherwise."""
    resp, sent = await drive(guard, make_scope(headers=[("host", GOOD_HOST)]))
    assert resp.status == 401
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    assert sent[-1].get("more_body") is False


async def test_a_refused_chunked_request_closes_the_connection(
    guard: Guard, inner: Inner
) -> None:
    chunked = make_scope("POST", "/eval", headers=[
        ("host", GOOD_HOST), JSON, ("transfer-encoding", "chunked")])
    resp, _ = await drive(guard, chunked, chunks=[b'{"js":"1"}'])
    assert_refused(resp, inner, 401, "UNAUTHORIZED")
    assert resp.header("connection") == ["close"]


OWNER = "owner-token-" + "q" * 32


async def test_the_guard_names_the_principal_and_revoked_tokens_are_told_why(
    inner: Inner, caplog: pytest.LogCaptureFixture
) -> None:
    from browserd.principals import PRINCIPAL_KEY, TokenStore

    store = TokenStore(None, agent_token=TOKEN, owner_token=OWNER)
    guard = Guard(inner, token=TOKEN, control_port=PORT, owner_token=OWNER, tokens=store)
    caplog.set_level(logging.INFO)
    # The owner token is the person; the agent's token is the agent 'default'.
    resp, _ = await drive(guard, make_scope("GET", "/tabs/offerable", (
        ("host", GOOD_HOST), ("authorization", f"Bearer {OWNER}"))))
    assert resp.status == 200 and inner.calls[-1][PRINCIPAL_KEY].is_owner
    resp, _ = await drive(guard, make_scope("GET", "/tabs/offerable"))
    assert resp.status == 200
    assert inner.calls[-1][PRINCIPAL_KEY].name == "default"
    assert not inner.calls[-1][PRINCIPAL_KEY].is_owner
    # A client cannot name itself: a principal already in the scope is dropped.
    forged = make_scope("GET", "/healthz", (("host", GOOD_HOST),))
    forged[PRINCIPAL_KEY] = store.authenticate(OWNER)
    calls = len(inner.calls)
    resp, _ = await drive(guard, forged)
    assert len(inner.calls) == calls + 1 and PRINCIPAL_KEY not in inner.calls[-1]
    # A minted token works until it is revoked; then it is 401 TOKEN_REVOKED.
    owner = store.authenticate(OWNER)
    assert not isinstance(owner, Exception)
    minted = store.create(owner, name="ci", scopes=frozenset({"read"}))
    as_minted = ("authorization", f"Bearer {minted.secret}")
    resp, _ = await drive(guard, make_scope("GET", "/tabs", (("host", GOOD_HOST), as_minted)))
    assert resp.status == 200 and inner.calls[-1][PRINCIPAL_KEY].scopes == {"read"}
    store.revoke(owner, "ci")
    calls = len(inner.calls)
    resp, _ = await drive(guard, make_scope("GET", "/tabs", (("host", GOOD_HOST), as_minted)))
    assert resp.status == 401 and resp.json()["code"] == "TOKEN_REVOKED"
    assert len(inner.calls) == calls
    assert OWNER not in caplog.text and TOKEN not in caplog.text
    assert minted.secret not in caplog.text
    with pytest.raises(ConfigError):
        Guard(inner, token=TOKEN, control_port=PORT, owner_token=TOKEN)
