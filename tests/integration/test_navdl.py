"""Downloads kept in (S12) and the URL policy on every navigation (S13), through the
API on a real Chromium: downloads reported, listed, served and confined, the size cap,
a full disk; redirects, popups, meta refresh, form posts and frames to a blocked URL
stopped, and what is shown of such a URL.

One private service for the module (tests/integration/_navdl_fixtures.py says how
it is set up, and how a request that reached the blocked control port is seen:
``test_detector_sees_*`` shows that detector does see a request that arrives).
Gateway clients' downloads and pages: test_navdl_gateway.py.
"""

from __future__ import annotations

import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest
import trio
from supervision.harness import LOOPBACK_TLS

from tests.conftest import ServiceInfo, add_route, start_service, stop_service
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
from tests.integration.helpers import downloads, html_route, wait_downloads

__all__ = ["api", "navdl_service", "tab"]

pytestmark = pytest.mark.chromium


def escaped_files(home: Path) -> list[Path]:
    return [p for p in home.rglob("*") if p.is_file()]


# -- S12: downloads ------------------------------------------------------------------------


async def test_downloads_stay_in_browserd(api, tab, pages, navdl_service):
    """Auto-clicked <a download>, an attachment iframe and a click: reported, listed, served."""
    svc = navdl_service
    with trio.fail_after(60):
        r = await api.post("/navigate", json={"targetId": tab,
                                              "url": pages.url("/dl_auto.html?auto=1")})
        assert r.status_code == 200, r.text

        def two_done(listed: list[dict[str, Any]]) -> bool:
            done = [d for d in listed if d["state"] == "completed"
                    and d["url"].split("?")[0].endswith(("/dl/auto", "/dl/frame"))]
            return len(done) >= 2

        listed = await wait_downloads(api, two_done)
        by_path = {urlsplit(d["url"]).path: d for d in listed}
        assert {"/dl/auto", "/dl/frame"} <= set(by_path)
        assert by_path["/dl/auto"]["targetId"] == tab

        r = await api.post("/click", json={"targetId": tab, "selector": "#click"})
        assert r.status_code == 200, r.text
        effects = r.json()["effects"]
        assert [urlsplit(d["url"]).path for d in effects.get("downloads", [])] == ["/dl/click"]
        click_id = effects["downloads"][0]["id"]
        assert effects["downloads"][0]["suggestedFilename"] == "_.bashrc"

        while True:
            listed = await downloads(api, targetId=tab)
            record = next((d for d in listed if d["id"] == click_id), None)
            if record is not None and record["state"] == "completed":
                break
            await trio.sleep(0.1)
        assert record["targetId"] == tab
        assert record["mediaUrl"] == f"/downloads/{click_id}"
        path = Path(record["path"])
        assert path.parent == downloads_dir(svc) and path.name == click_id

        r = await api.get(record["mediaUrl"])
        assert r.status_code == 200
        assert r.content == b"click-payload-/dl/click"
        assert r.headers["content-type"] == "application/octet-stream"
        assert r.headers["content-disposition"].startswith('attachment; filename="_.bashrc"')
        assert r.headers["x-content-type-options"] == "nosniff"

    # Every file is a GUID under <data>/downloads/<profile>/, none in the user's home.
    files = sorted(p.name for p in downloads_dir(svc).iterdir())
    assert click_id in files and by_path["/dl/auto"]["id"] in files
    assert all(len(name) == 36 for name in files), files
    assert not (user_home(svc) / "Downloads").exists()
    assert [p for p in escaped_files(user_home(svc))
            if p.name in ("_.bashrc", ".bashrc", "evil.sh")] == []


async def test_wait_download_answers_when_the_next_one_finishes(api, tab, pages):
    with trio.fail_after(60):
        r = await api.post("/navigate", json={"targetId": tab, "url": pages.url("/dl_auto.html")})
        assert r.status_code == 200, r.text
        answer: list[httpx.Response] = []
        answered = trio.Event()

        async def waiter() -> None:
            answer.append(await api.post("/wait", json={"targetId": tab, "download": True,
                                                        "timeoutMs": 30000}))
            answered.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(waiter)
            # The wait's start is its mark, and nothing outside says when it began:
            # instead of guessing with a sleep, start one more download each turn
            # until the wait answers; it must answer with one of them.
            clicks = 0
            while not answered.is_set():
                clicks += 1
                r = await api.post("/eval", json={
                    "targetId": tab, "js": "const a=document.createElement('a');"
                    f"a.href='/dl/wait?x={clicks}';document.body.appendChild(a);a.click();1"})
                assert r.status_code == 200, r.text
                with trio.move_on_after(2):
                    await answered.wait()
        body = answer[0].json()
        assert answer[0].status_code == 200, body
        assert body["ok"] is True and body["targetId"] == tab
        assert body["download"]["state"] == "completed"
        assert urlsplit(body["download"]["url"]).path == "/dl/wait"
        assert 1 <= int(parse_qs(urlsplit(body["download"]["url"]).query)["x"][0]) <= clicks
        assert isinstance(body["waitedMs"], int)


async def test_wait_download_times_out_without_a_download(api, tab):
    with trio.fail_after(30):
        r = await api.post("/wait", json={"targetId": tab, "download": True, "timeoutMs": 300})
        assert r.status_code == 504, r.text
        assert r.json()["code"] == "TIMEOUT"


@pytest.mark.parametrize("link", ["#big", "#chunked"])
async def test_oversize_download_is_canceled_too_large(api, tab, pages, navdl_service, link):
    """Known size over the cap, and unknown size that grows past it: canceled, no file left."""
    with trio.fail_after(60):
        r = await api.post("/navigate", json={"targetId": tab, "url": pages.url("/dl_auto.html")})
        assert r.status_code == 200, r.text
        r = await api.post("/click", json={"targetId": tab, "selector": link})
        assert r.status_code == 200, r.text
        started = r.json()["effects"]["downloads"]
        assert len(started) == 1
        big_id = started[0]["id"]
        while True:
            record = next(d for d in await downloads(api) if d["id"] == big_id)
            if record["state"] != "inProgress":
                break
            await trio.sleep(0.1)
        assert record["state"] == "canceled" and record["reason"] == "too_large", record
        assert "path" not in record
        r = await api.get(f"/downloads/{big_id}")
        assert r.status_code == 404
        # The partial file is gone (the browser may report the cancel a moment later).
        directory = downloads_dir(navdl_service)
        while any(p.name.startswith(big_id) for p in directory.iterdir()):
            await trio.sleep(0.1)


async def test_unknown_download_id_is_404(api):
    with trio.fail_after(10):
        for bad in ("nope", "../../config/token", "0" * 36):
            r = await api.get(f"/downloads/{bad}")
            assert r.status_code == 404, (bad, r.text)


# -- S13: every navigation -----------------------------------------------------------------


async def test_detector_sees_a_request_that_arrives(navdl_service):
    tag = secrets.token_hex(4)
    with trio.fail_after(20):
        async with httpx.AsyncClient(verify=LOOPBACK_TLS) as plain:
            r = await plain.get(blocked_url(navdl_service, tag))
        assert r.status_code == 401
        while not arrived(navdl_service, tag):
            await trio.sleep(0.05)


async def test_redirect_chain_to_the_control_port_is_403_with_redirected_from(
        api, tab, pages, navdl_service):
    tag = secrets.token_hex(4)
    target = blocked_url(navdl_service, tag)
    start = pages.url("/r/1") + "?to=" + target
    with trio.fail_after(30):
        r = await api.post("/navigate", json={"targetId": tab, "url": start})
    assert r.status_code == 403, r.text
    body = r.json()
    assert body["code"] == "URL_BLOCKED"
    assert body["url"] == f"http://127.0.0.1:{navdl_service.port}/navblocked-{tag}"
    assert body["redirectedFrom"] == pages.url("/r/1")  # no query: page data stays out
    assert body["reason"] == "port"
    assert not arrived(navdl_service, tag)


async def test_redirect_chain_to_the_cdp_port_is_blocked(api, tab, pages, navdl_service):
    target = f"http://127.0.0.1:{navdl_service.cdp_port}/json/list"
    with trio.fail_after(30):
        r = await api.post("/navigate", json={"targetId": tab,
                                              "url": pages.url("/r/1") + "?to=" + target})
    assert r.status_code == 403, r.text
    assert r.json()["url"] == f"http://127.0.0.1:{navdl_service.cdp_port}/json/list"


@pytest.mark.parametrize("selector", ["#blank", "#popup"])
async def test_popup_to_a_blocked_url_is_stopped_and_closed(
        api, tab, pages, navdl_service, selector):
    tag = secrets.token_hex(4)
    with trio.fail_after(40):
        await attack_page(api, tab, pages, blocked_url(navdl_service, tag))
        before = {t["targetId"] for t in (await api.get("/tabs")).json()["tabs"]}
        r = await api.post("/click", json={"targetId": tab, "selector": selector})
        assert r.status_code == 200, r.text
        effects = r.json()["effects"]
        assert effects.get("blocked"), effects
        blocked = effects["blocked"][0]
        assert blocked["url"] == f"http://127.0.0.1:{navdl_service.port}/navblocked-{tag}"
        assert blocked["reason"] == "port"
        assert "newTabs" not in effects
        # The popup that never showed anything is closed again.
        while True:
            now = {t["targetId"] for t in (await api.get("/tabs")).json()["tabs"]}
            if now <= before:
                break
            await trio.sleep(0.1)
    assert not arrived(navdl_service, tag)


@pytest.mark.parametrize("selector", ["#meta", "#post", "#redirect"])
async def test_meta_refresh_form_post_and_redirect_link_are_stopped(
        api, tab, pages, navdl_service, selector):
    tag = secrets.token_hex(4)
    with trio.fail_after(40):
        await attack_page(api, tab, pages, blocked_url(navdl_service, tag))
        r = await api.post("/click", json={"targetId": tab, "selector": selector})
        assert r.status_code == 200, r.text
        effects = r.json()["effects"]
        assert [b["url"] for b in effects.get("blocked", [])] == [
            f"http://127.0.0.1:{navdl_service.port}/navblocked-{tag}"], effects
        if selector == "#redirect":
            assert effects["blocked"][0]["redirectedFrom"] == pages.url("/r/1")
    assert not arrived(navdl_service, tag)


async def test_a_blocked_url_is_reported_without_userinfo_query_or_fragment(
        api, tab, pages, navdl_service):
    """/navigate's 403 and effects.blocked[] show scheme://host:port/path only."""
    tag = secrets.token_hex(4)
    secret_target = (f"http://user:pw@127.0.0.1:{navdl_service.port}/navblocked-{tag}"
                     "?token=s3cret#access_token=s3cret")
    shown = blocked_url(navdl_service, tag)
    to = quote(secret_target, safe="")
    with trio.fail_after(40):
        r = await api.post("/navigate", json={"targetId": tab,
                                              "url": pages.url("/r/1") + "?to=" + to})
        assert r.status_code == 403, r.text
        assert (r.json()["url"], r.json()["redirectedFrom"]) == (shown, pages.url("/r/1"))
        assert "s3cret" not in r.text and "user" not in r.json()["url"]
        r = await api.post("/navigate", json={
            "targetId": tab, "url": pages.url("/nav_attack.html") + "?to=" + to})
        assert r.status_code == 200, r.text
        r = await api.post("/click", json={"targetId": tab, "selector": "#meta"})
        assert r.status_code == 200, r.text
        assert [b["url"] for b in r.json()["effects"].get("blocked", [])] == [shown], r.text
        assert "s3cret" not in r.text
    assert not arrived(navdl_service, tag)


_FRAME_PAGE = b"""<!doctype html><title>frames</title>
<button id="frame" onclick="const f = document.createElement('iframe');
  f.src = new URLSearchParams(location.search).get('to'); document.body.append(f)">frame</button>
"""


async def test_an_iframe_navigation_to_a_blocked_url_is_stopped(api, tab, pages, navdl_service):
    """A frame's document request is judged like the page's own (the page itself goes on)."""
    add_route("/navdl/frames.html", html_route(_FRAME_PAGE))
    tag = secrets.token_hex(4)
    target = blocked_url(navdl_service, tag)
    with trio.fail_after(40):
        r = await api.post("/navigate", json={
            "targetId": tab, "url": pages.url("/navdl/frames.html") + "?to=" + quote(target)})
        assert r.status_code == 200, r.text
        r = await api.post("/click", json={"targetId": tab, "selector": "#frame"})
        assert r.status_code == 200, r.text
        blocked = r.json()["effects"].get("blocked", [])
        assert blocked == [{"url": target, "reason": "port", "resourceType": "document"}], blocked
        r = await api.post("/eval", json={"targetId": tab, "js": "location.pathname"})
        assert r.json()["result"] == "/navdl/frames.html"  # the page itself stays
    assert not arrived(navdl_service, tag)


async def test_allowed_navigation_and_redirects_still_work(api, tab, pages):
    with trio.fail_after(30):
        target = pages.url("/hello.html")
        r = await api.post("/navigate", json={"targetId": tab,
                                              "url": pages.url("/r/1") + "?to=" + target})
        assert r.status_code == 200, r.text
        assert r.json()["url"] == target


@pytest.mark.parametrize("selector", ["#file", "#chrome", "#data"])
async def test_links_to_non_network_schemes_never_land(api, tab, pages, navdl_service, selector):
    """file:, chrome:, data: never pause in Fetch: Chromium itself refuses them from a page."""
    with trio.fail_after(40):
        await attack_page(api, tab, pages, pages.url("/hello.html"))
        before = {t["targetId"] for t in (await api.get("/tabs")).json()["tabs"]}
        r = await api.post("/click", json={"targetId": tab, "selector": selector})
        assert r.status_code == 200, r.text
        # The click's effects already waited for a navigation it requested to commit.
        assert "navigated" not in r.json()["effects"], r.json()
        tabs = (await api.get("/tabs")).json()["tabs"]
        for info in tabs:
            assert not info["url"].startswith(("file:", "chrome:", "data:")), info
        assert {t["targetId"] for t in tabs} <= before


# -- a full disk ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def full_disk_service(tmp_path_factory: pytest.TempPathFactory, navdl_service: ServiceInfo
                      ) -> Iterator[ServiceInfo]:
    """A service whose downloads directory is a 2 MiB tmpfs (root only, else skipped)."""
    root = tmp_path_factory.mktemp("navdl-full")
    mount_point = root / "svc" / "data" / "downloads" / "clawd"
    mount_point.mkdir(parents=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs",
                           str(mount_point)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.decode().strip()}")
    try:
        info = start_service(root / "svc")
        try:
            yield info
        finally:
            stop_service(info)
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


async def click_download(api: httpx.AsyncClient, tab: str, selector: str) -> str:
    """Click a download link; the new download's id, from /downloads (caller's deadline)."""
    before = {d["id"] for d in await downloads(api)}
    r = await api.post("/click", json={"targetId": tab, "selector": selector})
    assert r.status_code == 200, r.text
    while True:
        new = [d["id"] for d in await downloads(api) if d["id"] not in before]
        if new:
            assert len(new) == 1, new
            return new[0]
        await trio.sleep(0.1)


@pytest.mark.parametrize("link", ["#big", "#chunked"])
async def test_download_that_does_not_fit_is_canceled_no_space(full_disk_service, pages, link):
    svc = full_disk_service
    async with svc.client() as api:
        with trio.fail_after(60):
            r = await api.post("/tabs/open", json={"url": pages.url("/dl_auto.html")})
            assert r.status_code == 200, r.text
            tab = r.json()["targetId"]
            # A download that fits is kept (the detector works on this disk).
            small = await click_download(api, tab, "#click")
            # Finished before the big one starts: a download that fills the disk while the
            # small one is still being written would fail that one too (a race under load).
            while not any(d["id"] == small and d["state"] != "inProgress"
                          for d in await downloads(api)):
                await trio.sleep(0.05)
            big = await click_download(api, tab, link)
            while True:
                listed = {d["id"]: d for d in await downloads(api)}
                if all(listed.get(i, {}).get("state", "inProgress") != "inProgress"
                       for i in (small, big)):
                    break
                await trio.sleep(0.1)
            assert listed[small]["state"] == "completed", listed[small]
            assert listed[big]["state"] == "canceled", listed[big]
            assert listed[big]["reason"] == "no_space", listed[big]
            directory = downloads_dir(svc)
            while any(p.name.startswith(big) for p in directory.iterdir()):
                await trio.sleep(0.1)
            assert (directory / small).exists()
            await api.post("/tabs/close", json={"targetId": tab})
