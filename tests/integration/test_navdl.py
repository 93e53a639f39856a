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
import re
import secrets
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest
import trio
from supervision import rawcdp
from supervision.harness import LOOPBACK_TLS

from tests.conftest import PageServer, ServiceInfo, add_route, start_service, stop_service
from tests.integration.helpers import downloads, finished_download, html_route, wait_downloads

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


def blocked_url(svc: ServiceInfo, tag: str) -> str:
    return f"http://127.0.0.1:{svc.port}/navblocked-{tag}"


def arrived(svc: ServiceInfo, tag: str) -> bool:
    """Did a request for /navblocked-<tag> reach the control port (it logs refusals)?"""
    return f"refused GET '/navblocked-{tag}'" in svc.log_text()


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
            await _attack_page(api, tab, pages, blocked_url(svc, tag))
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
