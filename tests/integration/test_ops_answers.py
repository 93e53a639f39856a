"""The ops page's "Waiting for you" panel: the person answers held actions and tab requests.

One service for the module, with a confirm rule (``BROWSERD_CONFIRM``: clicks
on a "pay" button wait for the person) and a live profile ``mine`` attached to
a second Chromium that plays the person's own browser (test_live's
:class:`UserBrowser`). The person's ops page runs in a third, driven by
Playwright. Set BROWSERD_UPDATE_DOCS=1 to rewrite docs/ops-page-confirm.png.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from playwright.sync_api import Browser, BrowserContext, Page, expect
from supervision.harness import LOOPBACK_TLS

from tests.conftest import PageServer, ServiceInfo, add_route, start_service, stop_service
from tests.integration.helpers import html_route
from tests.integration.test_live import HUMAN_PAGE, UserBrowser

pytestmark = pytest.mark.chromium

DOCS_SCREENSHOT = Path(__file__).parents[2] / "docs" / "ops-page-confirm.png"
UI_TIMEOUT_MS = 20_000
MINE = {"X-Browserd-Profile": "mine"}
SHOP = """<!doctype html><title>shop</title>
<p id="paid">0</p>
<button onclick="document.getElementById('paid').textContent =
  String(Number(document.getElementById('paid').textContent) + 1)"
>Pay &lt;b&gt;now&lt;/b&gt;</button>"""
add_route("/ops-answers/shop", html_route(SHOP))


@pytest.fixture(scope="module")
def user_browser(tmp_path_factory: pytest.TempPathFactory,
                 pages: PageServer) -> Iterator[UserBrowser]:
    for n in (1, 2, 3):
        add_route(f"/ops-answers/live/human{n}", html_route(HUMAN_PAGE.format(n=n)))
    browser = UserBrowser(tmp_path_factory.mktemp("user-chrome"),
                          [pages.url(f"/ops-answers/live/human{n}") for n in (1, 2, 3)])
    browser.launch()
    try:
        trio.run(browser.wait_ready)
        yield browser
    finally:
        browser.kill()


@pytest.fixture(scope="module")
def ops(tmp_path_factory: pytest.TempPathFactory,
        user_browser: UserBrowser) -> Iterator[ServiceInfo]:
    home = tmp_path_factory.mktemp("ops-answers")
    (home / "config").mkdir(mode=0o700)
    (home / "config" / "config.toml").write_text(f"""
[profiles.mine]
driver = "live"
user_data_dir = "{user_browser.directory}"
approval_timeout_s = 10
""")
    info = start_service(home, timeout=60, env={
        "BROWSERD_CONFIRM": json.dumps([{"kind": "click", "name": "pay"}])})
    yield info
    stop_service(info)



@pytest.fixture
def agent(ops: ServiceInfo) -> Iterator[httpx.Client]:
    with ops.sync_client() as client:
        yield client


@pytest.fixture
def owner(ops: ServiceInfo) -> Iterator[httpx.Client]:
    token = (ops.home / "config" / "owner-token").read_text().strip()
    with httpx.Client(base_url=ops.base_url, timeout=60, verify=LOOPBACK_TLS,
                      headers={"Authorization": f"Bearer {token}"}) as client:
        yield client


@pytest.fixture
def context(person: Browser) -> Iterator[BrowserContext]:
    ctx = person.new_context(viewport={"width": 1100, "height": 800})
    ctx.set_default_timeout(UI_TIMEOUT_MS)
    try:
        yield ctx
    finally:
        ctx.close()


def logged_in(context: BrowserContext, owner: httpx.Client) -> Page:
    """The person's ops page, logged in with a code the owner token asked for."""
    r = owner.post("/ui-codes")
    assert r.status_code == 200, r.text
    page = context.new_page()
    page.goto(r.json()["url"])
    expect(page.locator("#main")).to_be_visible()
    return page


def open_shop(agent: httpx.Client, pages: PageServer) -> str:
    r = agent.post("/tabs/open", json={"url": pages.url("/ops-answers/shop")})
    assert r.status_code == 200, r.text
    target: str = r.json()["targetId"]
    return target


def paid(agent: httpx.Client, tab: str) -> str:
    r = agent.post("/eval", json={"targetId": tab,
                                  "js": "document.getElementById('paid').textContent"})
    assert r.status_code == 200, r.text
    value: str = r.json()["result"]
    return value


def held_pay_click(agent: httpx.Client, tab: str) -> str:
    """The agent clicks "Pay": held for the person (202), nothing reached the page."""
    r = agent.get("/snapshot", params={"targetId": tab, "nodes": "true"})
    assert r.status_code == 200, r.text
    ref = next(n["ref"] for n in r.json()["nodes"]
               if n["role"] == "button" and n["name"] == "Pay <b>now</b>")
    r = agent.post("/click", json={"targetId": tab, "ref": ref})
    assert (r.status_code, r.json()["code"]) == (202, "CONFIRMATION_REQUIRED"), r.text
    held: str = r.json()["confirmation"]["id"]
    return held


def human_ids(user: UserBrowser) -> dict[str, str]:
    return {p["url"].rsplit("/", 1)[1]: p["id"] for p in trio.run(user.pages)
            if "/ops-answers/live/human" in p["url"]}


def start_mine(agent: httpx.Client) -> None:
    r = agent.post("/start", headers=MINE)
    assert r.status_code == 200, r.text


def ask_for_a_tab(agent: httpx.Client, reason: str) -> str:
    r = agent.post("/tabs/request", headers=MINE,
                   json={"reason": reason, "url": "https://shop.example/invoice"})
    assert r.status_code == 200 and r.json()["state"] == "pending", r.text
    request_id: str = r.json()["requestId"]
    return request_id


# -- held actions -----------------------------------------------------------------------------


def test_the_person_approves_then_denies_a_held_click_on_the_page(
    context: BrowserContext, agent: httpx.Client, owner: httpx.Client, ops: ServiceInfo,
    pages: PageServer
) -> None:
    tab = open_shop(agent, pages)
    try:
        page = logged_in(context, owner)
        expect(page.locator("#waiting")).to_be_hidden()  # nothing pending: no panel
        held = held_pay_click(agent, tab)
        item = page.locator(f'li.confirmation[data-confirmation-id="{held}"]')
        expect(page.locator("#waiting h2")).to_have_text("Waiting for you (1)")
        # The summary names the button as the page wrote it: text, never markup.
        expect(item.locator(".summary")).to_contain_text("click 'Pay <b>now</b>'")
        assert item.locator(".summary b").count() == 0
        expect(item.locator(".origin")).to_have_text(pages.base_url)
        # The agent's token is no session (nor is the owner token): 401, and it stays held.
        for client in (agent, owner):
            r = client.post("/ui/api/confirmation", json={"id": held, "approve": True},
                            headers={"Origin": ops.base_url})
            assert (r.status_code, r.json()["code"]) == (401, "UNAUTHORIZED"), r.text
        r = owner.get("/confirmations", params={"pending": "true"})
        assert [h["id"] for h in r.json()["confirmations"]] == [held], r.text
        assert paid(agent, tab) == "0"

        # The agent waits; the person clicks Approve; the wait runs the click once.
        with ThreadPoolExecutor(1) as pool, ops.sync_client() as waiter:
            waiting = pool.submit(waiter.post, "/wait", json={"confirmation": held,
                                                              "timeoutMs": 60_000})
            item.locator("button.approve").click()
            r = waiting.result(timeout=60)
        assert r.status_code == 200, r.text
        assert r.json()["result"]["ok"] is True
        assert r.json()["confirmation"]["state"] == "approved"
        assert paid(agent, tab) == "1"
        expect(page.locator("#waiting")).to_be_hidden()

        # A second one, denied on the page: the agent's wait is 403 DENIED; no second payment.
        again = held_pay_click(agent, tab)
        page.locator(f'li.confirmation[data-confirmation-id="{again}"] button.deny').click()
        expect(page.locator("#waiting")).to_be_hidden()
        r = agent.post("/wait", json={"confirmation": again, "timeoutMs": 10_000})
        assert (r.status_code, r.json()["code"]) == (403, "DENIED"), r.text
        assert paid(agent, tab) == "1"
        # Answered once: the owner route now says so (the same board).
        r = owner.post(f"/confirmations/{again}", json={"approve": True})
        assert r.status_code == 409, r.text
        audit = (ops.home / "logs" / "audit.log").read_text()
        assert f"POST /ui/api/confirmation confirmation={held} answer=approve outcome=ok" in audit
        assert f"POST /ui/api/confirmation confirmation={again} answer=deny outcome=ok" in audit
    finally:
        agent.post("/tabs/close", json={"targetId": tab})


# -- tab requests ----------------------------------------------------------------------------


def test_the_person_gives_a_tab_of_theirs_and_denies_another_request(
    context: BrowserContext, agent: httpx.Client, owner: httpx.Client, ops: ServiceInfo,
    user_browser: UserBrowser
) -> None:
    start_mine(agent)
    humans = human_ids(user_browser)
    page = logged_in(context, owner)
    request_id = ask_for_a_tab(agent, "read the <i>invoice</i>")
    item = page.locator(f'li.tab-request[data-request-id="{request_id}"]')
    expect(item.locator(".reason")).to_have_text("read the <i>invoice</i>")
    assert item.locator(".reason i").count() == 0
    expect(item.locator(".hint-url")).to_have_text("https://shop.example/invoice")
    # The choice: the person's pages of that profile not offered yet (titles as text).
    options = item.locator("select.pick option")
    expect(options).to_have_count(len(pending_pages(page, request_id)))
    assert set(humans.values()) <= {o.get_attribute("value") for o in options.all()}
    expect(item.locator(f'option[value="{humans["human2"]}"]')).to_contain_text("human 2")

    with ThreadPoolExecutor(1) as pool, ops.sync_client() as waiter:
        waiting = pool.submit(waiter.post, "/wait", json={"tabRequest": request_id,
                                                          "timeoutMs": 60_000})
        item.locator("select.pick").select_option(humans["human2"])
        item.locator("button.approve").click()
        r = waiting.result(timeout=60)
    assert r.status_code == 200, r.text
    assert (r.json()["tabRequest"]["state"], r.json()["tabRequest"]["targetId"]) == (
        "approved", humans["human2"])
    expect(page.locator("#waiting")).to_be_hidden()
    try:
        r = agent.get("/tabs", headers=MINE)
        assert humans["human2"] in {t["targetId"] for t in r.json()["tabs"]}, r.text

        denied = ask_for_a_tab(agent, "and another one")
        page.locator(f'li.tab-request[data-request-id="{denied}"] button.deny').click()
        expect(page.locator("#waiting")).to_be_hidden()
        r = agent.post("/wait", json={"tabRequest": denied, "timeoutMs": 10_000})
        assert r.status_code == 200 and r.json()["tabRequest"]["state"] == "denied", r.text
        r = agent.post("/ui/api/tab-request", json={"requestId": denied, "deny": True},
                       headers={"Origin": ops.base_url})
        assert (r.status_code, r.json()["code"]) == (401, "UNAUTHORIZED"), r.text
        audit = (ops.home / "logs" / "audit.log").read_text()
        assert (f"POST /ui/api/tab-request request={request_id} answer=approve "
                f"tab={humans['human2']} outcome=ok") in audit
    finally:
        r = agent.post("/tabs/release", headers=MINE, json={"targetId": humans["human2"]})
        assert r.status_code == 200, r.text


def page_state(page: Page) -> dict[str, Any]:
    """``GET /ui/api/state`` as the page fetches it (its session cookie and key)."""
    state: dict[str, Any] = page.evaluate("""async () => (await fetch('/ui/api/state', {
        headers: {'X-Browserd-UI-Key': localStorage.getItem('browserd-ui-key')}})).json()""")
    return state


def pending_pages(page: Page, request_id: str) -> list[dict[str, str]]:
    """The state JSON's pending request: the pages of the person's it offers them to give."""
    request = next(r for r in page_state(page)["tabRequests"] if r["requestId"] == request_id)
    assert set(request) == {"requestId", "profile", "token", "reason", "url", "createdAt",
                            "pages"}
    assert (request["profile"], request["reason"], request["url"]) == (
        "mine", "read the <i>invoice</i>", "https://shop.example/invoice")
    pages: list[dict[str, str]] = request["pages"]
    assert pages and all(set(p) == {"targetId", "title", "url"} for p in pages)
    return pages


def test_the_docs_screenshot_shows_a_held_payment_and_a_tab_request(
    context: BrowserContext, agent: httpx.Client, owner: httpx.Client, pages: PageServer
) -> None:
    start_mine(agent)
    tab = open_shop(agent, pages)
    held = held_pay_click(agent, tab)
    request_id = ask_for_a_tab(agent, "Read the invoice to fill in the expense report")
    try:
        page = logged_in(context, owner)
        expect(page.locator("#waiting li.waiting-item")).to_have_count(2)
        shown = page_state(page)["confirmations"][0]
        assert set(shown) == {"id", "kind", "summary", "target", "token", "profile",
                              "createdAt"}
        assert (shown["id"], shown["kind"], shown["profile"]) == (held, "click", "clawd")
        if os.environ.get("BROWSERD_UPDATE_DOCS") == "1":
            box = page.locator(".profile-head").first.bounding_box()
            assert box is not None
            page.screenshot(path=str(DOCS_SCREENSHOT), clip={
                "x": 0, "y": 0, "width": 1100, "height": box["y"] + box["height"] + 12})
    finally:
        owner.post(f"/confirmations/{held}", json={"deny": True})
        owner.post(f"/tabs/requests/{request_id}", json={"deny": True})
        agent.post("/tabs/close", json={"targetId": tab})
