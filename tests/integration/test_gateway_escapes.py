"""S16, S17, S18 through browserd's CDP gateway, on a real Chromium: each gets a CDP error.

An attacker holding only the agent's token:

- S17: ``DOM.setFileInputFiles`` (and drag data) naming host files — a
  marker file outside ``upload_roots``, browserd's token files, the
  profile's Cookies db, ``/etc/shadow`` — on a page's file input: refused,
  and the page's ``input.files`` stays empty (a file under the upload root
  is read by the page: the control);
- S16: non-flat sessions (``attachToTarget``/``setAutoAttach`` without
  ``flatten: true``) and ``sendMessageToTarget`` carrying
  ``Browser.setDownloadBehavior`` or ``Page.navigate file:``: refused; a
  direct download behavior naming another directory is confined, so a
  download completes and that directory stays empty;
- S18: the browser's own UI targets (``browser_ui`` at
  ``chrome://omnibox-popup.top-chrome/``) are never listed, announced or
  auto-attached, and cannot be attached by id.

One private service for the module; its upload root is read from its log.
"""

from __future__ import annotations

import http.server
import os
import re
import secrets
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import trio
import trio_websocket
from supervision.harness import LOOPBACK_TLS

from tests.conftest import PageServer, ServiceInfo, add_route, start_service, stop_service

pytestmark = pytest.mark.chromium


def _attachment(h: http.server.SimpleHTTPRequestHandler) -> None:
    body = b"gateway download\n" * 16
    h.send_response(200)
    h.send_header("Content-Type", "application/octet-stream")
    h.send_header("Content-Disposition", 'attachment; filename="gw-escape.bin"')
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceInfo]:
    add_route("/gwdl/file", _attachment)
    info = start_service(tmp_path_factory.mktemp("gw-escapes"))
    yield info
    stop_service(info)


def upload_root(gw: ServiceInfo) -> Path:
    found = re.search(r"upload roots: (\S+)", gw.log_text())
    assert found, "the service did not log its upload roots"
    return Path(found.group(1))


class Gateway:
    """A raw gateway client: replies by id, every event kept."""

    def __init__(self, ws: trio_websocket.WebSocketConnection) -> None:
        self.ws = ws
        self.events: list[dict[str, Any]] = []
        self.next_id = 0

    async def call(self, method: str, params: dict[str, Any] | None = None,
                   session: str | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        await self.ws.send_message(orjson.dumps(message).decode())
        while True:
            got = dict(orjson.loads(await self.ws.get_message()))
            if got.get("id") == self.next_id:
                return got
            self.events.append(got)

    async def ok(self, method: str, params: dict[str, Any] | None = None,
                 session: str | None = None) -> dict[str, Any]:
        reply = await self.call(method, params, session)
        assert "result" in reply, (method, reply)
        return dict(reply["result"])

    async def value(self, expression: str, session: str | None = None) -> Any:
        result = await self.ok("Runtime.evaluate", {
            "expression": expression, "returnByValue": True, "awaitPromise": True}, session)
        return result["result"].get("value")

    async def wait_event(self, method: str, timeout: float = 20) -> dict[str, Any]:
        with trio.fail_after(timeout):
            while True:
                for event in self.events:
                    if event.get("method") == method:
                        self.events.remove(event)
                        return event
                await self.call("Browser.getVersion")  # a round trip lets events in
                await trio.sleep(0.05)


@asynccontextmanager
async def gateway(gw: ServiceInfo, page: str | None = None) -> AsyncIterator[Gateway]:
    """A client on the browser endpoint (``page`` None) or on a tab's page endpoint."""
    async with httpx.AsyncClient(headers=gw.headers, timeout=10, verify=LOOPBACK_TLS) as http:
        base = f"http://127.0.0.1:{gw.cdp_port}"
        if page is None:
            url = (await http.get(f"{base}/json/version")).json()["webSocketDebuggerUrl"]
        else:
            listed = (await http.get(f"{base}/json/list")).json()
            url = next(t["webSocketDebuggerUrl"] for t in listed if t["id"] == page)
    auth = [(b"authorization", f"Bearer {gw.token}".encode())]
    async with trio_websocket.open_websocket_url(url, extra_headers=auth,
                                                 max_message_size=64 * 1024 * 1024) as ws:
        yield Gateway(ws)


async def open_tab(api: httpx.AsyncClient, url: str) -> str:
    r = await api.post("/tabs/open", json={"url": url})
    assert r.status_code == 200, r.text
    return str(r.json()["targetId"])


def refused(reply: dict[str, Any], *words: str) -> None:
    assert "error" in reply and reply["error"]["code"] in (-32000, -32602), reply
    for word in words:
        assert word in reply["error"]["message"], reply


# -- S17: host files through a file input -----------------------------------------------


async def test_s17_host_files_never_reach_a_page(gw: ServiceInfo, pages: PageServer,
                                                 tmp_path: Path) -> None:
    marker_text = "S17-MARKER-" + secrets.token_hex(8)
    marker = tmp_path / "marker.txt"
    marker.write_text(marker_text)
    root = upload_root(gw)
    allowed_text = "gateway-upload-ok-" + secrets.token_hex(4)
    (root / "gw-ok.txt").write_text(allowed_text)
    link = root / "gw-link.txt"
    if not link.is_symlink():
        os.symlink(marker, link)  # inside the root, pointing out of it
    host_files = [str(marker), str(link), str(gw.token_file), str(gw.home / "config/owner-token"),
                  str(gw.profile_dir / "Default" / "Cookies"), "/etc/shadow", "/etc/hostname",
                  "../config/token"]
    async with gw.client() as api:
        tab = await open_tab(api, pages.url("/upload.html"))
        # The browser endpoint, through a flat child session; then the page endpoint.
        async with gateway(gw) as client:
            session = (await client.ok("Target.attachToTarget",
                                       {"targetId": tab, "flatten": True}))["sessionId"]
            await check_file_input(client, session, host_files, marker_text)
        async with gateway(gw, page=tab) as client:
            await check_file_input(client, None, host_files, marker_text)
            # The control: a file under the upload root is handed over and read.
            node = await input_object(client, None)
            await client.ok("DOM.setFileInputFiles", {"objectId": node,
                                                      "files": [str(root / "gw-ok.txt")]})
            assert await client.value("readFirst('plain')") == allowed_text
            assert await client.value("window.seen") == [f"plain=gw-ok.txt:{len(allowed_text)}"]
        await api.post("/tabs/close", json={"targetId": tab})
    assert marker_text not in gw.log_text()


async def input_object(client: Gateway, session: str | None) -> str:
    found = await client.ok("Runtime.evaluate",
                            {"expression": "document.getElementById('plain')"}, session)
    return str(found["result"]["objectId"])


async def check_file_input(client: Gateway, session: str | None, host_files: list[str],
                           marker_text: str) -> None:
    node = await input_object(client, session)
    for path in host_files:
        reply = await client.call("DOM.setFileInputFiles", {"objectId": node, "files": [path]},
                                  session)
        refused(reply, "DOM.setFileInputFiles", "UPLOAD_BLOCKED")
        assert marker_text not in str(reply)
    drag = await client.call("Input.dispatchDragEvent", {
        "type": "drop", "x": 20, "y": 200, "data": {
            "items": [], "dragOperationsMask": 1, "files": host_files[:1]}}, session)
    refused(drag, "UPLOAD_BLOCKED")
    assert await client.value("document.getElementById('plain').files.length", session) == 0
    assert await client.value("readFirst('plain')", session) is None
    assert await client.value("window.seen", session) == []


# -- S16: commands inside commands, downloads anywhere ----------------------------------


async def test_s16_no_unjudged_inner_commands_and_downloads_stay_confined(
    gw: ServiceInfo, pages: PageServer, tmp_path: Path,
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    hello = pages.url("/hello.html")
    async with gw.client() as api:
        tab = await open_tab(api, hello)
        async with gateway(gw) as client:
            for params in ({"targetId": tab}, {"targetId": tab, "flatten": False}):
                refused(await client.call("Target.attachToTarget", params), "flatten: true")
            refused(await client.call("Target.setAutoAttach", {
                "autoAttach": True, "waitForDebuggerOnStart": False}), "flatten: true")
            session = (await client.ok("Target.attachToTarget",
                                       {"targetId": tab, "flatten": True}))["sessionId"]
            inner = [{"id": 1, "method": "Browser.setDownloadBehavior", "params": {
                "behavior": "allow", "downloadPath": str(elsewhere)}},
                {"id": 2, "method": "Page.navigate", "params": {"url": "file:///etc/hostname"}}]
            for message in inner:
                for via in ({"sessionId": session}, {"targetId": tab}):
                    reply = await client.call("Target.sendMessageToTarget",
                                              {**via, "message": orjson.dumps(message).decode()})
                    refused(reply, "Target.sendMessageToTarget is not allowed")
            refused(await client.call("Page.navigate", {"url": "file:///etc/hostname"},
                                      session), "URL_BLOCKED")
            assert await client.value("location.href", session) == hello

            # A download behavior naming any directory is kept in browserd's.
            await client.ok("Browser.setDownloadBehavior", {
                "behavior": "allow", "downloadPath": str(elsewhere), "eventsEnabled": True})
            await client.ok("Page.navigate", {"url": pages.url("/gwdl/file")}, session)
            began = await client.wait_event("Browser.downloadWillBegin")
            assert began["params"]["suggestedFilename"] == "gw-escape.bin"
            while True:
                progress = await client.wait_event("Browser.downloadProgress")
                if progress["params"]["state"] != "inProgress":
                    break
            assert progress["params"]["state"] == "completed", progress
            assert list(elsewhere.iterdir()) == []
            directory = (await api.get("/status")).json()["downloads"]["directory"]
            assert Path(directory).is_relative_to(gw.home)
        await api.post("/tabs/close", json={"targetId": tab})
    assert list(elsewhere.iterdir()) == []


# -- S18: the browser's own UI ----------------------------------------------------------


def is_ui(info: dict[str, Any]) -> bool:
    return info.get("type") not in ("page", "iframe", "worker", "service_worker",
                                    "shared_worker") or str(info.get("url", "")).startswith(
        ("chrome:", "chrome-untrusted:", "devtools:", "chrome-extension:"))


async def test_s18_the_browsers_own_ui_is_never_seen_nor_attached(
    gw: ServiceInfo, pages: PageServer,
) -> None:
    async with gw.client() as api:
        tab = await open_tab(api, pages.url("/hello.html"))
        async with gateway(gw) as client:
            infos = (await client.ok("Target.getTargets"))["targetInfos"]
            assert tab in {t["targetId"] for t in infos}  # the control: pages are listed
            assert [t for t in infos if is_ui(t)] == []
            await client.ok("Target.setDiscoverTargets", {"discover": True})
            await client.ok("Target.setAutoAttach", {
                "autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True})
            await client.wait_event("Target.attachedToTarget")
            await client.call("Browser.getVersion")
            announced = [e["params"]["targetInfo"] for e in client.events
                         if "targetInfo" in e.get("params", {})]
            assert tab in {t["targetId"] for t in announced}
            assert [t for t in announced if is_ui(t)] == []
            for target in ("0" * 32, secrets.token_hex(16).upper()):
                for method in ("Target.attachToTarget", "Target.getTargetInfo",
                               "Target.activateTarget", "Target.closeTarget"):
                    reply = await client.call(method, {"targetId": target, "flatten": True})
                    assert reply["error"] == {"code": -32602,
                                              "message": "No target with given id found"}
            refused(await client.call("Target.createTarget", {
                "url": "chrome://omnibox-popup.top-chrome/"}), "URL_BLOCKED")
        listed = (await api.get("/tabs")).json()["tabs"]
        assert tab in {t["targetId"] for t in listed}
        await api.post("/tabs/close", json={"targetId": tab})


# -- refused methods ---------------------------------------------------------------------


async def test_methods_off_the_allowlist_are_refused_and_the_browser_lives_on(
    gw: ServiceInfo,
) -> None:
    async with gw.client() as api:
        pid = (await api.get("/status")).json()["pid"]
        async with gateway(gw) as client:
            for method, params in (
                ("Browser.crash", {}), ("Browser.close", {}), ("Browser.crashGpuProcess", {}),
                ("Target.exposeDevToolsProtocol", {"targetId": "x", "bindingName": "cdp"}),
                ("SystemInfo.getProcessInfo", {}), ("Network.getAllCookies", {}),
                ("Browser.executeBrowserCommand", {"commandId": "openTabSearch"}),
            ):
                refused(await client.call(method, params),
                        f"{method} is not allowed through browserd's CDP gateway")
            # Storage of a context that does not exist: an error, never anyone's cookies.
            reply = await client.call("Storage.getCookies", {"browserContextId": "F" * 32})
            assert "error" in reply, reply
            assert "cookies" in (await client.ok("Storage.getCookies"))  # the control
        status = (await api.get("/status")).json()
        assert (status["pid"], status["state"]) == (pid, "running")


# -- a token bound to a session --------------------------------------------------------------


async def test_a_session_bound_token_reaches_its_sessions_tabs_only(
    gw: ServiceInfo, pages: PageServer,
) -> None:
    from tests.integration.test_gateway import ws_handshake_status

    base = f"http://127.0.0.1:{gw.cdp_port}"
    async with gw.client() as api:
        minted = await api.post("/tokens", json={"name": "gw-sub", "newSession": True})
        assert minted.status_code == 200, minted.text
        sub = minted.json()["token"]
        narrow = (await api.post("/tokens", json={"name": "gw-read", "scopes": ["read"]}))
        assert narrow.status_code == 200, narrow.text
        elsewhere = await api.post("/tokens", json={"name": "gw-other", "profiles": ["other"]})
        assert elsewhere.status_code == 200, elsewhere.text
        default_tab = await open_tab(api, pages.url("/hello.html?default"))
        sub_headers = {"Authorization": f"Bearer {sub}"}
        async with httpx.AsyncClient(base_url=gw.base_url, headers=sub_headers, timeout=10,
                                     verify=LOOPBACK_TLS) as sub_api:
            session_tab = await open_tab(sub_api, pages.url("/hello.html?session"))
            async with httpx.AsyncClient(timeout=10, verify=LOOPBACK_TLS) as http:
                listed = (await http.get(f"{base}/json/list", headers=sub_headers)).json()
                assert [t["id"] for t in listed] == [session_tab]
                everything = (await http.get(f"{base}/json/list", headers=gw.headers)).json()
                assert {default_tab, session_tab} <= {t["id"] for t in everything}
                page_url = listed[0]["webSocketDebuggerUrl"]
                # Neither the person's token nor one without 'cdp' opens the gateway.
                owner = (gw.home / "config" / "owner-token").read_text().strip()
                for token in (narrow.json()["token"], owner):
                    r = await http.get(f"{base}/json/version",
                                       headers={"Authorization": f"Bearer {token}"})
                    assert (r.status_code, r.json()["code"], r.json().get("scope")) == (
                        403, "SCOPE_REQUIRED", "cdp"), r.text
                    assert await ws_handshake_status(
                        page_url, {"Authorization": f"Bearer {token}"}) == 403
                other_profile = {"Authorization": f"Bearer {elsewhere.json()['token']}"}
                r = await http.get(f"{base}/json/list", headers=other_profile)
                assert (r.status_code, r.json()["code"]) == (404, "PROFILE_NOT_FOUND"), r.text
                assert await ws_handshake_status(page_url, other_profile) == 404
            other_page = page_url.rsplit("/", 1)[0] + "/" + default_tab
            assert await ws_handshake_status(other_page, sub_headers) == 404
            assert await ws_handshake_status(other_page, gw.headers) == 101
            assert await ws_handshake_status(page_url, sub_headers) == 101

            auth = [(b"authorization", f"Bearer {sub}".encode())]
            async with httpx.AsyncClient(headers=sub_headers, verify=LOOPBACK_TLS) as http:
                url = (await http.get(f"{base}/json/version")).json()["webSocketDebuggerUrl"]
            async with trio_websocket.open_websocket_url(url, extra_headers=auth) as ws:
                client = Gateway(ws)
                infos = (await client.ok("Target.getTargets"))["targetInfos"]
                assert {t["targetId"] for t in infos} == {session_tab}
                context = infos[0]["browserContextId"]
                contexts = await client.ok("Target.getBrowserContexts")
                assert contexts["browserContextIds"] == [context]
                reply = await client.call("Target.attachToTarget",
                                          {"targetId": default_tab, "flatten": True})
                assert reply["error"] == {"code": -32602,
                                          "message": "No target with given id found"}
                refused(await client.call("Target.createTarget", {"url": "about:blank"}),
                        "browserContextId")
                made = await client.ok("Target.createTarget", {
                    "url": pages.url("/hello.html?made"), "browserContextId": context})
                with trio.fail_after(15):
                    while made["targetId"] not in {
                            t["targetId"] for t in (await sub_api.get("/tabs")).json()["tabs"]}:
                        await trio.sleep(0.05)
                await client.ok("Target.closeTarget", {"targetId": made["targetId"]})
            await sub_api.post("/tabs/close", json={"targetId": session_tab})
        await api.post("/tabs/close", json={"targetId": default_tab})
        await api.delete("/tokens/gw-sub")
        await api.delete("/tokens/gw-read")
        await api.delete("/tokens/gw-other")
