"""The ops page's audit log hides /healthz polling unless its toggle shows it (Playwright)."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect, sync_playwright
from supervision.chromium import REAL_CHROMIUM
from supervision.harness import LOOPBACK_TLS

from tests.conftest import ServiceInfo

pytestmark = pytest.mark.chromium


def test_the_audit_log_hides_health_checks_until_asked(service: ServiceInfo) -> None:
    owner_token = (service.home / "config" / "owner-token").read_text().strip()
    with httpx.Client(base_url=service.base_url, timeout=30, verify=LOOPBACK_TLS) as http:
        for _ in range(5):
            assert http.get("/healthz").status_code == 200
        assert http.get("/tabs", headers=service.headers).status_code == 200
        r = http.post("/ui-codes", headers={"Authorization": f"Bearer {owner_token}"})
        assert r.status_code == 200, r.text
        login = r.json()["url"]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=REAL_CHROMIUM, headless=True)
        try:
            page = browser.new_page()
            page.set_default_timeout(20_000)
            page.goto(login)
            audit = page.locator("#audit")
            expect(audit).to_contain_text("GET /tabs")
            assert "/healthz" not in audit.inner_text()
            page.get_by_label("show health checks (/healthz)").check()
            expect(audit).to_contain_text("GET /healthz")
            page.get_by_label("show health checks (/healthz)").uncheck()
            expect(audit).not_to_contain_text("/healthz")
        finally:
            browser.close()
