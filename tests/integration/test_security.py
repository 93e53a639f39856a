"""Control API security against the real service and a real Chromium (RELIABILITY.md S1-S9).

Every refusal is followed by proof that nothing happened: the service's tab
list, the browser's own target list (``/json/list`` on the DevTools port) and
the browser pid are unchanged, no page was opened on a marker URL, and no
JavaScript ran. Attacks are aimed at ``sec_marker.html?hit=<tag>-<name>``:
opening it (a tab) or fetching it (an eval payload) is recorded by the page
server, so a successful attack cannot go unseen; ``test_detectors_see_*``
shows that the same detectors do see the legitimate equivalents.

The per-request policy (every header combination, the rate limiter, the
token file) is covered request by request in tests/unit/test_guard.py and
tests/unit/test_token.py; this module proves it holds end to end.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import attrs
import httpx
import orjson
import pytest
import trio
from supervision import chromium as plain
from supervision.harness import LOOPBACK_TLS

from tests.conftest import (
    PageServer,
    ServiceInfo,
    add_route,
    free_port_pair,
    start_service,
    stop_service,
)
from tests.integration._rawcdp import launch_chromium, open_cdp
from tests.integration.helpers import ok, post
from tests.integration.test_lifecycle import profile_processes

pytestmark = pytest.mark.chromium

MARKER_TITLE = "sec marker"


# -- detectors -------------------------------------------------------------------


class HitLog:
    """Paths of ``sec_marker.html?hit=…`` requests the page servers answered (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._paths: list[str] = []

    def record(self, path: str) -> None:
        with self._lock:
            self._paths.append(path)

    def matching(self, tag: str) -> list[str]:
        with self._lock:
            return [p for p in self._paths if f"hit={tag}-" in p]


HITS = HitLog()


def _serve_marker(handler: http.server.SimpleHTTPRequestHandler) -> None:
    if "hit=" in handler.path:
        HITS.record(handler.path)
    http.server.SimpleHTTPRequestHandler.do_GET(handler)


@pytest.fixture(scope="module")
def hits(pages: PageServer, other_origin: PageServer) -> HitLog:
    add_route("/sec_marker.html", _serve_marker)
    return HITS


def new_tag() -> str:
    return "t" + secrets.token_hex(5)


def hit_url(pages: PageServer, tag: str, name: str) -> str:
    return pages.url("/sec_marker.html") + f"?hit={tag}-{name}"


def eval_payload(pages: PageServer, tag: str, name: str) -> str:
    """JavaScript that, if it ever ran, reports itself to the page server and marks the page."""
    return (f"fetch({orjson.dumps(hit_url(pages, tag, 'eval-' + name)).decode()},"
            f"{{mode:'no-cors'}});window.__sec_pwned={orjson.dumps(name).decode()};"
            "document.title='pwned'")


@attrs.frozen(kw_only=True)
class Marker:
    """A tab showing sec_marker.html: where eval payloads are aimed."""

    target_id: str
    url: str


@pytest.fixture
async def marker(api: httpx.AsyncClient, pages: PageServer, hits: HitLog
                 ) -> AsyncIterator[Marker]:
    r = await api.post("/tabs/open", json={"url": pages.url("/sec_marker.html")})
    assert r.status_code == 200, r.text
    info = r.json()
    yield Marker(target_id=info["targetId"], url=info["url"])
    await api.post("/tabs/close", json={"targetId": info["targetId"]})


@attrs.frozen(kw_only=True)
class World:
    """What an attack could change: tabs, browser targets, the browser process."""

    tabs: frozenset[str]
    pages: dict[str, str]  # page targetId -> URL, from the DevTools port itself
    pid: int | None


async def observe(api: httpx.AsyncClient, cdp_port: int) -> World:
    r = await api.get("/tabs")
    assert r.status_code == 200, r.text
    status = (await api.get("/status")).json()
    # The CDP port is browserd's gateway now: the same token, the listed tabs.
    async with httpx.AsyncClient(timeout=10, headers=api.headers, verify=LOOPBACK_TLS) as raw:
        targets = (await raw.get(f"http://127.0.0.1:{cdp_port}/json/list")).json()
    tabs = frozenset(t["targetId"] for t in r.json()["tabs"])
    return World(
        tabs=tabs,
        # browserd keeps one unlisted about:blank spare tab in headless mode; it
        # is replaced whenever /tabs/open hands it out, so it is not an attack's
        pages={t["id"]: t["url"] for t in targets if t["type"] == "page"
               and (t["id"] in tabs or t["url"] != "about:blank")},
        pid=status["pid"],
    )


async def page_eval(api: httpx.AsyncClient, target_id: str, js: str) -> Any:
    r = await api.post("/eval", json={"js": js, "targetId": target_id})
    assert r.status_code == 200, r.text
    return r.json()["result"]


async def page_eval_awaited(api: httpx.AsyncClient, target_id: str, js: str) -> Any:
    r = await api.post("/eval", json={"js": js, "targetId": target_id, "await": True})
    assert r.status_code == 200, r.text
    return r.json()["result"]


async def browser_barrier(evaluate: Callable[[str], Awaitable[Any]], page_url: str) -> None:
    """Fetch a fresh sentinel from ``page_url``'s server inside the page; wait until it arrives."""
    sentinel = new_tag()
    url = page_url.split("?")[0] + f"?hit={sentinel}-barrier"
    status = await evaluate(
        f"fetch({orjson.dumps(url).decode()}, {{cache: 'no-store'}}).then(r => r.status)")
    assert status == 200
    with trio.fail_after(30):
        while not HITS.matching(sentinel):
            await trio.sleep(0.02)


async def assert_untouched(
    api: httpx.AsyncClient, service: ServiceInfo, before: World, tag: str,
    marker: Marker | None, *, extra_tabs: frozenset[str] = frozenset(),
) -> None:
    """No tab opened or closed, no browser restart, no marker hit, no JS run in ``marker``.

    Every attack was answered before this runs. Instead of watching a fixed
    while for late effects, a barrier: the marker tab (through its own work
    queue, behind anything an attack could have queued there) fetches a
    sentinel from the page server, and we wait until the server has it — so
    whatever the browser was asked to load before has been sent by then.
    """
    if marker is not None:
        await browser_barrier(
            lambda js: page_eval_awaited(api, marker.target_id, js), marker.url)
    after = await observe(api, service.cdp_port)
    assert after.tabs == before.tabs | extra_tabs
    assert set(after.pages) == set(before.pages) | extra_tabs
    assert after.pid == before.pid, "the browser was stopped or restarted"
    assert not [u for u in after.pages.values() if "hit=" in u], after.pages
    assert HITS.matching(tag) == []
    if marker is not None:
        state = await page_eval(api, marker.target_id,
                                "[typeof window.__sec_pwned, document.title, location.href]")
        assert state == ["undefined", MARKER_TITLE, marker.url]


def assert_hardened(r: httpx.Response) -> None:
    """No CORS header ever; the guard's fixed headers always."""
    cors = [k for k in r.headers if k.lower().startswith("access-control-")]
    assert not cors, (r.request.method, r.request.url, cors)
    assert r.headers.get("x-content-type-options") == "nosniff"
    assert r.headers.get("cache-control") == "no-store"


def assert_refused(r: httpx.Response, status: int, code: str) -> None:
    where = f"{r.request.method} {r.request.url}"
    assert r.status_code == status, (where, r.status_code, r.text[:300])
    assert_hardened(r)
    if r.request.method != "HEAD":
        assert r.json()["code"] == code, (where, r.text[:300])
    if status == 401:
        assert r.headers.get("www-authenticate") == "Bearer"


def fill_path(path: str, marker: Marker) -> str:
    path = path.replace("{targetId}", marker.target_id)
    return re.sub(r"\{[^}]+\}", "x", path)


def attack_body(path: str, pages: PageServer, tag: str, name: str, marker: Marker
                ) -> dict[str, Any]:
    """The most harmful body each route takes, aimed at the marker."""
    if path == "/tabs/open":
        return {"url": hit_url(pages, tag, name)}
    if path == "/navigate":
        return {"url": hit_url(pages, tag, name), "targetId": marker.target_id}
    if path == "/eval":
        return {"js": eval_payload(pages, tag, name), "targetId": marker.target_id}
    if path == "/start":
        return {"headless": False}
    if path == "/stop":
        return {}
    return {"targetId": marker.target_id}


# -- the detectors work ------------------------------------------------------------


async def test_detectors_see_a_real_eval_and_a_real_tab(
    api: httpx.AsyncClient, service: ServiceInfo, pages: PageServer, hits: HitLog,
) -> None:
    """With the token, the same payloads the attacks use do leave the traces we look for."""
    tag = new_tag()
    with trio.fail_after(30):
        before = await observe(api, service.cdp_port)
        r = await api.post("/tabs/open", json={"url": pages.url("/hello.html")})
        scratch = r.json()["targetId"]
        r = await api.post("/tabs/open", json={"url": hit_url(pages, tag, "control-open")})
        opened = r.json()["targetId"]
        try:
            await page_eval(api, scratch, eval_payload(pages, tag, "control-eval"))
            assert await page_eval(api, scratch, "window.__sec_pwned") == "control-eval"
            while len(hits.matching(tag)) < 2:
                await trio.sleep(0.05)
            after = await observe(api, service.cdp_port)
            assert after.tabs == before.tabs | {scratch, opened}
            assert f"hit={tag}-control-open" in after.pages[opened]
        finally:
            for target in (scratch, opened):
                await api.post("/tabs/close", json={"targetId": target})


# -- S1: the token, on every route ---------------------------------------------------


def _flip(ch: str) -> str:
    return "B" if ch == "A" else "A"


def _guesses(token: str) -> list[tuple[str, str]]:
    """Authorization headers that are not the right token (each counts as a guess)."""
    mid = len(token) // 2
    return [
        ("random", f"Bearer {secrets.token_urlsafe(32)}"),
        ("last-byte", f"Bearer {token[:-1]}{_flip(token[-1])}"),
        ("first-byte", f"Bearer {_flip(token[0])}{token[1:]}"),
        ("middle-byte", f"Bearer {token[:mid]}{_flip(token[mid])}{token[mid + 1:]}"),
        ("one-short", f"Bearer {token[:-1]}"),
        ("one-long", f"Bearer {token}A"),
        ("scheme-basic", f"Basic {token}"),
        ("scheme-token", f"Token {token}"),
        ("no-scheme", token),
        ("swapped-case", f"Bearer {token.swapcase()}"),
        ("bearer-only", "Bearer"),
        ("two-tokens", f"Bearer {token} {token}"),
    ]


async def test_s1_every_route_refuses_without_the_exact_token(
    api: httpx.AsyncClient, service: ServiceInfo, pages: PageServer, marker: Marker,
) -> None:
    tag = new_tag()
    token = service.token
    with trio.fail_after(60):
        spec = (await api.get("/openapi.json")).json()
        ops = [(method.upper(), path) for path, item in spec["paths"].items() for method in item]
        assert len(ops) >= 20 and ("POST", "/eval") in ops and ("POST", "/tabs/open") in ops
        ops = [op for op in ops if op != ("GET", "/healthz")]
        ops += [("GET", "/openapi.json"), ("GET", "/no/such/route"), ("POST", "/no/such/route"),
                ("OPTIONS", "/tabs/open"), ("OPTIONS", "/no/such/route"), ("HEAD", "/tabs"),
                ("PUT", "/tabs/open"), ("OPTIONS", "/healthz"), ("POST", "/healthz")]
        before = await observe(api, service.cdp_port)
        sent = 0
        async with httpx.AsyncClient(base_url=service.base_url, timeout=15,
                                     verify=LOOPBACK_TLS) as anon:

            async def attempt(method: str, path: str, name: str, headers: dict[str, str],
                              query: str = "") -> httpx.Response:
                nonlocal sent
                body = attack_body(path, pages, tag, f"s1-{name}", marker)
                has_body = method in ("POST", "PUT", "DELETE")
                sent += 1
                return await anon.request(
                    method, fill_path(path, marker) + query,
                    content=orjson.dumps(body) if has_body else None,
                    headers={**headers, **({"Content-Type": "application/json"} if has_body
                                           else {})},
                )

            # No Authorization header at all (never a guess): every route, three ways.
            query = "?" + urlencode({"token": token, "access_token": token,
                                     "authorization": f"Bearer {token}"})
            for method, path in ops:
                for name, headers, q in (
                    ("none", {}, ""),
                    ("query", {}, query),
                    ("cookie", {"Cookie": f"token={token}; authorization=Bearer%20{token}"}, ""),
                ):
                    r = await attempt(method, path, f"{name}-{path}", headers, q)
                    assert_refused(r, 401, "UNAUTHORIZED")
            # Wrong tokens: a sample spread over the routes, staying under the guess limiter.
            guesses = _guesses(token)
            for i, (name, value) in enumerate(guesses):
                method, path = ops[(i * len(ops)) // len(guesses)]
                r = await attempt(method, path, f"guess-{name}", {"Authorization": value})
                assert_refused(r, 401, "UNAUTHORIZED")
            # /healthz is the one open route; it says nothing else.
            for headers in ({}, {"Authorization": "Bearer wrong"}):
                r = await anon.get("/healthz", headers=headers)
                assert r.status_code == 200 and set(r.json()) == {"ok", "browser"}
                assert_hardened(r)
        assert sent > 3 * len(ops)
        # The right token on the same client passes, so the 401s were about the token.
        r = await api.get("/no/such/route")
        assert (r.status_code, r.json()["code"]) == (404, "NOT_FOUND")
        r = await api.options("/tabs/open")
        assert (r.status_code, r.json()["code"]) == (405, "METHOD_NOT_ALLOWED")
        assert_hardened(r)
        await assert_untouched(api, service, before, tag, marker)
        assert marker.target_id in before.tabs


# -- S3/S4/S5: Host, Origin, body type, method ---------------------------------------


async def test_s3_s4_s5_host_origin_type_and_method_checks_over_http(
    api: httpx.AsyncClient, service: ServiceInfo, pages: PageServer, marker: Marker,
) -> None:
    """With the right token, a wrong Host/Origin/body/method is still refused."""
    tag = new_tag()
    port, cdp = service.port, service.cdp_port
    json_type = {"Content-Type": "application/json"}

    def body(path: str, name: str) -> bytes:
        return orjson.dumps(attack_body(path, pages, tag, name, marker))

    cases: list[tuple[str, str, str, dict[str, str], bytes | None, int, str]] = []
    for path in ("/tabs/open", "/eval"):
        cases += [
            (f"host-evil{path}", "POST", path, {"Host": "evil.test"}, None, 421,
             "MISDIRECTED_HOST"),
            (f"host-evil-port{path}", "POST", path, {"Host": f"evil.test:{port}"}, None, 421,
             "MISDIRECTED_HOST"),
            (f"host-nip{path}", "POST", path, {"Host": f"127.0.0.1.nip.io:{port}"}, None, 421,
             "MISDIRECTED_HOST"),
            (f"host-sub{path}", "POST", path, {"Host": f"localhost.evil.test:{port}"}, None, 421,
             "MISDIRECTED_HOST"),
            (f"host-cdp-port{path}", "POST", path, {"Host": f"127.0.0.1:{cdp}"}, None, 421,
             "MISDIRECTED_HOST"),
            (f"origin-evil{path}", "POST", path, {"Origin": "https://evil.test"}, None, 403,
             "FORBIDDEN_ORIGIN"),
            (f"origin-null{path}", "POST", path, {"Origin": "null"}, None, 403,
             "FORBIDDEN_ORIGIN"),
            (f"origin-pages{path}", "POST", path,
             {"Origin": pages.base_url}, None, 403, "FORBIDDEN_ORIGIN"),
            (f"origin-localhost-port{path}", "POST", path,
             {"Origin": f"http://localhost:{cdp}"}, None, 403, "FORBIDDEN_ORIGIN"),
            (f"origin-https-self{path}", "POST", path,
             {"Origin": f"https://127.0.0.1:{port}"}, None, 403, "FORBIDDEN_ORIGIN"),
            (f"fetch-site-cross{path}", "POST", path, {"Sec-Fetch-Site": "cross-site"}, None,
             403, "FORBIDDEN_ORIGIN"),
            (f"fetch-site-same-site{path}", "POST", path, {"Sec-Fetch-Site": "same-site"}, None,
             403, "FORBIDDEN_ORIGIN"),
            (f"text-plain{path}", "POST", path, {"Content-Type": "text/plain"}, None, 415,
             "UNSUPPORTED_MEDIA_TYPE"),
            (f"text-plain-charset{path}", "POST", path,
             {"Content-Type": "text/plain;charset=UTF-8"}, None, 415, "UNSUPPORTED_MEDIA_TYPE"),
            (f"form{path}", "POST", path,
             {"Content-Type": "application/x-www-form-urlencoded"},
             urlencode(attack_body(path, pages, tag, f"form{path}", marker)).encode(), 415,
             "UNSUPPORTED_MEDIA_TYPE"),
            (f"multipart{path}", "POST", path,
             {"Content-Type": "multipart/form-data; boundary=xx"},
             b"--xx\r\nContent-Disposition: form-data; name=\"url\"\r\n\r\n"
             + hit_url(pages, tag, f"multipart{path}").encode() + b"\r\n--xx--\r\n", 415,
             "UNSUPPORTED_MEDIA_TYPE"),
            (f"no-type{path}", "POST", path, {}, None, 415, "UNSUPPORTED_MEDIA_TYPE"),
            (f"json-in-disguise{path}", "POST", path, {"Content-Type": "application/jsonx"},
             None, 415, "UNSUPPORTED_MEDIA_TYPE"),
            (f"get{path}", "GET", path, {}, b"", 405, "METHOD_NOT_ALLOWED"),
            (f"preflight{path}", "OPTIONS", path,
             {"Origin": "https://evil.test", "Access-Control-Request-Method": "POST",
              "Access-Control-Request-Headers": "authorization,content-type"}, b"", 403,
             "FORBIDDEN_ORIGIN"),
            (f"preflight-no-origin{path}", "OPTIONS", path,
             {"Access-Control-Request-Method": "POST"}, b"", 405, "METHOD_NOT_ALLOWED"),
        ]
    for path in ("/stop", "/tabs/close", "/start"):
        cases.append((f"get{path}", "GET", path, {}, b"", 405, "METHOD_NOT_ALLOWED"))
    with trio.fail_after(40):
        before = await observe(api, service.cdp_port)
        for name, method, path, headers, content, status, code in cases:
            if content is None:
                content = body(path, name)
                headers = {**json_type, **headers} if "Content-Type" not in headers and (
                    not name.startswith("no-type")) else headers
            r = await api.request(method, path, headers=headers, content=content or None)
            assert_refused(r, status, code)
        # A request with no Host header at all (HTTP/1.0 allows it; h11 would not send it).
        raw = await missing_host_request(port, service.token, body("/tabs/open", "no-host"))
        assert raw.split(b"\r\n", 1)[0].split(b" ")[1] == b"421", raw[:200]
        assert b"access-control-" not in raw.lower()
        # Controls: our own origin and same-origin fetch metadata pass (the same client).
        for headers in ({"Origin": f"http://127.0.0.1:{port}"}, {"Origin": f"http://localhost:{port}"},
                        {"Sec-Fetch-Site": "same-origin"}, {"Sec-Fetch-Site": "none"}):
            r = await api.get("/tabs", headers=headers)
            assert r.status_code == 200, (headers, r.text)
            assert_hardened(r)
        await assert_untouched(api, service, before, tag, marker)


async def missing_host_request(port: int, token: str, body: bytes) -> bytes:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        await stream.send_all(
            b"POST /tabs/open HTTP/1.0\r\nAuthorization: Bearer " + token.encode()
            + b"\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\n\r\n" + body)
        data = b""
        while chunk := await stream.receive_some(65536):
            data += chunk
    return data


# -- S6: real pages in real browsers --------------------------------------------------

EXPECTED_ATTACKS = {
    "fetch-cors:open@ip:json-auth", "fetch-cors:eval@ip:json-auth", "fetch-cors:open@ip:text",
    "fetch-cors:eval@localhost:text", "fetch-nocors:open@ip:text", "fetch-nocors:eval@ip:text",
    "fetch-nocors:open@ip:json-auth", "fetch-nocors:eval@ip:blob-json",
    "fetch-nocors:open@localhost:urlencoded", "fetch-nocors:eval@ip:multipart",
    "beacon:open@ip:text", "beacon:eval@ip:text", "fetch-cors:read-tabs",
    "fetch-nocors:read-tabs", "fetch-cors:read-openapi", "fetch-cors:cdp-version",
    "fetch-cors:cdp-list", "fetch-nocors:cdp-list", "fetch-cors:cdp-new-put",
    "fetch-nocors:cdp-new-get", "img:open", "img:eval", "img:cdp-new", "form:open-textplain",
    "form:eval-textplain", "form:open-urlencoded", "form:eval-multipart", "ws:control-root",
    "ws:control-eval", "ws:cdp-browser", "ws:cdp-page",
}


def assert_page_could_do_nothing(results: dict[str, Any]) -> None:
    """Every observation the attack page made shows a refusal it could not read."""
    missing = EXPECTED_ATTACKS - set(results)
    assert not missing, f"the attack page did not run: {sorted(missing)}"
    for name, seen in results.items():
        kind = name.split(":", 1)[0]
        if kind == "fetch-cors":
            assert set(seen) == {"error"}, (name, seen)  # a CORS failure: nothing to read
        elif kind == "fetch-nocors":
            assert seen == {"type": "opaque", "status": 0, "body": "", "headers": []} or (
                set(seen) == {"error"}), (name, seen)
        elif kind == "img":
            assert seen == {"loaded": False}, (name, seen)
        elif kind == "form":
            assert seen["submitted"] and seen["readable"] is False and seen["text"] is None, (
                name, seen)
        elif kind == "ws":
            assert seen["opened"] is False and seen["messages"] == [], (name, seen)
            assert seen["error"] or seen["closed"], (name, seen)
        elif kind == "beacon":
            assert set(seen) == {"queued"}, (name, seen)
        else:
            raise AssertionError(f"unknown observation {name}: {seen}")


REFUSAL_RE = re.compile(r"refused ([A-Z]+ '[^']*') from \S+ (\d{3} [A-Z_]+)$")


def refusals(service: ServiceInfo) -> dict[tuple[str, str], int]:
    """How often the guard logged each (request, outcome) refusal so far."""
    counts: dict[tuple[str, str], int] = {}
    text = (service.home / "logs" / "browserd.log").read_text(errors="replace")
    for line in text.splitlines():
        if m := REFUSAL_RE.search(line):
            counts[(m[1], m[2])] = counts.get((m[1], m[2]), 0) + 1
    return counts


def assert_guard_refused_the_attacks(service: ServiceInfo, before: dict[tuple[str, str], int]
                                     ) -> None:
    """The attacks did reach browserd (so the browser did not just drop them) and were refused."""
    after = refusals(service)
    new = {key: n - before.get(key, 0) for key, n in after.items() if n > before.get(key, 0)}
    origin = "403 FORBIDDEN_ORIGIN"
    assert {outcome for _, outcome in new} == {origin}, new
    assert new.get(("POST '/tabs/open'", origin), 0) >= 14, new
    assert new.get(("POST '/eval'", origin), 0) >= 14, new
    for request in ("OPTIONS '/tabs/open'", "OPTIONS '/eval'", "GET '/tabs/open'",
                    "GET '/eval'", "WEBSOCKET '/'", "WEBSOCKET '/eval'"):
        assert (request, origin) in new, (request, new)


async def browser_ws_id(service: ServiceInfo) -> str:
    async with httpx.AsyncClient(timeout=10, headers=service.headers, verify=LOOPBACK_TLS) as raw:
        version = (await raw.get(f"http://127.0.0.1:{service.cdp_port}/json/version")).json()
    return str(version["webSocketDebuggerUrl"]).rsplit("/", 1)[1]


def attack_url(other_origin: PageServer, pages: PageServer, *, cp: int, dp: int, bid: str,
               tok: str, tid: str, tag: str) -> str:
    query = urlencode({"cp": cp, "dp": dp, "bid": bid, "tok": tok,
                       "mk": pages.url("/sec_marker.html"), "tid": tid, "tag": tag})
    url = other_origin.url("/sec_attack.html") + "?" + query
    assert urlsplit(url).hostname == "localhost"  # another site than 127.0.0.1
    return url


async def wait_results(evaluate: Callable[[str], Awaitable[Any]]) -> dict[str, Any]:
    while True:
        text = await evaluate("window.__secDone ? JSON.stringify(window.__secResults) : ''")
        if text:
            results: dict[str, Any] = orjson.loads(text)
            return results
        await trio.sleep(0.1)


async def test_s6_attack_page_in_a_separate_browser(
    api: httpx.AsyncClient, service: ServiceInfo, pages: PageServer, other_origin: PageServer,
    marker: Marker,
) -> None:
    """A page in another browser, even knowing the token, gets nothing from either port.

    Control: the same page aimed at a DevTools port that does allow its origin
    (the attacking browser's own, started with ``--remote-allow-origins``)
    does open the socket and create a target, so the check can fail.
    """
    tag, control_tag = new_tag(), new_tag()
    with trio.fail_after(60):
        bid = await browser_ws_id(service)
        before = await observe(api, service.cdp_port)
        logged = refusals(service)
        url = attack_url(other_origin, pages, cp=service.port, dp=service.cdp_port, bid=bid,
                         tok=service.token, tid=marker.target_id, tag=tag)
        allow = f"--remote-allow-origins={other_origin.base_url}"
        with launch_chromium(extra_args=(allow,)) as ws_url:
            async with open_cdp(ws_url) as cdp:

                async def run_page(page_url: str) -> dict[str, Any]:
                    target = await cdp.send("Target.createTarget", {"url": page_url})
                    attached = await cdp.send("Target.attachToTarget",
                                              {"targetId": target["targetId"], "flatten": True})

                    async def evaluate(expression: str) -> Any:
                        reply = await cdp.send(
                            "Runtime.evaluate", {"expression": expression, "returnByValue": True},
                            session_id=attached["sessionId"])
                        return reply["result"].get("value")

                    results = await wait_results(evaluate)
                    assert await evaluate("typeof window.__sec_pwned") == "undefined"
                    return results

                results = await run_page(url)
                own = urlsplit(ws_url)
                assert own.port is not None
                control = attack_url(other_origin, pages, cp=free_port_pair(), dp=own.port,
                                     bid=own.path.rsplit("/", 1)[1], tok="x", tid="",
                                     tag=control_tag)
                opened = (await run_page(control))["ws:cdp-browser"]
                assert opened["opened"] is True and '"targetId"' in opened["messages"][0], opened
                while not HITS.matching(control_tag):  # the tab it opened loads the marker
                    await trio.sleep(0.05)
        assert_page_could_do_nothing(results)
        assert_guard_refused_the_attacks(service, logged)
        await assert_untouched(api, service, before, tag, marker)


async def test_s6_attack_page_inside_the_managed_browser(
    api: httpx.AsyncClient, service: ServiceInfo, pages: PageServer, other_origin: PageServer,
    marker: Marker,
) -> None:
    """The same page opened in the browser browserd drives reaches nothing either."""
    tag = new_tag()
    with trio.fail_after(60):
        bid = await browser_ws_id(service)
        before = await observe(api, service.cdp_port)
        logged = refusals(service)
        url = attack_url(other_origin, pages, cp=service.port, dp=service.cdp_port, bid=bid,
                         tok="guess-" + secrets.token_urlsafe(24), tid=marker.target_id,
                         tag=tag)
        r = await api.post("/tabs/open", json={"url": url})
        assert r.status_code == 200, r.text
        attack_tab = r.json()["targetId"]
        try:
            results = await wait_results(functools.partial(page_eval, api, attack_tab))
            assert await page_eval(api, attack_tab, "typeof window.__sec_pwned") == "undefined"
            assert_page_could_do_nothing(results)
            assert_guard_refused_the_attacks(service, logged)
            await assert_untouched(api, service, before, tag, marker,
                                   extra_tabs=frozenset({attack_tab}))
        finally:
            await api.post("/tabs/close", json={"targetId": attack_tab})


# -- S7: the bind policy --------------------------------------------------------------


def _serve_env(home: Path, control_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSERD_")}
    return {**env, "BROWSERD_HOME": str(home), "BROWSERD_CONTROL_URL": control_url,
            "BROWSERD_HEADLESS": "1", **extra}


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


async def test_s7_non_loopback_bind_without_opt_in_refuses_to_start(tmp_path: Path) -> None:
    """``[::]`` with no opt-in and a LAN address with an explicit ``false``: both refuse."""
    cases = [("[::]", {}), ("192.0.2.10", {"BROWSERD_ALLOW_REMOTE_CONTROL": "0"})]
    ports = [free_port_pair() for _ in cases]
    done: dict[str, subprocess.CompletedProcess[bytes]] = {}

    async def serve(i: int, host: str, port: int, extra: dict[str, str]) -> None:
        env = _serve_env(tmp_path / f"home{i}", f"http://{host}:{port}", **extra)
        done[host] = await trio.run_process(
            [sys.executable, "-m", "browserd", "serve"], env=env,
            capture_stdout=True, capture_stderr=True, check=False)

    with trio.fail_after(40):
        async with trio.open_nursery() as nursery:
            for i, ((host, extra), port) in enumerate(zip(cases, ports, strict=True)):
                nursery.start_soon(serve, i, host, port, extra)
    for i, ((host, _), port) in enumerate(zip(cases, ports, strict=True)):
        r = done[host]
        err = r.stderr.decode(errors="replace")
        assert r.returncode != 0, (host, err)
        assert "non-loopback" in err and "allow_remote_control" in err, err
        assert not _listening(port) and not _listening(port + 1)
        profile = tmp_path / f"home{i}" / "data" / "profiles" / "clawd"
        assert not profile.exists(), "nothing was launched"


async def test_s7_remote_bind_over_plain_http_refuses_even_with_opt_in(tmp_path: Path) -> None:
    """``allow_remote_control`` opens a non-loopback bind only over TLS: plain HTTP would
    carry the token in clear. (Over TLS, off loopback, the token is still required:
    tests/integration/test_tls.py, in a network namespace of its own.)"""
    port = free_port_pair()
    env = _serve_env(tmp_path / "home", f"http://0.0.0.0:{port}",
                     BROWSERD_ALLOW_REMOTE_CONTROL="1", BROWSERD_ENABLED="0")
    with trio.fail_after(40):
        r = await trio.run_process([sys.executable, "-m", "browserd", "serve"], env=env,
                                   capture_stdout=True, capture_stderr=True, check=False)
    err = r.stderr.decode(errors="replace")
    assert r.returncode != 0, err
    assert "plain HTTP" in err and 'tls = "self-signed"' in err, err
    assert not _listening(port) and not _listening(port + 1)


# -- S8: another Chrome on our DevTools port ------------------------------------------


@contextlib.asynccontextmanager
async def plain_chromium(cdp_port: int, profile: Path) -> AsyncIterator[subprocess.Popen[bytes]]:
    """A Chromium that browserd did not launch, listening on ``cdp_port``; killed on exit."""
    chromium = await trio.to_thread.run_sync(functools.partial(
        plain.launch_chromium, profile, cdp_port=cdp_port))
    try:
        yield chromium.proc
    finally:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(chromium.stop)
        shutil.rmtree(profile, ignore_errors=True)


async def test_s8_another_chrome_on_the_cdp_port_is_refused_untouched(tmp_path: Path) -> None:
    """The CDP port is browserd's gateway: another Chrome holding it stops the service
    at start with PORT_IN_USE naming it; nothing is launched and nobody drives it."""
    port = free_port_pair()
    with trio.fail_after(60):
        async with (
            plain_chromium(port + 1, tmp_path / "other-chrome") as chrome,
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port + 1}", timeout=10,
                              verify=LOOPBACK_TLS) as devtools,
        ):
            version = (await devtools.get("/json/version")).json()
            targets = sorted((t["id"], t["type"], t["url"])
                             for t in (await devtools.get("/json/list")).json())
            assert targets, "the other Chrome has a page"
            home = tmp_path / "home"
            with pytest.raises(RuntimeError, match="browserd exited 1") as refused:
                await trio.to_thread.run_sync(functools.partial(
                    start_service, home, port=port, wait_browser=False))
            log = str(refused.value)
            assert "PORT_IN_USE" in log or "already held" in log, log
            assert f"CDP gateway port {port + 1} is already held by pid {chrome.pid}" in log
            assert not profile_processes(home / "data" / "profiles" / "clawd")
            # The other Chrome is alive and nobody drove it: same browser, same targets.
            assert chrome.poll() is None
            assert (await devtools.get("/json/version")).json() == version
            after = sorted((t["id"], t["type"], t["url"])
                           for t in (await devtools.get("/json/list")).json())
            assert after == targets
            token = (home / "config" / "token").read_text().strip()
            assert token not in log


# -- S9: capabilities, URL policy, argv -------------------------------------------------


@pytest.fixture(scope="module")
def locked_down(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceInfo]:
    """A private instance with evaluate_enabled = false (and a real browser)."""
    info = start_service(tmp_path_factory.mktemp("locked"),
                         env={"BROWSERD_EVALUATE_ENABLED": "0"})
    yield info
    stop_service(info)


async def test_s9_wait_needs_eval_unless_url_or_load_state(locked_down: ServiceInfo) -> None:
    """/wait for a selector or text runs the page's script: refused with eval off;
    waiting for a URL or a load state needs none and works."""
    with trio.fail_after(30):
        async with locked_down.client() as api:
            r = await api.post("/tabs/open", json={"url": "about:blank"})
            tab = r.json()["targetId"]
            for body in ({"selector": "p"}, {"text": "x"}, {"textGone": "x"}):
                r = await post(api, "/wait", tab, **body)
                assert r.status_code == 403 and r.json()["code"] == "EVAL_DISABLED", body
            r = await post(api, "/act", tab, actions=[{"kind": "wait", "selector": "p"}])
            assert r.status_code == 403
            await ok(api, "/wait", tab, url="about:blank", timeoutMs=2000)
            await ok(api, "/wait", tab, loadState="load", timeoutMs=2000)


async def test_s9_eval_disabled_is_403_and_runs_nothing(
    locked_down: ServiceInfo, pages: PageServer, hits: HitLog,
) -> None:
    tag = new_tag()
    with trio.fail_after(40):
        async with locked_down.client() as api:
            r = await api.post("/tabs/open", json={"url": pages.url("/sec_marker.html")})
            assert r.status_code == 200, r.text
            target = r.json()["targetId"]
            for i, extra in enumerate(({"targetId": target}, {}, {"await": True},
                                       {"targetId": "no-such-tab"}, {"timeoutMs": 1})):
                r = await api.post("/eval", json={"js": eval_payload(pages, tag, f"off{i}"),
                                                  **extra})
                assert_refused(r, 403, "EVAL_DISABLED")
            # Ask the browser itself, through the CDP gateway (token, no Origin).
            ws = f"ws://127.0.0.1:{locked_down.cdp_port}/devtools/page/{target}"
            async with open_cdp(ws, token=locked_down.token) as cdp:
                reply = await cdp.send("Runtime.evaluate", {
                    "expression": "[typeof window.__sec_pwned, document.title]",
                    "returnByValue": True})
                assert reply["result"]["value"] == ["undefined", MARKER_TITLE]

                async def cdp_eval(js: str) -> Any:
                    reply = await cdp.send("Runtime.evaluate", {
                        "expression": js, "awaitPromise": True, "returnByValue": True})
                    return reply["result"]["value"]

                # a barrier instead of a fixed wait: see assert_untouched
                await browser_barrier(cdp_eval, pages.url("/sec_marker.html"))
            assert hits.matching(tag) == []
            await api.post("/tabs/close", json={"targetId": target})


def blocked_urls(service: ServiceInfo, pages: PageServer) -> list[tuple[str, str]]:
    cp, cdp = service.port, service.cdp_port
    return [
        ("file:///etc/passwd", "URL_BLOCKED"),
        ("file:///etc/hostname", "URL_BLOCKED"),
        ("FILE:///etc/passwd", "URL_BLOCKED"),
        ("chrome://settings", "URL_BLOCKED"),
        ("chrome://version/", "URL_BLOCKED"),
        ("javascript:alert(1)", "URL_BLOCKED"),
        ("data:text/html,x", "URL_BLOCKED"),
        ("data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==", "URL_BLOCKED"),
        ("view-source:" + pages.url("/hello.html"), "URL_BLOCKED"),
        ("view-source:file:///etc/passwd", "URL_BLOCKED"),
        ("devtools://devtools/bundled/inspector.html", "URL_BLOCKED"),
        ("filesystem:http://127.0.0.1/temporary/x", "URL_BLOCKED"),
        ("blob:http://127.0.0.1/1234", "URL_BLOCKED"),
        ("about:version", "URL_BLOCKED"),
        (f"http://127.0.0.1:{cp}/tabs", "URL_BLOCKED"),
        (f"http://localhost:{cdp}/json", "URL_BLOCKED"),
        (f"http://127.1:{cdp}/json/version", "URL_BLOCKED"),
        (f"http://0x7f.0.0.1:{cp}/status", "URL_BLOCKED"),
        (f"http://2130706433:{cdp}/json/list", "URL_BLOCKED"),
        (f"http://[::1]:{cp}/", "URL_BLOCKED"),
        (f"http://[::ffff:127.0.0.1]:{cdp}/json", "URL_BLOCKED"),
        (f"http://sub.localhost:{cp}/", "URL_BLOCKED"),
        (f"http://0.0.0.0:{cdp}/json/new?x", "URL_BLOCKED"),
        (f"http://LOCALHOST:{cp}/", "URL_BLOCKED"),
        (f"http:\\\\127.0.0.1:{cp}\\tabs", "URL_BLOCKED"),
        ("--remote-allow-origins=*", "BAD_URL"),
        (f"127.0.0.1:{cp}/tabs", "BAD_URL"),
        ("http://example.test/ --remote-allow-origins=*", "BAD_URL"),
    ]


async def test_s9_url_policy_blocks_schemes_and_our_ports_and_no_tab_goes_there(
    api: httpx.AsyncClient, service: ServiceInfo, pages: PageServer, marker: Marker,
) -> None:
    tag = new_tag()
    with trio.fail_after(40):
        before = await observe(api, service.cdp_port)
        for i, (url, code) in enumerate(blocked_urls(service, pages)):
            variants: list[tuple[str, dict[str, Any]]] = [
                ("/tabs/open", {"url": url}),
                ("/navigate", {"url": url, "targetId": marker.target_id}),
                # /act's navigate step goes through the same policy, even after a harmless step
                ("/act", {"targetId": marker.target_id, "actions": [
                    {"kind": "wait", "loadState": "load"}, {"kind": "navigate", "url": url}]}),
            ]
            if i % 4 == 0:  # the current tab, navigated in place
                variants.append(("/tabs/open", {"url": url, "newTab": False}))
            for path, body in variants:
                r = await api.post(path, json=body)
                assert_refused(r, 403 if code == "URL_BLOCKED" else 400, code)
                if path == "/act":  # the refusal names the step
                    assert r.json()["index"] == 1, r.text
        await assert_untouched(api, service, before, tag, marker)
        after = await observe(api, service.cdp_port)
        ports = (f":{service.port}", f":{service.cdp_port}")
        for url in after.pages.values():
            assert url.startswith(("http://", "https://", "about:blank")), url
            assert not any(p in url for p in ports), url


def _cmdline(pid: int) -> list[bytes]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")


async def test_s9_nothing_from_the_api_reaches_chromium_argv(
    locked_down: ServiceInfo,
) -> None:
    """Switch-shaped values are refused; a relaunch uses exactly the same argv as before."""
    injections: list[tuple[str, dict[str, Any]]] = [
        ("/start", {"headless": "--no-sandbox"}),
        ("/start", {"headless": "--remote-allow-origins=*"}),
        ("/start", {"headless": ["--remote-allow-origins=*"]}),
        ("/start", {"headless": True, "args": ["--remote-allow-origins=*"]}),
        ("/start", {"flags": "--remote-allow-origins=*"}),
        ("/start", {"executable": "/bin/sh"}),
        ("/tabs/open", {"url": "--remote-allow-origins=*"}),
        ("/tabs/open", {"url": "about:blank", "newTab": "--new-window"}),
        ("/tabs/open", {"url": "http://example.test/ --remote-allow-origins=*"}),
        ("/tabs/open", {"url": "http://example.test/\n--remote-allow-origins=*"}),
        ("/navigate", {"url": "--user-data-dir=/tmp/browserd-evil"}),
    ]
    with trio.fail_after(60):
        async with locked_down.client() as api:
            first = (await api.get("/status")).json()
            argv = _cmdline(first["pid"])
            assert not [a for a in argv if a.startswith(b"--remote-allow-origins")]
            for path, payload in injections:
                r = await api.post(path, json=payload)
                assert r.status_code == 400, (path, payload, r.text)
                assert_hardened(r)
            assert (await api.get("/status")).json()["pid"] == first["pid"]
            assert _cmdline(first["pid"]) == argv
            # Relaunch, with a bad start in between: the new browser's argv is the old one.
            r = await api.post("/stop")
            assert r.json() == {"ok": True, "stopped": True}
            for path, payload in injections[:6]:
                r = await api.post(path, json=payload)
                assert r.status_code == 400, (path, payload, r.text)
            assert (await api.get("/status")).json()["state"] != "running"
            second = (await api.post("/start", json={"headless": True})).json()
            assert second["state"] == "running" and second["pid"] != first["pid"]
            assert _cmdline(second["pid"]) == argv


# -- the audit log ---------------------------------------------------------------------

AUDIT_RE = re.compile(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} who=(?P<who>\S+) profile=(?P<profile>\S+) "
    r"session=(?P<session>\S+) (?P<method>[A-Z]+) "
    r"(?P<path>/\S*) tab=(?P<tab>\S+) url=(?P<url>\S+) outcome=(?P<outcome>\S+) "
    r"ms=(?P<ms>\d+(?:\.\d+)?)$")


async def test_audit_log_records_requests_and_never_the_token(
    locked_down: ServiceInfo, pages: PageServer,
) -> None:
    """One whole line per request (method, path, outcome, duration); no token, no forged lines."""
    token = locked_down.token
    nonce = secrets.token_hex(6)
    forged = f"2026-01-01 00:00:00,000 who=forged-{nonce} POST /stop tab=- url=- outcome=ok ms=1.0"
    with trio.fail_after(30):
        async with locked_down.client() as api:
            assert (await api.get("/tabs")).status_code == 200
            r = await api.post("/tabs/open", json={"url": f"file:///audit-{nonce}"})
            assert r.json()["code"] == "URL_BLOCKED"
            r = await api.post("/eval", json={"js": "1"})
            assert r.json()["code"] == "EVAL_DISABLED"
            # Client-supplied text that tries to end the line and forge an entry.
            for url in (f"http://example.test/\n{forged}", f"http://example.test/\r\n{forged}",
                        f"http://example.test/\u2028{forged}"):
                r = await api.post("/tabs/open", json={"url": url})
                assert r.json()["code"] == "BAD_URL"
            r = await api.delete("/tabs/x%0A" + forged.replace(" ", "%20").replace("/", ""))
            assert r.json()["code"] == "TAB_NOT_FOUND"
            # The token where a careless client might put it.
            r = await api.post("/tabs/open", json={
                "url": f"http://127.0.0.1:{locked_down.port}/tabs?token={token}"})
            assert r.json()["code"] == "URL_BLOCKED"  # (the caller's own URL is echoed)
            r = await api.post("/tabs/open", json={
                "url": f"http://127.0.0.1:{locked_down.port}/{token}"})
            assert r.json()["code"] == "URL_BLOCKED"
            r = await api.post("/navigate", json={"url": f"file:///{token}", "targetId": token})
            assert r.json()["code"] == "URL_BLOCKED"
            assert (await api.delete(f"/tabs/{token}")).json()["code"] == "TAB_NOT_FOUND"
            r = await api.get("/tabs", params={"token": token})
            assert r.status_code == 400 and token not in r.text
        async with httpx.AsyncClient(base_url=locked_down.base_url, timeout=10,
                                     verify=LOOPBACK_TLS) as anon:
            assert (await anon.get(f"/tabs?token={token}")).status_code == 401
            assert (await anon.get(f"/{token}")).status_code == 401
            r = await anon.get("/tabs", headers={"Authorization": f"Bearer {token}x"})
            assert r.status_code == 401
            assert token not in r.text
    logs = locked_down.home / "logs"
    text = (logs / "audit.log").read_text()
    lines = text.splitlines()
    entries = [AUDIT_RE.match(line) for line in lines]
    assert all(entries), [line for line, m in zip(lines, entries, strict=True) if not m]
    matched = [m for m in entries if m is not None]
    seen = {(m["method"], m["path"], m["outcome"]) for m in matched}
    assert {("GET", "/tabs", "ok"), ("POST", "/tabs/open", "URL_BLOCKED"),
            ("POST", "/eval", "EVAL_DISABLED"), ("POST", "/tabs/open", "BAD_URL"),
            ("DELETE", "/tabs/[redacted]", "TAB_NOT_FOUND")} <= seen, seen
    assert any(m["url"] == f"file:///audit-{nonce}" for m in matched), "the URL is recorded"
    assert not [m for m in matched if m["who"] == f"forged-{nonce}"], "a forged entry"
    assert all(float(m["ms"]) >= 0 for m in matched)
    assert {m["who"] for m in matched if m["path"] == "/tabs"} != {token}
    for name in ("audit.log", "browserd.log"):
        assert token not in (logs / name).read_text(), f"the token leaked into {name}"
    assert token not in locked_down.log_text(), "the token leaked into stderr"
    assert token[:12] not in text and token[-12:] not in text
