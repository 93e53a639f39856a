"""Named profiles and sessions on real Chromium (issue #14), on the ``multi`` service of
tests/integration/_profiles.py: the default profile, ``work``, ``research`` and a
crash-looping ``broken`` at once.

Profiles run side by side and a crash loop in one leaves the others serving;
sessions isolate cookies and tabs, are limited and expire, survive a crash of their
browser; profiles are created, started and deleted. What acts per profile and
session (cookies, storage and state, downloads, the navigation guard, the gateway):
test_profiles_scoped.py.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from supervision.harness import LOOPBACK_TLS

from tests.conftest import PageServer, ServiceInfo
from tests.integration._profiles import DEADLINE_S, evaluate, open_tab, profiles_by_name, running
from tests.integration._profiles import api as api
from tests.integration._profiles import multi as multi
from tests.integration.helpers import poll

pytestmark = pytest.mark.chromium


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
