"""Pairing under attack, without a browser: the guess pace and per-connection limit
(trio's MockClock), the exact Origin match, relay tokens bound to their extension, the
hello deadline. The door is called as ASGI; the client's address and port stand for
its TCP connection, as hypercorn reports them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from browserd.relay import PairingStore, RelayHub
from browserd.relay.door import CLOSE_UNAUTHORIZED, HELLO_TIMEOUT_S, RelayDoor
from browserd.relay.throttle import (
    CONNECTION_MEMORY_S,
    FAILURES_PER_CONNECTION,
    GUESS_BURST,
    GUESS_RATE_PER_S,
    MAX_WAIT_S,
    PairingThrottle,
    PairingThrottled,
    ThrottleLimits,
    TooManyPairingFailures,
)

EXT_ID = "abcdefghijklmnopabcdefghijklmnop"
OTHER_ID = "ponmlkjihgfedcbaponmlkjihgfedcba"
PORT = 18791
HOST = (b"host", f"127.0.0.1:{PORT}".encode())
WRONG = "ZZZZ-ZZZZ"


def _origin(extension_id: str = EXT_ID) -> str:
    return f"chrome-extension://{extension_id}"


async def _unreachable(scope: Any, receive: Any, send: Any) -> None:
    raise AssertionError("the door passed a relay request on")


def _door(store: PairingStore, throttle: PairingThrottle | None = None) -> RelayDoor:
    return RelayDoor(_unreachable, RelayHub(store), control_port=PORT, throttle=throttle)


async def _pair(door: RelayDoor, code: str, *, client_port: int = 40000,
                origins: tuple[str, ...] = (_origin(),), http_version: str = "1.1"
                ) -> tuple[int, dict[str, Any], dict[bytes, bytes]]:
    """POST /relay/pair from connection ``127.0.0.1:client_port``: status, body, headers."""
    sent: list[dict[str, Any]] = []
    messages = [{"type": "http.request", "body": json.dumps({"code": code}).encode(),
                 "more_body": False}]

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    headers = [HOST, (b"content-type", b"application/json"),
               *((b"origin", o.encode()) for o in origins)]
    scope = {"type": "http", "method": "POST", "path": "/relay/pair", "headers": headers,
             "client": ("127.0.0.1", client_port), "http_version": http_version}
    await door(scope, receive, send)
    return sent[0]["status"], json.loads(sent[1]["body"]), dict(sent[0]["headers"])


def _pending(store: PairingStore, profile: str = "work") -> bool:
    return (store.directory / f"{profile}.code").exists()


# -- the pace, shared by every connection ---------------------------------------------------


def _schedule(count: int, *, start: float = 0.0) -> list[float]:
    """When the pace lets ``count`` guesses that all arrive at ``start`` run."""
    return [start + max(0, i - GUESS_BURST + 1) / GUESS_RATE_PER_S for i in range(count)]


async def test_guesses_from_many_connections_share_one_pace(
        autojump_clock: trio.testing.MockClock) -> None:
    throttle = PairingThrottle()
    start = trio.current_time()
    done: list[float] = []

    async def guess(connection: int) -> None:
        await throttle.admit(("127.0.0.1", connection))
        done.append(trio.current_time() - start)

    async with trio.open_nursery() as nursery:
        for connection in range(12):  # twelve connections, one guess each
            nursery.start_soon(guess, 50000 + connection)
    assert done == pytest.approx(_schedule(12))  # 5 at once, then 2 a second, in order
    # Idle for a while, the burst is back.
    await trio.sleep(60)
    again = trio.current_time()
    for _ in range(GUESS_BURST):
        await throttle.admit(None)
    assert trio.current_time() == again


def test_a_guess_that_would_wait_too_long_is_refused_at_once_and_takes_no_slot() -> None:
    throttle = PairingThrottle()
    admitted = int(GUESS_BURST + MAX_WAIT_S * GUESS_RATE_PER_S)
    waits = [throttle.reserve(100.0) for _ in range(admitted)]
    assert waits == pytest.approx([w - 100.0 for w in _schedule(admitted, start=100.0)])
    assert waits[-1] == pytest.approx(MAX_WAIT_S)
    for _ in range(3):
        with pytest.raises(PairingThrottled) as refused:
            throttle.reserve(100.0)
        assert (refused.value.status, refused.value.code) == (429, "PAIRING_THROTTLED")
        assert refused.value.retry_after_s == 1
    assert throttle.throttled == 3 and throttle.guesses == admitted
    # The refusals took nothing: half a second later, the next slot is 10 s away again.
    assert throttle.reserve(100.5) == pytest.approx(MAX_WAIT_S)


def test_the_numbers_make_a_brute_force_hopeless() -> None:
    """At most burst + rate x lifetime guesses per code; the docs quote these figures."""
    from browserd.relay.pairing import _CODE_ALPHABET, _CODE_CHARS, CODE_TTL_S

    throttle = PairingThrottle()
    now, tried = 0.0, 0
    while True:  # a guesser with unlimited connections, always first in line
        try:
            wait = throttle.reserve(now)
        except PairingThrottled:
            now += 0.01
            continue
        if now + wait > CODE_TTL_S:
            break
        tried += 1
    assert tried == GUESS_BURST + int(GUESS_RATE_PER_S * CODE_TTL_S) == 1205
    assert tried / len(_CODE_ALPHABET) ** _CODE_CHARS < 2e-9


# -- wrong codes per connection ---------------------------------------------------------------


async def test_a_connection_is_stopped_after_its_wrong_codes_and_later_forgotten(
        autojump_clock: trio.testing.MockClock) -> None:
    throttle = PairingThrottle()
    mine, other = ("127.0.0.1", 1), ("127.0.0.1", 2)
    for _ in range(FAILURES_PER_CONNECTION - 1):
        throttle.failed(mine)
    with pytest.raises(TooManyPairingFailures):
        throttle.failed(mine)
    with pytest.raises(TooManyPairingFailures, match="wrong pairing codes"):
        await throttle.admit(mine)
    await throttle.admit(other)  # other connections go on
    throttle.failed(None)  # an unknown connection is paced, never counted
    await trio.sleep(CONNECTION_MEMORY_S / 2)
    with pytest.raises(TooManyPairingFailures):
        await throttle.admit(mine)
    await trio.sleep(CONNECTION_MEMORY_S * 2 / 3)  # past the memory since its last code
    with pytest.raises(TooManyPairingFailures):
        await throttle.admit(mine)  # still refused: each refusal is remembered anew
    await trio.sleep(CONNECTION_MEMORY_S + 1)
    assert throttle.failures(mine) == FAILURES_PER_CONNECTION
    await throttle.admit(mine)  # quiet for the memory: forgotten
    assert throttle.failures(mine) == 0
    throttle.failed(mine)
    throttle.succeeded(mine)
    assert throttle.failures(mine) == 0


async def test_only_so_many_connections_are_remembered() -> None:
    throttle = PairingThrottle(ThrottleLimits(max_connections=2))
    for port in (1, 2, 3):
        throttle.failed(("127.0.0.1", port))
    assert [throttle.failures(("127.0.0.1", p)) for p in (1, 2, 3)] == [0, 1, 1]


# -- the door: nobody's guesses cannot block the person --------------------------------------


async def test_wrong_codes_from_other_connections_never_revoke_the_persons_code(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    store = PairingStore(tmp_path)
    code = store.new_code("work").code
    door = _door(store)
    start = trio.current_time()
    guesses = 0
    for connection in range(12):  # `nobody`, a forged Origin, two wrong codes a connection
        for _ in range(FAILURES_PER_CONNECTION - 1):
            status, answer, _ = await _pair(door, WRONG, client_port=50000 + connection)
            assert (status, answer["code"]) == (403, "PAIRING_FAILED")
            guesses += 1
    assert _pending(store)
    status, answer, _ = await _pair(door, code, client_port=60000)
    assert status == 200, answer
    assert store.lookup(answer["token"], extension_id=EXT_ID) is not None
    # The guesses were paced across connections: 5 at once, then 2 a second.
    assert trio.current_time() - start == pytest.approx(_schedule(guesses + 1)[-1])


async def test_the_last_wrong_code_on_a_connection_closes_it(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    store = PairingStore(tmp_path)
    code = store.new_code("work").code
    door = _door(store)
    for _ in range(FAILURES_PER_CONNECTION - 1):
        status, answer, headers = await _pair(door, WRONG)
        assert (status, answer["code"]) == (403, "PAIRING_FAILED")
        assert b"connection" not in headers
    status, answer, headers = await _pair(door, WRONG)
    assert (status, answer["code"]) == (429, "TOO_MANY_PAIRING_FAILURES")
    assert headers[b"connection"] == b"close"
    # Whatever that connection sends next is refused unread, even the right code.
    status, answer, headers = await _pair(door, code)
    assert (status, answer["code"], headers[b"connection"]) == (
        429, "TOO_MANY_PAIRING_FAILURES", b"close")
    assert _pending(store)
    # HTTP/2 has no Connection header; the connection stays refused all the same.
    status, answer, headers = await _pair(door, code, http_version="2")
    assert (status, answer["code"], b"connection" in headers) == (
        429, "TOO_MANY_PAIRING_FAILURES", False)
    status, answer, _ = await _pair(door, code, client_port=40001)
    assert status == 200, answer


async def test_a_flood_is_throttled_and_the_code_pairs_once_it_stops(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    store = PairingStore(tmp_path)
    code = store.new_code("work").code
    door = _door(store)
    answers: list[tuple[int, str, bytes | None]] = []

    async def guess(connection: int) -> None:
        status, answer, headers = await _pair(door, WRONG, client_port=connection)
        answers.append((status, answer["code"], headers.get(b"retry-after")))

    async with trio.open_nursery() as nursery:
        for connection in range(30):
            nursery.start_soon(guess, 50000 + connection)
    admitted = int(GUESS_BURST + MAX_WAIT_S * GUESS_RATE_PER_S)
    assert sorted(answers) == sorted([(403, "PAIRING_FAILED", None)] * admitted
                                     + [(429, "PAIRING_THROTTLED", b"1")] * (30 - admitted))
    assert _pending(store)
    status, answer, _ = await _pair(door, code, client_port=60000)
    assert status == 200, answer


# -- the exact Origin -----------------------------------------------------------------------


BAD_ORIGINS = [
    f"chrome-extension://{EXT_ID}a",  # suffix-extended id
    f"chrome-extension://{EXT_ID}/",
    f"chrome-extension://{EXT_ID}/options.html",
    f"chrome-extension://{EXT_ID}.evil.test",
    f"chrome-extension://{EXT_ID}:443",
    f"xchrome-extension://{EXT_ID}",  # prefix-extended
    f"https://evil.test/chrome-extension://{EXT_ID}",
    f"https://chrome-extension://{EXT_ID}",
    f"chrome-extension://{EXT_ID[:-1]}",
    f"chrome-extension://{EXT_ID[:-1]}q",  # q is no id letter (a-p)
    f"chrome-extension://{EXT_ID.upper()}",
    f"chrome-extension://{EXT_ID} {EXT_ID}",
    "null",
]


@pytest.mark.parametrize("origin", BAD_ORIGINS)
async def test_pairing_needs_the_origin_exactly(tmp_path: Path, origin: str) -> None:
    store = PairingStore(tmp_path)
    code = store.new_code("work").code
    door = _door(store)
    status, answer, _ = await _pair(door, code, origins=(origin,))
    assert (status, answer["code"]) == (403, "FORBIDDEN_ORIGIN")
    status, answer, _ = await _pair(door, code, origins=(_origin(), _origin()))
    assert (status, answer["code"]) == (403, "FORBIDDEN_ORIGIN")  # two Origins: refused
    assert _pending(store) and store.paired_extension_ids() == frozenset()
    status, _, _ = await _pair(door, code)  # the exact Origin pairs
    assert status == 200


class _Socket:
    """One WebSocket client of the door, as ASGI messages."""

    def __init__(self) -> None:
        self.client_send, self.server_receive = trio.open_memory_channel[dict[str, Any]](100)
        self.server_send, self.client_receive = trio.open_memory_channel[dict[str, Any]](100)

    async def receive(self) -> dict[str, Any]:
        return await self.server_receive.receive()

    async def send(self, message: Any) -> None:
        await self.server_send.send(dict(message))

    async def say(self, **message: Any) -> None:
        await self.client_send.send({"type": "websocket.receive", "text": json.dumps(message)})

    async def heard(self) -> dict[str, Any]:
        message = await self.client_receive.receive()
        assert message["type"] == "websocket.send", message
        decoded: dict[str, Any] = json.loads(message["text"])
        return decoded


def _ws_scope(*origins: str) -> dict[str, Any]:
    return {"type": "websocket", "path": "/relay", "client": ("127.0.0.1", 40000),
            "headers": [HOST, *((b"origin", o.encode()) for o in origins)],
            "extensions": {"websocket.http.response": {}}}


async def _handshake(door: RelayDoor, scope: dict[str, Any]) -> dict[str, Any]:
    """The door's first answer to a WebSocket handshake (the door task keeps running)."""
    sock = _Socket()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(door, scope, sock.receive, sock.send)
        await sock.client_send.send({"type": "websocket.connect"})
        with trio.fail_after(5):
            first = await sock.client_receive.receive()
        nursery.cancel_scope.cancel()
    return first


@pytest.fixture
def paired_store(tmp_path: Path) -> Iterator[tuple[PairingStore, str, str]]:
    """A store with EXT_ID paired for "work" and OTHER_ID for "home": their tokens."""
    store = PairingStore(tmp_path)
    _, work_token = store.exchange(store.new_code("work").code, EXT_ID)
    _, home_token = store.exchange(store.new_code("home").code, OTHER_ID)
    yield store, work_token, home_token


@pytest.mark.parametrize("origin", [*BAD_ORIGINS, _origin("a" * 32)])
async def test_the_relay_needs_a_paired_origin_exactly(
        paired_store: tuple[PairingStore, str, str], origin: str) -> None:
    store, _, _ = paired_store
    door = _door(store)
    first = await _handshake(door, _ws_scope(origin))
    assert (first["type"], first["status"]) == ("websocket.http.response.start", 403)
    first = await _handshake(door, _ws_scope(_origin(), _origin()))
    assert first["type"] == "websocket.http.response.start"
    assert (await _handshake(door, _ws_scope(_origin())))["type"] == "websocket.accept"


# -- relay tokens are bound to their extension ----------------------------------------------


async def _hello(door: RelayDoor, origin: str, token: str) -> tuple[dict[str, Any],
                                                                     dict[str, Any] | None]:
    """Connect with ``origin``, say hello with ``token``: the answer, and the close if any."""
    sock = _Socket()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(door, _ws_scope(origin), sock.receive, sock.send)
        await sock.client_send.send({"type": "websocket.connect"})
        with trio.fail_after(5):
            assert (await sock.client_receive.receive())["type"] == "websocket.accept"
            await sock.say(type="hello", token=token, userAgent="UA")
            answer = await sock.heard()
            closed = None
            if answer["type"] == "refused":
                closed = await sock.client_receive.receive()
        nursery.cancel_scope.cancel()
    return answer, closed


async def test_a_relay_token_replayed_from_another_extension_is_refused(
        paired_store: tuple[PairingStore, str, str]) -> None:
    store, work_token, home_token = paired_store
    door = _door(store)
    # OTHER_ID is paired (for "home"), so its Origin passes the handshake; work's token
    # presented from it is no token.
    answer, closed = await _hello(door, _origin(OTHER_ID), work_token)
    assert (answer["type"], answer["code"]) == ("refused", "UNAUTHORIZED")
    assert closed == {"type": "websocket.close", "code": CLOSE_UNAUTHORIZED}
    assert door.hub.transport("work") is None
    answer, closed = await _hello(door, _origin(), home_token)
    assert (answer["type"], closed) == ("refused", {"type": "websocket.close", "code": 4401})
    assert store.lookup(work_token, extension_id=OTHER_ID) is None
    assert store.lookup(work_token, extension_id=EXT_ID) is not None
    # From its own extension the token works.
    answer, closed = await _hello(door, _origin(), work_token)
    assert (answer["type"], answer["profile"], closed) == ("welcome", "work", None)


# -- the hello deadline ---------------------------------------------------------------------


async def test_a_silent_socket_is_closed_at_the_hello_deadline(
        paired_store: tuple[PairingStore, str, str],
        autojump_clock: trio.testing.MockClock) -> None:
    assert HELLO_TIMEOUT_S == 5.0
    store, _, _ = paired_store
    door = _door(store)
    sock = _Socket()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(door, _ws_scope(_origin()), sock.receive, sock.send)
        await sock.client_send.send({"type": "websocket.connect"})
        assert (await sock.client_receive.receive())["type"] == "websocket.accept"
        start = trio.current_time()
        with trio.move_on_after(HELLO_TIMEOUT_S - 0.01):
            early = await sock.client_receive.receive()
            raise AssertionError(f"the relay spoke before the deadline: {early}")
        refused = await sock.heard()
        assert trio.current_time() - start == pytest.approx(HELLO_TIMEOUT_S)
        assert (refused["type"], refused["code"]) == ("refused", "UNAUTHORIZED")
        assert "no hello within 5 s" in refused["message"]
        assert await sock.client_receive.receive() == {"type": "websocket.close",
                                                       "code": 4401}
    # The door's task ended by itself (the nursery had nothing to cancel).
    assert trio.current_time() - start == pytest.approx(HELLO_TIMEOUT_S)
