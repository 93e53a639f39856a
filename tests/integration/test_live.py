"""The live driver on real Chromium: a second browser plays the user's own.

"The user's browser" is a separate headless Chromium with its own user data
directory and ``--remote-debugging-port=0`` (it writes DevToolsActivePort,
which is how browserd finds it), with three pages of the user's open. The
test reads that browser's own ``/json/list`` to see what really is open
there, whatever browserd says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from supervision.harness import LOOPBACK_TLS

from tests.conftest import PageServer, ServiceInfo, add_route
from tests.integration.helpers import html_route, js, ok

pytestmark = pytest.mark.chromium

DEADLINE_S = 60
CHROMIUM = os.environ.get("BROWSERD_TEST_CHROMIUM", "/usr/lib/chromium/chromium")
HUMAN_PAGE = """<!doctype html><title>human {n}</title>
<button onclick="document.title = 'clicked {n}'">Press {n}</button>
<input aria-label="note {n}">"""


class UserBrowser:
    """A Chromium that browserd must never launch, kill or close a page of."""

    def __init__(self, directory: Path, urls: list[str]) -> None:
        self.directory, self.urls = directory, urls
        self.proc: subprocess.Popen[bytes] | None = None

    def launch(self) -> None:
        (self.directory / "DevToolsActivePort").unlink(missing_ok=True)
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--no-first-run",
             "--no-default-browser-check", f"--user-data-dir={self.directory}",
             "--remote-debugging-port=0", self.urls[0]],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    async def wait_ready(self) -> None:
        """Until it is up with the user's three pages (headless opens one: the user the rest)."""
        with trio.fail_after(30):
            while not (self.directory / "DevToolsActivePort").exists() or not await self.pages():
                await trio.sleep(0.1)
            for url in self.urls[1:]:
                await trio.to_thread.run_sync(self._open, url)
            while len([p for p in await self.pages() if "/live/human" in p["url"]]) < 3:
                await trio.sleep(0.1)

    def _open(self, url: str) -> None:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/json/new?{url}",
                                         method="PUT")
        with urllib.request.urlopen(request, timeout=5) as r:
            r.read()

    @property
    def port(self) -> int:
        return int((self.directory / "DevToolsActivePort").read_text().split()[0])

    async def pages(self) -> list[dict[str, Any]]:
        """The pages really open in the user's browser (its own /json/list)."""
        def fetch() -> list[dict[str, Any]]:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/list",
                                        timeout=5) as r:
                return [p for p in json.loads(r.read()) if p["type"] == "page"]
        try:
            return await trio.to_thread.run_sync(fetch)
        except OSError:
            return []

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


@pytest.fixture(scope="module")
def user_browser(tmp_path_factory: pytest.TempPathFactory,
                 pages: PageServer) -> Iterator[UserBrowser]:
    for n in (1, 2, 3):
        add_route(f"/live/human{n}", html_route(HUMAN_PAGE.format(n=n)))
    browser = UserBrowser(tmp_path_factory.mktemp("user-chrome"),
                          [pages.url(f"/live/human{n}") for n in (1, 2, 3)])
    browser.launch()
    trio.run(browser.wait_ready)
    yield browser
    browser.kill()


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory,
         user_browser: UserBrowser) -> Iterator[ServiceInfo]:
    from tests.conftest import start_service, stop_service

    home = tmp_path_factory.mktemp("live")
    (home / "config").mkdir(mode=0o700)
    nowhere = home / "no-browser"
    nowhere.mkdir()
    (home / "config" / "config.toml").write_text(f"""
[profiles.mine]
driver = "live"
user_data_dir = "{user_browser.directory}"
approval_timeout_s = 10

[profiles.away]
driver = "live"
user_data_dir = "{nowhere}"
live_fallback = "clawd"
""")
    info = start_service(home, timeout=60)
    yield info
    stop_service(info)


@pytest.fixture
async def api(live: ServiceInfo) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=live.base_url, timeout=30,
                                 headers={**live.headers, "X-Browserd-Profile": "mine"},
                                 verify=LOOPBACK_TLS) as c:
        yield c


def owner_headers(live: ServiceInfo) -> dict[str, str]:
    token = (live.home / "config" / "owner-token").read_text().strip()
    return {"Authorization": f"Bearer {token}", "X-Browserd-Profile": "mine"}


async def listed(api: httpx.AsyncClient) -> list[str]:
    r = await api.get("/tabs")
    assert r.status_code == 200, r.text
    return [t["url"] for t in r.json()["tabs"]]


async def human_ids(user: UserBrowser) -> dict[str, str]:
    return {p["url"].rsplit("/", 1)[1]: p["id"] for p in await user.pages()
            if "/live/human" in p["url"]}


async def test_only_offered_pages_are_seen_and_none_is_ever_closed(
        api: httpx.AsyncClient, live: ServiceInfo, user_browser: UserBrowser) -> None:
    with trio.fail_after(DEADLINE_S):
        r = await api.post("/start")
        assert r.status_code == 200, r.text
        assert (await api.get("/status")).json()["state"] == "running"
        entry = next(p for p in (await api.get("/profiles")).json()["profiles"]
                     if p["name"] == "mine")
        assert entry["driver"] == "live" and entry["userDataDir"] == str(user_browser.directory)
        assert await listed(api) == []  # three pages of the user's open: none is listed
        humans = await human_ids(user_browser)
        assert set(humans) == {"human1", "human2", "human3"}
        r = await api.post("/snapshot", json={"targetId": humans["human2"]})
        assert r.status_code == 404 and r.json()["code"] == "TAB_NOT_FOUND"

        # Offering is the user's: the agent's token cannot, the owner token can.
        r = await api.get("/tabs/offerable")
        assert r.status_code == 403 and r.json()["code"] == "OWNER_ONLY", r.text
        r = await api.post("/tabs/offer", json={"targetId": humans["human2"]})
        assert r.status_code == 403 and r.json()["code"] == "OWNER_ONLY", r.text
        owner = owner_headers(live)
        r = await api.get("/tabs", headers=owner)  # the owner token opens no agent route
        assert r.status_code == 403 and r.json()["code"] == "SCOPE_REQUIRED", r.text
        r = await api.get("/tabs/offerable", headers=owner)
        assert r.status_code == 200, r.text
        assert {p["targetId"] for p in r.json()["pages"]} >= set(humans.values())
        r = await api.post("/tabs/offer", headers=owner, json={"targetId": humans["human2"]})
        assert r.status_code == 200, r.text
        offered = humans["human2"]
        assert await listed(api) == [user_browser.urls[1]]

        # The offered page is driven by ref.
        r = await api.get("/snapshot", params={"targetId": offered, "nodes": "true"})
        assert r.status_code == 200, r.text
        button = next(n["ref"] for n in r.json()["nodes"] if n["role"] == "button")
        await ok(api, "/click", offered, ref=button)
        assert await js(api, offered, "document.title") == "clicked 2"

        # The agent's own tab is closable; the user's is not, only released.
        r = await api.post("/tabs/open", json={"url": "about:blank"})
        assert r.status_code == 200, r.text
        mine = r.json()["targetId"]
        assert len(await listed(api)) == 2
        r = await api.post("/tabs/close", json={"targetId": offered})
        assert r.status_code == 403 and r.json()["code"] == "NOT_AGENT_TAB", r.text
        r = await api.post("/tabs/close", json={"targetId": mine})
        assert r.status_code == 200, r.text
        assert mine not in {p["id"] for p in await user_browser.pages()}
        r = await api.post("/tabs/release", json={"targetId": offered})
        assert r.status_code == 200 and r.json()["released"] == offered, r.text
        assert await listed(api) == []
        r = await api.post("/eval", json={"targetId": offered, "js": "1"})
        assert r.status_code == 404, r.text

        # /stop disconnects: the user's browser and every page of theirs stay.
        r = await api.post("/stop")
        assert r.status_code == 200, r.text
        assert user_browser.running
        assert set(await human_ids(user_browser)) == {"human1", "human2", "human3"}


async def test_after_the_users_browser_restarts_nothing_is_listed_until_offered(
        api: httpx.AsyncClient, live: ServiceInfo, user_browser: UserBrowser) -> None:
    with trio.fail_after(DEADLINE_S):
        r = await api.post("/start")
        assert r.status_code == 200, r.text
        humans = await human_ids(user_browser)
        r = await api.post("/tabs/offer", headers=owner_headers(live),
                           json={"targetId": humans["human1"]})
        assert r.status_code == 200, r.text
        assert len(await listed(api)) == 1
        user_browser.kill()
        user_browser.launch()
        await user_browser.wait_ready()
        r = await api.post("/start")  # reconnects (a stop is not needed: it may be retrying)
        while (await api.get("/status")).json()["state"] != "running":
            await trio.sleep(0.1)
            await api.post("/start")
        assert await listed(api) == []  # nothing restored silently
        r = await api.get("/tabs/offerable", headers=owner_headers(live))
        assert len([p for p in r.json()["pages"] if "/live/human" in p["url"]]) == 3


async def test_no_browser_is_503_with_how_to_enable_it_and_the_fallback_serves(
        live: ServiceInfo, pages: PageServer) -> None:
    with trio.fail_after(DEADLINE_S):
        async with httpx.AsyncClient(base_url=live.base_url, timeout=30,
                                     headers={**live.headers,
                                              "X-Browserd-Profile": "away"},
                                     verify=LOOPBACK_TLS) as away:
            r = await away.post("/start")
            assert r.status_code == 503 and r.json()["code"] == "LIVE_BROWSER_NOT_FOUND", r.text
            assert "chrome://inspect" in r.json()["hint"]
            assert (await away.get("/status")).json()["state"] == "failed"
            # While it is away, requests that need a browser go to its fallback (clawd).
            async with live.client() as clawd:
                r = await clawd.post("/tabs/open", json={"url": pages.url("/hello.html?fallback")})
                assert r.status_code == 200, r.text
            r = await away.get("/tabs")
            assert r.status_code == 200 and any(
                t["url"].endswith("?fallback") for t in r.json()["tabs"]), r.text
            # A live profile made at run time; deleting it never touches the user's directory.
            user_dir = live.home / "no-browser"
            (user_dir / "keep").write_text("the user's")
            r = await away.post("/profiles", json={"name": "later", "driver": "live",
                                                   "userDataDir": str(user_dir)})
            assert r.status_code == 200 and r.json()["userDataDir"] == str(user_dir), r.text
            r = await away.delete("/profiles/later")
            assert r.status_code == 200, r.text
            assert (user_dir / "keep").read_text() == "the user's"


async def test_browserd_offer_lists_and_offers_with_the_owner_token(
        api: httpx.AsyncClient, live: ServiceInfo, user_browser: UserBrowser) -> None:
    with trio.fail_after(DEADLINE_S):
        r = await api.post("/start")
        assert r.status_code == 200, r.text
        env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSERD_")}
        env |= {"BROWSERD_HOME": str(live.home), "BROWSERD_CONTROL_URL": live.base_url}

        async def browserd(*argv: str) -> subprocess.CompletedProcess[bytes]:
            return await trio.run_process(
                [sys.executable, "-m", "browserd", "--profile", "mine", *argv], env=env,
                capture_stdout=True, capture_stderr=True, check=False)

        run = await browserd("offer")
        assert run.returncode == 0, run.stderr
        lines = [line for line in run.stdout.decode().splitlines() if "/live/human" in line]
        assert len(lines) == 3, run.stdout.decode()
        target = (await human_ids(user_browser))["human3"]
        run = await browserd("offer", target)
        assert run.returncode == 0, run.stderr
        assert user_browser.urls[2] in await listed(api)
        run = await browserd("release", target)
        assert run.returncode == 0, run.stderr
        assert user_browser.urls[2] not in await listed(api)


async def test_a_tab_request_approved_once_is_that_tokens_alone(
        api: httpx.AsyncClient, live: ServiceInfo, user_browser: UserBrowser) -> None:
    with trio.fail_after(DEADLINE_S):
        r = await api.post("/start")
        assert r.status_code == 200, r.text
        owner = owner_headers(live)

        async def mint(name: str) -> dict[str, str]:
            r = await api.post("/tokens", headers=owner,
                               json={"name": f"{name}-{os.urandom(3).hex()}",
                                     "scopes": ["read", "act"]})
            assert r.status_code == 200, r.text
            return {"Authorization": f"Bearer {r.json()['token']}", "X-Browserd-Profile": "mine"}

        asker, other = await mint("asker"), await mint("other")
        r = await api.post("/tabs/request", headers=asker,
                           json={"reason": "read the invoice", "url": "http://x/invoice"})
        assert r.status_code == 200 and r.json()["state"] == "pending", r.text
        request_id = r.json()["requestId"]
        # Pending: a wait times out; the asker cannot answer its own request.
        r = await api.post("/wait", headers=asker, json={"tabRequest": request_id,
                                                          "timeoutMs": 200})
        assert r.status_code == 504 and r.json()["waitedMs"] >= 150, r.text
        r = await api.post(f"/tabs/requests/{request_id}", headers=asker,
                           json={"approve": "x"})
        assert r.status_code == 403 and r.json()["code"] == "OWNER_ONLY", r.text
        r = await api.get("/tabs/requests", headers=owner, params={"pending": "true"})
        pending = [q for q in r.json()["requests"] if q["requestId"] == request_id]
        assert pending and pending[0]["reason"] == "read the invoice", r.text
        # Another token cannot wait on it or cancel it.
        r = await api.post("/wait", headers=other, json={"tabRequest": request_id})
        assert r.status_code == 404, r.text
        r = await api.delete(f"/tabs/requests/{request_id}", headers=other)
        assert r.status_code == 404, r.text
        page = (await human_ids(user_browser))["human1"]

        async def approve() -> None:
            await trio.sleep(0.3)
            r = await api.post(f"/tabs/requests/{request_id}", headers=owner,
                               json={"approve": page})
            assert r.status_code == 200 and r.json()["state"] == "approved", r.text

        async with trio.open_nursery() as nursery:
            nursery.start_soon(approve)
            r = await api.post("/wait", headers=asker, json={"tabRequest": request_id,
                                                              "timeoutMs": 20_000})
        assert r.status_code == 200, r.text
        assert r.json()["tabRequest"] == {**r.json()["tabRequest"], "state": "approved",
                                          "targetId": page}
        # The asker sees and drives it; any other token (the default one too) gets 404.
        r = await api.get("/tabs", headers=asker)
        assert page in {t["targetId"] for t in r.json()["tabs"]}, r.text
        r = await api.post("/eval", headers=asker, json={"targetId": page, "js": "1+1"})
        assert r.status_code in (200, 403), r.text  # (eval may be off; no 404 either way)
        assert r.status_code != 404
        for headers in (other, {}):
            r = await api.get("/tabs", headers=headers)
            assert page not in {t["targetId"] for t in r.json()["tabs"]}, r.text
            r = await api.post("/snapshot", headers=headers, json={"targetId": page})
            assert r.status_code == 404 and r.json()["code"] == "TAB_NOT_FOUND", r.text
        # Answered once: a second answer is a conflict.
        r = await api.post(f"/tabs/requests/{request_id}", headers=owner, json={"deny": True})
        assert r.status_code == 409, r.text
        r = await api.post("/tabs/release", headers=asker, json={"targetId": page})
        assert r.status_code == 200, r.text
