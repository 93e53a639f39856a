"""No open DevTools port, and browserd's CDP gateway in its place (issue 10, RELIABILITY S11).

Against a private ``browserd serve`` on a real Chromium: the browser's whole
process group has no TCP listener (read from ``/proc/net/tcp*`` and each
process's fds; the same reader finds the service's own listeners, so it can
fail); the gateway refuses HTTP and WebSocket without the right token or
from a page's Origin; Playwright's ``connect_over_cdp`` with the header lists
and drives browserd's tabs and the page it opens is a listed tab; a raw
client gets its own ids, sessions and browserd's rules; browserd's own API
works throughout; and the pipe lifeline still ends the browser when the
service is SIGKILLed.
"""

from __future__ import annotations

import base64
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
import pytest
import trio
import trio_websocket
from supervision.harness import LOOPBACK_TLS
from supervision.neighbour import group_listeners, group_members, listening_ports

from tests.conftest import PageServer, ServiceInfo, add_route, start_service, stop_service
from tests.integration.helpers import html_route, poll

pytestmark = pytest.mark.chromium


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceInfo]:
    info = start_service(tmp_path_factory.mktemp("gateway"))
    yield info
    stop_service(info)


def _attachment(body: bytes) -> Any:
    """A page-server route answering ``body`` as the attachment ``report.txt``."""
    def handler(request: Any) -> None:
        request.send_response(200)
        request.send_header("Content-Type", "text/plain")
        request.send_header("Content-Disposition", 'attachment; filename="report.txt"')
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)
    return handler


# -- who listens on TCP (readers shared with the S11 drill) --------------------------------


def test_no_process_of_the_browser_group_listens_on_tcp(
    gw: ServiceInfo, pages: PageServer,
) -> None:
    with gw.sync_client() as api:
        r = api.post("/tabs/open", json={"url": pages.url("/hello.html")})
        assert r.status_code == 200, r.text
        browser = api.get("/status").json()["pid"]
    cmdline = Path(f"/proc/{browser}/cmdline").read_bytes().split(b"\0")
    assert b"--remote-debugging-pipe" in cmdline
    assert not any(a.startswith(b"--remote-debugging-port") for a in cmdline)
    members = group_members(browser)
    assert browser in members and len(members) >= 3, members  # browser, zygote, renderer…
    # The detector sees listeners: the service's own two (control API, gateway).
    assert {gw.port, gw.cdp_port} <= listening_ports(gw.pid)
    held = group_listeners(browser)
    assert held == {}, f"browser processes listening on TCP: {held}"


# -- refusals ------------------------------------------------------------------------------


async def ws_handshake_status(url: str, headers: dict[str, str]) -> int:
    """The HTTP status a WebSocket handshake to ``url`` gets (101: it would open).

    A hand-written upgrade request, so the refusal's status is read as sent.
    """
    parts = urlsplit(url)
    assert parts.hostname and parts.port
    lines = [f"GET {parts.path} HTTP/1.1", f"Host: {parts.hostname}:{parts.port}",
             "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
             "Sec-WebSocket-Key: " + base64.b64encode(os.urandom(16)).decode(),
             *(f"{k}: {v}" for k, v in headers.items())]
    stream = await trio.open_tcp_stream(parts.hostname, parts.port)
    async with stream:
        await stream.send_all(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n" not in head:
            chunk = await stream.receive_some(4096)
            assert chunk, "the gateway closed without answering"
            head += chunk
    return int(head.split(b" ", 2)[1])


async def test_gateway_refuses_without_the_token_a_wrong_one_or_a_page_origin(
    gw: ServiceInfo, other_origin: PageServer,
) -> None:
    base = f"http://127.0.0.1:{gw.cdp_port}"
    good = gw.headers
    wrong = {"Authorization": "Bearer " + "x" * 43}
    page = {**good, "Origin": other_origin.base_url}
    same_port_page = {**good, "Origin": base}
    with trio.fail_after(30):
        async with httpx.AsyncClient(base_url=base, timeout=10, verify=LOOPBACK_TLS) as http:
            version = await http.get("/json/version", headers=good)
            assert version.status_code == 200, version.text
            ws_url = version.json()["webSocketDebuggerUrl"]
            assert ws_url.startswith(f"ws://127.0.0.1:{gw.cdp_port}/devtools/browser/")
            for path in ("/json/version", "/json/list", "/json"):
                assert (await http.get(path)).status_code == 401
                assert (await http.get(path, headers=wrong)).status_code == 401
                refused = await http.get(path, headers=page)
                assert (refused.status_code, refused.json()["code"]) == (403, "FORBIDDEN_ORIGIN")
                assert (await http.get(path, headers=good)).status_code == 200
                assert gw.token not in refused.text
            rebound = await http.get("/json/version",
                                     headers={**good, "Host": f"evil.test:{gw.cdp_port}"})
            assert rebound.status_code == 421
        connected_before = gw.log_text().count("gateway client")
        assert await ws_handshake_status(ws_url, {}) == 401
        assert await ws_handshake_status(ws_url, wrong) == 401
        assert await ws_handshake_status(ws_url, page) == 403
        assert await ws_handshake_status(ws_url, {**good, "Origin": "null"}) == 403
        assert gw.log_text().count("gateway client") == connected_before, "nothing attached"
        assert await ws_handshake_status(ws_url, same_port_page) == 101  # the control case
        assert await ws_handshake_status(ws_url, good) == 101
        bad_id = ws_url.rsplit("/", 1)[0] + "/0123456789abcdef"
        assert await ws_handshake_status(bad_id, good) == 404
    assert gw.token not in gw.log_text()


# -- a raw client: its own ids, sessions and rules ---------------------------------------


class RawClient:
    def __init__(self, ws: trio_websocket.WebSocketConnection) -> None:
        self.ws = ws
        self.events: list[dict[str, Any]] = []

    async def call(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send ``message`` and return the reply with its id (events are kept)."""
        await self.ws.send_message(orjson.dumps(message).decode())
        while True:
            got = orjson.loads(await self.ws.get_message())
            if "id" in got:
                assert got["id"] == message["id"], got
                return dict(got)
            self.events.append(got)


async def test_page_endpoint_client_gets_its_own_ids_sessions_and_browserds_rules(
    gw: ServiceInfo, pages: PageServer,
) -> None:
    with trio.fail_after(60):
        async with gw.client() as api:
            tab = (await api.post("/tabs/open", json={"url": pages.url("/hello.html")})).json()
            target = tab["targetId"]
            pid = (await api.get("/status")).json()["pid"]
            async with httpx.AsyncClient(headers=gw.headers, timeout=10,
                                         verify=LOOPBACK_TLS) as http:
                listed = (await http.get(f"http://127.0.0.1:{gw.cdp_port}/json/list")).json()
            entry = next(t for t in listed if t["id"] == target)
            auth = [(b"authorization", f"Bearer {gw.token}".encode())]
            async with trio_websocket.open_websocket_url(
                entry["webSocketDebuggerUrl"], extra_headers=auth,
            ) as ws:
                raw = RawClient(ws)
                # id 1 again and again: the client's ids are its own.
                for _ in range(2):
                    reply = await raw.call({"id": 1, "method": "Runtime.evaluate", "params": {
                        "expression": "6 * 7", "returnByValue": True}})
                    assert reply["result"]["result"]["value"] == 42 and "sessionId" not in reply
                await raw.call({"id": 2, "method": "Runtime.enable"})
                while not any(e["method"] == "Runtime.executionContextCreated"
                              for e in raw.events):
                    raw.events.append(orjson.loads(await ws.get_message()))
                assert all("sessionId" not in e for e in raw.events)
                foreign = await raw.call({"id": 3, "method": "Runtime.evaluate",
                                          "sessionId": "0" * 32, "params": {"expression": "1"}})
                assert foreign["error"]["code"] == -32001
                closing = await raw.call({"id": 4, "method": "Browser.close"})
                assert "not allowed" in closing["error"]["message"]
                nav = await raw.call({"id": 5, "method": "Page.navigate",
                                      "params": {"url": "file:///etc/passwd"}})
                assert "URL_BLOCKED" in nav["error"]["message"], nav
                created = await raw.call({"id": 6, "method": "Target.createTarget",
                                          "params": {"url": "chrome://settings"}})
                assert "URL_BLOCKED" in created["error"]["message"], created
                detach = await raw.call({"id": 7, "method": "Target.detachFromTarget",
                                         "params": {"sessionId": "0" * 32}})
                assert "error" in detach
                garbage = await raw.call({"id": 8, "method": 5})
                assert garbage["error"]["code"] == -32600
                # browserd's own work goes on while the client is attached.
                r = await api.post("/eval", json={"targetId": target, "js": "location.href"})
                assert (r.status_code, r.json()["result"]) == (200, pages.url("/hello.html"))
            r = await api.post("/eval", json={"targetId": target, "js": "1 + 1"})
            assert (r.status_code, r.json()["result"]) == (200, 2)
            status = (await api.get("/status")).json()
            assert status["pid"] == pid and status["state"] == "running"
            r = await api.get("/tabs")
            assert pages.url("/hello.html") in [t["url"] for t in r.json()["tabs"]]
            await api.post("/tabs/close", json={"targetId": target})


async def wait_status(api: httpx.AsyncClient, key: str, value: Any) -> None:
    await poll(lambda: api.get("/status"), until=lambda r: r.json()[key] == value)


async def test_spare_tab_is_never_hidden_from_a_gateway_client(gw: ServiceInfo) -> None:
    """Every page a browser-endpoint client can see is a listed tab (no hidden spare)."""
    with trio.fail_after(60):
        async with gw.client() as api, httpx.AsyncClient(headers=gw.headers,
                                                         verify=LOOPBACK_TLS) as http:
            await wait_status(api, "spareTab", True)  # headless: the spare exists
            version = (await http.get(f"http://127.0.0.1:{gw.cdp_port}/json/version")).json()
            auth = [(b"authorization", f"Bearer {gw.token}".encode())]
            async with trio_websocket.open_websocket_url(
                version["webSocketDebuggerUrl"], extra_headers=auth) as ws:
                raw = RawClient(ws)
                assert (await api.get("/status")).json()["spareTab"] is False
                reply = await raw.call({"id": 1, "method": "Target.getTargets"})
                seen = {t["targetId"] for t in reply["result"]["targetInfos"]
                        if t["type"] == "page"}
                listed = {t["targetId"] for t in (await api.get("/tabs")).json()["tabs"]}
                assert seen <= listed, f"pages hidden from /tabs: {seen - listed}"
                # A page the client creates is listed too.
                made = await raw.call({"id": 2, "method": "Target.createTarget",
                                       "params": {"url": "about:blank"}})
                new_id = made["result"]["targetId"]
                while new_id not in {t["targetId"]
                                     for t in (await api.get("/tabs")).json()["tabs"]}:
                    await trio.sleep(0.05)
                await raw.call({"id": 3, "method": "Target.closeTarget",
                                "params": {"targetId": new_id}})
            await wait_status(api, "spareTab", True)  # back once the client has gone


# -- Playwright ---------------------------------------------------------------------------


def test_playwright_connect_over_cdp_lists_drives_and_opens_listed_tabs(
    gw: ServiceInfo, pages: PageServer,
) -> None:
    from playwright.sync_api import sync_playwright

    with gw.sync_client() as api:
        r = api.post("/tabs/open", json={"url": pages.url("/hello.html")})
        assert r.status_code == 200, r.text
        ours = r.json()["targetId"]
        assert api.post("/eval", json={"targetId": ours,
                                       "js": "document.title = 'gw-marker'"}).status_code == 200
        with sync_playwright() as pw:
            browser = pw.chromium.connect_over_cdp(
                f"http://127.0.0.1:{gw.cdp_port}", headers=gw.headers, timeout=20_000)
            try:
                seen = {p.title(): p for c in browser.contexts for p in c.pages}
                assert "gw-marker" in seen, list(seen)
                assert seen["gw-marker"].evaluate("() => 20 + 22") == 42
                page = browser.contexts[0].new_page()
                page.goto(pages.url("/hello.html?from=playwright"))
                session = page.context.new_cdp_session(page)
                opened = session.send("Target.getTargetInfo")["targetInfo"]["targetId"]
                deadline = time.monotonic() + 15
                while time.monotonic() < deadline:
                    tabs = api.get("/tabs").json()["tabs"]
                    if any(t["targetId"] == opened and "from=playwright" in t["url"]
                           for t in tabs):
                        break
                    time.sleep(0.05)
                else:
                    raise AssertionError(f"the page Playwright opened is not listed: {tabs}")
                # browserd drives the same tabs meanwhile.
                r = api.post("/eval", json={"targetId": opened, "js": "location.search"})
                assert (r.status_code, r.json()["result"]) == (200, "?from=playwright")
                assert api.get("/healthz").json()["browser"] == "open"
                # A tab browserd opens meanwhile reaches the client too.
                r = api.post("/tabs/open", json={"url": pages.url("/hello.html?from=browserd")})
                assert r.status_code == 200, r.text
                deadline = time.monotonic() + 15
                while not any("from=browserd" in p.url for c in browser.contexts
                              for p in c.pages):
                    assert time.monotonic() < deadline, "Playwright never saw browserd's tab"
                    seen["gw-marker"].evaluate("() => 1")  # a round trip lets events in
                api.post("/tabs/close", json={"targetId": r.json()["targetId"]})
                with pytest.raises(Exception, match="URL_BLOCKED"):
                    page.goto("file:///etc/passwd")
            finally:
                browser.close()
        r = api.post("/eval", json={"targetId": ours, "js": "document.title"})
        assert (r.status_code, r.json()["result"]) == (200, "gw-marker")
        assert api.get("/status").json()["state"] == "running"
        api.post("/tabs/close", json={"targetId": ours})
    assert "gateway client" in gw.log_text() and " gone (" in gw.log_text()


def test_playwright_clicks_fills_uploads_under_the_root_and_screenshots(
    gw: ServiceInfo, pages: PageServer, tmp_path: Path,
) -> None:
    """Playwright's everyday calls all pass the gateway's allowlist; a host file does not."""
    from playwright.sync_api import sync_playwright

    found = re.search(r"upload roots: (\S+)", gw.log_text())
    assert found, "the service did not log its upload roots"
    upload = Path(found.group(1)) / "pw-upload.txt"
    upload.write_text("uploaded through the gateway")
    outside = tmp_path / "outside.txt"
    outside.write_text("must never reach a page")
    with sync_playwright() as pw:
        browser = pw.chromium.connect_over_cdp(
            f"http://127.0.0.1:{gw.cdp_port}", headers=gw.headers, timeout=20_000)
        try:
            page = browser.contexts[0].new_page()
            page.goto(pages.url("/input_form.html"))
            page.fill("#email", "agent@example.com")
            page.click("#password")
            page.keyboard.type("hunter2")
            assert page.input_value("#email") == "agent@example.com"
            assert page.evaluate("document.activeElement.id") == "password"
            shot = page.screenshot()
            assert shot.startswith(b"\x89PNG") and len(shot) > 1000
            page.click("#go")
            page.wait_for_url("**/input_welcome.html**")
            assert "email=agent%40example.com" in page.url

            page.goto(pages.url("/upload.html"))
            # (Playwright reads the file itself and hands the page its bytes.)
            page.set_input_files("#plain", str(upload))
            assert page.evaluate("readFirst('plain')") == "uploaded through the gateway"
            # By path, the browser reads it: only under the upload root.
            cdp = page.context.new_cdp_session(page)
            node = cdp.send("Runtime.evaluate", {
                "expression": "document.getElementById('multi')"})["result"]["objectId"]
            with pytest.raises(Exception, match="UPLOAD_BLOCKED"):
                cdp.send("DOM.setFileInputFiles", {"objectId": node, "files": [str(outside)]})
            assert page.evaluate("document.getElementById('multi').files.length") == 0
            cdp.send("DOM.setFileInputFiles", {"objectId": node, "files": [str(upload)]})
            assert page.evaluate("readFirst('multi')") == "uploaded through the gateway"
            cdp.detach()
            context = browser.new_context()  # a context of the client's own
            other = context.new_page()
            other.goto(pages.url("/hello.html"))
            assert other.title() and other.evaluate("1 + 1") == 2
            context.close()
            page.close()
        finally:
            browser.close()
    assert "must never reach a page" not in gw.log_text()


def test_playwright_downloads_are_fetched_from_browserd_by_their_guid(
    gw: ServiceInfo, pages: PageServer, tmp_path: Path,
) -> None:
    """The recipe of docs/api.md: a download a gateway client starts lands in browserd's
    directory; the client's download GUID is browserd's id, so `GET /downloads/{guid}`
    serves the file, which Playwright's own `path()` does not find."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    add_route("/gw_dl_file", _attachment(b"gateway download body"))
    add_route("/gw_dl.html", html_route(b'<!doctype html><title>dl</title>'
                                        b'<a id="dl" href="/gw_dl_file">get it</a>'))
    with gw.sync_client() as api, sync_playwright() as pw:
        browser = pw.chromium.connect_over_cdp(
            f"http://127.0.0.1:{gw.cdp_port}", headers=gw.headers, timeout=20_000)
        try:
            page = browser.contexts[0].new_page()
            page.goto(pages.url("/gw_dl.html"))
            with page.expect_download(timeout=15_000) as started:
                page.click("#dl")
            download = started.value
            assert download.suggested_filename == "report.txt"
            where = download.path()  # Playwright's own folder: the file is not there
            assert download.failure() is None and not where.exists()
            with pytest.raises(PlaywrightError, match=r"ENOENT|no such file"):
                download.save_as(str(tmp_path / "copy.txt"))
            deadline = time.monotonic() + 15
            while True:
                done = [d for d in api.get("/downloads").json()["downloads"]
                        if d.get("suggestedFilename") == "report.txt"
                        and d.get("state") == "completed"]
                if done:
                    break
                assert time.monotonic() < deadline, api.get("/downloads").text
                time.sleep(0.05)
            guid = done[-1]["id"]
            assert where.name == guid, "the client's GUID is browserd's download id"
            served = api.get(f"/downloads/{guid}")
            assert (served.status_code, served.content) == (200, b"gateway download body")
            page.close()
        finally:
            browser.close()


PUPPETEER_SAMPLE = """
const puppeteer = require('puppeteer-core');
(async () => {
  const [base, token, url] = process.argv.slice(2);
  const headers = {Authorization: `Bearer ${token}`};
  // browserURL cannot send headers: read the WebSocket URL from /json/version yourself.
  const version = await (await fetch(`${base}/json/version`, {headers})).json();
  const browser = await puppeteer.connect({
    browserWSEndpoint: version.webSocketDebuggerUrl, headers, defaultViewport: null});
  const page = await browser.newPage();
  await page.goto(url);
  const answer = await page.evaluate(() => document.title + ':' + (20 + 22));
  await page.close();
  await browser.disconnect();
  console.log(answer);
})().catch((e) => { console.error(e); process.exit(1); });
"""


def test_puppeteer_connects_with_the_ws_endpoint_and_headers(
    gw: ServiceInfo, pages: PageServer, tmp_path: Path,
) -> None:
    """docs/api.md's Puppeteer recipe, run with puppeteer-core from tests/js."""
    js = Path(__file__).resolve().parents[1] / "js"
    if not (js / "node_modules" / "puppeteer-core").is_dir():
        pytest.skip("no puppeteer-core in tests/js (deploy/setup.sh test installs it)")
    script = tmp_path / "connect.cjs"
    script.write_text(PUPPETEER_SAMPLE)
    run = subprocess.run(["node", str(script), f"http://127.0.0.1:{gw.cdp_port}", gw.token,
                          pages.url("/hello.html")], cwd=js, capture_output=True, text=True,
                         timeout=60, env={**os.environ, "NODE_PATH": str(js / "node_modules")})
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().endswith(":42"), run.stdout


# -- the lifeline --------------------------------------------------------------------------


def test_browser_exits_when_the_service_is_killed(tmp_path: Path) -> None:
    info = start_service(tmp_path / "home")
    pid = 0
    try:
        with info.sync_client() as api:
            pid = api.get("/status").json()["pid"]
        os.kill(info.pid, signal.SIGKILL)
        info.proc.wait(10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                break
            if state == "Z":
                break
            time.sleep(0.02)
        else:
            raise AssertionError(f"the browser pid {pid} outlived its killed service")
    finally:
        stop_service(info)
        with_group = [p for p in group_members(pid) if p != pid] if pid else []
        for member in with_group:
            try:
                os.kill(member, signal.SIGKILL)
            except OSError:
                pass
