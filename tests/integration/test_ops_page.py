"""The ops page (/ui) in a real Chromium driven by Playwright, against a real browserd.

One private service for the module (the stop button stops its browser), and
one Playwright-launched Chromium as the person's browser. The agent's side is
plain HTTP with the token. Set BROWSERD_UPDATE_DOCS=1 to rewrite
docs/ops-page.png from :func:`test_the_docs_screenshot_shows_a_handoff_and_the_live_view`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect
from supervision.harness import LOOPBACK_TLS

from tests.conftest import PageServer, ServiceInfo, start_service, stop_service
from tests.integration.helpers import poll_sync

pytestmark = pytest.mark.chromium

DOCS_SCREENSHOT = Path(__file__).parents[2] / "docs" / "ops-page.png"
UI_TIMEOUT_MS = 20_000


@pytest.fixture(scope="module")
def ops(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceInfo]:
    info = start_service(tmp_path_factory.mktemp("ops"))
    yield info
    stop_service(info)



@pytest.fixture
def agent(ops: ServiceInfo) -> Iterator[httpx.Client]:
    with ops.sync_client() as client:
        yield client


@pytest.fixture
def context(person: Browser) -> Iterator[BrowserContext]:
    ctx = person.new_context(viewport={"width": 1280, "height": 900})
    ctx.set_default_timeout(UI_TIMEOUT_MS)
    try:
        yield ctx
    finally:
        ctx.close()


def login_url(service: ServiceInfo) -> str:
    """A one-time login link, asked for with the owner token (an agent's is OWNER_ONLY)."""
    token = (service.home / "config" / "owner-token").read_text().strip()
    with httpx.Client(base_url=service.base_url, timeout=30, verify=LOOPBACK_TLS) as owner:
        r = owner.post("/ui-codes", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200, r.text
    url: str = r.json()["url"]
    return url


def logged_in(context: BrowserContext, service: ServiceInfo) -> Page:
    page = context.new_page()
    page.goto(login_url(service))
    expect(page.locator("#main")).to_be_visible()
    assert page.url.endswith("/ui"), "the key must leave the address bar"
    return page


def open_tab(agent: httpx.Client, url: str) -> str:
    r = agent.post("/tabs/open", json={"url": url})
    assert r.status_code == 200, r.text
    target_id: str = r.json()["targetId"]
    return target_id


def tab_item(page: Page, target_id: str) -> Any:
    return page.locator(f'li.tab[data-target-id="{target_id}"]')


# -- login ----------------------------------------------------------------------------------


def test_a_login_code_works_once(context: BrowserContext, agent: httpx.Client,
                                 person: Browser, ops: ServiceInfo) -> None:
    r = agent.post("/ui-codes")
    assert (r.status_code, r.json()["code"]) == (403, "OWNER_ONLY"), r.text
    url = login_url(ops)
    page = context.new_page()
    page.goto(url)
    expect(page.locator("#main")).to_be_visible()
    expect(page.locator(".profile .state")).to_have_text("running")
    cookie = next(c for c in context.cookies() if c["name"] == "browserd_ui")
    assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == (True, "Strict", "/ui")
    # The same link in another browser (profile): refused, and no session.
    other = person.new_context()
    try:
        again = other.new_page()
        response = again.goto(url)
        assert response is not None and response.status == 401
        expect(again.locator("body")).to_contain_text("already used or has expired")
        assert not [c for c in other.cookies() if c["name"] == "browserd_ui"]
    finally:
        other.close()


def test_the_page_without_a_login_says_how_to_get_one(context: BrowserContext,
                                                      ops: ServiceInfo) -> None:
    page = context.new_page()
    page.goto(f"{ops.base_url}/ui")
    expect(page.locator("#login")).to_be_visible()
    expect(page.locator("#login")).to_contain_text("browserd ui")
    expect(page.locator("#main")).to_be_hidden()


# -- the session is the page's, the token the agent's -----------------------------------------


def test_the_bearer_token_is_never_a_ui_session(ops: ServiceInfo, agent: httpx.Client) -> None:
    for path in ("/ui/api/state", "/ui/api/thumbnail?targetId=x"):
        r = agent.get(path)
        assert (r.status_code, r.json()["code"]) == (401, "UNAUTHORIZED"), path
    r = agent.post("/ui/api/browser", json={"action": "stop"},
                   headers={"Origin": ops.base_url})
    assert r.status_code == 401
    assert agent.get("/status").json()["state"] == "running"


def test_the_ui_cookie_never_opens_an_agent_route(ops: ServiceInfo, agent: httpx.Client,
                                                 context: BrowserContext) -> None:
    page = logged_in(context, ops)
    cookie = next(c for c in context.cookies() if c["name"] == "browserd_ui")
    key = page.evaluate("localStorage.getItem('browserd-ui-key')")
    session = {"Cookie": f"browserd_ui={cookie['value']}", "X-Browserd-UI-Key": key}
    with httpx.Client(base_url=ops.base_url, timeout=30, verify=LOOPBACK_TLS) as raw:
        assert raw.get("/ui/api/state", headers=session).status_code == 200
        for method, path in (("GET", "/status"), ("GET", "/tabs"), ("POST", "/stop"),
                             ("GET", "/metrics"), ("POST", "/ui-codes")):
            r = raw.request(method, path, headers={**session, "Origin": ops.base_url})
            assert (r.status_code, r.json()["code"]) == (401, "UNAUTHORIZED"), path
        # The cookie alone (no key) is not a session either.
        r = raw.get("/ui/api/state", headers={"Cookie": session["Cookie"]})
        assert r.status_code == 401
    assert agent.get("/status").json()["state"] == "running"


def test_a_cross_origin_post_to_the_ui_is_refused(ops: ServiceInfo, agent: httpx.Client,
                                                 context: BrowserContext,
                                                 pages: PageServer) -> None:
    page = logged_in(context, ops)
    key = page.evaluate("localStorage.getItem('browserd-ui-key')")
    # Another local port is same-site, so the person's browser even sends the cookie.
    evil = context.new_page()
    evil.goto(pages.url("/hello.html"))
    outcome = evil.evaluate("""async ([base, key]) => {
        const out = {};
        try {
          const r = await fetch(base + '/ui/api/browser', {method: 'POST', credentials: 'include',
            headers: {'Content-Type': 'application/json', 'X-Browserd-UI-Key': key},
            body: JSON.stringify({action: 'stop'})});
          out.cors = r.status;
        } catch (e) { out.cors = 'blocked'; }
        await fetch(base + '/ui/api/browser', {method: 'POST', mode: 'no-cors',
          credentials: 'include', body: '{"action": "stop"}'});
        out.simple = 'sent';
        return out;
    }""", [ops.base_url, key])
    assert outcome == {"cors": "blocked", "simple": "sent"}
    with httpx.Client(base_url=ops.base_url, timeout=30, verify=LOOPBACK_TLS) as raw:
        cookie = next(c for c in context.cookies() if c["name"] == "browserd_ui")
        r = raw.post("/ui/api/browser", json={"action": "stop"}, headers={
            "Cookie": f"browserd_ui={cookie['value']}", "X-Browserd-UI-Key": key,
            "Origin": pages.base_url})
        assert (r.status_code, r.json()["code"]) == (403, "FORBIDDEN_ORIGIN")
    assert "refused POST '/ui/api/browser'" in ops.log_text()
    assert agent.get("/status").json()["state"] == "running"


# -- tabs, thumbnails, live view -------------------------------------------------------------


def test_the_tab_list_and_a_thumbnail_appear(context: BrowserContext, agent: httpx.Client,
                                            pages: PageServer, ops: ServiceInfo) -> None:
    target = open_tab(agent, pages.url("/ops_counter.html"))
    try:
        page = logged_in(context, ops)
        item = tab_item(page, target)
        # The title is page data: shown as text, never as markup.
        expect(item.locator(".tab-title")).to_have_text("Counter <b>not bold</b>")
        assert item.locator(".tab-title b").count() == 0
        expect(item.locator(".tab-url")).to_have_text(pages.url("/ops_counter.html"))
        page.wait_for_function(
            """id => { const img = document.querySelector(
                 `li.tab[data-target-id="${id}"] img.thumb`);
               return img && img.complete && img.naturalWidth > 0; }""", arg=target)
        size = item.locator("img.thumb").evaluate("i => [i.naturalWidth, i.naturalHeight]")
        assert size == [320, 180]
    finally:
        agent.post("/tabs/close", json={"targetId": target})


def live_click(page: Page, css_x: float, css_y: float) -> None:
    canvas = page.locator("#live-canvas")
    box = canvas.bounding_box()
    assert box is not None
    width = float(canvas.get_attribute("data-device-width") or 0)
    height = float(canvas.get_attribute("data-device-height") or 0)
    assert width > 0 and height > 0
    page.mouse.click(box["x"] + css_x / width * box["width"],
                     box["y"] + css_y / height * box["height"])


def open_live_view(page: Page, target: str) -> None:
    tab_item(page, target).locator("button.live").click()
    expect(page.locator("#live-status")).to_have_text("live")
    page.wait_for_function(
        "() => Number(document.querySelector('#live-canvas').dataset.frames) > 0")


def test_a_click_and_keys_in_the_live_view_reach_the_page(
    context: BrowserContext, agent: httpx.Client, pages: PageServer, ops: ServiceInfo
) -> None:
    target = open_tab(agent, pages.url("/ops_counter.html"))
    try:
        page = logged_in(context, ops)
        open_live_view(page, target)
        live_click(page, 400, 275)  # the middle of #hit (200..600 x 150..400)
        clicks = poll_sync(lambda: agent.post("/eval", json={
            "targetId": target, "js": "window.clicks"}).json()["result"], until=bool)
        assert len(clicks) == 1 and clicks[0]["trusted"] is True
        assert abs(clicks[0]["x"] - 400) <= 3 and abs(clicks[0]["y"] - 275) <= 3
        # The person's keys: focus the input by a click, then type.
        live_click(page, 400, 455)
        page.keyboard.type("hi!")
        page.keyboard.press("Backspace")
        value = poll_sync(lambda: agent.post("/eval", json={
            "targetId": target, "js": "document.querySelector('#typed').value"}
        ).json()["result"], until=lambda v: v == "hi")
        assert value == "hi"
        # A dialog is not in the picture: the page shows it, the person answers it.
        live_click(page, 800, 200)
        dialog = page.locator("#live-dialog")
        expect(dialog).to_be_visible()
        expect(dialog.locator(".dialog-message")).to_have_text("Really <b>leave</b>?")
        expect(dialog.locator(".dialog-prompt")).to_have_value("maybe")
        dialog.locator(".dialog-prompt").fill("yes, leave")
        dialog.locator(".dialog-accept").click()
        expect(dialog).to_be_hidden()
        answer = agent.post("/eval", json={"targetId": target, "js": "window.answer"})
        assert answer.json()["result"] == "yes, leave"
        page.locator("#live-close").click()
        expect(page.locator("#live")).to_be_hidden()
    finally:
        agent.post("/tabs/close", json={"targetId": target})


# -- handoff ----------------------------------------------------------------------------------


def test_a_handoff_shows_first_and_a_persons_done_ends_the_agents_wait(
    context: BrowserContext, agent: httpx.Client, ops: ServiceInfo, pages: PageServer
) -> None:
    first = open_tab(agent, pages.url("/hello.html"))
    second = open_tab(agent, pages.url("/ops_verify.html"))
    try:
        page = logged_in(context, ops)
        r = agent.post("/handoff", json={"targetId": second,
                                         "reason": "Tick <i>I am not a robot</i>"})
        assert r.status_code == 200, r.text
        assert agent.post("/click", json={"targetId": second, "selector": "#human"}
                          ).json()["code"] == "HANDOFF_ACTIVE"
        assert agent.post("/eval", json={"targetId": first, "js": "1"}).status_code == 200
        listed = {t["targetId"]: t for t in agent.get("/tabs").json()["tabs"]}
        assert listed[second]["handoff"]["reason"] == "Tick <i>I am not a robot</i>"
        assert "handoff" not in listed[first]
        # Shown first, with the reason as text.
        first_item = page.locator("li.tab").first
        expect(first_item).to_have_attribute("data-target-id", second)
        expect(first_item.locator(".reason")).to_have_text("Tick <i>I am not a robot</i>")
        with ThreadPoolExecutor(1) as pool, ops.sync_client() as waiter:
            waiting = pool.submit(waiter.post, "/wait", json={
                "targetId": second, "handoff": True, "timeoutMs": 60_000})
            # The person does what the agent could not, then clicks Done.
            open_live_view(page, second)
            live_click(page, 640, 380)
            first_item.locator("button.done").click()
            r = waiting.result(timeout=60)
        assert r.status_code == 200, r.text
        assert r.json()["handoff"]["outcome"] == "done"
        expect(tab_item(page, second).locator(".handoff-banner")).to_have_count(0)
        assert "handoff" not in {t["targetId"]: t for t in agent.get("/tabs").json()["tabs"]
                                 }[second]
        r = agent.post("/click", json={"targetId": second, "selector": "#human"})
        assert r.status_code == 200, r.text
        assert "who=ui:" in (ops.home / "logs" / "audit.log").read_text()
    finally:
        for target in (first, second):
            agent.post("/tabs/close", json={"targetId": target})


def test_the_agent_can_withdraw_its_handoff(agent: httpx.Client, pages: PageServer) -> None:
    target = open_tab(agent, pages.url("/hello.html"))
    try:
        assert agent.post("/handoff", json={"targetId": target, "reason": "x"}).status_code == 200
        assert agent.post("/navigate", json={"targetId": target, "url": pages.url("/lead_a.html")}
                          ).json()["code"] == "HANDOFF_ACTIVE"
        r = agent.request("DELETE", "/handoff", json={"targetId": target})
        assert r.json() == {"ok": True, "targetId": target, "ended": True}
        r = agent.post("/wait", json={"targetId": target, "handoff": True})
        assert r.json()["handoff"]["outcome"] == "cancelled"
        assert agent.post("/navigate", json={"targetId": target,
                                             "url": pages.url("/lead_a.html")}).status_code == 200
    finally:
        agent.post("/tabs/close", json={"targetId": target})


def test_the_docs_screenshot_shows_a_handoff_and_the_live_view(
    context: BrowserContext, agent: httpx.Client, pages: PageServer, ops: ServiceInfo
) -> None:
    tabs = [open_tab(agent, pages.url(p)) for p in ("/hello.html", "/ops_counter.html",
                                                     "/ops_verify.html")]
    reason = "A CAPTCHA: please tick the box, then Done"
    try:
        r = agent.post("/handoff", json={"targetId": tabs[2], "reason": reason})
        assert r.status_code == 200, r.text
        page = logged_in(context, ops)
        for target in tabs:
            page.wait_for_function(
                """id => { const img = document.querySelector(
                     `li.tab[data-target-id="${id}"] img.thumb`);
                   return img && img.complete && img.naturalWidth > 0; }""", arg=target)
        open_live_view(page, tabs[2])
        # What the screenshot shows: the handed-over tab first, with its reason, the two
        # others without a banner, and the live view of the handed-over tab.
        first_item = page.locator("li.tab").first
        expect(first_item).to_have_attribute("data-target-id", tabs[2])
        expect(first_item.locator(".handoff-banner .reason")).to_have_text(reason)
        for target in tabs[:2]:
            expect(tab_item(page, target)).to_have_count(1)
            expect(tab_item(page, target).locator(".handoff-banner")).to_have_count(0)
        expect(page.locator("#live")).to_be_visible()
        expect(page.locator("#live-title")).to_have_text("Verify you are human")
        assert agent.post("/click", json={"targetId": tabs[2], "selector": "body"}
                          ).json()["code"] == "HANDOFF_ACTIVE"
        if os.environ.get("BROWSERD_UPDATE_DOCS") == "1":
            page.screenshot(path=str(DOCS_SCREENSHOT), full_page=True)
    finally:
        agent.request("DELETE", "/handoff", json={"targetId": tabs[2]})
        for target in tabs:
            agent.post("/tabs/close", json={"targetId": target})


# -- the agent's ops routes --------------------------------------------------------------------


def test_metrics_parse_and_count(agent: httpx.Client, ops: ServiceInfo) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    assert agent.get("/tabs").status_code == 200
    with httpx.Client(base_url=ops.base_url, timeout=30, verify=LOOPBACK_TLS) as anonymous:
        assert anonymous.get("/metrics").status_code == 401
    r = agent.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    got = {(s.name, tuple(sorted(s.labels.items()))): s.value
           for family in text_string_to_metric_families(r.text) for s in family.samples}
    profile = (("profile", ops.profile),)
    assert got[("browserd_http_requests_total",
                (("method", "GET"), ("route", "/tabs"), ("status", "200")))] >= 1
    assert got[("browserd_http_request_duration_seconds_count", (("route", "/tabs"),))] >= 1
    assert got[("browserd_browser_up", profile)] == 1
    assert got[("browserd_browser_state", (*profile, ("state", "running")))] == 1
    assert ("browserd_cdp_pending_commands", profile) in got
    assert got[("browserd_tabs", profile)] == len(agent.get("/tabs").json()["tabs"])
    for name in ("browserd_browser_restarts_total", "browserd_media_bytes",
                 "browserd_download_bytes", "browserd_ui_sessions"):
        assert any(key[0] == name for key in got), name


def test_browserd_ui_prints_a_link_that_logs_in(ops: ServiceInfo, context: BrowserContext
                                                ) -> None:
    import subprocess
    import sys

    env = {**os.environ, "BROWSERD_HOME": str(ops.home), "BROWSERD_CONTROL_URL": ops.base_url,
           "DISPLAY": ""}
    env.pop("WAYLAND_DISPLAY", None)
    done = subprocess.run([sys.executable, "-m", "browserd", "ui", "--no-open"], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    url = done.stdout.strip()
    assert url.startswith(f"{ops.base_url}/ui/login?code=")
    assert "works once" in done.stderr
    page = context.new_page()
    page.goto(url)
    expect(page.locator("#main")).to_be_visible()


def test_a_failed_browser_shows_its_last_error_and_stderr_tail(
    tmp_path: Path, context: BrowserContext
) -> None:
    script = tmp_path / "failing-browser"
    script.write_text("#!/bin/sh\necho 'fatal: <img src=x onerror=alert(1)> no display' >&2\n"
                      "exit 1\n")
    script.chmod(0o755)
    broken = start_service(tmp_path / "home", wait_browser=False, env={
        "BROWSERD_EXECUTABLE": str(script), "BROWSERD_RESTART_BUDGET": "1"})
    try:
        with broken.sync_client() as agent:
            poll_sync(lambda: agent.get("/status").json()["state"], until=lambda s: s == "failed")
            page = logged_in(context, broken)
            expect(page.locator(".profile .state")).to_have_text("failed")
            expect(page.locator(".profile .restarts")).to_have_text("1")
            expect(page.locator(".profile .error")).to_contain_text("giving up")
            stderr = page.locator(".profile .error pre.stderr")
            expect(stderr).to_contain_text("fatal: <img src=x onerror=alert(1)> no display")
            assert page.locator(".profile .error img").count() == 0
    finally:
        stop_service(broken)


# -- start / stop (last: it stops this module's browser) ---------------------------------------


def test_the_stop_and_start_buttons(context: BrowserContext, agent: httpx.Client,
                                    ops: ServiceInfo) -> None:
    page = logged_in(context, ops)
    page.locator("button[data-action=stop]").click()
    expect(page.locator(".profile .state")).to_have_text("stopped")
    assert agent.get("/status").json()["state"] == "stopped"
    assert agent.get("/healthz").json()["browser"] == "closed"
    page.locator("button[data-action=start]").click()
    expect(page.locator(".profile .state")).to_have_text("running")
    assert agent.get("/status").json()["state"] == "running"
