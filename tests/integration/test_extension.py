"""The extension driver end to end: the shipped extension in a second headless Chromium.

"The user's browser" is a Chromium of its own (own user data dir,
``--remote-debugging-port=0``) with browserd's extension loaded unpacked.
The test plays the user through that browser's DevTools: it calls the
service worker's own pairing function and its icon-click handler
(``browserdToggle``). browserd's side is the relay (``RelayDoor`` served by
hypercorn on a free port) and the same ``CdpConnection`` + tab registry +
tab actors as for a launched browser, over the ``RelayTransport``.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio import serve as hypercorn_serve
from supervision.chromium import PlainChromium, launch_chromium
from supervision.harness import LOOPBACK_TLS

from browserd.cdp import CdpConnection, open_cdp_connection, open_cdp_over
from browserd.cli.extension import install
from browserd.config import Settings
from browserd.paths import Paths
from browserd.relay import PairingStore, RelayHub, RelayTransport
from browserd.relay.door import RelayDoor
from browserd.tabs import actions as inp
from browserd.tabs.actions.records import Click, Navigate, TypeText
from browserd.tabs.actor import TabActor
from browserd.tabs.capture import screenshot
from browserd.tabs.locator import ElementTarget
from browserd.tabs.registry import TabRegistry, open_tab_registry
from browserd.tabs.snapshots import take_snapshot
from tests.conftest import PageServer, ServiceInfo, add_route
from tests.integration.helpers import html_route

pytestmark = pytest.mark.chromium

FORM = """<!doctype html><title>Human form</title>
<label for=name>Name</label> <input id=name>
<button id=go onclick="document.title = 'clicked ' + document.getElementById('name').value">
Go</button>
<iframe title="Other site" src="{child}" width=400 height=120></iframe>"""
AGENT_TOKEN = "agent-token-0123456789abcdefghijkl"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def _not_found(scope: Any, receive: Any, send: Any) -> None:
    """The app behind the door in this test: the API is not under test here."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})


@asynccontextmanager
async def _relay_server(hub: RelayHub) -> AsyncIterator[int]:
    port = _free_port()
    config = HypercornConfig()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    config.websocket_max_message_size = 64 * 1024 * 1024
    async with trio.open_nursery() as nursery:
        await nursery.start(hypercorn_serve, RelayDoor(_not_found, hub, control_port=port),
                            config)
        yield port
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def _users_browser(tmp_path: Path) -> AsyncIterator[PlainChromium]:
    extension = install(tmp_path / "extension")
    chromium = await trio.to_thread.run_sync(lambda: launch_chromium(
        tmp_path / "user", cdp_port=0, extra_args=(
            f"--load-extension={extension}", f"--disable-extensions-except={extension}")))
    try:
        yield chromium
    finally:
        await trio.to_thread.run_sync(chromium.stop)


class _Worker:
    """The extension's service worker, reached through the user's browser's DevTools."""

    def __init__(self, connection: CdpConnection, session_id: str) -> None:
        self.session = connection.session(session_id)

    async def run(self, expression: str) -> Any:
        """Evaluate ``expression`` in the worker (a promise is awaited); its JSON value."""
        reply = await self.session.send("Runtime.evaluate", {
            "expression": expression, "awaitPromise": True, "returnByValue": True})
        assert "exceptionDetails" not in reply, reply["exceptionDetails"]
        return reply["result"].get("value")

    async def click_icon_on(self, url_part: str) -> Any:
        """What Chrome does on a click of the toolbar icon on the tab showing ``url_part``.

        Waits (the caller's deadline) until that tab has loaded: a person
        clicks on a page they can see.
        """
        loaded = ("chrome.tabs.query({}).then(tabs => tabs.some(t => t.status === 'complete' "
                  f"&& (t.url || '').includes({json.dumps(url_part)})))")
        while not await self.run(loaded):
            await trio.sleep(0.05)
        return await self.run(
            "chrome.tabs.query({}).then(tabs => browserdToggle("
            f"tabs.find(t => (t.url || '').includes({json.dumps(url_part)}))))")


async def _find_worker(connection: CdpConnection) -> _Worker:
    while True:
        targets = (await connection.send("Target.getTargets"))["targetInfos"]
        worker = [t for t in targets if t["type"] == "service_worker"
                  and t["url"].startswith("chrome-extension://")]
        if worker:
            attached = await connection.send("Target.attachToTarget", {
                "targetId": worker[0]["targetId"], "flatten": True})
            found = _Worker(connection, attached["sessionId"])
            while await found.run("typeof self.browserdToggle") != "function":
                await trio.sleep(0.05)  # the worker's script is still loading
            return found
        await trio.sleep(0.1)


async def _until(predicate: Callable[[], bool], changed: Callable[[], Any]) -> None:
    while not predicate():
        await changed()


async def _attached_tab(tabs: TabRegistry, target_id: str) -> TabActor:
    await _until(lambda: target_id in tabs.target_ids(), tabs.wait_changed)
    tab = tabs.get(target_id)
    await tab.wait_enabled()
    return tab


async def test_a_pinned_tab_is_driven_over_the_relay_and_unpinning_leaves_it_open(
        tmp_path: Path, pages: PageServer, other_origin: PageServer) -> None:
    # The form holds an out-of-process iframe: its session is a child of the tab's.
    add_route("/extension/form.html", html_route(
        FORM.format(child=other_origin.url("/snap_child.html"))))
    add_route("/extension/agent.html", html_route("<title>Agent page</title><p>agent</p>"))
    store = PairingStore(tmp_path / "config")
    hub = RelayHub(store, colour_of=lambda profile: "#C71585")
    async with _relay_server(hub) as port, _users_browser(tmp_path) as chromium:
        assert chromium.ws_url is not None
        async with open_cdp_connection(chromium.ws_url) as users_devtools:
            human = await users_devtools.send("Target.createTarget", {
                "url": pages.url("/extension/form.html")})
            await users_devtools.send("Target.createTarget", {"url": "about:blank#other"})
            worker = await _find_worker(users_devtools)

            # Pairing: the code from `browserd extension pair`, typed into the options page.
            code = store.new_code("work").code
            with trio.fail_after(15):
                paired = await worker.run(f"browserdPair({json.dumps(code)}, {port})")
                transport = await hub.wait_transport("work")
                while not (await worker.run("browserdStatus()"))["connected"]:
                    await trio.sleep(0.05)  # the relay's welcome is on its way
            assert paired == {"profile": "work"}
            assert store.lookup("wrong") is None

            # Nothing is shared before the user clicks.
            assert transport.pinned_targets() == []
            clicked = await worker.click_icon_on("/extension/form.html")
            assert clicked["pinned"] is True, clicked
            assert clicked["targetId"] == human["targetId"]

            async with open_cdp_over(transport, transport.description) as relay, \
                    open_tab_registry(relay, settings=Settings(), headless=False) as tabs:
                await _drive_the_pinned_tab(tabs, human["targetId"], pages, other_origin)
                await _agent_tab_goes_into_the_profile_group(tabs, transport, worker, pages)

                # The agent releases the tab: it leaves browserd, the extension lets go
                # (no badge, no debugger), and only a new click shares it again.
                assert await transport.release(human["targetId"])
                with trio.fail_after(10):
                    await _until(lambda: human["targetId"] not in tabs.target_ids(),
                                 tabs.wait_changed)
                    while (await worker.run("browserdStatus()"))["pinned"]:
                        await trio.sleep(0.05)
                assert (await worker.click_icon_on("/extension/second.html"))["pinned"]
                with trio.fail_after(20):
                    await _attached_tab(tabs, human["targetId"])

                # Unpin: the tab leaves browserd and stays open in the user's browser.
                unclicked = await worker.click_icon_on("/extension/second.html")
                assert unclicked == {"pinned": False}, unclicked
                with trio.fail_after(10):
                    await _until(lambda: human["targetId"] not in tabs.target_ids(),
                                 tabs.wait_changed)
                assert human["targetId"] not in [t.target_id for t in
                                                 transport.pinned_targets()]
                still_open = (await users_devtools.send("Target.getTargets"))["targetInfos"]
                assert human["targetId"] in [t["targetId"] for t in still_open]

            # browserd closed its connection: the extension drops every pin it had.
            with trio.fail_after(10):
                while (await worker.run("browserdStatus()"))["pinned"]:
                    await trio.sleep(0.05)

            await _refusals(store, port, worker)


async def _drive_the_pinned_tab(tabs: TabRegistry, target_id: str, pages: PageServer,
                                other_origin: PageServer) -> None:
    with trio.fail_after(20):
        tab = await _attached_tab(tabs, target_id)
    # Only the pinned tab is listed: the user's other tab is invisible.
    assert tabs.target_ids() == [target_id]
    async with tab.work():
        snap = await take_snapshot(tab)
    assert 'textbox "Name"' in snap["text"] and 'button "Go"' in snap["text"]
    assert 'button "Inner button"' in snap["text"], snap["text"]  # spliced from the OOPIF
    button = next(line.split("]")[0].lstrip("[- ") for line in snap["text"].splitlines()
                  if 'button "Go"' in line)
    async with tab.work():
        await inp.perform(tab, TypeText(text="Ada", target=ElementTarget(selector="#name")),
                          timeout_s=10)
        await inp.perform(tab, Click(target=ElementTarget(ref=button)), timeout_s=10)
        title = await tab.send("Runtime.evaluate", {"expression": "document.title",
                                                    "returnByValue": True})
        capture = await screenshot(tab)
    assert title["result"]["value"] == "clicked Ada"
    assert capture.data[:8] == b"\x89PNG\r\n\x1a\n" and capture.width > 0
    # A navigation while shared: the new page's OOPIF starts paused and is resumed
    # through its child session, so it shows up in the next snapshot.
    add_route("/extension/second.html", html_route(
        "<title>Second</title><p>second page</p><iframe title=Child src="
        f"{other_origin.url('/snap_child.html')}></iframe>"))
    async with tab.work():
        await inp.perform(tab, Navigate(url=pages.url("/extension/second.html")),
                          timeout_s=15)
        snap = await take_snapshot(tab)
    assert "second page" in snap["text"] or 'RootWebArea "Second"' in snap["text"]
    assert 'button "Inner button"' in snap["text"], snap["text"]


async def _agent_tab_goes_into_the_profile_group(
        tabs: TabRegistry, transport: RelayTransport, worker: _Worker,
        pages: PageServer) -> None:
    with trio.fail_after(20):
        opened = await tabs.open(pages.url("/extension/agent.html"))
    created = [p for p in transport.pinned_targets() if p.target_id == opened.target_id]
    assert created and created[0].agent_created
    group = await worker.run(
        f"chrome.tabs.get({created[0].tab_id}).then(t => chrome.tabGroups.get(t.groupId))")
    assert group["title"] == "work"
    assert group["color"] == "pink"
    # The agent may close its own tab.
    with trio.fail_after(10):
        await tabs.close(opened)
    assert opened.target_id not in tabs.target_ids()


class _RawSocket:
    """A minimal WebSocket client on a raw stream: the handshake with any Origin, frames."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.buffer = b""

    async def _read(self, count: int) -> bytes:
        while len(self.buffer) < count:
            chunk = await self.stream.receive_some(4096)
            assert chunk, "the relay closed the connection"
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    async def handshake(self, port: int, origin: str) -> int:
        """Send the upgrade request; the answer's HTTP status."""
        await self.stream.send_all(
            f"GET /relay HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            f"Sec-WebSocket-Version: 13\r\nOrigin: {origin}\r\n\r\n".encode())
        return int((await self._head())[0].split(" ", 2)[1])

    async def _head(self) -> list[str]:
        """The next HTTP response head, as lines (the status line first)."""
        while b"\r\n\r\n" not in self.buffer:
            chunk = await self.stream.receive_some(4096)
            assert chunk, "the relay closed without an answer"
            self.buffer += chunk
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        return head.decode("latin-1").split("\r\n")

    async def post_pair(self, port: int, code: str, origin: str
                        ) -> tuple[int, dict[str, str], dict[str, Any]]:
        """POST /relay/pair on this (kept-alive) connection: status, headers, JSON body."""
        body = json.dumps({"code": code}).encode()
        await self.stream.send_all(
            f"POST /relay/pair HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: {origin}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            .encode() + body)
        lines = await self._head()
        headers = {k.strip().lower(): v.strip() for k, _, v in
                   (line.partition(":") for line in lines[1:])}
        answer = json.loads(await self._read(int(headers["content-length"])))
        return int(lines[0].split(" ", 2)[1]), headers, answer

    async def send_text(self, text: str) -> None:
        payload, mask = text.encode(), b"\x01\x02\x03\x04"
        assert len(payload) < 126
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        await self.stream.send_all(bytes([0x81, 0x80 | len(payload)]) + mask + masked)

    async def frame(self) -> tuple[int, bytes]:
        """The next frame from the server: (opcode, payload)."""
        first, second = await self._read(2)
        length = second & 0x7F
        if length == 126:
            length = int.from_bytes(await self._read(2), "big")
        elif length == 127:
            length = int.from_bytes(await self._read(8), "big")
        return first & 0x0F, await self._read(length)


@asynccontextmanager
async def _raw_relay(port: int) -> AsyncIterator[_RawSocket]:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        yield _RawSocket(stream)


async def _handshake_status(port: int, origin: str) -> int:
    """The HTTP status of a WebSocket handshake on /relay with ``origin``."""
    with trio.fail_after(10):
        async with _raw_relay(port) as raw:
            return await raw.handshake(port, origin)


async def _silent_socket(port: int, origin: str, closed: list[float]) -> None:
    """Connect to /relay and say nothing: the relay must refuse and close 4401 (5 s)."""
    with trio.fail_after(30):
        async with _raw_relay(port) as raw:
            assert await raw.handshake(port, origin) == 101
            start = trio.current_time()
            opcode, payload = await raw.frame()
            answer = json.loads(payload)
            assert (opcode, answer["code"]) == (1, "UNAUTHORIZED"), answer
            assert "no hello" in answer["message"]
            opcode, payload = await raw.frame()
            assert (opcode, int.from_bytes(payload[:2], "big")) == (8, 4401)
            closed.append(trio.current_time() - start)


async def _refusals(store: PairingStore, port: int, worker: _Worker) -> None:
    extension_id = next(iter(store.paired_extension_ids()))
    origin = f"chrome-extension://{extension_id}"
    silent_closed: list[float] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_silent_socket, port, origin, silent_closed)
        await _refusals_meanwhile(store, port, worker, origin)
    assert silent_closed and silent_closed[0] >= 4.9, silent_closed  # the 5 s deadline


async def _refusals_meanwhile(store: PairingStore, port: int, worker: _Worker,
                              origin: str) -> None:
    # A web page's Origin is refused before the handshake completes; so is another
    # extension's, and the paired one's with anything before or after it; the paired
    # extension's exact Origin passes (then needs its relay token).
    assert await _handshake_status(port, "http://127.0.0.1:8000") == 403
    assert await _handshake_status(port, "chrome-extension://" + "a" * 32) == 403
    for near in (f"{origin}a", f"{origin}/", f"x{origin}", f"{origin}.evil.test",
                 origin[:-1]):
        assert await _handshake_status(port, near) == 403, near
    assert await _handshake_status(port, origin) == 101
    # The paired extension's Origin with the agent's API token: refused after hello.
    with trio.fail_after(10):
        async with _raw_relay(port) as raw:
            assert await raw.handshake(port, origin) == 101
            await raw.send_text(json.dumps({"type": "hello", "token": AGENT_TOKEN}))
            opcode, payload = await raw.frame()
            answer = json.loads(payload)
            assert (opcode, answer["type"], answer["code"]) == (1, "refused", "UNAUTHORIZED")
            opcode, payload = await raw.frame()
            assert (opcode, int.from_bytes(payload[:2], "big")) == (8, 4401)
    # `nobody` with a forged Origin: wrong codes, over many connections, cannot block
    # the person. One connection gets three tries, then it is closed.
    code = store.new_code("work").code
    forged = "chrome-extension://" + "b" * 32
    with trio.fail_after(30):
        async with _raw_relay(port) as raw:
            for _ in range(2):
                status, _, answer = await raw.post_pair(port, "ZZZZ-ZZZZ", forged)
                assert (status, answer["code"]) == (403, "PAIRING_FAILED")
            status, headers, answer = await raw.post_pair(port, "ZZZZ-ZZZZ", forged)
            assert (status, answer["code"]) == (429, "TOO_MANY_PAIRING_FAILURES")
            assert headers["connection"] == "close"
            assert not raw.buffer and not await raw.stream.receive_some(4096)  # closed
        for _ in range(12):
            async with _raw_relay(port) as raw:
                status, _, answer = await raw.post_pair(port, "ZZZZ-ZZZZ", forged)
                assert (status, answer["code"]) == (403, "PAIRING_FAILED")
    # The person's code still pairs, once.
    await worker.run(f"browserdPair({json.dumps(code)}, {port})")
    failed = await worker.run(f"browserdPair({json.dumps(code)}, {port})"
                              ".then(() => 'paired', e => e.message)")
    assert "wrong, used or expired" in failed


async def test_the_service_answers_the_relay_in_front_of_its_guard(service: ServiceInfo) -> None:
    """`browserd serve` pairs an extension; the two tokens never cross over."""
    store = PairingStore(Paths.resolve({"BROWSERD_HOME": str(service.home)}).config_dir)
    code = store.new_code(service.profile).code
    origin = {"Origin": "chrome-extension://" + "b" * 32}
    async with httpx.AsyncClient(base_url=service.base_url, timeout=10,
                                 verify=LOOPBACK_TLS) as client:
        # The agent's token does not make a web page's request a pairing.
        r = await client.post("/relay/pair", json={"code": code},
                              headers={**service.headers, "Origin": "http://127.0.0.1:1"})
        assert (r.status_code, r.json()["code"]) == (403, "FORBIDDEN_ORIGIN")
        r = await client.post("/relay/pair", json={"code": code}, headers=origin)
        assert r.status_code == 200, r.text
        relay_token = r.json()["token"]
        assert r.json()["profile"] == service.profile
        assert r.headers["cache-control"] == "no-store"
        # The relay token is not an API token, and the API is still behind its guard.
        r = await client.get("/tabs", headers={"Authorization": f"Bearer {relay_token}"})
        assert r.status_code == 401
        r = await client.get("/tabs", headers={**service.headers, **origin})
        assert (r.status_code, r.json()["code"]) == (403, "FORBIDDEN_ORIGIN")
        r = await client.get("/tabs", headers=service.headers)
        assert r.status_code == 200
    assert store.unpair(service.profile)


async def test_an_extension_profile_serves_the_shared_tab_through_the_api(
        tmp_path: Path, pages: PageServer) -> None:
    """End to end: `driver = "extension"`, paired, a click shares a tab, the API drives it."""
    from supervision.harness import start_service_async, stop_service_async

    add_route("/extension/e2e.html", html_route(
        "<title>Shared</title><button onclick=\"document.title='pressed'\">Press</button>"))
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True, mode=0o700)
    (home / "config" / "config.toml").write_text(
        '[profiles.ext]\ndriver = "extension"\ncolor = "#C71585"\n')
    service = await start_service_async(home, timeout=60)
    try:
        async with httpx.AsyncClient(base_url=service.base_url, timeout=30, headers={
                **service.headers, "X-Browserd-Profile": "ext"}, verify=LOOPBACK_TLS) as api, \
                _users_browser(tmp_path) as chromium:
            with trio.fail_after(60):
                r = await api.post("/start")
                assert r.status_code == 200 and r.json()["state"] == "awaiting_extension", r.text
                r = await api.post("/snapshot")
                assert (r.status_code, r.json()["code"]) == (503, "EXTENSION_NOT_CONNECTED")
                assert chromium.ws_url is not None
                async with open_cdp_connection(chromium.ws_url) as users_devtools:
                    human = await users_devtools.send("Target.createTarget", {
                        "url": pages.url("/extension/e2e.html")})
                    worker = await _find_worker(users_devtools)
                    code = PairingStore(home / "config").new_code("ext").code
                    await worker.run(f"browserdPair({json.dumps(code)}, {service.port})")
                    while (await api.get("/status")).json()["state"] != "running":
                        await trio.sleep(0.05)
                    assert (await api.get("/tabs")).json()["tabs"] == []  # nothing shared
                    assert (await worker.click_icon_on("/extension/e2e.html"))["pinned"]
                    target = human["targetId"]
                    while target not in [t["targetId"] for t in
                                         (await api.get("/tabs")).json()["tabs"]]:
                        await trio.sleep(0.05)
                    r = await api.get("/snapshot", params={"targetId": target,
                                                           "nodes": "true"})
                    assert r.status_code == 200, r.text
                    button = next(n["ref"] for n in r.json()["nodes"] if n["role"] == "button")
                    r = await api.post("/click", json={"targetId": target, "ref": button})
                    assert r.status_code == 200, r.text
                    r = await api.post("/eval", json={"targetId": target,
                                                      "js": "document.title"})
                    assert r.json()["result"] == "pressed"
                    r = await api.post("/tabs/release", json={"targetId": target})
                    assert r.status_code == 200, r.text
                    assert target not in [t["targetId"] for t in
                                          (await api.get("/tabs")).json()["tabs"]]
                    assert (await api.post("/stop")).status_code == 200
                    still = (await users_devtools.send("Target.getTargets"))["targetInfos"]
                    assert target in [t["targetId"] for t in still]
    finally:
        await stop_service_async(service)
