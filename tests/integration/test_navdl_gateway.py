"""Gateway clients cannot take downloads or navigations out of browserd's hands, on a
real Chromium: a context a client makes is confined before it can use it, a download
behavior a client sets is rewritten and does not outlive its session, a client's page
session never sees the guard's interception, the pages a client creates run and are
guarded, and Playwright over the gateway downloads into browserd and never stalls.

One private service for the module (tests/integration/_navdl_fixtures.py); the API's
own downloads and navigations: test_navdl.py.
"""

from __future__ import annotations

import re
import secrets
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from supervision import rawcdp

from tests.conftest import ServiceInfo
from tests.integration._navdl_fixtures import (
    api,
    arrived,
    attack_page,
    blocked_url,
    downloads_dir,
    navdl_service,
    tab,
    user_home,
)
from tests.integration.helpers import finished_download

__all__ = ["api", "navdl_service", "tab"]

pytestmark = pytest.mark.chromium


# -- gateway clients -----------------------------------------------------------------------


async def wait_download_of(api: httpx.AsyncClient, url_suffix: str) -> dict[str, Any]:
    """The finished record whose URL ends with ``url_suffix`` (caller's deadline)."""
    return await finished_download(api, lambda d: d["url"].endswith(url_suffix))


def gateway_clients_gone(svc: ServiceInfo) -> int:
    """How many gateway clients the service has logged as gone."""
    return len(re.findall(r"gateway client \d+ gone", svc.log_text()))


@pytest.mark.parametrize("with_url", [False, True])
async def test_download_in_a_gateway_clients_new_context_stays_in(navdl_service, pages,
                                                                   with_url):
    """A context a gateway client makes is confined before the client can use it.

    ``with_url``: the page is created with the download URL itself, so its very
    first request is the download (the window the context's behavior must beat).
    """
    svc = navdl_service
    marker = f"/dl/click?ctx={secrets.token_hex(4)}"
    with trio.fail_after(60):
        async with rawcdp.open_raw_cdp(svc.cdp_port, token=svc.token) as cdp:
            context = (await cdp.send("Target.createBrowserContext"))["browserContextId"]
            try:
                if with_url:
                    await cdp.send("Target.createTarget", {
                        "url": pages.url(marker), "browserContextId": context})
                else:
                    target = await cdp.send("Target.createTarget", {
                        "url": "about:blank", "browserContextId": context})
                    session = (await cdp.send("Target.attachToTarget", {
                        "targetId": target["targetId"], "flatten": True}))["sessionId"]
                    await cdp.send("Page.navigate", {"url": pages.url(marker)},
                                   session_id=session)
                async with svc.client() as api:
                    found = await wait_download_of(api, marker)
            finally:
                await cdp.send("Target.disposeBrowserContext", {"browserContextId": context})
    assert found["state"] == "completed", found
    assert Path(found["path"]).parent == downloads_dir(svc)
    assert (downloads_dir(svc) / found["id"]).read_bytes() == f"click-payload-{marker}".encode()
    assert not (user_home(svc) / "Downloads").exists()


@pytest.mark.parametrize("endpoint", ["browser", "page"])
async def test_a_gateway_clients_download_behavior_does_not_outlive_it(
        api, tab, pages, navdl_service, endpoint):
    """Chromium resets a context to ~/Downloads when the session that set it goes.

    A client sets the default context's behavior (``allow``, its own path:
    rewritten to browserd's directory, named by GUID) and disconnects; a
    download the API starts afterwards still lands in browserd's directory.
    """
    svc = navdl_service
    clients_gone = gateway_clients_gone(svc)
    with trio.fail_after(60):
        if endpoint == "browser":
            async with rawcdp.open_raw_cdp(svc.cdp_port, token=svc.token) as cdp:
                await cdp.send("Browser.setDownloadBehavior", {
                    "behavior": "allow", "downloadPath": str(user_home(svc) / "Downloads"),
                    "eventsEnabled": True})
                # While it is connected, a download is named by GUID in browserd's directory.
                during = f"/dl/click?during={secrets.token_hex(4)}"
                r = await api.post("/navigate", json={"targetId": tab, "url": pages.url(during),
                                                      "waitUntil": "none"})
                assert r.status_code in (200, 400), r.text
                record = await wait_download_of(api, during)
                assert record["state"] == "completed", record
                assert (downloads_dir(svc) / record["id"]).exists()
        else:
            url = f"ws://127.0.0.1:{svc.cdp_port}/devtools/page/{tab}"
            async with rawcdp.open_cdp(url, token=svc.token) as cdp:
                await cdp.send("Page.setDownloadBehavior", {
                    "behavior": "allow", "downloadPath": str(user_home(svc) / "Downloads")})
        # The service logs a client's end after its sessions are detached and the
        # behavior restored: only then is the next download meant to stay in.
        while gateway_clients_gone(svc) == clients_gone:
            await trio.sleep(0.05)
        after = f"/dl/click?after={secrets.token_hex(4)}"
        r = await api.post("/navigate", json={"targetId": tab, "url": pages.url(after),
                                              "waitUntil": "none"})
        assert r.status_code in (200, 400), r.text
        record = await wait_download_of(api, after)
    assert record["state"] == "completed", record
    assert Path(record["path"]).parent == downloads_dir(svc)
    assert (downloads_dir(svc) / record["id"]).read_bytes() == f"click-payload-{after}".encode()
    assert not (user_home(svc) / "Downloads").exists()


async def test_a_behavior_set_on_a_clients_page_session_is_restored_when_it_detaches(
        api, tab, pages, navdl_service):
    """The client stays connected; only the session that set the behavior goes."""
    svc = navdl_service
    restored = "a session that set a download behavior went"
    before = svc.log_text().count(restored)
    with trio.fail_after(60):
        async with rawcdp.open_raw_cdp(svc.cdp_port, token=svc.token) as cdp:
            session = (await cdp.send("Target.attachToTarget", {
                "targetId": tab, "flatten": True}))["sessionId"]
            await cdp.send("Page.setDownloadBehavior", {
                "behavior": "allow", "downloadPath": str(user_home(svc) / "Downloads")},
                session_id=session)
            await cdp.send("Target.detachFromTarget", {"sessionId": session})
            while svc.log_text().count(restored) == before:
                await trio.sleep(0.05)
            marker = f"/dl/click?child={secrets.token_hex(4)}"
            r = await api.post("/navigate", json={"targetId": tab, "url": pages.url(marker),
                                                  "waitUntil": "none"})
            assert r.status_code in (200, 400), r.text
            record = await wait_download_of(api, marker)
            assert not cdp.closed  # the client was connected all along
    assert record["state"] == "completed", record
    assert (downloads_dir(svc) / record["id"]).exists()
    assert not (user_home(svc) / "Downloads").exists()


async def test_a_gateway_page_session_never_sees_the_guards_interception(
        api, tab, pages, navdl_service):
    """browserd guards each page on its own session only: a client's page session is
    left alone (no Fetch.requestPaused it never asked for), and the guard still judges."""
    svc = navdl_service
    tag = secrets.token_hex(4)
    with trio.fail_after(60):
        url = f"ws://127.0.0.1:{svc.cdp_port}/devtools/page/{tab}"
        async with rawcdp.open_cdp(url, token=svc.token) as cdp:
            await cdp.send("Page.enable")
            await cdp.send("Page.navigate", {"url": pages.url("/hello.html")})
            while not any(e["method"] == "Page.loadEventFired" for e in cdp.events):
                await trio.sleep(0.05)
            # A page-made navigation to a blocked URL is still stopped by the guard.
            await attack_page(api, tab, pages, blocked_url(svc, tag))
            r = await api.post("/click", json={"targetId": tab, "selector": "#redirect"})
            assert r.status_code == 200, r.text
            assert [b["url"] for b in r.json()["effects"].get("blocked", [])] == [
                blocked_url(svc, tag)], r.json()
            methods = {e["method"] for e in cdp.events}
    assert "Page.loadEventFired" in methods
    assert not any(m.startswith("Fetch.") for m in methods), methods
    assert not arrived(svc, tag)


@pytest.mark.parametrize("own_auto_attach", [False, True])
async def test_pages_a_gateway_client_creates_run_and_are_guarded(
        navdl_service, pages, own_auto_attach):
    """The guard resumes the pages it pauses whatever the client does.

    Without auto-attach of its own the client never resumes anything, so
    the page runs only if browserd's guard resumed it; with its own
    ``waitForDebuggerOnStart`` (as Playwright does) the client resumes its
    hold and the page runs too. Either way a redirect to a blocked URL in it
    is stopped.
    """
    svc = navdl_service
    tag = secrets.token_hex(4)
    with trio.fail_after(60):
        async with rawcdp.open_raw_cdp(svc.cdp_port, token=svc.token) as cdp, \
                svc.client() as api:
            if own_auto_attach:
                await cdp.send("Target.setAutoAttach", {
                    "autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True})
            created = []
            for url in (pages.url("/hello.html"),
                        pages.url("/r/1") + "?to=" + blocked_url(svc, tag)):
                created.append((await cdp.send("Target.createTarget", {"url": url}))["targetId"])
                if own_auto_attach:
                    while True:
                        attached = [e for e in cdp.events
                                    if e["method"] == "Target.attachedToTarget"
                                    and e["params"]["targetInfo"]["targetId"] == created[-1]]
                        if attached:
                            break
                        await trio.sleep(0.05)
                    assert attached[0]["params"]["waitingForDebugger"] is True
                    await cdp.send("Runtime.runIfWaitingForDebugger",
                                   session_id=attached[0]["params"]["sessionId"])
            try:
                while True:  # the first page loads: it was resumed
                    listed = {t["targetId"]: t for t in (await api.get("/tabs")).json()["tabs"]}
                    if listed.get(created[0], {}).get("title") == "Hello":
                        break
                    await trio.sleep(0.1)
                r = await api.post("/wait", json={"targetId": created[1], "loadState": "load",
                                                  "timeoutMs": 20000})
                assert r.status_code == 200, r.text
            finally:
                for target_id in created:
                    await cdp.send("Target.closeTarget", {"targetId": target_id})
    assert not arrived(svc, tag)


def test_playwright_in_a_new_context_downloads_into_browserd_and_never_stalls(
        navdl_service, pages):
    """Playwright over the gateway: a new context, a page, a download, a blocked redirect.

    Its own ``setAutoAttach {waitForDebuggerOnStart}`` and browserd's guard
    both hold each new page; every step answers (each under Playwright's
    own timeout). The download lands in browserd's directory, and once the
    client has gone browserd's downloads still do.
    """
    from playwright.sync_api import sync_playwright

    svc = navdl_service
    tag = secrets.token_hex(4)
    marker = f"/dl/click?pw={tag}"
    clients_gone = gateway_clients_gone(svc)
    with sync_playwright() as pw:
        browser = pw.chromium.connect_over_cdp(
            f"http://127.0.0.1:{svc.cdp_port}", headers=svc.headers, timeout=20_000)
        try:
            context = browser.new_context(accept_downloads=True)
            page = context.new_page()
            page.goto(pages.url("/dl_auto.html"), timeout=20_000)
            page.evaluate("m => document.getElementById('click').href = m", marker)
            with page.expect_download(timeout=20_000) as info:
                page.click("#click", timeout=20_000)
            assert info.value.suggested_filename == "_.bashrc"
            assert info.value.failure() is None
            with pytest.raises(Exception, match="ERR_BLOCKED_BY_CLIENT"):
                page.goto(pages.url("/r/1") + "?to=" + blocked_url(svc, tag), timeout=20_000)
            context.close()
        finally:
            browser.close()
    deadline = time.monotonic() + 30
    while gateway_clients_gone(svc) == clients_gone:
        assert time.monotonic() < deadline, "the Playwright client was never logged as gone"
        time.sleep(0.05)
    with svc.sync_client() as api:
        record = next(d for d in api.get("/downloads").json()["downloads"]
                      if d["url"].endswith(marker))
        assert record["state"] == "completed", record
        assert (downloads_dir(svc) / record["id"]).read_bytes() == (
            f"click-payload-{marker}".encode())
        r = api.post("/tabs/open", json={"url": pages.url("/dl_auto.html")})
        assert r.status_code == 200, r.text
        tab = r.json()["targetId"]
        r = api.post("/click", json={"targetId": tab, "selector": "#click"})
        assert r.status_code == 200, r.text
        after = r.json()["effects"]["downloads"][0]["id"]
        while True:
            record = next(d for d in api.get("/downloads").json()["downloads"]
                          if d["id"] == after)
            if record["state"] != "inProgress":
                break
            assert time.monotonic() < deadline + 30, record
            time.sleep(0.1)
        api.post("/tabs/close", json={"targetId": tab})
    assert record["state"] == "completed", record
    assert (downloads_dir(svc) / after).exists()
    assert not (user_home(svc) / "Downloads").exists()
    assert not arrived(svc, tag)
