"""Pairing, the guess pace and the relay's door at their edges (no browser).

Written for the mutants of ``relay/pairing.py``, ``relay/throttle.py`` and the
pairing and hello parts of ``relay/door.py`` (``python -m supervision.mutants
--only relay-pairing,relay-throttle,relay-door``).
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from browserd.errors import BadRequest, PairingFailed
from browserd.relay import PairingStore, RelayHub
from browserd.relay.door import RelayDoor
from browserd.relay.throttle import CONNECTION_MEMORY_S, PairingThrottle, ThrottleLimits

EXT_ID = "abcdefghijklmnopabcdefghijklmnop"
OTHER_ID = "ponmlkjihgfedcbaponmlkjihgfedcba"

# -- pairing -----------------------------------------------------------------------------


def test_a_code_is_eight_unambiguous_characters_for_a_valid_profile(tmp_path: Path) -> None:
    store = PairingStore(tmp_path)
    for _ in range(20):
        code = store.new_code("work").code
        assert re.fullmatch(r"[A-HJKMNP-Z2-9]{4}-[A-HJKMNP-Z2-9]{4}", code), code
    for bad in ("Work", "", "-x", "a" * 33, "../x"):
        with pytest.raises(BadRequest):
            store.new_code(bad)
        with pytest.raises(BadRequest):
            store.unpair(bad)
    assert sorted(p.name for p in store.directory.iterdir()) == ["work.code"]


def test_the_extension_id_must_be_one(tmp_path: Path) -> None:
    store = PairingStore(tmp_path)
    code = store.new_code("work").code
    for bad in ("", "abc", EXT_ID.upper(), EXT_ID + "a", "q" * 32):
        with pytest.raises(BadRequest):
            store.exchange(code, bad)
    assert store.failed_exchanges == 0  # not a wrong code: nothing counted
    paired, token = store.exchange(code, EXT_ID)
    assert paired.extension_id == EXT_ID
    assert len(token) == 43  # 32 random bytes, URL-safe base64
    # A successful exchange leaves nothing behind but the pairing record.
    assert sorted(p.name for p in store.directory.iterdir()) == ["work.json"]


def test_a_code_works_until_the_very_end_of_its_lifetime(tmp_path: Path) -> None:
    now = [1000.0]
    store = PairingStore(tmp_path, clock=lambda: now[0])
    code = store.new_code("work")
    assert code.expires_at == 1600.0
    now[0] = 1600.0
    paired, _ = store.exchange(code.code, EXT_ID)
    assert paired.paired_at == 1600.0


def test_revoking_codes_removes_each_and_counts_them(tmp_path: Path) -> None:
    store = PairingStore(tmp_path)
    assert store.revoke_codes() == 0
    codes = [store.new_code(p).code for p in ("work", "home", "shop")]
    assert store.revoke_codes() == 3
    assert store.revoke_codes() == 0
    for code in codes:
        with pytest.raises(PairingFailed):
            store.exchange(code, EXT_ID)


def test_unpairing_a_profile_never_paired_is_false(tmp_path: Path) -> None:
    store = PairingStore(tmp_path)
    assert store.unpair("work") is False
    store.exchange(store.new_code("work").code, EXT_ID)
    assert store.unpair("work") is True
    assert store.unpair("work") is False


def test_broken_records_are_skipped(tmp_path: Path) -> None:
    store = PairingStore(tmp_path)
    _, token = store.exchange(store.new_code("work").code, EXT_ID)
    (store.directory / "junk.json").write_text("not json")
    (store.directory / "list.json").write_text("[1, 2]")
    (store.directory / "bad-id.json").write_text(json.dumps({"extensionId": "nope"}))
    assert store.paired_extension_ids() == frozenset({EXT_ID})
    record = json.loads((store.directory / "work.json").read_text())
    record["pairedAt"] = "yesterday"
    (store.directory / "work.json").write_text(json.dumps(record))
    found = store.lookup(token)
    assert found is not None and found.paired_at == 0.0
    assert store.lookup("") is None
    assert store.lookup(token, extension_id=OTHER_ID) is None
    assert store.lookup(token, extension_id=EXT_ID) == found


def test_a_wider_relay_directory_is_narrowed(tmp_path: Path) -> None:
    directory = tmp_path / "relay"
    directory.mkdir(mode=0o755)
    os.chmod(directory, 0o755)
    PairingStore(tmp_path).new_code("work")
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    store = PairingStore(tmp_path)
    store.new_code("work")

    def broken(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError):
        store.new_code("home")
    monkeypatch.undo()
    assert sorted(p.name for p in store.directory.iterdir()) == ["work.code"]


# -- the throttle ------------------------------------------------------------------------


def test_the_default_limits_are_the_documented_ones() -> None:
    """docs/extension.md and the throttle's docstring quote these numbers (1205 guesses)."""
    limits = ThrottleLimits()
    assert (limits.rate_per_s, limits.burst, limits.max_wait_s, limits.failures_per_connection,
            limits.connection_memory_s, limits.max_connections) == (2.0, 5, 10.0, 3, 60.0, 1024)
    assert PairingThrottle().limits == limits


@pytest.mark.parametrize(("field", "bad", "good"), [
    ("rate_per_s", 0, 0.001), ("burst", 0, 1), ("max_wait_s", -0.5, 0),
    ("failures_per_connection", 0, 1), ("max_connections", 0, 1),
])
def test_limits_are_validated(field: str, bad: float, good: float) -> None:
    with pytest.raises(ValueError):
        ThrottleLimits(**{field: bad})
    assert getattr(ThrottleLimits(**{field: good}), field) == good


async def test_old_wrong_codes_are_forgotten_before_a_new_one_is_counted(
        autojump_clock: trio.testing.MockClock) -> None:
    throttle = PairingThrottle()
    mine = ("127.0.0.1", 1)
    throttle.failed(mine)
    throttle.failed(mine)
    await trio.sleep(CONNECTION_MEMORY_S + 1)
    throttle.failed(mine)  # the two before are forgotten: this is its first
    assert throttle.failures(mine) == 1


async def test_the_connection_forgotten_first_is_the_one_quiet_longest() -> None:
    throttle = PairingThrottle(ThrottleLimits(max_connections=2))
    one, two, three = (("127.0.0.1", p) for p in (1, 2, 3))
    throttle.failed(one)
    throttle.failed(two)
    throttle.failed(one)  # one is the most recent now
    throttle.failed(three)
    assert [throttle.failures(c) for c in (one, two, three)] == [2, 0, 1]


async def test_a_connection_is_remembered_for_exactly_the_memory(
        autojump_clock: trio.testing.MockClock) -> None:
    throttle = PairingThrottle(ThrottleLimits(connection_memory_s=64.0))
    mine = ("127.0.0.1", 1)
    throttle.failed(mine)
    throttle.failed(mine)
    await trio.sleep(63.5)
    assert throttle.failures(mine) == 2
    await trio.sleep(0.5)  # 64 s since its last wrong code: forgotten
    throttle.failed(mine)
    assert throttle.failures(mine) == 1


async def test_forgetting_old_connections_keeps_the_recent_ones(
        autojump_clock: trio.testing.MockClock) -> None:
    throttle = PairingThrottle()
    old, recent = ("127.0.0.1", 1), ("127.0.0.1", 2)
    throttle.failed(old)
    await trio.sleep(CONNECTION_MEMORY_S - 10)
    throttle.failed(recent)
    await trio.sleep(11)  # old is past the memory, recent is not
    throttle.failed(("127.0.0.1", 3))
    assert (throttle.failures(old), throttle.failures(recent)) == (0, 1)


# -- the door: POST /relay/pair ------------------------------------------------------------

PORT = 18791
HOST = (b"host", f"127.0.0.1:{PORT}".encode())
JSON = (b"content-type", b"application/json")
ORIGIN = (b"origin", f"chrome-extension://{EXT_ID}".encode())


class App:
    """The guarded app behind the door: records what reached it."""

    def __init__(self) -> None:
        self.paths: list[tuple[str, str]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.paths.append((scope["type"], scope.get("path", "")))


def door_for(store: PairingStore, app: Any = None, **kw: Any) -> RelayDoor:
    return RelayDoor(app or App(), RelayHub(store), control_port=kw.pop("port", PORT), **kw)


async def post(door: RelayDoor, headers: list[tuple[bytes, bytes]] | None = None, *,
               body: bytes | list[bytes] = b"", method: str = "POST",
               client: Any = ("127.0.0.1", 40000), disconnect_first: bool = False,
               ) -> tuple[int, dict[str, Any], list[dict[str, Any]]]:
    """One request to /relay/pair: status, the JSON answer, every message sent."""
    parts = body if isinstance(body, list) else [body]
    messages: list[dict[str, Any]] = [] if not disconnect_first else [{"type": "http.disconnect"}]
    messages += [{"type": "http.request", "body": part, "more_body": i < len(parts) - 1}
                 for i, part in enumerate(parts)]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "path": "/relay/pair",
             "headers": [HOST, JSON, ORIGIN] if headers is None else headers,
             "client": client, "http_version": "1.1"}
    await door(scope, receive, send)
    return sent[0]["status"], json.loads(sent[1]["body"]), sent


def code_body(code: str, size: int | None = None) -> bytes:
    body = json.dumps({"code": code}).encode()
    if size is not None:
        body = json.dumps({"code": code, "pad": "x" * (size - len(body) - 11)}).encode()
        assert len(body) == size
    return body


async def test_the_door_serves_its_two_paths_and_passes_everything_else_on(
        tmp_path: Path) -> None:
    app = App()
    door = door_for(PairingStore(tmp_path), app)
    for scope in ({"type": "http", "path": "/status"}, {"type": "websocket", "path": "/ws"},
                  {"type": "websocket", "path": "/relay/pair"},
                  {"type": "http", "path": "/relay"}, {"type": "lifespan"}):
        async def nothing() -> dict[str, Any]:
            raise AssertionError("the door read a request it does not serve")

        async def no_send(message: Any) -> None:
            raise AssertionError("the door answered a request it does not serve")

        await door(dict(scope), nothing, no_send)
    assert app.paths == [("http", "/status"), ("websocket", "/ws"),
                         ("websocket", "/relay/pair"), ("http", "/relay"), ("lifespan", "")]


async def test_the_answer_is_one_complete_json_body(tmp_path: Path) -> None:
    store = PairingStore(tmp_path)
    status, answer, sent = await post(door_for(store), body=code_body(
        store.new_code("work").code))
    assert status == 200 and answer["profile"] == "work"
    assert sent[1]["more_body"] is False and len(sent) == 2
    headers = dict(sent[0]["headers"])
    assert headers[b"content-type"] == b"application/json"
    assert headers[b"content-length"] == str(len(sent[1]["body"])).encode()


async def test_the_host_must_be_the_control_host_exactly_once(tmp_path: Path) -> None:
    store = PairingStore(tmp_path)
    door = door_for(store, extra_hosts=["Browserd.Test:8443"])
    for host in (b"127.0.0.1", b"127.0.0.1:80", b"localhost:1", b"evil.test:18791"):
        status, answer, _ = await post(door, [(b"host", host), JSON, ORIGIN], body=b"{}")
        assert (status, answer["code"]) == (421, "MISDIRECTED_HOST"), host
    status, _, _ = await post(door, [HOST, HOST, JSON, ORIGIN], body=b"{}")
    assert status == 421  # two Host headers, even good ones
    status, _, _ = await post(door, [JSON, ORIGIN], body=b"{}")
    assert status == 421
    for host in (b"localhost:18791", b"[::1]:18791", b"browserd.test:8443", b"LOCALHOST:18791"):
        status, answer, _ = await post(door, [(b"host", host), JSON, ORIGIN],
                                       body=code_body(store.new_code("work").code))
        assert status == 200, (host, answer)


async def test_on_port_80_the_host_may_leave_the_port_out(tmp_path: Path) -> None:
    store = PairingStore(tmp_path)
    door = door_for(store, port=80)
    for host in (b"127.0.0.1", b"localhost", b"[::1]", b"127.0.0.1:80"):
        status, answer, _ = await post(door, [(b"host", host), JSON, ORIGIN],
                                       body=code_body(store.new_code("work").code))
        assert status == 200, (host, answer)
    status, _, _ = await post(door, [(b"host", b"127.0.0.1:18791"), JSON, ORIGIN],
                              body=code_body(store.new_code("work").code))
    assert status == 421


async def test_pairing_is_a_post_of_json(tmp_path: Path) -> None:
    store = PairingStore(tmp_path)
    door = door_for(store)
    code = store.new_code("work").code
    status, answer, _ = await post(door, method="GET", body=code_body(code))
    assert (status, answer["code"]) == (405, "METHOD_NOT_ALLOWED")
    for types in ([b"text/plain"], [b"application/json", b"application/json"], []):
        headers = [HOST, ORIGIN, *((b"content-type", t) for t in types)]
        status, answer, _ = await post(door, headers, body=code_body(code))
        assert (status, answer["code"]) == (415, "UNSUPPORTED_MEDIA_TYPE"), types
    status, _, _ = await post(door, [HOST, ORIGIN, (b"content-type",
                                                    b" Application/JSON; charset=utf-8")],
                              body=code_body(code))
    assert status == 200


async def test_the_body_is_read_whole_up_to_its_limit(tmp_path: Path) -> None:
    store = PairingStore(tmp_path)
    door = door_for(store)
    code = store.new_code("work").code
    status, answer, _ = await post(door, body=code_body(code, 4097))
    assert (status, answer["code"]) == (413, "BODY_TOO_LARGE")
    status, answer, _ = await post(door, body=code_body(code), disconnect_first=True)
    assert (status, answer["code"]) == (400, "BAD_REQUEST")
    whole = code_body(code, 4096)
    status, answer, _ = await post(door, body=[whole[:100], whole[100:]])  # in two parts
    assert status == 200, answer


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]", b'{"code": 5}', b'{"code": "  "}',
                                  b'{"other": "x"}', b"\"ABCD-EFGH\""])
async def test_a_body_without_a_code_is_a_bad_request(tmp_path: Path, body: bytes) -> None:
    store = PairingStore(tmp_path)
    store.new_code("work")
    status, answer, _ = await post(door_for(store), body=body)
    assert (status, answer["code"]) == (400, "BAD_REQUEST"), answer
    assert store.failed_exchanges == 0  # never looked at as a code


async def test_a_successful_pairing_forgets_the_connections_wrong_codes(tmp_path: Path) -> None:
    store = PairingStore(tmp_path)
    door = door_for(store)
    connection = ("127.0.0.1", 40000)
    for _ in range(2):
        status, _, _ = await post(door, body=code_body("ZZZZ-ZZZZ"), client=connection)
        assert status == 403
    assert door.throttle.failures(connection) == 2
    status, _, _ = await post(door, body=code_body(store.new_code("work").code),
                              client=connection)
    assert status == 200 and door.throttle.failures(connection) == 0


async def test_connections_are_told_apart_by_address_and_port(tmp_path: Path) -> None:
    store = PairingStore(tmp_path)
    door = door_for(store)
    for _ in range(3):
        await post(door, body=code_body("ZZZZ-ZZZZ"), client=("127.0.0.1", 5000))
    status, _, _ = await post(door, body=code_body(store.new_code("work").code),
                              client=("::1", 5000))
    assert status == 200
    assert door.throttle.failures(("127.0.0.1", 5000)) == 3
    # Without a usable client in the scope, requests are paced but never counted.
    for client in (None, ("127.0.0.1",), ("127.0.0.1", "5000")):
        status, _, _ = await post(door, body=code_body("ZZZZ-ZZZZ"), client=client)
        assert status == 403


# -- the door: the /relay WebSocket's handshake and hello ----------------------------------


def ws_scope(host: bytes = HOST[1], *, response_extension: bool = True) -> dict[str, Any]:
    scope: dict[str, Any] = {"type": "websocket", "path": "/relay",
                             "client": ("127.0.0.1", 40000),
                             "headers": [(b"host", host), ORIGIN]}
    if response_extension:
        scope["extensions"] = {"websocket.http.response": {}}
    return scope


async def converse(door: RelayDoor, scope: dict[str, Any], *frames: dict[str, Any],
                   answers: int = 1) -> list[dict[str, Any]]:
    """Connect, send ``frames``; the first ``answers`` messages the door sent back."""
    to_door, door_in = trio.open_memory_channel[dict[str, Any]](100)
    door_out, from_door = trio.open_memory_channel[dict[str, Any]](100)
    heard: list[dict[str, Any]] = []
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(door, scope, door_in.receive, door_out.send)
            await to_door.send({"type": "websocket.connect"})
            for frame in frames:
                await to_door.send(frame)
            while len(heard) < answers:
                heard.append(await from_door.receive())
            nursery.cancel_scope.cancel()
    return heard


def text(**message: Any) -> dict[str, Any]:
    return {"type": "websocket.receive", "text": json.dumps(message)}


async def test_a_handshake_to_another_host_is_refused_before_it_is_accepted(
        tmp_path: Path) -> None:
    store = PairingStore(tmp_path)
    store.exchange(store.new_code("work").code, EXT_ID)
    door = door_for(store)
    start, body = await converse(door, ws_scope(b"evil.test:18791"), answers=2)
    assert (start["type"], start["status"]) == ("websocket.http.response.start", 421)
    assert body["type"] == "websocket.http.response.body"
    assert json.loads(body["body"])["code"] == "MISDIRECTED_HOST"
    # A server without the response extension can only close the handshake.
    (closed,) = await converse(door, ws_scope(b"evil.test:18791", response_extension=False))
    assert closed == {"type": "websocket.close", "code": 1008}


@pytest.mark.parametrize("first", [
    {"type": "websocket.receive", "text": "[1, 2]"},
    {"type": "websocket.receive", "text": "not json"},
    text(type="pong"),
    {"type": "websocket.receive", "bytes": b'{"type": "ping"}'},
])
async def test_a_first_message_that_is_not_a_hello_is_refused(tmp_path: Path,
                                                              first: dict[str, Any]) -> None:
    store = PairingStore(tmp_path)
    store.exchange(store.new_code("work").code, EXT_ID)
    accept, refused, closed = await converse(door_for(store), ws_scope(), first, answers=3)
    assert accept["type"] == "websocket.accept"
    assert json.loads(refused["text"])["code"] == "UNAUTHORIZED"
    assert "hello" in json.loads(refused["text"])["message"]
    assert closed == {"type": "websocket.close", "code": 4401}


async def test_a_hello_may_come_as_a_binary_frame(tmp_path: Path) -> None:
    store = PairingStore(tmp_path)
    _, token = store.exchange(store.new_code("work").code, EXT_ID)
    hello = json.dumps({"type": "hello", "token": token}).encode()
    _, welcome = await converse(door_for(store), ws_scope(),
                                {"type": "websocket.receive", "bytes": hello, "text": None},
                                answers=2)
    assert json.loads(welcome["text"])["type"] == "welcome"
