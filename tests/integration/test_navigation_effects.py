"""/navigate and history moves report effects like input actions: navigated, downloads, blocked.

A history move is watched by the same effects Observer as a click: a reload
whose response has become an attachment reports the download (the page
stays), and a reload whose server now redirects to a blocked URL reports the
block (the request never arrives: the service's own control port logs every
request that reaches it, as in test_navdl). The pages are dynamic routes
(``add_route``) that answer differently on their second request. (A move
*back* to such a page is restored from the back/forward cache by Chromium
156 — even with ``Cache-Control: no-store`` — and asks no server.)
"""

from __future__ import annotations

import http.server
import secrets
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from tests.conftest import PageServer, ServiceInfo, add_route
from tests.integration.helpers import js
from tests.integration.test_cli import ok as cli_ok
from tests.integration.test_navigation import goto, ok

pytestmark = pytest.mark.chromium

PAGE = b"<!doctype html><title>flip</title><p>first answer</p>"


def flipping(then: Any) -> Any:
    """A handler: an HTML page (not cacheable) on the first request, ``then`` after."""
    seen: list[str] = []

    def handler(h: http.server.SimpleHTTPRequestHandler) -> None:
        seen.append(h.path)
        if len(seen) > 1:
            then(h)
            return
        h.send_response(200)
        h.send_header("Content-Type", "text/html; charset=utf-8")
        h.send_header("Cache-Control", "no-store")
        h.send_header("Content-Length", str(len(PAGE)))
        h.end_headers()
        h.wfile.write(PAGE)

    return handler


def attachment(h: http.server.SimpleHTTPRequestHandler) -> None:
    body = b"report,1\n"
    h.send_response(200)
    h.send_header("Content-Type", "text/csv")
    h.send_header("Content-Disposition", 'attachment; filename="report.csv"')
    h.send_header("Cache-Control", "no-store")
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


def redirect_to(url: str) -> Any:
    def handler(h: http.server.SimpleHTTPRequestHandler) -> None:
        h.send_response(302)
        h.send_header("Location", url)
        h.send_header("Cache-Control", "no-store")
        h.send_header("Content-Length", "0")
        h.end_headers()
    return handler


async def test_a_move_reports_what_it_navigated_to(api: httpx.AsyncClient, tab: str,
                                                   pages: PageServer) -> None:
    with trio.fail_after(60):
        a, b = pages.url("/nav_a.html"), pages.url("/nav_b.html")
        await goto(api, tab, a)
        await goto(api, tab, b)
        data = await ok(api, "/back", tab)
        assert data["effects"] == {"navigated": a}, data
        data = await ok(api, "/reload", tab, waitUntil="load")
        assert data["effects"] == {"navigated": a}, data


async def test_a_reload_that_became_a_download_reports_it(
        api: httpx.AsyncClient, tab: str, pages: PageServer, service: ServiceInfo,
        tmp_path: Path) -> None:
    path = f"/nav_flip_{secrets.token_hex(4)}"
    add_route(path, flipping(attachment))
    with trio.fail_after(60):
        await goto(api, tab, pages.url(path))
        data = await ok(api, "/reload", tab)
        downloads = data["effects"].get("downloads")
        assert downloads and downloads[0]["suggestedFilename"] == "report.csv", data
        assert "navigated" not in data["effects"], data
        # The page stayed: the answer names it, and it is still the first answer.
        assert data["url"] == pages.url(path) and data["title"] == "flip"
        r = await api.post("/eval", json={"targetId": tab, "js": "document.body.innerText"})
        assert r.json()["result"] == "first answer"
        record = downloads[0]["id"]
        while True:  # the download itself is kept like any other
            listed = (await api.get("/downloads")).json()["downloads"]
            if any(d["id"] == record and d["state"] == "completed" for d in listed):
                break
            await trio.sleep(0.1)
        # The generated CLI has the download routes too.
        run = await cli_ok(service, "downloads", "--target", tab)
        assert any(line.startswith(f"{record}  completed  'report.csv'")
                   for line in run.out.splitlines()), run.out
        out = tmp_path / "report.csv"
        await cli_ok(service, "download", record, "--out", str(out))
        assert out.read_bytes() == b"report,1\n"


async def test_a_reload_redirected_to_a_blocked_url_reports_the_block(
        api: httpx.AsyncClient, tab: str, pages: PageServer, service: ServiceInfo) -> None:
    tag = secrets.token_hex(4)
    blocked = f"http://127.0.0.1:{service.port}/navblocked-{tag}"
    path = f"/nav_flip_{tag}"
    add_route(path, flipping(redirect_to(blocked)))
    with trio.fail_after(60):
        await goto(api, tab, pages.url(path))
        data = await ok(api, "/reload", tab)
        assert [(b["url"], b["reason"]) for b in data["effects"].get("blocked", [])] == [
            (blocked, "port")], data
        assert data["effects"]["blocked"][0]["redirectedFrom"] == pages.url(path)
    assert f"refused GET '/navblocked-{tag}'" not in service.log_text()


async def test_navigate_reports_what_it_navigated_to_and_a_download_it_became(
        api: httpx.AsyncClient, tab: str, pages: PageServer) -> None:
    path = f"/nav_attachment_{secrets.token_hex(4)}"
    add_route(path, attachment)
    with trio.fail_after(60):
        a = pages.url("/nav_a.html")
        data = await ok(api, "/navigate", tab, url=a)
        assert data["effects"] == {"navigated": a}, data
        # A URL that answers an attachment: no document, the tab stays on its page.
        data = await ok(api, "/navigate", tab, url=pages.url(path))
        downloads = data["effects"].get("downloads")
        assert downloads and downloads[0]["suggestedFilename"] == "report.csv", data
        assert downloads[0]["url"] == pages.url(path)
        assert "navigated" not in data["effects"], data
        assert data["url"] == a and data["title"] == "nav a"
        assert await js(api, tab, "location.href") == a
