"""S5: what a request may carry through the control API guard and what goes back,
driven as an ASGI callable: JSON bodies only (415), sizes declared and streamed
(413, 400), the app cut off once a body is over the limit, refusals that close the
connection, and the answer's headers (CORS stripped, security headers set), HEAD,
lifespan and unknown scope types.

Every refusal asserts that the wrapped app was never called (no side effect)
and that no ``Access-Control-*`` header was sent.
"""

from __future__ import annotations

import logging

import pytest
import trio

from browserd.http.guard import Guard, Message, Receive, Scope, Send
from tests.unit._guard_fixtures import (
    AUTH,
    GOOD_HOST,
    JSON,
    PORT,
    TOKEN,
    Inner,
    assert_refused,
    assert_secure,
    clock,
    drive,
    guard,
    inner,
    make_scope,
)

__all__ = ["clock", "guard", "inner"]


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


# -- what the docs promise, to the number ---------------------------------------------------


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
