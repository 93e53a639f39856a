"""GET /events on a real Chromium: what a client sees, resuming, and a reader that never reads.

A private service (module scope): one test kills its browser with SIGKILL.
"""

from __future__ import annotations

import gc
import os
import signal
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
import orjson
import pytest
import trio

from tests.conftest import PageServer, ServiceInfo, add_route, start_service, stop_service

pytestmark = pytest.mark.chromium


def _attachment(h: Any) -> None:
    body = b"event test file\n" * 64
    h.send_response(200)
    h.send_header("Content-Type", "application/octet-stream")
    h.send_header("Content-Disposition", 'attachment; filename="report.txt"')
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


@pytest.fixture(scope="module")
def events_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceInfo]:
    add_route("/ev/file", _attachment)
    info = start_service(tmp_path_factory.mktemp("events"))
    yield info
    stop_service(info)


@pytest.fixture
async def api(events_service: ServiceInfo) -> AsyncIterator[httpx.AsyncClient]:
    async with events_service.client() as client:
        yield client


class Reader:
    """A GET /events client: parses frames into ``events`` (``id`` as sent, or None)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.comments: list[str] = []
        self.ended = trio.Event()
        self._changed = trio.Event()

    async def run(self, client: httpx.AsyncClient, params: dict[str, str] | None = None,
                  headers: dict[str, str] | None = None, *,
                  task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with client.stream("GET", "/events", params=params, headers=headers,
                                 timeout=httpx.Timeout(60, read=None)) as r:
            assert r.status_code == 200, await r.aread()
            assert r.headers["content-type"].startswith("text/event-stream")
            task_status.started()
            frame: dict[str, str] = {}
            async for line in r.aiter_lines():
                if line.startswith(":"):
                    self.comments.append(line)
                elif line == "":
                    if "data" in frame:
                        event = orjson.loads(frame["data"])
                        event["_sse_id"] = frame.get("id")
                        event["_sse_event"] = frame.get("event")
                        self.events.append(event)
                        self._notify()
                    frame = {}
                else:
                    key, _, value = line.partition(": ")
                    assert key in ("id", "event", "data", "retry"), line
                    frame[key] = value
        self.ended.set()
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def wait_for(self, pred: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while True:
            for event in self.events:
                if pred(event):
                    return event
            await self._changed.wait()


async def test_a_client_sees_tabs_navigations_dialogs_and_downloads(api, pages: PageServer):
    reader = Reader()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            await nursery.start(reader.run, api)
            r = await api.post("/tabs/open", json={"url": "about:blank"})
            tab = r.json()["targetId"]
            opened = await reader.wait_for(lambda e: e["type"] == "tab.opened"
                                           and e.get("targetId") == tab)
            assert opened["profile"] == "clawd" and isinstance(opened["at"], float)
            assert opened["_sse_id"] == str(opened["id"]) and opened["_sse_event"] == "tab.opened"

            r = await api.post("/navigate", json={"targetId": tab,
                                                  "url": pages.url("/dl_auto.html")})
            assert r.status_code == 200, r.text
            nav = await reader.wait_for(lambda e: e["type"] == "tab.navigated"
                                        and e.get("targetId") == tab)
            assert nav["url"] == pages.url("/dl_auto.html")

            # Page strings are data: a newline cannot end the frame or forge a field.
            hostile = "line1\n\nevent: tab.closed\ndata: {\"forged\": true}\r\nid: 999999"
            script = f"setTimeout(() => alert({orjson.dumps(hostile).decode()}), 0); 1"
            r = await api.post("/eval", json={"targetId": tab, "js": script})
            assert r.status_code == 200, r.text
            dialog = await reader.wait_for(lambda e: e["type"] == "dialog.opened")
            # (Chromium itself turns the CR LF into LF.)
            assert dialog["targetId"] == tab
            assert dialog["message"] == hostile.replace("\r\n", "\n")
            assert dialog["dialogType"] == "alert"
            assert not any(e.get("forged") for e in reader.events)
            r = await api.post("/dialog", json={"targetId": tab, "accept": True})
            assert r.status_code == 200, r.text
            closed = await reader.wait_for(lambda e: e["type"] == "dialog.closed")
            assert closed["accepted"] is True and closed["id"] > dialog["id"]

            r = await api.post("/eval", json={"targetId": tab, "js":
                                              "const a=document.createElement('a');"
                                              "a.href='/ev/file';document.body.appendChild(a);"
                                              "a.click();1"})
            assert r.status_code == 200, r.text
            started = await reader.wait_for(lambda e: e["type"] == "download.started")
            finished = await reader.wait_for(lambda e: e["type"] == "download.finished")
            assert finished["id"] > started["id"]
            assert finished["downloadId"] == started["downloadId"]
            assert finished["mediaUrl"] == f"/downloads/{started['downloadId']}"
            assert finished["state"] == "completed" and finished["suggestedFilename"] == \
                "report.txt"
            assert finished["mediaUrl"].startswith("/downloads/")

            r = await api.post("/eval", json={"targetId": tab,
                                              "js": "console.error('bad thing', 42); 1"})
            err = await reader.wait_for(lambda e: e["type"] == "console.error")
            assert err["text"] == "bad thing 42" and err["targetId"] == tab

            await api.post("/tabs/close", json={"targetId": tab})
            await reader.wait_for(lambda e: e["type"] == "tab.closed"
                                  and e.get("targetId") == tab)
            ids = [e["id"] for e in reader.events]
            assert ids == sorted(ids) and len(ids) == len(set(ids))
            nursery.cancel_scope.cancel()


async def test_filters_by_type_and_profile(api):
    by_type, other_profile = Reader(), Reader()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            await nursery.start(by_type.run, api, {"types": "tab.closed"})
            await nursery.start(other_profile.run, api, {"profile": "someone-else"})
            r = await api.post("/tabs/open", json={"url": "about:blank"})
            tab = r.json()["targetId"]
            await api.post("/tabs/close", json={"targetId": tab})
            await by_type.wait_for(lambda e: e.get("targetId") == tab)
            assert {e["type"] for e in by_type.events} == {"tab.closed"}
            assert other_profile.events == []
            nursery.cancel_scope.cancel()
        r = await api.get("/events", params={"types": "tab.bogus"})
        assert (r.status_code, r.json()["code"]) == (400, "BAD_REQUEST")
        r = await api.get("/events", headers={"Last-Event-ID": "not-a-number"})
        assert r.status_code == 400


async def test_resume_with_last_event_id_loses_and_repeats_nothing(api):
    first, resumed = Reader(), Reader()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            await nursery.start(first.run, api, {"types": "tab.*"})
            tabs = []
            for _ in range(2):
                tabs.append((await api.post("/tabs/open", json={"url": "about:blank"}))
                            .json()["targetId"])
            await first.wait_for(lambda e: e.get("targetId") == tabs[-1])
            nursery.cancel_scope.cancel()
        seen = first.events[-1]["id"]
        # While nobody listens: more events.
        for tab in tabs:
            await api.post("/tabs/close", json={"targetId": tab})
        third = (await api.post("/tabs/open", json={"url": "about:blank"})).json()["targetId"]
        async with trio.open_nursery() as nursery:
            await nursery.start(resumed.run, api, {"types": "tab.*"},
                                {"Last-Event-ID": str(seen)})
            await resumed.wait_for(lambda e: e.get("targetId") == third)
            nursery.cancel_scope.cancel()
        await api.post("/tabs/close", json={"targetId": third})
    got = [(e["type"], e["targetId"]) for e in resumed.events]
    assert got[:3] == [("tab.closed", tabs[0]), ("tab.closed", tabs[1]),
                       ("tab.opened", third)]
    assert resumed.events[0]["id"] > seen
    ids = [e["id"] for e in first.events + resumed.events]
    assert len(ids) == len(set(ids)), "an event came twice"


async def test_a_reader_that_never_reads_is_dropped_and_slows_nothing(
        api, events_service: ServiceInfo, pages: PageServer):
    """Flood console errors at a client that never reads: it is dropped and cut off,
    requests answer."""
    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.connect(("127.0.0.1", events_service.port))
    raw.sendall(f"GET /events HTTP/1.1\r\nHost: 127.0.0.1:{events_service.port}\r\n"
                f"Authorization: Bearer {events_service.token}\r\n\r\n".encode())
    try:
        with trio.fail_after(120):
            async def dropped() -> int:
                return int((await api.get("/status")).json()["events"]["dropped"])

            while (await api.get("/status")).json()["events"]["subscribers"] < 1:
                await trio.sleep(0.05)
            before = await dropped()
            tab = (await api.post("/tabs/open", json={"url": pages.url("/hello.html")})
                   ).json()["targetId"]
            rounds = 0
            while await dropped() == before:
                rounds += 1
                assert rounds <= 60, "the silent reader was never dropped"
                r = await api.post("/eval", json={"targetId": tab, "js":
                                                  "for (let i = 0; i < 500; i++) "
                                                  "console.error('x'.repeat(900) + i); 1"})
                assert r.status_code == 200, r.text
            # Its connection is cut (the server's write to it would never return): the
            # service says so, and the client finds the end of the stream after the data
            # that was already on its way.
            while "cut the connection of a client that stopped reading" not in \
                    events_service.log_text():
                await trio.sleep(0.1)

            def read_to_the_end() -> bool:
                raw.settimeout(30)
                try:
                    while raw.recv(1 << 16):
                        pass
                except ConnectionResetError:
                    pass
                except TimeoutError:
                    return False
                return True

            assert await trio.to_thread.run_sync(read_to_the_end), "the connection stayed open"
            # Other requests still answer, and so do other readers.
            r = await api.post("/eval", json={"targetId": tab, "js": "1+1"})
            assert r.json()["result"] == 2
            reader = Reader()
            async with trio.open_nursery() as nursery:
                await nursery.start(reader.run, api, {"types": "tab.closed"})
                await api.post("/tabs/close", json={"targetId": tab})
                await reader.wait_for(lambda e: e.get("targetId") == tab)
                nursery.cancel_scope.cancel()
    finally:
        raw.close()


async def test_browser_state_after_the_browser_is_killed(api):
    reader = Reader()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            await nursery.start(reader.run, api, {"types": "browser.state"})
            pid = (await api.get("/status")).json()["pid"]
            os.kill(pid, signal.SIGKILL)
            down = await reader.wait_for(lambda e: e["state"] == "restarting")
            assert down["previous"] == "running" and down["error"]["code"]
            up = await reader.wait_for(lambda e: e["state"] == "running"
                                       and e["id"] > down["id"])
            assert up["previous"] in ("restarting", "starting")
            nursery.cancel_scope.cancel()
        assert (await api.get("/status")).json()["pid"] != pid


# trio-websocket leaves the socket of a connection that the server closed to the
# garbage collector (a client-library leak, in this test process only).
@pytest.mark.filterwarnings("ignore::ResourceWarning",
                            "ignore::pytest.PytestUnraisableExceptionWarning")
async def test_stopping_the_service_ends_streams_and_closes_ws(tmp_path) -> None:
    from supervision.harness import start_service_async, stop_service_async
    from trio_websocket import ConnectionClosed, open_websocket_url

    info = await start_service_async(tmp_path / "svc")
    reader = Reader()
    ws_closed: list[int | None] = []

    async def ws_until_closed(subscribed: trio.Event) -> None:
        async with open_websocket_url(
                f"ws://127.0.0.1:{info.port}/ws",
                extra_headers=[(b"Authorization", f"Bearer {info.token}".encode())]) as ws:
            await ws.send_message('{"jsonrpc": "2.0", "id": 1, "method": "subscribe"}')
            assert orjson.loads(await ws.get_message())["result"]["ok"] is True
            subscribed.set()
            try:
                while True:
                    await ws.get_message()
            except ConnectionClosed as exc:
                ws_closed.append(exc.reason.code)

    try:
        with trio.fail_after(60):
            async with info.client() as client, trio.open_nursery() as nursery:
                await nursery.start(reader.run, client)
                subscribed = trio.Event()
                nursery.start_soon(ws_until_closed, subscribed)
                await subscribed.wait()
                assert await stop_service_async(info) == 0
        assert reader.ended.is_set() and ws_closed == [1001]
        states = [e["state"] for e in reader.events if e["type"] == "browser.state"]
        assert states == ["stopping", "stopped"]
    finally:
        await stop_service_async(info)
        gc.collect()  # here, where the filters above apply
