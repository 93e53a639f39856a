"""Control API security against the real service, request by request over HTTP
(RELIABILITY.md S1, S3-S5): without the exact token every route is refused, and with it
a wrong Host, Origin, body type or method still is; the detectors do see a real eval
and a real tab.

The per-request policy (every header combination, the rate limiter, the token file)
is covered request by request in tests/unit/test_guard.py and tests/unit/test_token.py;
this module proves it holds end to end. Hostile pages in real browsers (S6):
test_security_pages.py; the bind policy, the CDP port, capabilities, the URL policy,
argv and the audit log (S7-S9): test_security.py. The detectors: _security_detectors.py.
"""

from __future__ import annotations

import secrets
from urllib.parse import urlencode

import httpx
import orjson
import pytest
import trio
from supervision.harness import LOOPBACK_TLS

from tests.conftest import PageServer, ServiceInfo
from tests.integration._security_detectors import (
    HitLog,
    Marker,
    assert_hardened,
    assert_refused,
    assert_untouched,
    attack_body,
    eval_payload,
    fill_path,
    hit_url,
    hits,
    marker,
    new_tag,
    observe,
    page_eval,
)

__all__ = ["hits", "marker"]

pytestmark = pytest.mark.chromium


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
