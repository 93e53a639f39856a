"""What the security tests share: detectors that prove an attack did nothing.

Every refusal is followed by proof that nothing happened: the service's tab
list, the browser's own target list (``/json/list`` on the DevTools port) and
the browser pid are unchanged (:func:`observe`, :func:`assert_untouched`), no
page was opened on a marker URL, and no JavaScript ran. Attacks are aimed at
``sec_marker.html?hit=<tag>-<name>``: opening it (a tab) or fetching it (an eval
payload) is recorded by the page server (:data:`HITS`, the ``hits`` fixture), so
a successful attack cannot go unseen; ``test_detectors_see_*``
(test_security_requests.py) shows that the same detectors do see the legitimate
equivalents. The fixtures ``hits`` and ``marker`` are imported by name into each
test module (tests/integration/test_security*.py), which lists them in its
``__all__``.
"""

from __future__ import annotations

import http.server
import re
import secrets
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import attrs
import httpx
import orjson
import pytest
import trio
from supervision.harness import LOOPBACK_TLS

from tests.conftest import PageServer, ServiceInfo, add_route

__all__ = [
    "HITS",
    "MARKER_TITLE",
    "HitLog",
    "Marker",
    "World",
    "assert_hardened",
    "assert_refused",
    "assert_untouched",
    "attack_body",
    "browser_barrier",
    "eval_payload",
    "fill_path",
    "hit_url",
    "hits",
    "marker",
    "new_tag",
    "observe",
    "page_eval",
    "page_eval_awaited",
]

MARKER_TITLE = "sec marker"


# -- detectors -------------------------------------------------------------------


class HitLog:
    """Paths of ``sec_marker.html?hit=…`` requests the page servers answered (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._paths: list[str] = []

    def record(self, path: str) -> None:
        with self._lock:
            self._paths.append(path)

    def matching(self, tag: str) -> list[str]:
        with self._lock:
            return [p for p in self._paths if f"hit={tag}-" in p]


HITS = HitLog()


def _serve_marker(handler: http.server.SimpleHTTPRequestHandler) -> None:
    if "hit=" in handler.path:
        HITS.record(handler.path)
    http.server.SimpleHTTPRequestHandler.do_GET(handler)


@pytest.fixture(scope="module")
def hits(pages: PageServer, other_origin: PageServer) -> HitLog:
    add_route("/sec_marker.html", _serve_marker)
    return HITS


def new_tag() -> str:
    return "t" + secrets.token_hex(5)


def hit_url(pages: PageServer, tag: str, name: str) -> str:
    return pages.url("/sec_marker.html") + f"?hit={tag}-{name}"


def eval_payload(pages: PageServer, tag: str, name: str) -> str:
    """JavaScript that, if it ever ran, reports itself to the page server and marks the page."""
    return (f"fetch({orjson.dumps(hit_url(pages, tag, 'eval-' + name)).decode()},"
            f"{{mode:'no-cors'}});window.__sec_pwned={orjson.dumps(name).decode()};"
            "document.title='pwned'")


@attrs.frozen(kw_only=True)
class Marker:
    """A tab showing sec_marker.html: where eval payloads are aimed."""

    target_id: str
    url: str


@pytest.fixture
async def marker(api: httpx.AsyncClient, pages: PageServer, hits: HitLog
                 ) -> AsyncIterator[Marker]:
    r = await api.post("/tabs/open", json={"url": pages.url("/sec_marker.html")})
    assert r.status_code == 200, r.text
    info = r.json()
    yield Marker(target_id=info["targetId"], url=info["url"])
    await api.post("/tabs/close", json={"targetId": info["targetId"]})


@attrs.frozen(kw_only=True)
class World:
    """What an attack could change: tabs, browser targets, the browser process."""

    tabs: frozenset[str]
    pages: dict[str, str]  # page targetId -> URL, from the DevTools port itself
    pid: int | None


async def observe(api: httpx.AsyncClient, cdp_port: int) -> World:
    r = await api.get("/tabs")
    assert r.status_code == 200, r.text
    status = (await api.get("/status")).json()
    # The CDP port is browserd's gateway now: the same token, the listed tabs.
    async with httpx.AsyncClient(timeout=10, headers=api.headers, verify=LOOPBACK_TLS) as raw:
        targets = (await raw.get(f"http://127.0.0.1:{cdp_port}/json/list")).json()
    tabs = frozenset(t["targetId"] for t in r.json()["tabs"])
    return World(
        tabs=tabs,
        # browserd keeps one unlisted about:blank spare tab in headless mode; it
        # is replaced whenever /tabs/open hands it out, so it is not an attack's
        pages={t["id"]: t["url"] for t in targets if t["type"] == "page"
               and (t["id"] in tabs or t["url"] != "about:blank")},
        pid=status["pid"],
    )


async def page_eval(api: httpx.AsyncClient, target_id: str, js: str) -> Any:
    r = await api.post("/eval", json={"js": js, "targetId": target_id})
    assert r.status_code == 200, r.text
    return r.json()["result"]


async def page_eval_awaited(api: httpx.AsyncClient, target_id: str, js: str) -> Any:
    r = await api.post("/eval", json={"js": js, "targetId": target_id, "await": True})
    assert r.status_code == 200, r.text
    return r.json()["result"]


async def browser_barrier(evaluate: Callable[[str], Awaitable[Any]], page_url: str) -> None:
    """Fetch a fresh sentinel from ``page_url``'s server inside the page; wait until it arrives."""
    sentinel = new_tag()
    url = page_url.split("?")[0] + f"?hit={sentinel}-barrier"
    status = await evaluate(
        f"fetch({orjson.dumps(url).decode()}, {{cache: 'no-store'}}).then(r => r.status)")
    assert status == 200
    with trio.fail_after(30):
        while not HITS.matching(sentinel):
            await trio.sleep(0.02)


async def assert_untouched(
    api: httpx.AsyncClient, service: ServiceInfo, before: World, tag: str,
    marker: Marker | None, *, extra_tabs: frozenset[str] = frozenset(),
) -> None:
    """No tab opened or closed, no browser restart, no marker hit, no JS run in ``marker``.

    Every attack was answered before this runs. Instead of watching a fixed
    while for late effects, a barrier: the marker tab (through its own work
    queue, behind anything an attack could have queued there) fetches a
    sentinel from the page server, and we wait until the server has it — so
    whatever the browser was asked to load before has been sent by then.
    """
    if marker is not None:
        await browser_barrier(
            lambda js: page_eval_awaited(api, marker.target_id, js), marker.url)
    after = await observe(api, service.cdp_port)
    assert after.tabs == before.tabs | extra_tabs
    assert set(after.pages) == set(before.pages) | extra_tabs
    assert after.pid == before.pid, "the browser was stopped or restarted"
    assert not [u for u in after.pages.values() if "hit=" in u], after.pages
    assert HITS.matching(tag) == []
    if marker is not None:
        state = await page_eval(api, marker.target_id,
                                "[typeof window.__sec_pwned, document.title, location.href]")
        assert state == ["undefined", MARKER_TITLE, marker.url]


def assert_hardened(r: httpx.Response) -> None:
    """No CORS header ever; the guard's fixed headers always."""
    cors = [k for k in r.headers if k.lower().startswith("access-control-")]
    assert not cors, (r.request.method, r.request.url, cors)
    assert r.headers.get("x-content-type-options") == "nosniff"
    assert r.headers.get("cache-control") == "no-store"


def assert_refused(r: httpx.Response, status: int, code: str) -> None:
    where = f"{r.request.method} {r.request.url}"
    assert r.status_code == status, (where, r.status_code, r.text[:300])
    assert_hardened(r)
    if r.request.method != "HEAD":
        assert r.json()["code"] == code, (where, r.text[:300])
    if status == 401:
        assert r.headers.get("www-authenticate") == "Bearer"


def fill_path(path: str, marker: Marker) -> str:
    path = path.replace("{targetId}", marker.target_id)
    return re.sub(r"\{[^}]+\}", "x", path)


def attack_body(path: str, pages: PageServer, tag: str, name: str, marker: Marker
                ) -> dict[str, Any]:
    """The most harmful body each route takes, aimed at the marker."""
    if path == "/tabs/open":
        return {"url": hit_url(pages, tag, name)}
    if path == "/navigate":
        return {"url": hit_url(pages, tag, name), "targetId": marker.target_id}
    if path == "/eval":
        return {"js": eval_payload(pages, tag, name), "targetId": marker.target_id}
    if path == "/start":
        return {"headless": False}
    if path == "/stop":
        return {}
    return {"targetId": marker.target_id}
