"""The service with several profiles that test_profiles.py and test_profiles_scoped.py share.

``multi`` (module-scoped: one private service per test module) runs the default
profile and three ``[profiles.*]`` tables at once: ``work`` and ``research``
(different colours and gateway ports) and ``broken`` (its executable is
``/bin/false``: a crash loop), with ``max_sessions = 4`` and ``restart_budget = 3``;
its page servers answer ``/pdl/file`` (an attachment) and ``/pdl/go?to=`` (a
redirect). ``api`` is a client of it (in place of tests/conftest.py's). The rest
read its profile table and open and evaluate in tabs of a profile or session.
Fixtures are imported as ``name as name``: pytest finds them by that name.
"""

from __future__ import annotations

import http.server
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.conftest import ServiceInfo, add_route, free_port_pair, start_service, stop_service

__all__ = ["DEADLINE_S", "api", "evaluate", "multi", "open_tab", "profiles_by_name", "running"]


DEADLINE_S = 90


def free_port_range(count: int) -> int:
    """A port P such that P..P+count-1 are free on 127.0.0.1 now."""
    for _ in range(50):
        start = free_port_pair()
        sockets = []
        try:
            for port in range(start, start + count):
                sock = socket.socket()
                sockets.append(sock)
                sock.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            for sock in sockets:
                sock.close()
        return start
    raise RuntimeError("no free port range")


def _attachment(h: http.server.SimpleHTTPRequestHandler) -> None:
    body = f"payload-{h.path}".encode()
    h.send_response(200)
    h.send_header("Content-Type", "application/octet-stream")
    h.send_header("Content-Disposition", 'attachment; filename="report.bin"')
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


def _redirect(h: http.server.SimpleHTTPRequestHandler) -> None:
    h.send_response(302)
    h.send_header("Location", parse_qs(urlsplit(h.path).query).get("to", [""])[0])
    h.send_header("Content-Length", "0")
    h.end_headers()


@pytest.fixture(scope="module")
def multi(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceInfo]:
    add_route("/pdl/file", _attachment)
    add_route("/pdl/go", _redirect)
    home = tmp_path_factory.mktemp("profiles")
    range_start = free_port_range(8)
    research_port = free_port_pair()
    (home / "config").mkdir(mode=0o700)
    (home / "config" / "config.toml").write_text(f"""
max_sessions = 4
restart_budget = 3
profile_port_start = {range_start}
profile_port_end = {range_start + 7}

[profiles.work]
color = "#0066CC"

[profiles.research]
color = "#2E8B57"
cdp_port = {research_port}

[profiles.broken]
executable = "/bin/false"
""")
    info = start_service(home, timeout=60)
    yield info
    stop_service(info)


@pytest.fixture
async def api(multi: ServiceInfo) -> AsyncIterator[httpx.AsyncClient]:
    async with multi.client() as client:
        yield client


async def profiles_by_name(api: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    r = await api.get("/profiles")
    assert r.status_code == 200, r.text
    return {p["name"]: p for p in r.json()["profiles"]}


async def running(api: httpx.AsyncClient, *names: str) -> bool:
    table = await profiles_by_name(api)
    return all(table[n]["running"] for n in names)


async def open_tab(api: httpx.AsyncClient, url: str, **scope: str) -> str:
    r = await api.post("/tabs/open", json={"url": url, **scope})
    assert r.status_code == 200, r.text
    return str(r.json()["targetId"])


async def evaluate(api: httpx.AsyncClient, target: str, js: str, **scope: str) -> Any:
    r = await api.post("/eval", json={"targetId": target, "js": js, **scope})
    assert r.status_code == 200, r.text
    return r.json()["result"]
