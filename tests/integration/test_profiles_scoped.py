"""What acts per profile and session on real Chromium, on the ``multi`` service of
tests/integration/_profiles.py (the default profile, ``work``, ``research`` and a
crash-looping ``broken`` at once).

Cookies, web storage and storage state act on the session's browser context;
downloads are kept per profile and name their session; every launched profile,
one made later too, has its navigation guard and its own CDP gateway. Profiles and
sessions themselves: test_profiles.py.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from supervision import rawcdp

from tests.conftest import PageServer, ServiceInfo
from tests.integration._profiles import DEADLINE_S, evaluate, open_tab, profiles_by_name, running
from tests.integration._profiles import api as api
from tests.integration._profiles import multi as multi
from tests.integration.helpers import finished_download, poll

pytestmark = pytest.mark.chromium


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
