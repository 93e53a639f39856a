"""S1, S3, S4: who the control API guard lets through, driven as an ASGI callable: the
Host (421), the Origin and Sec-Fetch-Site (403), the open paths, the token (401, the
rate limit on wrong ones: 429), OPTIONS (405), websockets refused before accept, the
principal it names, and the token itself (its length, kept out of reprs and logs).

Every refusal asserts that the wrapped app was never called (no side effect)
and that no ``Access-Control-*`` header was sent. Request bodies:
test_guard_bodies.py; under hypercorn: test_guard_hypercorn.py.
"""

from __future__ import annotations

import hmac
import logging
from typing import Any

import pytest

from browserd.errors import ConfigError
from browserd.http.guard import AUTH_FAILURE_LIMIT, Guard
from tests.unit._guard_fixtures import (
    AUTH,
    GOOD_HOST,
    PORT,
    TOKEN,
    FakeClock,
    Inner,
    assert_refused,
    assert_secure,
    clock,
    drive,
    guard,
    inner,
    make_scope,
    token_off_by_one,
)

__all__ = ["clock", "guard", "inner"]


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


@pytest.mark.parametrize(
    "auth_headers",
    [
        [],
        [("authorization", "Bearer wrong-token-wrong-token-wrong")],
        [("authorization", f"Bearer {token_off_by_one(TOKEN)}")],
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


# -- websockets ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ([("host", "evil.test"), AUTH], 421),
        ([("host", GOOD_HOST), ("origin", "https://evil.test"), AUTH], 403),
        ([("host", GOOD_HOST), ("origin", "null"), AUTH], 403),
        ([("host", GOOD_HOST)], 401),
        ([("host", GOOD_HOST), ("authorization", f"Bearer {token_off_by_one(TOKEN)}")], 401),
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


# -- the token itself ------------------------------------------------------------------


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
