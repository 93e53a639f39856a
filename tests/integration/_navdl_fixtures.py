"""What the downloads-and-navigation tests share (tests/integration/test_navdl*.py):
one private service per test module (``navdl_service``), and ``api``/``tab`` on it
in place of the session-wide ones.

The service has its own ``HOME`` (a temp dir, so a download that escaped to
``~/Downloads`` would be seen) and a 1 MiB ``download_max_bytes``. Pages:
tests/pages/dl_auto.html and nav_attack.html plus the dynamic routes registered
here (attachments, a big and an unknown-size download, a two-hop redirect).

The "blocked" target of S13 is the service's own control port: every request
that reaches it without the token is refused *and logged* by the guard
("refused GET '/navblocked-…' from …"), so a blocked navigation that still left
the browser would be seen in the service log (:func:`arrived`).

The fixtures are imported by name into each test module (and listed in its
``__all__``), as pytest finds fixtures in the module that uses them: a module
scope is then one service per test module.
"""

from __future__ import annotations

import http.server
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.conftest import PageServer, ServiceInfo, add_route, start_service, stop_service

__all__ = [
    "BIG_BYTES",
    "MAX_BYTES",
    "api",
    "arrived",
    "attack_page",
    "blocked_url",
    "downloads_dir",
    "navdl_service",
    "tab",
    "user_home",
]

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


def blocked_url(svc: ServiceInfo, tag: str) -> str:
    return f"http://127.0.0.1:{svc.port}/navblocked-{tag}"


def arrived(svc: ServiceInfo, tag: str) -> bool:
    """Did a request for /navblocked-<tag> reach the control port (it logs refusals)?"""
    return f"refused GET '/navblocked-{tag}'" in svc.log_text()


async def attack_page(api: httpx.AsyncClient, tab: str, pages: PageServer, target: str) -> None:
    r = await api.post("/navigate", json={"targetId": tab,
                                          "url": pages.url("/nav_attack.html") + "?to=" + target})
    assert r.status_code == 200, r.text
