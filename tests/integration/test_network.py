"""/network, /network/{id}, /network/block, /network/headers, /network/har on real Chromium."""

from __future__ import annotations

import json
import secrets
import socket
import struct
import threading
import zlib
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from tests.conftest import PageServer, ServiceInfo, add_route
from tests.integration.helpers import html_route, navigate
from tests.integration.test_cli import fails, ok

pytestmark = pytest.mark.chromium

SECRET = "s3cret-bearer-value-42"


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))

    header = struct.pack(">IIBBBBB", 2, 3, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(3))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


PNG = _png()
#: Request headers each path last saw (the test server's threads write it).
SEEN: dict[str, dict[str, str]] = {}
_SEEN_LOCK = threading.Lock()


def _remember(req: Any) -> None:
    with _SEEN_LOCK:
        SEEN[req.path.split("?")[0]] = {k.lower(): v for k, v in req.headers.items()}


def _answer(req: Any, body: bytes, content_type: str) -> None:
    req.send_response(200)
    req.send_header("Content-Type", content_type)
    req.send_header("Content-Length", str(len(body)))
    req.send_header("Cache-Control", "no-store")
    req.end_headers()
    req.wfile.write(body)


def _pixel(req: Any) -> None:
    _remember(req)
    _answer(req, PNG, "image/png")


def _echo(req: Any) -> None:
    _remember(req)
    size = int(req.headers.get("Content-Length") or 0)
    data = req.rfile.read(size) if size else b""
    _answer(req, json.dumps({"got": data.decode(), "method": req.command}).encode(),
            "application/json")


def _tiny(req: Any) -> None:
    _answer(req, b"ok", "text/plain")


def _redirect(req: Any) -> None:
    req.send_response(302)
    req.send_header("Location", "/net/echo")
    req.send_header("Content-Length", "0")
    req.end_headers()


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def main_page(port: int) -> str:
    return f"""<!doctype html><title>net main</title>
<img id="px" src="/net/pixel.png" width="20" height="20">
<script>
window.done = Promise.allSettled([
  fetch('/net/echo', {{method: 'POST', headers: {{'Content-Type': 'text/plain'}},
                       body: 'name=ada&secret=1'}}).then(r => r.text()),
  fetch('http://127.0.0.1:{port}/refused.js'),
  fetch('/net/redirect').then(r => r.text()),
]).then(() => 'done');
</script>"""


@pytest.fixture(autouse=True)
def _routes() -> None:
    add_route("/net/pixel.png", _pixel)
    add_route("/net/echo", _echo)
    add_route("/net/tiny", _tiny)
    add_route("/net/redirect", _redirect)


async def load(api: httpx.AsyncClient, tab: str, pages: PageServer, path: str,
               html: str) -> None:
    """Serve ``html`` at ``path`` and load it; wait for its ``window.done`` promise if any.

    (The tab records from the first network call on it: ``GET /network`` first.)
    """
    add_route(path, html_route(html))
    await requests(api, tab)
    await navigate(api, tab, pages.url(path))
    # The page's own work (a thousand fetches) may outlast /eval's default 10 s on a
    # busy machine; the calling test's deadline bounds the wait.
    r = await api.post("/eval", json={"targetId": tab, "js": "window.done || 'done'",
                                      "await": True, "timeoutMs": 90_000})
    assert r.status_code == 200, r.text


async def requests(api: httpx.AsyncClient, tab: str, **params: Any) -> dict[str, Any]:
    r = await api.get("/network", params={"targetId": tab, **params})
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


async def wait_for(api: httpx.AsyncClient, tab: str, url_part: str,
                   **params: Any) -> dict[str, Any]:
    """The newest finished entry whose URL contains ``url_part`` (polls; caller's deadline)."""
    while True:
        found = (await requests(api, tab, urlContains=url_part, **params))["requests"]
        if found and not found[-1].get("pending"):
            return found[-1]
        await trio.sleep(0.05)


async def test_a_tab_records_from_the_first_network_call(api: httpx.AsyncClient, tab: str,
                                                         pages: PageServer) -> None:
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/hello.html"))
        first = await requests(api, tab)
        assert first["requests"] == [] and "from now on" in first["note"]
        assert isinstance(first["recordingSince"], float)
        await navigate(api, tab, pages.url("/hello.html"))
        second = await requests(api, tab)
        assert "note" not in second and second["recordingSince"] == first["recordingSince"]
        assert second["requests"][0]["url"] == pages.url("/hello.html")


async def test_lists_failed_and_post_requests(api: httpx.AsyncClient, tab: str,
                                              pages: PageServer) -> None:
    with trio.fail_after(60):
        port = closed_port()
        await load(api, tab, pages, "/net/main.html", main_page(port))
        refused = await wait_for(api, tab, f"127.0.0.1:{port}")
        assert refused["failed"] is True
        assert refused["errorText"] == "net::ERR_CONNECTION_REFUSED"
        assert refused["status"] is None and refused["resourceType"] == "fetch"

        post = await wait_for(api, tab, "/net/echo", failed="false")
        posts = (await requests(api, tab, urlContains="/net/echo"))["requests"]
        post = next(p for p in posts if p["method"] == "POST")
        assert post["status"] == 200 and post["failed"] is False
        assert post["mimeType"] == "application/json"
        assert post["durationMs"] is not None and post["encodedBytes"] > 0
        detail = (await api.get(f"/network/{post['id']}", params={"targetId": tab})).json()
        assert detail["postData"] == "name=ada&secret=1"
        assert detail["requestHeaders"]["Content-Type"] == "text/plain"
        assert detail["responseHeaders"]["Content-Type"] == "application/json"
        assert detail["bodyEncoding"] == "text"
        assert json.loads(detail["body"]) == {"got": "name=ada&secret=1", "method": "POST"}

        # The redirect: a 302 hop that points at its follower, then the GET it led to.
        hop = (await requests(api, tab, urlContains="/net/redirect"))["requests"][-1]
        assert hop["status"] == 302 and "redirectedTo" in hop
        follower = (await api.get(f"/network/{hop['redirectedTo']}",
                                  params={"targetId": tab})).json()
        assert follower["url"] == pages.url("/net/echo") and follower["method"] == "GET"
        assert follower["status"] == 200

        # Filters: failed, status, resourceType; the document itself is listed.
        failed = (await requests(api, tab, failed="true"))["requests"]
        assert [r["url"] for r in failed] == [f"http://127.0.0.1:{port}/refused.js"]
        docs = (await requests(api, tab, resourceType="document"))["requests"]
        assert docs[-1]["url"] == pages.url("/net/main.html")
        assert all(r["status"] == 302 for r in
                   (await requests(api, tab, status=302))["requests"])

        # The image body comes back base64 (binary), and maxBytes cuts it.
        pixel = await wait_for(api, tab, "/net/pixel.png")
        img = (await api.get(f"/network/{pixel['id']}", params={"targetId": tab})).json()
        assert img["bodyEncoding"] == "base64" and img["bodyBytes"] == len(PNG)
        cut = (await api.get(f"/network/{pixel['id']}",
                             params={"targetId": tab, "maxBytes": 8})).json()
        assert cut["bodyTruncated"] is True and cut["bodyBytes"] == len(PNG)

        r = await api.get("/network/999999", params={"targetId": tab})
        assert r.status_code == 404 and r.json()["code"] == "REQUEST_NOT_FOUND"
        r = await api.get("/network/abc", params={"targetId": tab})
        assert r.status_code == 404 and r.json()["code"] == "REQUEST_NOT_FOUND"


async def test_body_gone_after_navigation_is_said_plainly(api: httpx.AsyncClient, tab: str,
                                                          pages: PageServer) -> None:
    with trio.fail_after(60):
        await load(api, tab, pages, "/net/main.html", main_page(closed_port()))
        post = await wait_for(api, tab, "/net/echo", failed="false")
        await navigate(api, tab, "about:blank")
        await navigate(api, tab, pages.url("/hello.html"))
        detail = (await api.get(f"/network/{post['id']}", params={"targetId": tab})).json()
        # Either Chromium still has it (bodies can outlive a navigation) or it says so.
        if detail["body"] is None:
            assert "no longer has this response's body" in detail["bodyUnavailable"]
        else:
            assert "got" in detail["body"]


async def test_block_stops_an_image_across_navigations(api: httpx.AsyncClient, tab: str,
                                                       pages: PageServer) -> None:
    with trio.fail_after(60):
        r = await api.post("/network/block", json={"targetId": tab,
                                                   "patterns": ["*://*:*/net/pixel.png"]})
        assert r.status_code == 200, r.text
        assert r.json()["blocked"] == ["*://*:*/net/pixel.png"]
        for _ in range(2):  # set once, kept across navigations
            await load(api, tab, pages, "/net/img.html",
                       '<img id="px" src="/net/pixel.png"><script>window.done = new Promise('
                       'r => { px.onerror = px.onload = () => r("done"); });</script>')
            r = await api.post("/eval", json={
                "targetId": tab, "js": "document.getElementById('px').naturalWidth"})
            assert r.json()["result"] == 0
            blocked = await wait_for(api, tab, "/net/pixel.png")
            assert blocked["failed"] is True and blocked["blockedReason"] == "inspector"
            await navigate(api, tab, "about:blank")
        listed = await requests(api, tab)
        assert listed["blocked"] == ["*://*:*/net/pixel.png"]
        # Empty clears; the image loads again.
        r = await api.post("/network/block", json={"targetId": tab, "patterns": []})
        assert r.status_code == 200 and r.json()["blocked"] == []
        await load(api, tab, pages, "/net/img.html",
                   '<img id="px" src="/net/pixel.png"><script>window.done = new Promise('
                   'r => { px.onerror = px.onload = () => r("done"); });</script>')
        r = await api.post("/eval", json={
            "targetId": tab, "js": "document.getElementById('px').naturalWidth"})
        assert r.json()["result"] == 2
        # A pattern Chromium cannot parse is a 400 that names the field.
        r = await api.post("/network/block", json={"targetId": tab, "patterns": ["*.png"]})
        assert r.status_code == 400 and r.json()["field"] == "patterns"
        assert "URLPattern" in r.json()["hint"]


async def test_extra_headers_reach_the_server_and_never_a_log(
        api: httpx.AsyncClient, tab: str, pages: PageServer, service: ServiceInfo) -> None:
    with trio.fail_after(60):
        r = await api.post("/network/headers", json={
            "targetId": tab, "headers": {"X-Agent-Test": "yes", "Authorization": SECRET}})
        assert r.status_code == 200, r.text
        assert r.json()["extraHeaders"] == ["Authorization", "X-Agent-Test"]
        assert SECRET not in r.text
        await navigate(api, tab, pages.url("/net/echo"))
        assert SEEN["/net/echo"]["x-agent-test"] == "yes"
        assert SEEN["/net/echo"]["authorization"] == SECRET
        doc = await wait_for(api, tab, "/net/echo", resourceType="document")
        assert doc["status"] == 200
        # Refused names and bad values: 400 naming the field, never echoing the value.
        for bad in ({"Cookie": "a=b"}, {"Host": "evil.test"}, {"X-Ok": "a\r\nX-Evil: 1"},
                    {"Bad Name": "x"}, {"Sec-Fetch-Site": "none"}):
            r = await api.post("/network/headers", json={"targetId": tab, "headers": bad})
            assert r.status_code == 400 and r.json()["field"] == "headers", bad
            assert "a=b" not in r.text and "X-Evil" not in r.text
        r = await api.post("/network/headers", json={"targetId": tab, "headers": {}})
        assert r.status_code == 200 and r.json()["extraHeaders"] == []
        await navigate(api, tab, pages.url("/net/echo"))
        assert "x-agent-test" not in SEEN["/net/echo"]
        for name in ("audit.log", "browserd.log"):
            path = service.home / "logs" / name
            if path.exists():
                assert SECRET not in path.read_text(errors="replace")


async def test_har_file_loads_with_the_page_entries(api: httpx.AsyncClient, tab: str,
                                                    pages: PageServer) -> None:
    with trio.fail_after(60):
        await load(api, tab, pages, "/net/main.html", main_page(closed_port()))
        await wait_for(api, tab, "/net/pixel.png")
        r = await api.post("/network/har", json={"targetId": tab, "bodies": True})
        assert r.status_code == 200, r.text
        out = r.json()
        assert out["entries"] >= 5 and out["mediaUrl"].endswith(".har")
        media = await api.get(out["mediaUrl"])
        assert media.status_code == 200
        assert media.headers["content-type"].startswith("application/json")
        har = json.loads(media.content)
        log = har["log"]
        assert log["version"] == "1.2" and log["creator"]["name"] == "browserd"
        urls = [e["request"]["url"] for e in log["entries"]]
        assert pages.url("/net/main.html") in urls and pages.url("/net/pixel.png") in urls
        for entry in log["entries"]:
            assert entry["startedDateTime"].endswith("Z")
            assert entry["time"] >= 0 and entry["pageref"] == "page_1"
            assert all(v >= 0 for k, v in entry["timings"].items()
                       if k in ("send", "wait", "receive"))
        doc = next(e for e in log["entries"] if e["request"]["url"].endswith("/net/main.html"))
        assert doc["response"]["status"] == 200 and "net main" in doc["response"]["content"]["text"]
        post = next(e for e in log["entries"] if e["request"]["method"] == "POST")
        assert post["request"]["postData"]["text"] == "name=ada&secret=1"
        refused = next(e for e in log["entries"] if "refused.js" in e["request"]["url"])
        assert refused["response"]["status"] == 0
        assert refused["response"]["_error"] == "net::ERR_CONNECTION_REFUSED"
        img = next(e for e in log["entries"] if e["request"]["url"].endswith("pixel.png"))
        assert img["response"]["content"]["encoding"] == "base64"


async def test_ring_overflow_counts_dropped(api: httpx.AsyncClient, tab: str,
                                            pages: PageServer) -> None:
    with trio.fail_after(120):
        await load(api, tab, pages, "/net/many.html", """<!doctype html><script>
window.done = (async () => {
  for (let batch = 0; batch < 21; batch++) {
    await Promise.all(Array.from({length: 50},
      (_, i) => fetch('/net/tiny?n=' + (batch * 50 + i)).then(r => r.text())));
  }
  return 'done';
})();
</script>""")
        last = await wait_for(api, tab, "/net/tiny?n=1049")
        listed = await requests(api, tab, limit=1000)
        assert listed["kept"] == 1000 and len(listed["requests"]) == 1000
        assert listed["dropped"] >= 51  # 1050 fetches + the document, and what came before
        assert listed["requests"][-1]["id"] == last["id"]
        ids = [r["id"] for r in listed["requests"]]
        assert ids == sorted(ids)
        cleared = await requests(api, tab, clear="true", limit=1)
        assert len(cleared["requests"]) == 1
        after = await requests(api, tab)
        assert after["kept"] == 0 and after["dropped"] == 0


async def test_cli_network_verbs(service: ServiceInfo, api: httpx.AsyncClient, tab: str,
                                 pages: PageServer) -> None:
    with trio.fail_after(90):
        r = await api.post("/tabs/focus", json={"targetId": tab})  # the CLI's current tab
        assert r.status_code == 200, r.text
        run = await ok(service, "network", "--target", tab)
        assert "no requests recorded" in run.out and "from now on" in run.out
        await load(api, tab, pages, "/net/main.html", main_page(closed_port()))
        await wait_for(api, tab, "/net/pixel.png")
        run = await ok(service, "network", "--failed", "--target", tab)
        assert "FAIL" in run.out and "net::ERR_CONNECTION_REFUSED" in run.out
        listed = (await ok(service, "network", "--url", "/net/echo", "--json",
                           "--target", tab)).json()
        post = next(r for r in listed["requests"] if r["method"] == "POST")
        run = await ok(service, "network", "show", str(post["id"]), "--target", tab)
        assert "post data:\nname=ada&secret=1" in run.out and '"got"' in run.out
        run = await ok(service, "network", "block", "*://*:*/net/pixel.png", "--target", tab)
        assert "blocked: *://*:*/net/pixel.png" in run.out
        run = await ok(service, "network", "block", "--target", tab)
        assert "blocked: -" in run.out
        run = await ok(service, "network", "headers", "X-Cli: 1", "--target", tab)
        assert "extra headers: X-Cli" in run.out
        bad = await fails(service, "network", "headers", "NoColon", "--target", tab)
        assert "Name: value" in bad.err
        run = await ok(service, "network", "har", "--target", tab)
        har = json.loads(Path(run.out.strip()).read_text())
        assert har["log"]["entries"]
        missing = await fails(service, "network", "show", "424242", "--target", tab)
        assert "no request 424242" in missing.err


async def test_out_of_process_frames_record_and_block_too(
        api: httpx.AsyncClient, tab: str, pages: PageServer, other_origin: PageServer) -> None:
    with trio.fail_after(60):
        inner = other_origin.url("/net/inner.html")
        add_route("/net/inner.html", html_route(
            '<img id="px" src="/net/pixel.png?inner=1"><script>fetch("/net/echo?inner=1")'
            '.then(r => r.text())</script>'))
        outer = ('<iframe id="f" src="INNER"></iframe><script>window.done = new Promise(r => '
                 'f.onload = () => r("done"));</script>').replace("INNER", inner)
        await load(api, tab, pages, "/net/outer.html", outer)
        # The cross-site frame's own requests are in the tab's ring, bodies included.
        echo = await wait_for(api, tab, "/net/echo?inner=1")
        assert echo["status"] == 200 and echo["url"].startswith(other_origin.base_url)
        detail = (await api.get(f"/network/{echo['id']}", params={"targetId": tab})).json()
        assert json.loads(detail["body"])["method"] == "GET"
        pixel = await wait_for(api, tab, "pixel.png?inner=1")
        assert pixel["status"] == 200
        # Blocking reaches the frame's session: set now, and for frames attached later.
        r = await api.post("/network/block", json={"targetId": tab,
                                                   "patterns": ["*://*:*/net/pixel.png*"]})
        assert r.status_code == 200, r.text
        await load(api, tab, pages, "/net/outer.html", outer)
        blocked = await wait_for(api, tab, "pixel.png?inner=1")
        assert blocked["failed"] is True and blocked["blockedReason"] == "inspector"


def _redirect_to(req: Any) -> None:
    """302 to the ``to`` query parameter (a page-made redirect chain)."""
    to = req.path.split("to=", 1)[1] if "to=" in req.path else "/net/echo"
    req.send_response(302)
    req.send_header("Location", to)
    req.send_header("Content-Length", "0")
    req.end_headers()


async def test_blocking_and_headers_work_beside_the_navigation_guard(
        api: httpx.AsyncClient, tab: str, pages: PageServer, service: ServiceInfo) -> None:
    """The guard owns Fetch on every page session; the network controls use the Network
    domain beside it: both judge, neither undoes the other, and nothing waits."""
    tag = secrets.token_hex(4)
    refused = f"http://127.0.0.1:{service.port}/navblocked-{tag}"
    add_route("/net/hop", _redirect_to)
    with trio.fail_after(60):
        r = await api.post("/network/block", json={"targetId": tab,
                                                   "patterns": ["*://*:*/net/pixel.png"]})
        assert r.status_code == 200, r.text
        r = await api.post("/network/headers", json={"targetId": tab,
                                                     "headers": {"X-Beside-Guard": tag}})
        assert r.status_code == 200, r.text
        # A redirect to a URL the policy refuses: the guard still stops it (403 with the
        # chain), and the ring lists both hops, the refused one failed.
        r = await api.post("/navigate", json={"targetId": tab,
                                              "url": pages.url("/net/hop") + "?to=" + refused})
        assert r.status_code == 403, r.text
        assert r.json()["code"] == "URL_BLOCKED"
        assert r.json()["redirectedFrom"] == pages.url("/net/hop")
        hop = await wait_for(api, tab, "/net/hop")
        assert hop["status"] == 302 and hop["redirectedTo"]
        stopped = await wait_for(api, tab, f"navblocked-{tag}")
        assert stopped["failed"] is True
        assert stopped["errorText"] == "net::ERR_BLOCKED_BY_CLIENT"
        # An allowed page: the guard let its document through with the extra header,
        # and the image is blocked by the tab's pattern.
        page = html_route('<img id="px" src="/net/pixel.png"><script>window.done = new '
                          'Promise(r => { px.onerror = px.onload = () => r("done"); });</script>')

        def remembering(req: Any) -> None:
            _remember(req)
            page(req)

        add_route("/net/beside.html", remembering)
        await navigate(api, tab, pages.url("/net/beside.html"))
        r = await api.post("/eval", json={"targetId": tab, "js": "window.done", "await": True})
        assert r.status_code == 200 and r.json()["result"] == "done", r.text
        assert SEEN["/net/beside.html"]["x-beside-guard"] == tag
        blocked = await wait_for(api, tab, "/net/pixel.png")
        assert blocked["failed"] is True and blocked["blockedReason"] == "inspector"
    assert f"refused GET '/navblocked-{tag}'" not in service.log_text()  # never arrived
