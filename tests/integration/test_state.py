"""Cookies, web storage and storage state on the real Chromium.

The test server's ``/state/login`` sets an HttpOnly session cookie and
``/state/account`` answers "welcome" only to a request carrying it, so a
login can be carried to a fresh profile through ``GET /state`` → ``POST
/state``. Every secret is random per test and must never reach a log.
"""

from __future__ import annotations

import http.server
import secrets
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from tests.conftest import PageServer, ServiceInfo, add_route, start_service, stop_service
from tests.integration.helpers import html_route, navigate

pytestmark = pytest.mark.chromium

#: name → value of the session cookies the login route hands out (the account
#: route checks the request's cookie against these).
_SESSIONS: dict[str, str] = {}
#: Requests that reached the page server's "/" (the scratch page must never).
_ROOT_HITS: list[str] = []
_LOCK = threading.Lock()


def _login(req: http.server.SimpleHTTPRequestHandler) -> None:
    name = req.path.split("name=")[1].split("&")[0]
    body = b"<!doctype html><title>logged in</title><h1>logged in</h1>"
    req.send_response(200)
    req.send_header("Content-Type", "text/html")
    req.send_header("Set-Cookie", f"{name}={_SESSIONS[name]}; HttpOnly; Path=/; SameSite=Lax")
    req.send_header("Content-Length", str(len(body)))
    req.end_headers()
    req.wfile.write(body)


def _account(req: http.server.SimpleHTTPRequestHandler) -> None:
    sent = dict(part.strip().split("=", 1) for part in
                (req.headers.get("Cookie") or "").split(";") if "=" in part)
    ok = any(sent.get(name) == value for name, value in _SESSIONS.items())
    body = (b"<!doctype html><title>account</title><h1>"
            + (b"welcome back" if ok else b"please log in") + b"</h1>")
    req.send_response(200)
    req.send_header("Content-Type", "text/html")
    req.send_header("Content-Length", str(len(body)))
    req.end_headers()
    req.wfile.write(body)


def _root(req: http.server.SimpleHTTPRequestHandler) -> None:
    with _LOCK:
        _ROOT_HITS.append(req.path)
    req.send_response(404)
    req.send_header("Content-Length", "0")
    req.end_headers()


add_route("/state/login", _login)
add_route("/state/account", _account)
add_route("/", _root)


def _new_session() -> tuple[str, str]:
    name, value = f"sid{secrets.token_hex(4)}", f"secret-{secrets.token_hex(12)}"
    _SESSIONS[name] = value
    return name, value


async def _heading(api: httpx.AsyncClient, tab: str) -> str:
    r = await api.post("/eval", json={"targetId": tab, "js": "document.querySelector('h1')"
                                      ".textContent"})
    assert r.status_code == 200, r.text
    return str(r.json()["result"])


async def _text(api: httpx.AsyncClient, tab: str, element_id: str) -> str:
    r = await api.post("/eval", json={"targetId": tab,
                                      "js": f"document.getElementById('{element_id}').textContent"})
    assert r.status_code == 200, r.text
    return str(r.json()["result"])


def _logs(info: ServiceInfo) -> str:
    logs = info.home / "logs"
    return "".join(p.read_text(errors="replace") for p in sorted(logs.glob("*.log*"))) \
        + info.log_text()


# -- cookies --------------------------------------------------------------------------


async def test_an_http_only_cookie_set_by_a_response_is_listed(
    api: httpx.AsyncClient, tab: str, pages: PageServer,
) -> None:
    name, value = _new_session()
    with trio.fail_after(30):
        await navigate(api, tab, pages.url(f"/state/login?name={name}"))
        r = await api.post("/eval", json={"targetId": tab, "js": "document.cookie"})
        assert name not in r.json()["result"], "HttpOnly: the page itself cannot see it"
        r = await api.get("/cookies", params={"url": pages.url("/state/account")})
        assert r.status_code == 200, r.text
        mine = [c for c in r.json()["cookies"] if c["name"] == name]
        assert mine == [{"name": name, "value": value, "domain": "127.0.0.1", "path": "/",
                         "expires": -1, "httpOnly": True, "secure": False, "sameSite": "Lax"}]
        r = await api.get("/cookies", params={"domain": "127.0.0.1", "name": name})
        assert [c["value"] for c in r.json()["cookies"]] == [value]
        r = await api.get("/cookies", params={"domain": "example.com", "name": name})
        assert r.json()["cookies"] == []
        r = await api.request("DELETE", "/cookies", json={"name": name})
        assert r.json() == {"ok": True, "deleted": 1}
        await navigate(api, tab, pages.url("/state/account"))
        assert await _heading(api, tab) == "please log in"


async def test_cookie_writes_are_validated_and_deletes_need_a_filter(
    api: httpx.AsyncClient,
) -> None:
    tag = secrets.token_hex(4)
    in_a_month = int(time.time()) + 30 * 86400
    bad: list[tuple[dict[str, Any], str]] = [
        ({"name": "a", "value": "b"}, "cookies[0].url"),
        ({"name": "a", "value": "b", "url": "https://x.test/", "domain": "x.test"},
         "cookies[0].url"),
        ({"name": "a", "value": "b", "domain": "x.test", "sameSite": "None"},
         "cookies[0].sameSite"),
        ({"name": "a", "value": "b", "url": "http://x.test/", "secure": True},
         "cookies[0].secure"),
        ({"name": "a", "value": "b", "domain": "x.test", "expires": "soon"},
         "cookies[0].expires"),
        ({"name": "a;b", "value": "b", "domain": "x.test"}, "cookies[0].name"),
        ({"name": "a", "value": "b\n", "domain": "x.test"}, "cookies[0].value"),
        ({"name": "a", "value": "b", "url": "file:///etc/passwd"}, "cookies[0].url"),
        ({"name": "a", "value": "b", "domain": "x.test", "colour": "red"},
         "cookies[0].colour"),
    ]
    with trio.fail_after(30):
        for cookie, field in bad:
            r = await api.post("/cookies", json={"cookies": [cookie]})
            assert r.status_code == 400, (cookie, r.text)
            assert r.json()["field"] == field, (cookie, r.json())
        r = await api.request("DELETE", "/cookies", json={})
        assert r.status_code == 400 and r.json()["field"] == "all", r.text
        r = await api.post("/cookies", json={"cookies": [
            {"name": f"plain{tag}", "value": "1", "domain": ".shop.test"},
            {"name": f"safe{tag}", "value": "2", "url": "https://www.shop.test/cart",
             "secure": True, "httpOnly": True, "sameSite": "strict", "expires": in_a_month},
            {"name": f"old{tag}", "value": "3", "domain": "shop.test", "expires": 1000},
        ]})
        assert r.status_code == 200, r.text
        assert r.json() == {"ok": True, "set": 2, "notSet": [], "expired": 1}
        r = await api.get("/cookies", params={"domain": "shop.test"})
        got = {c["name"]: c for c in r.json()["cookies"]}
        assert set(got) >= {f"plain{tag}", f"safe{tag}"} and f"old{tag}" not in got
        safe = got[f"safe{tag}"]
        assert (safe["secure"], safe["httpOnly"], safe["sameSite"]) == (True, True, "Strict")
        assert abs(safe["expires"] - in_a_month) < 1  # (Chromium caps expiry at 400 days)
        # The secure cookie goes to https only; the domain one to subdomains too.
        r = await api.get("/cookies", params={"url": "http://www.shop.test/cart/x"})
        assert {c["name"] for c in r.json()["cookies"]} >= {f"plain{tag}"}
        assert f"safe{tag}" not in {c["name"] for c in r.json()["cookies"]}
        r = await api.get("/cookies", params={"url": "https://www.shop.test/cart/x"})
        assert {f"plain{tag}", f"safe{tag}"} <= {c["name"] for c in r.json()["cookies"]}
        r = await api.request("DELETE", "/cookies", json={"url": "https://www.shop.test/cart"})
        assert r.json()["deleted"] >= 2, r.text
        r = await api.get("/cookies", params={"domain": "shop.test"})
        assert not {f"plain{tag}", f"safe{tag}"} & {c["name"] for c in r.json()["cookies"]}


# -- web storage ----------------------------------------------------------------------


async def test_local_and_session_storage_of_the_tab_and_of_other_origins(
    api: httpx.AsyncClient, tab: str, pages: PageServer, other_origin: PageServer,
) -> None:
    theme, other_theme = f"t-{secrets.token_hex(6)}", f"o-{secrets.token_hex(6)}"
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/state_app.html"))
        r = await api.get("/storage", params={"targetId": tab})
        assert r.status_code == 200, r.text
        assert r.json()["origin"] == pages.base_url and r.json()["kind"] == "local"
        r = await api.post("/storage", json={"targetId": tab, "items": {"theme": theme,
                                                                        "extra": "x"}})
        assert r.json() == {"ok": True, "kind": "local", "origin": pages.base_url, "set": 2}
        r = await api.post("/storage", json={"targetId": tab, "kind": "session",
                                             "items": {"visits": "7"}})
        assert r.status_code == 200, r.text
        await navigate(api, tab, pages.url("/state_app.html"))  # reload: the page reads them
        assert await _text(api, tab, "theme") == theme
        assert await _text(api, tab, "visits") == "7"
        r = await api.get("/storage", params={"targetId": tab, "kind": "session"})
        assert r.json()["items"] == {"visits": "7"}
        # No frame of the other origin in this tab: session storage is refused…
        r = await api.get("/storage", params={"targetId": tab, "kind": "session",
                                              "origin": other_origin.base_url})
        assert r.status_code == 409 and r.json()["code"] == "NO_FRAME", r.text
        # …local storage goes through the scratch page (no network, no page script).
        hits = len(_ROOT_HITS)
        r = await api.post("/storage", json={"targetId": tab, "origin": other_origin.base_url,
                                             "items": {"theme": other_theme}})
        assert r.status_code == 200, r.text
        r = await api.get("/storage", params={"targetId": tab, "origin": other_origin.base_url})
        assert r.json()["items"] == {"theme": other_theme}
        assert len(_ROOT_HITS) == hits, "the scratch page reached the server"
        r = await api.get("/tabs")
        assert tab in {t["targetId"] for t in r.json()["tabs"]}
        assert not [t for t in r.json()["tabs"] if t["url"].startswith(other_origin.base_url)]
        await navigate(api, tab, other_origin.url("/state_app.html"))
        assert await _text(api, tab, "theme") == other_theme
        # Deleting: named keys, then everything.
        r = await api.request("DELETE", "/storage", json={
            "targetId": tab, "origin": pages.base_url, "keys": ["extra", "absent"]})
        assert r.json()["removed"] == 1, r.text
        r = await api.get("/storage", params={"targetId": tab, "origin": pages.base_url})
        assert r.json()["items"] == {"theme": theme}
        r = await api.request("DELETE", "/storage", json={"targetId": tab})
        assert r.json()["removed"] == 1 and r.json()["origin"] == other_origin.base_url
        for origin, code in (("file:///etc", "BAD_REQUEST"), ("https://a.test/path",
                                                              "BAD_REQUEST")):
            r = await api.get("/storage", params={"targetId": tab, "origin": origin})
            assert r.json()["code"] == code, r.text
        await navigate(api, tab, "about:blank")
        r = await api.get("/storage", params={"targetId": tab})
        assert r.status_code == 400 and r.json()["field"] == "origin", r.text


async def test_session_storage_of_an_out_of_process_frame(
    api: httpx.AsyncClient, tab: str, pages: PageServer, other_origin: PageServer,
) -> None:
    """A cross-site iframe lives in its own renderer: its sessionStorage is reached there."""
    add_route("/state_framed.html", html_route(
        f'<!doctype html><title>framed</title><iframe id="f" '
        f'src="{other_origin.url("/state_app.html")}"></iframe>'))
    visits = secrets.token_hex(4)
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/state_framed.html"))
        # (The page's load event waits for the frame's, and browserd attaches to an
        # out-of-process frame when it is created, before that.)
        r = await api.post("/storage", json={"targetId": tab, "kind": "session",
                                             "origin": other_origin.base_url,
                                             "items": {"visits": visits}})
        assert r.status_code == 200, r.text
        r = await api.get("/storage", params={"targetId": tab, "kind": "session",
                                              "origin": other_origin.base_url})
        assert r.json()["items"] == {"visits": visits}
        r = await api.get("/storage", params={"targetId": tab, "kind": "session"})
        assert r.json()["origin"] == pages.base_url
        assert r.json()["items"].get("visits") != visits, "the frame's, not the page's"


# -- storage state --------------------------------------------------------------------


async def test_storage_state_carries_a_login_to_a_fresh_profile(
    service: ServiceInfo, api: httpx.AsyncClient, tab: str, pages: PageServer,
    tmp_path: Path,
) -> None:
    """HttpOnly session cookie + localStorage → GET /state → new profile → POST /state."""
    name, value = _new_session()
    theme = f"theme-{secrets.token_hex(8)}"
    with trio.fail_after(120):
        await navigate(api, tab, pages.url(f"/state/login?name={name}"))
        await navigate(api, tab, pages.url("/state/account"))
        assert await _heading(api, tab) == "welcome back"
        r = await api.post("/storage", json={"targetId": tab, "items": {"theme": theme}})
        assert r.status_code == 200, r.text
        await navigate(api, tab, "about:blank")  # no tab shows the origin any more
        r = await api.get("/state")
        assert r.status_code == 200, r.text
        state = r.json()
        assert next(c for c in state["cookies"] if c["name"] == name)["value"] == value
        origin = [o for o in state["origins"] if o["origin"] == pages.base_url]
        assert origin and {"name": "theme", "value": theme} in origin[0]["localStorage"]

        fresh = await trio.to_thread.run_sync(start_service, tmp_path / "fresh")
        try:
            async with fresh.client() as api2:
                r = await api2.post("/tabs/open", json={"url": pages.url("/state/account")})
                tab2 = r.json()["targetId"]
                assert await _heading(api2, tab2) == "please log in"
                assert (await api2.get("/cookies", params={"name": name})).json() == \
                    {"cookies": []}
                hits = len(_ROOT_HITS)
                never_opened = {"origin": "https://imported-only.test",
                                "localStorage": [{"name": "k", "value": "v"}]}
                state["origins"].append(never_opened)
                r = await api2.post("/state", json={"state": state})
                assert r.status_code == 200, r.text
                body = r.json()
                assert body["cookies"] == len(state["cookies"]) - body["cookiesExpired"]
                assert body["cookiesNotSet"] == [] and body["items"] >= 2
                assert len(_ROOT_HITS) == hits, "the import's scratch page reached the server"
                # Imported origins are remembered: the next export has them, unnamed.
                again = (await api2.get("/state")).json()
                assert {"name": "theme", "value": theme} in next(
                    o for o in again["origins"] if o["origin"] == pages.base_url
                )["localStorage"]
                assert never_opened in again["origins"]
                await navigate(api2, tab2, pages.url("/state/account"))
                assert await _heading(api2, tab2) == "welcome back"
                await navigate(api2, tab2, pages.url("/state_app.html"))
                assert await _text(api2, tab2, "theme") == theme
                r = await api2.get("/cookies", params={"name": name})
                assert r.json()["cookies"][0]["httpOnly"] is True
        finally:
            await trio.to_thread.run_sync(stop_service, fresh)
    for info in (service, fresh):
        text = _logs(info)
        assert "state imported" in text or info is service
        for secret in (value, theme):
            assert secret not in text, f"a cookie or storage value reached a log of {info.home}"


async def test_a_malformed_state_is_refused_whole(api: httpx.AsyncClient) -> None:
    tag = secrets.token_hex(4)
    good = {"name": f"good{tag}", "value": "1", "domain": "import.test", "path": "/",
            "expires": -1, "httpOnly": False, "secure": False, "sameSite": "Lax"}
    cases: list[tuple[Any, str]] = [
        ({"cookies": [good, {**good, "sameSite": "Sometimes"}]}, "state.cookies[1].sameSite"),
        ({"cookies": [good], "origins": [{"origin": "ftp://x.test", "localStorage": []}]},
         "state.origins[0].origin"),
        ({"cookies": [good], "origins": [{"origin": "https://x.test",
                                          "localStorage": [{"name": "a", "value": 1}]}]},
         "state.origins[0].localStorage"),
        ({"cookies": [good], "extra": 1}, "state"),
    ]
    with trio.fail_after(30):
        for state, field in cases:
            r = await api.post("/state", json={"state": state})
            assert r.status_code == 400, r.text
            assert r.json()["field"] == field, r.json()
        r = await api.get("/cookies", params={"name": f"good{tag}"})
        assert r.json()["cookies"] == [], "a refused import set nothing"
