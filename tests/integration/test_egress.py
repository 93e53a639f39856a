"""Egress containment (S22) on a real Chromium: a contained page reaches its allowed
origins and nothing else.

A private service for the module runs with ``allowed_origins = [the pages server's
origin]`` (``http://127.0.0.1:P``); the ``other_origin`` server (``http://localhost:O``)
is "elsewhere". Both servers share the routes registered here, and every hit on
``/egress/hit/...`` is counted *per server port*, so "never reached it" is a count of 0
on the other server (and ``test_the_counter_sees_hits_from_an_uncontained_page`` shows
the same page does reach it when nothing contains it).
"""

from __future__ import annotations

import collections
import http.server
import json
import secrets
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import trio

from tests.conftest import PageServer, ServiceInfo, add_route, start_service, stop_service

pytestmark = pytest.mark.chromium

HITS: collections.Counter[tuple[int, str]] = collections.Counter()
_LOCK = threading.Lock()
KINDS = ("fetch", "ws", "es", "beacon", "img")


def _port(server: Any) -> int:
    return int(server.server_address[1])


def _hit(h: http.server.SimpleHTTPRequestHandler) -> None:
    with _LOCK:
        HITS[(_port(h.server), h.path.split("?")[0])] += 1
    size = int(h.headers.get("Content-Length") or 0)
    if size:
        h.rfile.read(size)
    h.send_response(200)
    h.send_header("Content-Type", "text/plain")
    h.send_header("Access-Control-Allow-Origin", "*")
    h.send_header("Content-Length", "2")
    h.end_headers()
    h.wfile.write(b"ok")


def hits(server: PageServer, tag: str, kind: str) -> int:
    with _LOCK:
        return HITS[(_port(server.server), f"/egress/hit/{tag}/{kind}")]


def _html(body: str) -> Any:
    def handler(h: http.server.SimpleHTTPRequestHandler) -> None:
        data = body.encode()
        h.send_response(200)
        h.send_header("Content-Type", "text/html; charset=utf-8")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
    return handler


def attack_page(tag: str, base: str) -> str:
    """A page that sends to ``base`` by every way the contract names; ``window.done``
    settles with what the page saw of each."""
    ws = base.replace("http://", "ws://", 1)
    for kind in KINDS:
        add_route(f"/egress/hit/{tag}/{kind}", _hit)
    return f"""<!doctype html><title>egress {tag}</title><script>
const hit = k => '{base}/egress/hit/{tag}/' + k + '?secret=s3cr3t#frag';
const seen = {{}};
const settle = (k, f) => new Promise(done => f(v => {{ seen[k] = v; done(); }}));
window.done = Promise.all([
  settle('fetch', ok => fetch(hit('fetch')).then(() => ok('sent'), () => ok('refused'))),
  settle('ws', ok => {{ const s = new WebSocket('{ws}/egress/hit/{tag}/ws');
    s.onopen = () => ok('open'); s.onerror = () => ok('refused'); }}),
  settle('es', ok => {{ const e = new EventSource(hit('es'));
    e.onopen = () => {{ e.close(); ok('open'); }};
    e.onerror = () => {{ e.close(); ok('refused'); }}; }}),
  settle('beacon', ok => ok(navigator.sendBeacon(hit('beacon'), 'data') ? 'queued' : 'refused')),
  settle('img', ok => {{ const i = new Image(); i.onload = () => ok('loaded');
    i.onerror = () => ok('refused'); i.src = hit('img'); }}),
]).then(() => new Promise(r => setTimeout(r, 500))).then(() => JSON.stringify(seen));
</script>"""


@pytest.fixture(scope="module")
def contained(tmp_path_factory: pytest.TempPathFactory, pages: PageServer
              ) -> Iterator[ServiceInfo]:
    info = start_service(tmp_path_factory.mktemp("egress"),
                         env={"BROWSERD_ALLOWED_ORIGINS": pages.base_url})
    yield info
    stop_service(info)


@pytest.fixture
async def capi(contained: ServiceInfo) -> AsyncIterator[httpx.AsyncClient]:
    async with contained.client() as client:
        yield client


async def open_tab(api: httpx.AsyncClient, **extra: Any) -> str:
    r = await api.post("/tabs/open", json={"url": "about:blank", **extra})
    assert r.status_code == 200, r.text
    return str(r.json()["targetId"])


async def run_page(api: httpx.AsyncClient, tab: str, url: str, **extra: Any) -> dict[str, str]:
    """Record the tab's network, load ``url`` and wait for its ``window.done``."""
    r = await api.get("/network", params={"targetId": tab, **extra})
    assert r.status_code == 200, r.text
    r = await api.post("/navigate", json={"targetId": tab, "url": url, **extra})
    assert r.status_code == 200, r.text
    r = await api.post("/eval", json={"targetId": tab, "js": "window.done", "await": True,
                                      "timeoutMs": 30_000, **extra})
    assert r.status_code == 200, r.text
    result: dict[str, str] = json.loads(r.json()["result"])
    return result


async def egress_entries(api: httpx.AsyncClient, tab: str, tag: str,
                         **extra: Any) -> dict[str, dict[str, Any]]:
    """The ring's entries for ``/egress/hit/<tag>/<kind>``, by kind (the newest finished)."""
    out: dict[str, dict[str, Any]] = {}
    while len(out) < len(KINDS):
        r = await api.get("/network", params={"targetId": tab, "urlContains": f"/{tag}/",
                                              **extra})
        assert r.status_code == 200, r.text
        for entry in r.json()["requests"]:
            if not entry.get("pending"):
                out[entry["url"].split("?")[0].rsplit("/", 1)[-1]] = entry
        await trio.sleep(0.1)
    return out


async def test_nothing_reaches_another_origin_and_each_block_is_in_network(
        capi: httpx.AsyncClient, pages: PageServer, other_origin: PageServer) -> None:
    tag = secrets.token_hex(4)
    add_route(f"/egress/{tag}.html", _html(attack_page(tag, other_origin.base_url)))
    with trio.fail_after(60):
        tab = await open_tab(capi)
        seen = await run_page(capi, tab, pages.url(f"/egress/{tag}.html"))
        assert seen == {"fetch": "refused", "ws": "refused", "es": "refused",
                        "beacon": seen["beacon"], "img": "refused"}, seen
        entries = await egress_entries(capi, tab, tag)
    for kind in KINDS:
        assert hits(other_origin, tag, kind) == 0, kind
        assert entries[kind]["failed"] is True, entries[kind]
        assert entries[kind]["blockedReason"] == "egress", entries[kind]
    assert {entries[k]["resourceType"] for k in KINDS} == {
        "fetch", "websocket", "eventsource", "ping", "image"}


async def test_the_allowed_origin_still_works(capi: httpx.AsyncClient,
                                              pages: PageServer) -> None:
    tag = secrets.token_hex(4)
    add_route(f"/egress/{tag}.html", _html(attack_page(tag, pages.base_url)))
    with trio.fail_after(60):
        tab = await open_tab(capi)
        seen = await run_page(capi, tab, pages.url(f"/egress/{tag}.html"))
        assert seen["fetch"] == "sent" and seen["img"] == "refused", seen  # not an image
        assert seen["es"] in ("open", "refused") and seen["beacon"] == "queued", seen
        while not all(hits(pages, tag, kind) for kind in KINDS):
            await trio.sleep(0.05)
    # Every one of them reached the allowed server (the WebSocket handshake as a GET).
    for kind in KINDS:
        assert hits(pages, tag, kind) >= 1, kind


async def test_an_action_reports_what_it_caused_to_be_blocked_without_secrets(
        capi: httpx.AsyncClient, pages: PageServer, other_origin: PageServer) -> None:
    tag = secrets.token_hex(4)
    add_route(f"/egress/hit/{tag}/fetch", _hit)
    target = f"{other_origin.base_url}/egress/hit/{tag}/fetch"
    add_route(f"/egress/{tag}-act.html", _html(
        f"""<!doctype html><button id=b onclick="fetch('{target}?token=t0k3n#f')
        .catch(() => 0)">go</button>
        <a id=a href="{other_origin.base_url}/egress/hit/{tag}/fetch?x=1">away</a>"""))
    with trio.fail_after(40):
        tab = await open_tab(capi)
        r = await capi.post("/navigate", json={"targetId": tab,
                                               "url": pages.url(f"/egress/{tag}-act.html")})
        assert r.status_code == 200, r.text
        r = await capi.post("/click", json={"targetId": tab, "selector": "#b"})
        assert r.status_code == 200, r.text
        blocked = r.json()["effects"].get("blocked")
        # (the type as the Fetch domain names it: fetch() is an "xhr" there)
        assert blocked == [{"url": target, "reason": "egress", "resourceType": "xhr"}], blocked
        r = await capi.post("/click", json={"targetId": tab, "selector": "#a"})
        assert r.status_code == 200, r.text
        effects = r.json()["effects"]
        # a main-frame navigation: reported as the guard reports it (no resource type)
        assert effects.get("blocked") == [{"url": target, "reason": "egress"}], effects
        r = await capi.post("/navigate", json={"targetId": tab, "url": target + "?q=1"})
        assert r.status_code == 403, r.text
        body = r.json()
        assert (body["code"], body["reason"], body["url"]) == ("URL_BLOCKED", "egress", target)
    assert hits(other_origin, tag, "fetch") == 0


async def test_a_session_can_only_narrow_the_profiles_origins(
        capi: httpx.AsyncClient, pages: PageServer, other_origin: PageServer) -> None:
    r = await capi.post("/sessions", json={"allowedOrigins": [other_origin.base_url]})
    assert r.status_code == 400 and "only narrow" in r.text, r.text
    r = await capi.post("/sessions", json={"allowedOrigins": ["ftp://x"]})
    assert r.status_code == 400, r.text
    r = await capi.post("/sessions", json={"allowedOrigins": [pages.base_url.upper()]})
    assert r.status_code == 200, r.text
    assert r.json()["allowedOrigins"] == [pages.base_url]
    session = r.json()["sessionId"]
    listed = (await capi.get("/sessions")).json()["sessions"]
    assert [s.get("allowedOrigins") for s in listed if s["sessionId"] == session] == [
        [pages.base_url]]
    await capi.delete(f"/sessions/{session}")


async def test_contained_pages_lack_the_apis_fetch_cannot_hold_and_webrtc_is_proxied_only(
        capi: httpx.AsyncClient, contained: ServiceInfo, pages: PageServer) -> None:
    with trio.fail_after(30):
        tab = await open_tab(capi)
        r = await capi.post("/navigate", json={"targetId": tab, "url": pages.url("/hello.html")})
        assert r.status_code == 200, r.text
        js = ("[typeof navigator.serviceWorker, typeof SharedWorker, typeof WebTransport, "
              "typeof RTCPeerConnection, typeof document.createElement('iframe')]")
        r = await capi.post("/eval", json={"targetId": tab, "js": js})
        assert r.json()["result"] == ["undefined"] * 4 + ["object"], r.text
    prefs = [json.loads((contained.profile_dir / "Default" / "Preferences").read_text())]
    assert prefs and all(p["webrtc"]["ip_handling_policy"] == "disable_non_proxied_udp"
                         and p["net"]["network_prediction_options"] == 2 for p in prefs)


# -- sessions of an uncontained profile (the shared service) ------------------------------


async def test_the_counter_sees_hits_from_an_uncontained_page(
        api: httpx.AsyncClient, pages: PageServer, other_origin: PageServer) -> None:
    tag = secrets.token_hex(4)
    add_route(f"/egress/{tag}.html", _html(attack_page(tag, other_origin.base_url)))
    with trio.fail_after(60):
        tab = await open_tab(api)
        try:
            seen = await run_page(api, tab, pages.url(f"/egress/{tag}.html"))
            assert seen["fetch"] == "sent", seen
            while not all(hits(other_origin, tag, kind) for kind in KINDS):
                await trio.sleep(0.05)
        finally:
            await api.post("/tabs/close", json={"targetId": tab})
    for kind in KINDS:
        assert hits(other_origin, tag, kind) >= 1, kind


async def test_a_sessions_own_list_contains_it_and_its_out_of_process_frames(
        api: httpx.AsyncClient, pages: PageServer, other_origin: PageServer) -> None:
    tag = secrets.token_hex(4)
    third = http.server.ThreadingHTTPServer(("127.0.0.1", 0), pages.server.RequestHandlerClass)
    threading.Thread(target=third.serve_forever, daemon=True).start()
    elsewhere = PageServer(f"http://127.0.0.1:{_port(third)}", third)
    try:
        # The frame (localhost: another site, so an out-of-process iframe) is allowed
        # and runs (it reaches its own origin); what it sends to a third origin is not.
        add_route(f"/egress/hit/{tag}/alive", _hit)
        add_route(f"/egress/{tag}-frame.html", _html(
            attack_page(tag, elsewhere.base_url)
            + f"<script>fetch('/egress/hit/{tag}/alive')</script>"))
        add_route(f"/egress/{tag}.html", _html(
            f"<!doctype html><iframe src='{other_origin.url(f'/egress/{tag}-frame.html')}'>"
            "</iframe>"))
        r = await api.post("/sessions", json={"allowedOrigins": [pages.base_url,
                                                                 other_origin.base_url]})
        assert r.status_code == 200, r.text
        session = r.json()["sessionId"]
        try:
            with trio.fail_after(60):
                tab = await open_tab(api, session=session)
                r = await api.post("/navigate", json={"targetId": tab, "session": session,
                                                      "url": pages.url(f"/egress/{tag}.html")})
                assert r.status_code == 200, r.text
                while hits(other_origin, tag, "alive") == 0:
                    await trio.sleep(0.05)
                await trio.sleep(2)  # the frame's other sends settle (none may arrive)
        finally:
            await api.delete(f"/sessions/{session}")
    finally:
        third.shutdown()
        third.server_close()
    for kind in KINDS:
        assert hits(elsewhere, tag, kind) == 0, kind
