"""Named profiles and sessions on real Chromium (issue #14).

One private service runs the default profile and three ``[profiles.*]``
tables at once: ``work`` and ``research`` (different colours and gateway
ports) and ``broken`` (its executable is ``/bin/false``: a crash loop).
Besides profiles and sessions themselves: cookies, web storage and storage
state act on the session's browser context; downloads are per profile and
name their session; every launched profile has its navigation guard and
its own CDP gateway.
"""

from __future__ import annotations

import http.server
import os
import secrets
import signal
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import trio
from supervision import rawcdp
from supervision.harness import LOOPBACK_TLS

from tests.conftest import (
    PageServer,
    ServiceInfo,
    add_route,
    free_port_pair,
    start_service,
    stop_service,
)
from tests.integration.helpers import finished_download, poll

pytestmark = pytest.mark.chromium

DEADLINE_S = 90


def free_port_range(count: int) -> int:
    """A port P such that P..P+count-1 are free on 127.0.0.1 now."""
    for _ in range(50):
        start = free_port_pair()
        sockets = []
        try:
            for port in range(start, start + count):
                sock = socket.socket()
                sockets.append(sock)
                sock.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            for sock in sockets:
                sock.close()
        return start
    raise RuntimeError("no free port range")


def _attachment(h: http.server.SimpleHTTPRequestHandler) -> None:
    body = f"payload-{h.path}".encode()
    h.send_response(200)
    h.send_header("Content-Type", "application/octet-stream")
    h.send_header("Content-Disposition", 'attachment; filename="report.bin"')
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


def _redirect(h: http.server.SimpleHTTPRequestHandler) -> None:
    h.send_response(302)
    h.send_header("Location", parse_qs(urlsplit(h.path).query).get("to", [""])[0])
    h.send_header("Content-Length", "0")
    h.end_headers()


@pytest.fixture(scope="module")
def multi(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceInfo]:
    add_route("/pdl/file", _attachment)
    add_route("/pdl/go", _redirect)
    home = tmp_path_factory.mktemp("profiles")
    range_start = free_port_range(8)
    research_port = free_port_pair()
    (home / "config").mkdir(mode=0o700)
    (home / "config" / "config.toml").write_text(f"""
max_sessions = 4
restart_budget = 3
profile_port_start = {range_start}
profile_port_end = {range_start + 7}

[profiles.work]
color = "#0066CC"

[profiles.research]
color = "#2E8B57"
cdp_port = {research_port}

[profiles.broken]
executable = "/bin/false"
""")
    info = start_service(home, timeout=60)
    yield info
    stop_service(info)


@pytest.fixture
async def api(multi: ServiceInfo) -> AsyncIterator[httpx.AsyncClient]:
    async with multi.client() as client:
        yield client


async def profiles_by_name(api: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    r = await api.get("/profiles")
    assert r.status_code == 200, r.text
    return {p["name"]: p for p in r.json()["profiles"]}


async def running(api: httpx.AsyncClient, *names: str) -> bool:
    table = await profiles_by_name(api)
    return all(table[n]["running"] for n in names)


async def open_tab(api: httpx.AsyncClient, url: str, **scope: str) -> str:
    r = await api.post("/tabs/open", json={"url": url, **scope})
    assert r.status_code == 200, r.text
    return str(r.json()["targetId"])


async def evaluate(api: httpx.AsyncClient, target: str, js: str, **scope: str) -> Any:
    r = await api.post("/eval", json={"targetId": target, "js": js, **scope})
    assert r.status_code == 200, r.text
    return r.json()["result"]


async def test_three_profiles_run_at_once_with_their_own_colours_and_ports(
        api: httpx.AsyncClient, multi: ServiceInfo) -> None:
    with trio.fail_after(DEADLINE_S):
        await poll(lambda: running(api, "clawd", "work", "research"), within=60)
        table = await profiles_by_name(api)
        assert set(table) == {"clawd", "work", "research", "broken"}
        assert table["clawd"]["default"] and not table["work"]["default"]
        colours = {table[n]["color"] for n in ("clawd", "work", "research")}
        assert colours == {"#FF4500", "#0066CC", "#2E8B57"}
        ports = {table[n]["cdpPort"] for n in ("clawd", "work", "research", "broken")}
        assert len(ports) == 4 and multi.cdp_port in ports
        pids = {table[n]["pid"] for n in ("clawd", "work", "research")}
        assert len(pids) == 3
        for name in ("work", "research"):
            assert table[name]["userDataDir"].endswith(f"/profiles/{name}")
            # each launch profile's gateway answers on its own port, behind the token
            port = table[name]["cdpPort"]
            async with httpx.AsyncClient(headers=multi.headers, timeout=10,
                                         verify=LOOPBACK_TLS) as gw:
                r = await gw.get(f"http://127.0.0.1:{port}/json/version")
            assert r.status_code == 200, r.text
            async with httpx.AsyncClient(timeout=10, verify=LOOPBACK_TLS) as anon:
                r = await anon.get(f"http://127.0.0.1:{port}/json/version")
            assert r.status_code == 401
            status = (await api.get("/status", params={"profile": name})).json()
            assert status["profile"] == name and status["running"]
            assert status["ports"]["cdp"] == port
            assert set(status["profiles"]) == set(table)


async def _is_failed(api: httpx.AsyncClient) -> bool:
    return (await profiles_by_name(api))["broken"]["state"] == "failed"


async def test_a_crash_loop_in_one_profile_leaves_the_others_serving(
        api: httpx.AsyncClient, pages: PageServer) -> None:
    with trio.fail_after(DEADLINE_S):
        await poll(lambda: running(api, "clawd", "work", "research"), within=60)
        others = ("clawd", "work", "research")
        tabs = {p: await open_tab(api, pages.url("/hello.html"), profile=p) for p in others}
        async def broken_status() -> dict[str, Any]:
            return dict((await api.get("/status", params={"profile": "broken"})).json())

        # its first crash loop (from the service's start) ends in failed
        await poll(lambda: _is_failed(api), within=60)
        restarts_before = (await broken_status())["restarts"]
        seen: set[str] = set()
        served = 0
        answer: list[httpx.Response] = []

        async def start_broken() -> None:  # a fresh start: a fresh crash loop, seen whole
            answer.append(await api.post("/start", json={"profile": "broken"}))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(start_broken)
            # The other three answer all along while "broken" goes through its restarts
            # to failed (a pass every 0.1 s: the point is that they answer, not how often).
            while not answer:
                seen.add((await profiles_by_name(api))["broken"]["state"])
                for profile, target in tabs.items():
                    assert await evaluate(api, target, "1 + 1", profile=profile) == 2
                served += 1
                await trio.sleep(0.1)
        assert answer[0].status_code == 502, answer[0].text
        assert answer[0].json()["code"] == "BROWSER_GONE"
        assert "giving up" in answer[0].json()["error"]
        assert "POST /start" in answer[0].json()["hint"]  # not "retry in a moment"
        assert seen & {"starting", "restarting"}, seen
        for profile, target in tabs.items():  # and they still open and close tabs
            fresh = await open_tab(api, pages.url("/hello.html"), profile=profile)
            assert await evaluate(api, fresh, "2 + 2", profile=profile) == 4
            for gone in (fresh, target):
                r = await api.post("/tabs/close", json={"targetId": gone, "profile": profile})
                assert r.status_code == 200, r.text
        broken = await broken_status()
        assert broken["state"] == "failed" and broken["lastError"]
        assert broken["restarts"] == restarts_before + 3  # the module's restart_budget
        r = await api.post("/eval", json={"js": "1", "profile": "broken"})
        assert r.status_code == 503 and r.json()["code"] == "BROWSER_NOT_RUNNING"
        assert served >= 3
        assert await running(api, "clawd", "work", "research")


async def test_a_cookie_of_one_profile_is_invisible_in_another(
        api: httpx.AsyncClient, pages: PageServer) -> None:
    with trio.fail_after(DEADLINE_S):
        await poll(lambda: running(api, "work", "research"), within=60)
        url = pages.url("/hello.html")
        a = await open_tab(api, url, profile="work")
        await evaluate(api, a, "document.cookie = 'who=work; max-age=600'", profile="work")
        assert "who=work" in await evaluate(api, a, "document.cookie", profile="work")
        b = await open_tab(api, url, profile="research")
        assert "who=work" not in await evaluate(api, b, "document.cookie", profile="research")
        # and a tab of one profile is not a tab of another
        r = await api.post("/eval", json={"targetId": a, "js": "1", "profile": "research"})
        assert r.status_code == 404 and r.json()["code"] == "TAB_NOT_FOUND"


async def test_sessions_isolate_cookies_and_tabs(
        api: httpx.AsyncClient, pages: PageServer) -> None:
    with trio.fail_after(DEADLINE_S):
        await poll(lambda: running(api, "clawd"), within=60)
        r1 = await api.post("/sessions", json={"name": "agent-a"})
        r2 = await api.post("/sessions", json={"name": "agent-b"})
        assert r1.status_code == 200 and r2.status_code == 200, (r1.text, r2.text)
        sa, sb = r1.json()["sessionId"], r2.json()["sessionId"]
        url = pages.url("/hello.html")
        a = await open_tab(api, url, session=sa)
        await evaluate(api, a, "document.cookie = 'who=a; max-age=600'", session=sa)
        b = await open_tab(api, url, session=sb)
        assert "who=a" not in await evaluate(api, b, "document.cookie", session=sb)
        plain = await open_tab(api, url)
        assert "who=a" not in await evaluate(api, plain, "document.cookie")
        # A's tab: 404 to B (field or header) and to no session; absent from their lists
        for kw in ({"json": {"targetId": a, "js": "1", "session": sb}},
                   {"json": {"targetId": a, "js": "1"}, "headers": {"X-Browserd-Session": sb}},
                   {"json": {"targetId": a, "js": "1"}}):
            r = await api.post("/eval", **kw)  # type: ignore[arg-type]
            assert r.status_code == 404 and r.json()["code"] == "TAB_NOT_FOUND", r.text
        tabs_b = (await api.get("/tabs", headers={"X-Browserd-Session": sb})).json()["tabs"]
        assert [t["targetId"] for t in tabs_b] == [b]
        tabs_default = (await api.get("/tabs")).json()["tabs"]
        assert a not in {t["targetId"] for t in tabs_default}
        assert b not in {t["targetId"] for t in tabs_default}
        tabs_a = (await api.get("/tabs", params={"session": sa})).json()["tabs"]
        assert [t["targetId"] for t in tabs_a] == [a]
        listed = (await api.get("/sessions")).json()["sessions"]
        assert {s["sessionId"]: s["tabs"] for s in listed if s["sessionId"] in (sa, sb)} == {
            sa: 1, sb: 1}
        # deleting a session closes its tabs and its context
        r = await api.delete(f"/sessions/{sa}")
        assert r.status_code == 200, r.text
        r = await api.post("/eval", json={"targetId": a, "js": "1", "session": sa})
        assert r.status_code == 404 and r.json()["code"] == "SESSION_NOT_FOUND"
        await poll(lambda: _tab_gone(api, a), within=10)
        await api.delete(f"/sessions/{sb}")
        await api.post("/tabs/close", json={"targetId": plain})


async def _tab_gone(api: httpx.AsyncClient, target: str) -> bool:
    r = await api.post("/eval", json={"targetId": target, "js": "1"})
    return r.status_code == 404


async def test_too_many_sessions_is_429_and_an_idle_session_is_closed(
        api: httpx.AsyncClient) -> None:
    with trio.fail_after(DEADLINE_S):
        await poll(lambda: running(api, "work"), within=60)
        made = []
        for _ in range(4):  # max_sessions = 4
            r = await api.post("/sessions", json={"profile": "work", "ttlS": 600})
            assert r.status_code == 200, r.text
            made.append(r.json()["sessionId"])
        r = await api.post("/sessions", json={"profile": "work"})
        assert r.status_code == 429 and r.json()["code"] == "TOO_MANY_SESSIONS"
        for sid in made:
            assert (await api.delete(f"/sessions/{sid}", params={"profile": "work"})
                    ).status_code == 200
        r = await api.post("/sessions", json={"profile": "work", "ttlS": 1})
        short = r.json()["sessionId"]

        async def gone() -> bool:
            listed = (await api.get("/sessions", params={"profile": "work"})).json()
            return short not in {s["sessionId"] for s in listed["sessions"]}

        await poll(gone, within=30)
        r = await api.get("/tabs", params={"profile": "work", "session": short})
        assert r.status_code == 404 and r.json()["code"] == "SESSION_NOT_FOUND"


async def test_sessions_survive_a_crash_of_their_browser_but_end_with_a_stop(
        api: httpx.AsyncClient) -> None:
    with trio.fail_after(DEADLINE_S):
        await poll(lambda: running(api, "research"), within=60)
        sid = (await api.post("/sessions", json={"profile": "research"})).json()["sessionId"]
        tab = await open_tab(api, "about:blank", profile="research", session=sid)
        pid = (await profiles_by_name(api))["research"]["pid"]
        os.kill(pid, signal.SIGKILL)

        async def restarted() -> bool:
            entry = (await profiles_by_name(api))["research"]
            return bool(entry["running"] and entry.get("pid") not in (None, pid))

        await poll(restarted, within=60)
        # an unplanned restart carries the session over and reopens its tab
        # (tab restore: tests/integration/test_restore.py)
        listed = (await api.get("/sessions", params={"profile": "research"})).json()
        assert [s["sessionId"] for s in listed["sessions"]] == [sid]
        r = await api.get("/tabs", params={"profile": "research", "session": sid})
        assert [t.get("restoredFrom") for t in r.json()["tabs"]] == [tab], r.text
        # a planned one (stop, then start) ends it with its browser
        assert (await api.post("/stop", json={"profile": "research"})).status_code == 200
        assert (await api.post("/start", json={"profile": "research"})).status_code == 200
        listed = (await api.get("/sessions", params={"profile": "research"})).json()
        assert listed["sessions"] == []
        r = await api.get("/tabs", params={"profile": "research", "session": sid})
        assert r.status_code == 404 and r.json()["code"] == "SESSION_NOT_FOUND"


async def test_create_start_and_delete_a_profile(
        api: httpx.AsyncClient, multi: ServiceInfo) -> None:
    with trio.fail_after(DEADLINE_S):
        r = await api.post("/profiles", json={"name": "Bad_Name"})
        assert r.status_code == 400
        r = await api.post("/profiles", json={"name": "later", "driver": "warp"})
        assert r.status_code == 400 and "must be one of" in r.json()["error"], r.text
        # An extension profile is up as soon as it waits for its extension.
        r = await api.post("/profiles", json={"name": "later", "driver": "extension"})
        assert r.status_code == 200 and "cdpPort" not in r.json(), r.text
        r = await api.post("/start", json={"profile": "later"})
        assert r.status_code == 200 and r.json()["state"] == "awaiting_extension", r.text
        r = await api.post("/snapshot", json={"profile": "later"})
        assert r.status_code == 503 and r.json()["code"] == "EXTENSION_NOT_CONNECTED", r.text
        assert (await api.post("/stop", json={"profile": "later"})).status_code == 200
        assert (await api.delete("/profiles/later")).status_code == 200
        r = await api.post("/profiles", json={"name": "tmp", "color": "#123456"})
        assert r.status_code == 200, r.text
        assert r.json()["state"] == "stopped" and r.json()["cdpPort"]
        r = await api.post("/profiles", json={"name": "tmp"})
        assert r.status_code == 409 and r.json()["code"] == "PROFILE_EXISTS"
        directory = multi.home / "data" / "profiles" / "tmp"
        assert (directory / ".browserd-profile").is_file()
        r = await api.post("/start", json={"profile": "tmp"})
        assert r.status_code == 200 and r.json()["running"], r.text
        r = await api.request("DELETE", "/profiles/tmp", json={})
        assert r.status_code == 409 and r.json()["code"] == "PROFILE_RUNNING"
        assert (await api.post("/stop", json={"profile": "tmp"})).status_code == 200
        r = await api.delete("/profiles/tmp")
        assert r.status_code == 200 and r.json()["dataRemoved"] is True, r.text
        assert not directory.exists()
        r = await api.get("/status", params={"profile": "tmp"})
        assert r.status_code == 404 and r.json()["code"] == "PROFILE_NOT_FOUND"
        for name in ("clawd", "work"):  # the default and config.toml's are protected
            r = await api.delete(f"/profiles/{name}")
            assert r.status_code == 409 and r.json()["code"] == "PROFILE_PROTECTED"


async def test_delete_removes_only_a_marked_directory(
        api: httpx.AsyncClient, multi: ServiceInfo) -> None:
    with trio.fail_after(DEADLINE_S):
        r = await api.post("/profiles", json={"name": "keepme"})
        assert r.status_code == 200, r.text
        directory = Path(r.json()["userDataDir"])
        (directory / ".browserd-profile").unlink()  # no longer browserd's
        (directory / "precious.txt").write_text("mine")
        r = await api.delete("/profiles/keepme")
        assert r.status_code == 200 and r.json()["dataRemoved"] is False, r.text
        assert (directory / "precious.txt").read_text() == "mine"
        r = await api.post("/profiles", json={"name": "kept"})
        r = await api.request("DELETE", "/profiles/kept", json={"keepData": True})
        assert r.status_code == 200 and r.json()["dataRemoved"] is False
        assert (multi.home / "data" / "profiles" / "kept" / ".browserd-profile").is_file()


async def test_the_url_policy_blocks_every_profile_gateway_port(
        api: httpx.AsyncClient) -> None:
    with trio.fail_after(DEADLINE_S):
        table = await profiles_by_name(api)
        for name in ("work", "research"):
            port = table[name]["cdpPort"]
            r = await api.post("/tabs/open", json={"url": f"http://127.0.0.1:{port}/json"})
            assert r.status_code == 403 and r.json()["code"] == "URL_BLOCKED", r.text


# -- state, downloads, navigation guard and gateway per profile and session -------------


async def cookie_names(api: httpx.AsyncClient, **scope: str) -> set[str]:
    r = await api.get("/cookies", params=scope)
    assert r.status_code == 200, r.text
    return {c["name"] for c in r.json()["cookies"]}


async def test_cookies_storage_and_state_act_on_the_sessions_own_context(
        api: httpx.AsyncClient, pages: PageServer, multi: ServiceInfo) -> None:
    with trio.fail_after(DEADLINE_S):
        await poll(lambda: running(api, "clawd", "work"), within=60)
        sa = (await api.post("/sessions", json={"name": "state-a"})).json()["sessionId"]
        sb = (await api.post("/sessions", json={"name": "state-b"})).json()["sessionId"]
        url = pages.url("/hello.html")
        origin = pages.url("/").rstrip("/")
        tag = secrets.token_hex(3)
        try:
            for name, scope in ((f"a{tag}", {"session": sa}), (f"plain{tag}", {}),
                                (f"w{tag}", {"profile": "work"})):
                r = await api.post("/cookies", json={
                    "cookies": [{"name": name, "value": "1", "url": url}], **scope})
                assert r.status_code == 200 and r.json()["set"] == 1, r.text
            # each context sees its own cookie only
            assert f"a{tag}" in await cookie_names(api, session=sa)
            assert not {f"plain{tag}", f"w{tag}"} & await cookie_names(api, session=sa)
            assert not {f"a{tag}", f"plain{tag}", f"w{tag}"} & await cookie_names(
                api, session=sb)
            assert f"plain{tag}" in await cookie_names(api)
            assert f"a{tag}" not in await cookie_names(api)
            assert not {f"a{tag}", f"plain{tag}"} & await cookie_names(api, profile="work")
            # and the session's pages have it: the browser agrees
            ta = await open_tab(api, url, session=sa)
            assert f"a{tag}=1" in await evaluate(api, ta, "document.cookie", session=sa)
            tb = await open_tab(api, url, session=sb)
            assert f"a{tag}" not in await evaluate(api, tb, "document.cookie", session=sb)

            # localStorage written for a session (its tab has the origin open) …
            r = await api.post("/storage", json={"items": {"k": f"A{tag}"}, "session": sa,
                                                 "targetId": ta})
            assert r.status_code == 200 and r.json()["origin"] == origin, r.text
            # … is not the other session's (its tab of the origin), nor the default
            # context's (a scratch page in the default context)
            r = await api.get("/storage", params={"origin": origin, "session": sb,
                                                  "targetId": tb})
            assert r.status_code == 200 and "k" not in r.json()["items"], r.text
            r = await api.get("/storage", params={"origin": origin})
            assert r.status_code == 200 and r.json()["items"].get("k") != f"A{tag}", r.text
            assert await evaluate(api, tb, "localStorage.getItem('k')", session=sb) is None

            # storage state (read through a scratch page in the session's own context):
            # A's export has A's cookie and item, B's has neither
            state_a = (await api.get("/state", params={"session": sa})).json()
            assert f"a{tag}" in {c["name"] for c in state_a["cookies"]}
            assert f"plain{tag}" not in {c["name"] for c in state_a["cookies"]}
            items_a = {o["origin"]: {i["name"]: i["value"] for i in o["localStorage"]}
                       for o in state_a["origins"]}
            assert items_a.get(origin, {}).get("k") == f"A{tag}"
            state_b = (await api.get("/state", params={"session": sb})).json()
            assert f"a{tag}" not in {c["name"] for c in state_b["cookies"]}
            assert all(o["origin"] != origin for o in state_b["origins"]), state_b["origins"]
            # importing A's state into B gives B a copy; A's own is untouched by B's changes
            r = await api.post("/state", json={"state": state_a, "session": sb})
            assert r.status_code == 200 and r.json()["cookies"] >= 1, r.text
            assert f"a{tag}" in await cookie_names(api, session=sb)
            r = await api.request("DELETE", "/cookies", json={"all": True, "session": sb})
            assert r.status_code == 200, r.text
            assert await cookie_names(api, session=sb) == set()
            assert f"a{tag}" in await cookie_names(api, session=sa)
            assert f"plain{tag}" in await cookie_names(api)

            # emulation's geolocation permission goes to the session's context
            r = await api.post("/emulate", json={
                "targetId": ta, "session": sa,
                "geolocation": {"latitude": 48.85, "longitude": 2.35}})
            assert r.status_code == 200, r.text
            # an unknown session is 404 on these routes too
            r = await api.get("/cookies", params={"session": "s0000"})
            assert r.status_code == 404 and r.json()["code"] == "SESSION_NOT_FOUND"
            # the audit log's extra line for a write names the session, never a value
            audit = (multi.home / "logs" / "audit.log").read_text()
            assert f"profile=clawd session={sa} cookies set: given=1 set=1" in audit
            assert f"profile=clawd session={sb} state imported: cookies=" in audit
            assert f"A{tag}" not in audit
        finally:
            for sid in (sa, sb):
                await api.delete(f"/sessions/{sid}")
            await api.request("DELETE", "/cookies", json={"name": f"plain{tag}"})
            await api.request("DELETE", "/cookies", json={"name": f"w{tag}", "profile": "work"})


async def wait_download(api: httpx.AsyncClient, download_id: str, **scope: str
                        ) -> dict[str, Any]:
    """The record ``download_id`` of ``scope``'s downloads, once it is finished."""
    return await finished_download(api, lambda d: d["id"] == download_id, **scope)


async def start_download(api: httpx.AsyncClient, pages: PageServer, marker: str,
                         **scope: str) -> tuple[str, str]:
    """Open a tab of ``scope`` and click a download link there; (targetId, download id)."""
    target = await open_tab(api, pages.url("/dl_auto.html"), **scope)
    await evaluate(api, target, f"document.getElementById('click').href = "
                   f"'/pdl/file?{marker}'", **scope)
    r = await api.post("/click", json={"targetId": target, "selector": "#click", **scope})
    assert r.status_code == 200, r.text
    started = r.json()["effects"]["downloads"]
    assert len(started) == 1, r.json()
    return target, str(started[0]["id"])


async def test_downloads_are_kept_per_profile_and_name_their_session(
        api: httpx.AsyncClient, pages: PageServer, multi: ServiceInfo) -> None:
    with trio.fail_after(DEADLINE_S):
        await poll(lambda: running(api, "work", "research"), within=60)
        sid = (await api.post("/sessions", json={"profile": "work"})).json()["sessionId"]
        work = {"profile": "work", "session": sid}
        try:
            tab, in_session = await start_download(api, pages, "s", **work)
            record = await wait_download(api, in_session, **work)
            assert record["state"] == "completed", record
            assert (record["profile"], record["session"], record["targetId"]) == (
                "work", sid, tab)
            path = Path(record["path"])
            assert path.parent == multi.home / "data" / "downloads" / "work"
            assert path.read_bytes() == b"payload-/pdl/file?s"
            r = await api.get(f"/downloads/{in_session}", params=work)
            assert r.status_code == 200 and r.content == b"payload-/pdl/file?s"
            # another scope does not see it: not listed, and the same 404 as an unknown id
            for scope in ({"profile": "work"}, {}, {"profile": "research"}):
                r = await api.get("/downloads", params=scope)
                assert in_session not in {d["id"] for d in r.json()["downloads"]}
                r = await api.get(f"/downloads/{in_session}", params=scope)
                assert r.status_code == 404 and r.json()["code"] == "NOT_FOUND", r.text

            # a profile without a session: its own directory, no session named
            tab, plain = await start_download(api, pages, "r", profile="research")
            record = await wait_download(api, plain, profile="research")
            assert (record["profile"], record["session"]) == ("research", None)
            assert Path(record["path"]).parent == multi.home / "data" / "downloads" / "research"
            status = (await api.get("/status", params={"profile": "research"})).json()
            assert status["downloads"]["directory"].endswith("/downloads/research")
            await api.post("/tabs/close", json={"targetId": tab, "profile": "research"})
        finally:
            await api.delete(f"/sessions/{sid}", params={"profile": "work"})
        # the audit log names the profile and session of each request
        audit = (multi.home / "logs" / "audit.log").read_text()
        assert f"profile=work session={sid} GET /downloads" in audit


def _blocked(multi: ServiceInfo, tag: str) -> str:
    return f"http://127.0.0.1:{multi.port}/navblocked-{tag}"


async def test_every_launched_profile_has_its_navigation_guard_and_gateway(
        api: httpx.AsyncClient, pages: PageServer, multi: ServiceInfo) -> None:
    with trio.fail_after(DEADLINE_S):
        await poll(lambda: running(api, "work"), within=60)
        tag = secrets.token_hex(4)
        # a redirect to browserd's own control port, in profile work (and in a session of it)
        sid = (await api.post("/sessions", json={"profile": "work"})).json()["sessionId"]
        try:
            for scope in ({"profile": "work"}, {"profile": "work", "session": sid}):
                target = await open_tab(api, "about:blank", **scope)
                r = await api.post("/navigate", json={
                    "targetId": target, **scope,
                    "url": pages.url("/pdl/go") + "?to=" + _blocked(multi, tag)})
                assert r.status_code == 403 and r.json()["code"] == "URL_BLOCKED", r.text
                assert r.json()["redirectedFrom"] == pages.url("/pdl/go")
        finally:
            await api.delete(f"/sessions/{sid}", params={"profile": "work"})
        # work's own gateway reaches work's browser, whose guard holds a page it creates
        port = (await profiles_by_name(api))["work"]["cdpPort"]
        async with rawcdp.open_raw_cdp(port, token=multi.token) as cdp:
            hello = (await cdp.send("Target.createTarget",
                                    {"url": pages.url("/hello.html")}))["targetId"]
            bad = (await cdp.send("Target.createTarget", {
                "url": pages.url("/pdl/go") + "?to=" + _blocked(multi, tag)}))["targetId"]
            try:
                async def listed_in_work() -> bool:
                    tabs = (await api.get("/tabs", params={"profile": "work"})).json()["tabs"]
                    return {hello, bad} <= {t["targetId"] for t in tabs}

                await poll(listed_in_work, within=20)
                default_tabs = (await api.get("/tabs")).json()["tabs"]
                assert hello not in {t["targetId"] for t in default_tabs}
                r = await api.post("/wait", json={"targetId": hello, "profile": "work",
                                                  "loadState": "load", "timeoutMs": 20000})
                assert r.status_code == 200, r.text
            finally:
                for target_id in (hello, bad):
                    await cdp.send("Target.closeTarget", {"targetId": target_id})
        # a request for /navblocked-<tag> that reached the control port would be logged
        assert f"refused GET '/navblocked-{tag}'" not in multi.log_text()


async def test_a_profile_made_later_is_guarded_and_its_downloads_go_with_it(
        api: httpx.AsyncClient, pages: PageServer, multi: ServiceInfo) -> None:
    with trio.fail_after(DEADLINE_S):
        r = await api.post("/profiles", json={"name": "later"})
        assert r.status_code == 200, r.text
        port = r.json()["cdpPort"]
        directory = multi.home / "data" / "downloads" / "later"
        tag = secrets.token_hex(4)
        try:
            r = await api.post("/start", json={"profile": "later"})
            assert r.status_code == 200 and r.json()["running"], r.text
            # its gateway port was blocked before it existed, in every profile
            for profile in ("later", "work"):
                r = await api.post("/tabs/open", json={
                    "url": f"http://127.0.0.1:{port}/json", "profile": profile})
                assert r.status_code == 403 and r.json()["code"] == "URL_BLOCKED", r.text
            target = await open_tab(api, "about:blank", profile="later")
            r = await api.post("/navigate", json={
                "targetId": target, "profile": "later",
                "url": pages.url("/pdl/go") + "?to=" + _blocked(multi, tag)})
            assert r.status_code == 403 and r.json()["code"] == "URL_BLOCKED", r.text
            _, made = await start_download(api, pages, "later", profile="later")
            record = await wait_download(api, made, profile="later")
            assert Path(record["path"]).parent == directory and record["profile"] == "later"
        finally:
            await api.post("/stop", json={"profile": "later"})
        r = await api.delete("/profiles/later")
        assert r.status_code == 200 and r.json()["downloadsRemoved"] == 1, r.text
        assert not directory.exists()
        assert f"refused GET '/navblocked-{tag}'" not in multi.log_text()
