"""S1, S3, S4, S5 end to end: the control API guard served by hypercorn, spoken to
over raw sockets (a missing Host, foreign origins, form and multipart POSTs, a token
in the query, preflights, a body declared too large), and the requests it lets
through reaching the app."""

from __future__ import annotations

import socket
from typing import Any

import hypercorn.config
import hypercorn.trio
import trio

from browserd.http.guard import Guard
from tests.unit._guard_fixtures import TOKEN, Inner, Response, assert_secure, token_off_by_one

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
    off_by_one = ("Authorization", f"Bearer {token_off_by_one(token)}")
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
