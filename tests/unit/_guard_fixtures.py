"""What the guard tests share (tests/unit/test_guard*.py): the token and port the
guard under test is made with, a recording ASGI app behind it (``Inner``), one
exchange driven through the guard (``make_scope``, ``drive``), the checks every
answer and every refusal must pass, and the ``inner``/``clock``/``guard`` fixtures.

The fixtures are imported by name into each test module (and listed in its
``__all__``), as pytest finds fixtures in the module that uses them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import attrs
import pytest
import trio

from browserd.http.guard import Guard, Message, Receive, Scope, Send

__all__ = [
    "AUTH",
    "GOOD_HOST",
    "JSON",
    "PORT",
    "TOKEN",
    "FakeClock",
    "Inner",
    "Response",
    "assert_refused",
    "assert_secure",
    "clock",
    "drive",
    "guard",
    "inner",
    "make_scope",
    "token_off_by_one",
]

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


def token_off_by_one(token: str) -> str:
    last = token[-1]
    return token[:-1] + ("A" if last != "A" else "B")
