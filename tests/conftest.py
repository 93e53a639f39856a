"""Shared fixtures.

- ``service``: one real ``browserd serve`` subprocess (headless Chromium) for
  the whole session, on free ports under a temporary BROWSERD_HOME. Tests
  that need a private instance use :func:`start_service` themselves.
- ``api``: an httpx AsyncClient with the token, for one test.
- ``pages`` / ``other_origin``: local HTTP servers for test pages; the
  second is a different *site* (localhost vs 127.0.0.1), so its frames are
  out-of-process iframes in the first's pages.
"""

from __future__ import annotations

import functools
import http.server
import inspect
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest
import trio

# The service-launch helpers live with the fault drills (supervision/harness.py,
# supervision/chromium.py) and are re-exported here under their old names.
from supervision.chromium import CHROMIUM, REAL_CHROMIUM
from supervision.harness import ServiceInfo, free_port_pair, start_service, stop_service

__all__ = ["CHROMIUM", "ServiceInfo", "free_port_pair", "start_service", "stop_service"]

# The suite's shared helpers (tests/*/helpers.py and the _*.py modules beside the tests)
# assert too: their failures get pytest's detailed messages, as the tests' own do.
pytest.register_assert_rewrite("tests.integration", "tests.unit", "tests.fakecdp")

PAGES_DIR = Path(__file__).parent / "pages"

#: Every trio test runs under this deadline (seconds of trio's clock).
TRIO_TEST_DEADLINE_S = 150.0
#: Tests on trio's autojumping MockClock run under this one, in virtual seconds:
#: far beyond their long virtual sleeps, yet a deadlock fails at once (the clock
#: jumps straight to it) and a loop that keeps sleeping fails after a few
#: thousand turns. Many carry a tighter deadline of their own inside.
VIRTUAL_TEST_DEADLINE_S = 1_000_000.0


def _under_deadline(fn: Callable[..., Any], seconds: float) -> Callable[..., Any]:
    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        with trio.fail_after(seconds):
            return await fn(*args, **kwargs)

    return wrapper


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Wrap every async test in ``trio.fail_after``: a hang fails the test, never CI.

    pytest-timeout (pyproject) is the wall-clock backstop for everything,
    sync tests and fixtures included.
    """
    for item in items:
        if isinstance(item, pytest.Function) and inspect.iscoroutinefunction(item.obj):
            virtual = "autojump_clock" in item.fixturenames
            item.obj = _under_deadline(
                item.obj, VIRTUAL_TEST_DEADLINE_S if virtual else TRIO_TEST_DEADLINE_S)


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceInfo]:
    info = start_service(tmp_path_factory.mktemp("svc"))
    yield info
    stop_service(info)


@pytest.fixture
async def api(service: ServiceInfo) -> AsyncIterator[httpx.AsyncClient]:
    async with service.client() as client:
        yield client


class _PageHandler(http.server.SimpleHTTPRequestHandler):
    routes: dict[str, Callable[[http.server.SimpleHTTPRequestHandler], None]] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, directory=str(PAGES_DIR), **kwargs)

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        route = self.routes.get(path)
        if route is not None:
            route(self)
            return
        super().do_GET()

    def do_POST(self) -> None:
        route = self.routes.get(self.path.split("?")[0])
        if route is None:
            self.send_error(405)
            return
        route(self)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@attrs.frozen
class PageServer:
    base_url: str
    server: http.server.ThreadingHTTPServer

    def url(self, path: str) -> str:
        return self.base_url + (path if path.startswith("/") else "/" + path)


def _serve_pages(host: str) -> Iterator[PageServer]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _PageHandler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield PageServer(f"http://{host}:{server.server_address[1]}", server)
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def pages() -> Iterator[PageServer]:
    """Serves tests/pages/ at http://127.0.0.1:PORT."""
    yield from _serve_pages("127.0.0.1")


@pytest.fixture(scope="session")
def other_origin() -> Iterator[PageServer]:
    """Serves tests/pages/ at http://localhost:PORT (a different site)."""
    yield from _serve_pages("localhost")


def add_route(path: str, handler: Callable[[http.server.SimpleHTTPRequestHandler], None]) -> None:
    """Register a dynamic page on every page server (path → handler)."""
    _PageHandler.routes[path] = handler


@pytest.fixture
async def tab(api: httpx.AsyncClient) -> AsyncIterator[str]:
    """A fresh tab for one test, closed afterwards."""
    r = await api.post("/tabs/open", json={"url": "about:blank"})
    assert r.status_code == 200, r.text
    target_id = r.json()["targetId"]
    yield target_id
    await api.post("/tabs/close", json={"targetId": target_id})


@pytest.fixture(scope="module")
def person() -> Iterator[Any]:
    """The person's own browser (not browserd's), for the ops page: a headless Chromium
    launched by Playwright (a ``playwright.sync_api.Browser``), one per test module."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=REAL_CHROMIUM, headless=True)
        try:
            yield browser
        finally:
            browser.close()
