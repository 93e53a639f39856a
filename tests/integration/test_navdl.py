"""Downloads kept in (S12) and the URL policy on every navigation (S13), on a real Chromium.

One private service for the module: its own ``HOME`` (a temp dir, so a
download that escaped to ``~/Downloads`` would be seen), a 1 MiB
``download_max_bytes``. Pages: tests/pages/dl_auto.html and nav_attack.html
plus the dynamic routes registered below.

The "blocked" target of S13 is the service's own control port: every
request that reaches it without the token is refused *and logged* by the
guard ("refused GET '/navblocked-…' from …"), so a blocked navigation that still
left the browser would be seen in the service log; ``test_detector_sees_*``
shows that detector does see a request that arrives.
"""

from __future__ import annotations

import http.server
import secrets
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import trio
from supervision import harness

from tests.conftest import PageServer, ServiceInfo, add_route, start_service, stop_service

pytestmark = pytest.mark.chromium

MAX_BYTES = 1024 * 1024
BIG_BYTES = 3 * 1024 * 1024


# -- page server routes ------------------------------------------------------------------


def _attachment(name: str) -> Any:
    def handler(h: http.server.SimpleHTTPRequestHandler) -> None:
        body = f"{name}-payload-{h.path}".encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/x-sh")
        h.send_header("Content-Disposition", 'attachment; filename="../.bashrc"')
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)
    return handler


def _big(h: http.server.SimpleHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "application/octet-stream")
    h.send_header("Content-Disposition", 'attachment; filename="big.bin"')
    h.send_header("Content-Length", str(BIG_BYTES))
    h.end_headers()
    try:
        for _ in range(BIG_BYTES // 65536):
            h.wfile.write(b"\0" * 65536)
    except OSError:
        pass


def _chunked(h: http.server.SimpleHTTPRequestHandler) -> None:
    # HTTP/1.0 with no Content-Length: the size is unknown until the end.
    h.send_response(200)
    h.send_header("Content-Type", "application/octet-stream")
    h.send_header("Content-Disposition", 'attachment; filename="unknown-size.bin"')
    h.end_headers()
    try:
        for _ in range(BIG_BYTES // 65536):
            h.wfile.write(b"\1" * 65536)
    except OSError:
        pass
    h.close_connection = True


def _redirect(next_hop: str | None) -> Any:
    def handler(h: http.server.SimpleHTTPRequestHandler) -> None:
        to = parse_qs(urlsplit(h.path).query).get("to", [""])[0]
        h.send_response(302)
        h.send_header("Location", f"{next_hop}?to={to}" if next_hop else to)
        h.send_header("Content-Length", "0")
        h.end_headers()
    return handler


@pytest.fixture(scope="module")
def navdl_service(tmp_path_factory: pytest.TempPathFactory, pages: PageServer
                  ) -> Iterator[ServiceInfo]:
    for path in ("/dl/auto", "/dl/frame", "/dl/click", "/dl/wait"):
        add_route(path, _attachment(path.rsplit("/", 1)[1]))
    add_route("/dl/big", _big)
    add_route("/dl/chunked", _chunked)
    add_route("/r/1", _redirect("/r/2"))
    add_route("/r/2", _redirect(None))
    root = tmp_path_factory.mktemp("navdl")
    user_home = root / "user-home"
    user_home.mkdir()
    info = start_service(root / "svc", env={"HOME": str(user_home),
                                            "BROWSERD_DOWNLOAD_MAX_BYTES": str(MAX_BYTES)})
    yield info
    stop_service(info)


@pytest.fixture
async def api(navdl_service: ServiceInfo) -> AsyncIterator[httpx.AsyncClient]:
    async with navdl_service.client() as client:
        yield client


@pytest.fixture
async def tab(api: httpx.AsyncClient) -> AsyncIterator[str]:
    r = await api.post("/tabs/open", json={"url": "about:blank"})
    assert r.status_code == 200, r.text
    target_id = r.json()["targetId"]
    yield target_id
    await api.post("/tabs/close", json={"targetId": target_id})


def user_home(svc: ServiceInfo) -> Path:
    return svc.home.parent / "user-home"


def downloads_dir(svc: ServiceInfo) -> Path:
    return svc.home / "data" / "downloads" / svc.profile


async def downloads(api: httpx.AsyncClient, **params: str) -> list[dict[str, Any]]:
    r = await api.get("/downloads", params=params)
    assert r.status_code == 200, r.text
    listed: list[dict[str, Any]] = r.json()["downloads"]
    return listed


async def wait_downloads(api: httpx.AsyncClient, predicate: Any) -> list[dict[str, Any]]:
    """Poll /downloads until ``predicate(list)`` holds (caller's deadline)."""
    while True:
        listed = await downloads(api)
        if predicate(listed):
            return listed
        await trio.sleep(0.1)


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

        async def waiter() -> None:
            answer.append(await api.post("/wait", json={"targetId": tab, "download": True,
                                                        "timeoutMs": 30000}))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(waiter)
            await trio.sleep(0.3)  # let the wait begin; its start is its mark
            r = await api.post("/eval", json={
                "targetId": tab, "js": "const a=document.createElement('a');"
                "a.href='/dl/wait?x=1';document.body.appendChild(a);a.click();1"})
            assert r.status_code == 200, r.text
        body = answer[0].json()
        assert answer[0].status_code == 200, body
        assert body["ok"] is True and body["targetId"] == tab
        assert body["download"]["state"] == "completed"
        assert urlsplit(body["download"]["url"]).path == "/dl/wait"
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


def blocked_url(svc: ServiceInfo, tag: str) -> str:
    return f"http://127.0.0.1:{svc.port}/navblocked-{tag}"


def arrived(svc: ServiceInfo, tag: str) -> bool:
    """Did a request for /navblocked-<tag> reach the control port (it logs refusals)?"""
    return f"refused GET '/navblocked-{tag}'" in svc.log_text()


async def test_detector_sees_a_request_that_arrives(navdl_service):
    tag = secrets.token_hex(4)
    with trio.fail_after(20):
        async with httpx.AsyncClient() as plain:
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


async def _attack_page(api: httpx.AsyncClient, tab: str, pages: PageServer, target: str) -> None:
    r = await api.post("/navigate", json={"targetId": tab,
                                          "url": pages.url("/nav_attack.html") + "?to=" + target})
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("selector", ["#blank", "#popup"])
async def test_popup_to_a_blocked_url_is_stopped_and_closed(
        api, tab, pages, navdl_service, selector):
    tag = secrets.token_hex(4)
    with trio.fail_after(40):
        await _attack_page(api, tab, pages, blocked_url(navdl_service, tag))
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
        await _attack_page(api, tab, pages, blocked_url(navdl_service, tag))
        r = await api.post("/click", json={"targetId": tab, "selector": selector})
        assert r.status_code == 200, r.text
        effects = r.json()["effects"]
        assert [b["url"] for b in effects.get("blocked", [])] == [
            f"http://127.0.0.1:{navdl_service.port}/navblocked-{tag}"], effects
        if selector == "#redirect":
            assert effects["blocked"][0]["redirectedFrom"] == pages.url("/r/1")
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
        await _attack_page(api, tab, pages, pages.url("/hello.html"))
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
            big = await click_download(api, tab, link)
            while True:
                listed = {d["id"]: d for d in await downloads(api)}
                if all(listed.get(i, {}).get("state", "inProgress") != "inProgress"
                       for i in (small, big)):
                    break
                await trio.sleep(0.1)
            assert listed[small]["state"] == "completed"
            assert listed[big]["state"] == "canceled", listed[big]
            assert listed[big]["reason"] == "no_space", listed[big]
            directory = downloads_dir(svc)
            while any(p.name.startswith(big) for p in directory.iterdir()):
                await trio.sleep(0.1)
            assert (directory / small).exists()
            await api.post("/tabs/close", json={"targetId": tab})


async def test_download_in_a_new_browser_context_stays_in(navdl_service, pages):
    """A context made after connect (here by a raw CDP client) gets the behavior too."""
    svc = navdl_service
    with trio.fail_after(60):
        async with harness.open_raw_cdp(svc.cdp_port) as cdp:
            context = (await cdp.send("Target.createBrowserContext"))["browserContextId"]
            try:
                target = await cdp.send("Target.createTarget", {
                    "url": "about:blank", "browserContextId": context})
                session = (await cdp.send("Target.attachToTarget", {
                    "targetId": target["targetId"], "flatten": True}))["sessionId"]
                await cdp.send("Page.navigate", {"url": pages.url("/dl/click?ctx=1")},
                               session_id=session)
                async with svc.client() as api:
                    while True:
                        found = [d for d in await downloads(api)
                                 if d["url"].endswith("/dl/click?ctx=1")
                                 and d["state"] != "inProgress"]
                        if found:
                            break
                        await trio.sleep(0.1)
                assert found[0]["state"] == "completed", found[0]
                assert Path(found[0]["path"]).parent == downloads_dir(svc)
                assert (downloads_dir(svc) / found[0]["id"]).read_bytes() == (
                    b"click-payload-/dl/click?ctx=1")
            finally:
                await cdp.send("Target.disposeBrowserContext", {"browserContextId": context})
    assert not (user_home(svc) / "Downloads").exists()
