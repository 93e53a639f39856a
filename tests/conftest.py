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

import http.server
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest

CHROMIUM = shutil.which("chromium") or "/usr/lib/chromium/chromium"
PAGES_DIR = Path(__file__).parent / "pages"


def free_port_pair() -> int:
    """A port P such that P and P+1 are both free on 127.0.0.1."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port >= 65000:
            continue
        with socket.socket() as s2:
            try:
                s2.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port pair")


@attrs.frozen(kw_only=True)
class ServiceInfo:
    proc: subprocess.Popen[bytes]
    home: Path
    port: int
    cdp_port: int
    token: str
    log_path: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def client(self, **kw: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.base_url, headers=self.headers,
                                 timeout=kw.pop("timeout", 60), **kw)

    def sync_client(self, **kw: Any) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, headers=self.headers,
                            timeout=kw.pop("timeout", 60), **kw)

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""


def start_service(
    home: Path,
    *,
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = (),
    wait_browser: bool = True,
    port: int | None = None,
    timeout: float = 30.0,
) -> ServiceInfo:
    """Start ``browserd serve`` as a subprocess and wait until it answers."""
    port = port or free_port_pair()
    home.mkdir(parents=True, exist_ok=True)
    log_path = home / "serve.log"
    full_env = {**os.environ, "BROWSERD_HOME": str(home), "BROWSERD_HEADLESS": "1",
                "BROWSERD_CONTROL_URL": f"http://127.0.0.1:{port}", **(env or {})}
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "browserd", "serve", *args],
            env=full_env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
    deadline = time.monotonic() + timeout
    token_file = home / "config" / "token"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"browserd exited {proc.returncode}:\n{log_path.read_text()}")
        try:
            r = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
            if r.status_code == 200 and (not wait_browser or r.json()["browser"] == "open"):
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    else:
        proc.kill()
        raise RuntimeError(f"browserd did not get ready:\n{log_path.read_text()}")
    cdp_port = int(full_env.get("BROWSERD_CDP_PORT") or port + 1)
    return ServiceInfo(proc=proc, home=home, port=port, cdp_port=cdp_port,
                       token=token_file.read_text().strip(), log_path=log_path)


def stop_service(info: ServiceInfo, timeout: float = 20.0) -> int:
    if info.proc.poll() is None:
        info.proc.send_signal(signal.SIGTERM)
        try:
            return info.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            info.proc.kill()
            info.proc.wait()
            raise
    return int(info.proc.returncode or 0)


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

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        path = self.path.split("?")[0]
        route = self.routes.get(path)
        if route is not None:
            route(self)
            return
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
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
