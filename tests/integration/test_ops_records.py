"""The ops page's Records panel in a real Chromium (Playwright), against a real browserd.

An agent (plain HTTP with its token) records a short form fill, with a video; the person
(logged in to /ui as tests/integration/test_ops_page.py does) opens the record's timeline:
its steps with action, target, outcome and duration, before/after thumbnails, the console
error and the failed request of the last step, the exports and the video. The page's
hostile names stay text. Set BROWSERD_UPDATE_DOCS=1 to rewrite
docs/images/records-timeline.png.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect
from supervision.harness import LOOPBACK_TLS

from tests.conftest import PageServer, ServiceInfo, add_route, start_service, stop_service
from tests.integration.helpers import html_route

pytestmark = pytest.mark.chromium

DOCS_SCREENSHOT = Path(__file__).parents[2] / "docs" / "images" / "records-timeline.png"
UI_TIMEOUT_MS = 20_000
HOSTILE = '<img src=x onerror="window.__pwned=1">Pay'

_FORM = f"""<!doctype html><html><head><title>Checkout &lt;b&gt;shop&lt;/b&gt;</title>
<style>body {{ font: 16px sans-serif; margin: 2em; }} label {{ display: block;
margin: 0.6em 0; }}</style></head><body><h1>Checkout</h1>
<form action="/ops-records-done" method="get">
<label>Full name <input name="fullname"></label>
<label>Plan <select name="plan"><option value="free">Free</option>
<option value="pro">Pro</option></select></label>
<button type="submit" aria-label='{HOSTILE}'>Pay</button></form></body></html>"""
_DONE = """<!doctype html><html><head><title>Thanks</title></head><body><h1>Thanks!</h1>
<script>console.error('payment widget failed to load'); fetch('/ops-records-missing.js');
</script></body></html>"""

add_route("/ops-records-form", html_route(_FORM))
add_route("/ops-records-done", html_route(_DONE))


@pytest.fixture(scope="module")
def ops(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceInfo]:
    info = start_service(tmp_path_factory.mktemp("opsrec"))
    yield info
    stop_service(info)



@pytest.fixture
def context(person: Browser) -> Iterator[BrowserContext]:
    ctx = person.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    ctx.set_default_timeout(UI_TIMEOUT_MS)
    try:
        yield ctx
    finally:
        ctx.close()


def logged_in(context: BrowserContext, service: ServiceInfo) -> Page:
    """The ops page with a session: a one-time code asked for with the owner token."""
    token = (service.home / "config" / "owner-token").read_text().strip()
    with httpx.Client(base_url=service.base_url, timeout=30, verify=LOOPBACK_TLS) as owner:
        r = owner.post("/ui-codes", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200, r.text
    page = context.new_page()
    page.goto(r.json()["url"])
    expect(page.locator("#main")).to_be_visible()
    return page


def record_a_form_fill(agent: httpx.Client, pages: PageServer) -> str:
    """The agent fills the form in a recorded session of its own (with a video)."""
    def ok(path: str, **body: object) -> dict[str, object]:
        r = agent.post(path, json=body)
        assert r.status_code == 200, r.text
        answer: dict[str, object] = r.json()
        return answer

    tab = str(ok("/tabs/open", url="about:blank")["targetId"])
    assert agent.get("/network", params={"targetId": tab}).status_code == 200  # recording on
    record = ok("/record/start", targetId=tab, video=True)["record"]
    assert isinstance(record, dict)
    ok("/navigate", targetId=tab, url=pages.url("/ops-records-form"))
    ok("/type", targetId=tab, role="textbox", name="Full name", text="Ada Lovelace")
    ok("/select", targetId=tab, role="combobox", name="Plan", values=["pro"])
    ok("/click", targetId=tab, role="button", name=HOSTILE)
    ok("/wait", targetId=tab, text="Thanks!")
    ok("/record/stop")
    agent.post("/tabs/close", json={"targetId": tab})
    return str(record["id"])


def test_the_timeline_shows_the_recorded_steps(context: BrowserContext, ops: ServiceInfo,
                                               pages: PageServer, tmp_path: Path) -> None:
    with ops.sync_client() as agent:
        record_id = record_a_form_fill(agent, pages)
    page = logged_in(context, ops)
    item = page.locator(f'li.record-item[data-record-id="{record_id}"]')
    expect(item).to_contain_text("5 steps")
    expect(item).to_contain_text("video done")
    item.get_by_role("button", name="Timeline").click()
    view = page.locator("#record-view")
    expect(view).to_have_attribute("data-record-id", record_id)
    steps = view.locator("li.step")
    expect(steps).to_have_count(5)
    expect(steps.locator(".step-kind")).to_have_text(["navigate", "type", "select", "click",
                                                      "wait"])
    expect(steps.nth(1).locator(".step-target")).to_have_text('textbox "Full name"')
    expect(steps.nth(2).locator(".step-target")).to_have_text('combobox "Plan"')
    expect(steps.locator(".step-outcome")).to_have_text(["ok"] * 5)
    expect(steps.locator(".step-duration")).to_have_text([re.compile(r"^\d+ ms$")] * 5)
    # The page's hostile name is text, never markup.
    expect(steps.nth(3).locator(".step-target")).to_have_text(f'button "{HOSTILE}"')
    assert steps.nth(3).locator(".step-target img").count() == 0
    assert page.evaluate("window.__pwned") is None
    # The console error and the failed request of the page the click led to.
    expect(steps.nth(3).locator(".step-console")).to_have_text(
        "error: payment widget failed to load")
    expect(steps.nth(3).locator(".step-requests")).to_contain_text("ops-records-missing.js")
    expect(steps.nth(3).locator(".step-requests")).to_contain_text("404")
    # Before/after thumbnails, loaded from /ui/api/records/<id>/shots/<name>.
    page.wait_for_function("""() => {
        const shots = [...document.querySelectorAll('#record-view img.shot')];
        return shots.length >= 8 && shots.every((img) => img.complete && img.naturalWidth > 0);
    }""")
    # The exports download; the video plays here.
    with page.expect_download() as got:
        view.get_by_role("button", name="HTML page").click()
    saved = tmp_path / "record.html"
    got.value.save_as(saved)
    assert saved.read_text().lower().startswith("<!doctype html")
    with page.expect_download() as got:
        view.get_by_role("button", name="Playwright trace").click()
    assert got.value.suggested_filename == f"{record_id}.zip"
    with page.expect_download() as got:
        view.get_by_role("button", name="Video", exact=True).click()
    video_file = tmp_path / "record.webm"
    got.value.save_as(video_file)
    assert video_file.read_bytes()[:4] == bytes.fromhex("1A45DFA3")
    view.get_by_role("button", name="Play video").click()
    page.wait_for_function("() => { const v = document.querySelector('#record-view video');"
                           " return v && v.readyState >= 1 && v.videoWidth > 0; }")
    if os.environ.get("BROWSERD_UPDATE_DOCS") == "1":
        DOCS_SCREENSHOT.parent.mkdir(exist_ok=True)
        view.locator(".record-player").evaluate("node => node.replaceChildren()")
        page.locator("#records").screenshot(path=str(DOCS_SCREENSHOT))


def test_the_records_routes_need_the_session_not_the_token(ops: ServiceInfo) -> None:
    with ops.sync_client() as agent:
        for path in ("/ui/api/records", "/ui/api/records/rec-x",
                     "/ui/api/records/rec-x/export?format=html"):
            r = agent.get(path)
            assert (r.status_code, r.json()["code"]) == (401, "UNAUTHORIZED"), path


def test_an_unknown_record_is_404_on_the_page(context: BrowserContext, ops: ServiceInfo
                                              ) -> None:
    page = logged_in(context, ops)
    status = page.evaluate("""async () => {
        const key = localStorage.getItem('browserd-ui-key');
        const r = await fetch('/ui/api/records/rec-20200101-000000-0123456789abcdef',
                              {headers: {'X-Browserd-UI-Key': key}});
        return [r.status, (await r.json()).code, r.headers.get('content-security-policy')];
    }""")
    assert status[:2] == [404, "NOT_FOUND"] and "default-src 'self'" in status[2]
