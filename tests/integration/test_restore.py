"""A killed Chromium comes back with the agent's tabs, in their sessions, and says so.

A private service (restart budget 20). Five tabs in two sessions, one more of no
session, and one on a form POST's result page; ``kill -9`` the browser. Once it
runs again: each tab is open again at its URL in its own session (``GET /tabs``
per session shows ``restoredFrom``), each old id answers 409 TAB_RESTORED with the
new id and the crash (``/status.lastCrash``: signal 9 and the stderr tail) in its
own session only, the POST result answers 410 TAB_LOST (reason ``post``), the
sessions are still there, and ``tab.restored`` / ``tab.lost`` were published.
Then ``/stop`` and ``/start``: a planned restart restores nothing.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
import trio

from tests.conftest import PageServer, ServiceInfo, add_route, start_service, stop_service

pytestmark = pytest.mark.chromium


def _page(req: Any) -> None:
    query = req.path.partition("?")[2]
    _answer(req, f"<!doctype html><title>page {query}</title><h1>{query}</h1>")


def _form(req: Any) -> None:
    _answer(req, "<!doctype html><title>form</title><form method=post action=/restore/posted>"
                 "<input name=q value=hello><button id=send>send</button></form>")


def _posted(req: Any) -> None:
    length = int(req.headers.get("Content-Length") or 0)
    body = req.rfile.read(length).decode()
    _answer(req, f"<!doctype html><title>posted</title><p id=got>{req.command} {body}</p>")


def _answer(req: Any, html: str) -> None:
    data = html.encode()
    req.send_response(200)
    req.send_header("Content-Type", "text/html; charset=utf-8")
    req.send_header("Content-Length", str(len(data)))
    req.end_headers()
    req.wfile.write(data)


add_route("/restore/page", _page)
add_route("/restore/form", _form)
add_route("/restore/posted", _posted)


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceInfo]:
    info = start_service(tmp_path_factory.mktemp("restore") / "home",
                         env={"BROWSERD_RESTART_BUDGET": "20"})
    yield info
    stop_service(info)


class Events:
    """``GET /events`` of some types, parsed, from the moment it started."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    async def run(self, api: httpx.AsyncClient, types: str, *,
                  task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with api.stream("GET", "/events", params={"types": types},
                              timeout=httpx.Timeout(60, read=None)) as r:
            assert r.status_code == 200
            task_status.started()
            async for line in r.aiter_lines():
                if line.startswith("data: "):
                    self.seen.append(orjson.loads(line[6:]))


async def running_again(api: httpx.AsyncClient, old_pid: int) -> dict[str, Any]:
    with trio.fail_after(30):
        while True:
            st = (await api.get("/status")).json()
            if st["state"] == "running" and st["pid"] not in (None, old_pid):
                return dict(st)
            await trio.sleep(0.05)


async def open_tab(api: httpx.AsyncClient, url: str, session: str | None = None) -> str:
    body = {"url": url} | ({"session": session} if session else {})
    r = await api.post("/tabs/open", json=body)
    assert r.status_code == 200, r.text
    return str(r.json()["targetId"])


async def tabs_of(api: httpx.AsyncClient, session: str | None) -> list[dict[str, Any]]:
    r = await api.get("/tabs", params={"session": session} if session else None)
    assert r.status_code == 200, r.text
    return list(r.json()["tabs"])


async def test_a_killed_browser_reopens_every_agent_tab_in_its_session(
        svc: ServiceInfo, pages: PageServer) -> None:
    async with svc.client() as api, trio.open_nursery() as nursery:
        a, b = [(await api.post("/sessions", json={"name": n})).json()["sessionId"]
                for n in ("a", "b")]
        opened: dict[str, tuple[str | None, str]] = {}  # old id -> (session, url)
        for session, n in ((a, 1), (a, 2), (a, 3), (b, 4), (b, 5), (None, 6)):
            url = pages.url(f"/restore/page?n={n}")
            opened[await open_tab(api, url, session)] = (session, url)
        post_tab = await open_tab(api, pages.url("/restore/form"))
        r = await api.post("/click", json={"targetId": post_tab, "selector": "#send"})
        assert r.status_code == 200, r.text
        with trio.fail_after(10):
            while not any(t["targetId"] == post_tab and t["url"].endswith("/restore/posted")
                          for t in await tabs_of(api, None)):
                await trio.sleep(0.05)
        r = await api.post("/eval", json={"targetId": post_tab,
                                          "js": "document.querySelector('#got').textContent"})
        assert r.json()["result"] == "POST q=hello", r.text  # a real form post's result
        events = Events()
        await nursery.start(events.run, api, "tab.restored,tab.lost")

        pid = (await api.get("/status")).json()["pid"]
        os.kill(pid, signal.SIGKILL)
        st = await running_again(api, pid)
        crash = st["lastCrash"]
        assert (crash["reason"], crash.get("signal")) == ("killed", 9), crash
        assert crash["stderrTail"] and crash["tabsAffected"] >= 7, crash

        # the sessions survived: same ids, listed, each with its own tabs back
        listed = (await api.get("/sessions")).json()["sessions"]
        assert {s["sessionId"] for s in listed} == {a, b}
        new_of: dict[str, str] = {}
        for session in (a, b, None):
            tabs = await tabs_of(api, session)
            assert {t.get("restoredFrom"): t["url"] for t in tabs} == {
                old: url for old, (s, url) in opened.items() if s == session}, tabs
            new_of.update({t["restoredFrom"]: t["targetId"] for t in tabs})
        assert not set(new_of.values()) & set(opened), "Chromium gave new ids"

        for old, (session, url) in opened.items():
            scoped = {"session": session} if session else {}
            r = await api.post("/eval", json={"targetId": old, "js": "1", **scoped})
            assert (r.status_code, r.json()["code"]) == (409, "TAB_RESTORED"), r.text
            body = r.json()
            assert (body["oldTargetId"], body["targetId"], body["url"]) == (
                old, new_of[old], url)
            assert body["crash"] == crash and "snapshot" in body["hint"]
            r = await api.post("/tabs/focus", json={"targetId": old, **scoped})
            assert r.status_code == 409 and r.json()["targetId"] == new_of[old], r.text
            r = await api.post("/eval", json={"targetId": new_of[old], "js": "location.href",
                                              **scoped})
            assert r.status_code == 200 and r.json()["result"] == url, r.text
            # another session (or none) is not told about this session's old id
            other = {"session": b} if session == a else {"session": a} if session is None else {}
            r = await api.post("/eval", json={"targetId": old, "js": "1", **other})
            assert (r.status_code, r.json()["code"]) == (404, "TAB_NOT_FOUND"), r.text

        r = await api.post("/eval", json={"targetId": post_tab, "js": "1"})
        assert (r.status_code, r.json()["code"]) == (410, "TAB_LOST"), r.text
        assert r.json()["reason"] == "post" and r.json()["url"].endswith("/restore/posted")
        assert post_tab not in new_of

        with trio.fail_after(10):
            while len(events.seen) < len(opened) + 1:
                await trio.sleep(0.05)
        restored = {e["oldTargetId"]: e for e in events.seen if e["type"] == "tab.restored"}
        assert set(restored) == set(opened)
        assert all(restored[old]["targetId"] == new_of[old] for old in opened)
        lost = [e for e in events.seen if e["type"] == "tab.lost"]
        assert [(e["targetId"], e["reason"]) for e in lost] == [(post_tab, "post")]
        nursery.cancel_scope.cancel()


async def test_a_stop_and_start_restores_nothing(svc: ServiceInfo, pages: PageServer) -> None:
    async with svc.client() as api:
        crashed = await open_tab(api, pages.url("/restore/page?n=crashed"))
        pid = (await api.get("/status")).json()["pid"]
        os.kill(pid, signal.SIGKILL)
        await running_again(api, pid)
        r = await api.post("/eval", json={"targetId": crashed, "js": "1"})
        assert r.status_code == 409, r.text  # restored after the crash
        session = (await api.post("/sessions", json={})).json()["sessionId"]
        tab = await open_tab(api, pages.url("/restore/page?n=stop"), session)
        assert (await api.post("/stop")).status_code == 200
        assert (await api.post("/start")).json()["state"] == "running"
        assert await tabs_of(api, None) == []  # nothing reopened
        r = await api.get("/tabs", params={"session": session})
        assert (r.status_code, r.json()["code"]) == (404, "SESSION_NOT_FOUND"), r.text
        for old in (tab, crashed):  # neither the stopped browser's tab nor the crash's old id
            r = await api.post("/eval", json={"targetId": old, "js": "1"})
            assert (r.status_code, r.json()["code"]) == (404, "TAB_NOT_FOUND"), r.text
