"""Small helpers shared by the tests (no fixtures here: see tests/conftest.py).

The one way to wait for a condition is here: :func:`poll` (async; unit tests
on the fake CDP peer use it too) and :func:`poll_sync` (a sync test, or a
thread beside Playwright's sync API), and the waits built on them for what
the service lists (:func:`wait_downloads`, :func:`finished_download`). The
rest are the integration tests' calls on the HTTP API.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Any

import httpx
import trio


async def poll(read: Callable[[], Any], *, until: Callable[[Any], object] = bool,
               every: float = 0.05, within: float | None = None) -> Any:
    """Call ``read`` (sync or async) every ``every`` s until ``until(value)``; that value.

    Unbounded but by ``within`` (then trio.TooSlowError): every async test runs
    under a deadline of its own (tests/conftest.py), which bounds it otherwise.
    """
    with trio.fail_after(within if within is not None else float("inf")):
        while True:
            value = read()
            if inspect.isawaitable(value):
                value = await value
            if until(value):
                return value
            await trio.sleep(every)


def poll_sync(read: Callable[[], Any], *, until: Callable[[Any], object] = bool,
              every: float = 0.05, within: float = 15.0) -> Any:
    """:func:`poll` for sync code: blocks; AssertionError with the last value after
    ``within`` s."""
    deadline = time.monotonic() + within
    while True:
        value = read()
        if until(value):
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"condition not met in {within} s; last value {value!r}")
        time.sleep(every)


async def downloads(api: httpx.AsyncClient, **params: str) -> list[dict[str, Any]]:
    """``GET /downloads`` (``params``: its query, a profile or session): the records."""
    r = await api.get("/downloads", params=params)
    assert r.status_code == 200, r.text
    listed: list[dict[str, Any]] = r.json()["downloads"]
    return listed


async def wait_downloads(api: httpx.AsyncClient, until: Callable[[list[dict[str, Any]]], object],
                         **params: str) -> list[dict[str, Any]]:
    """:func:`downloads` until ``until(records)``; those records."""
    listed: list[dict[str, Any]] = await poll(lambda: downloads(api, **params), until=until,
                                              every=0.1)
    return listed


async def finished_download(api: httpx.AsyncClient, match: Callable[[dict[str, Any]], bool],
                            **params: str) -> dict[str, Any]:
    """The first listed download that ``match``es and is no longer in progress."""

    def done(d: dict[str, Any]) -> bool:
        return match(d) and d["state"] != "inProgress"

    listed = await wait_downloads(api, lambda ds: any(done(d) for d in ds), **params)
    return next(d for d in listed if done(d))


async def navigate(api: httpx.AsyncClient, tab: str, url: str) -> None:
    """Navigate, then make sure the document has finished parsing.

    (/navigate can answer while a large page is still being parsed, so the
    tests wait for readyState themselves rather than race the parser.)
    Polls until then: the caller's deadline bounds it.
    """
    r = await api.post("/navigate", json={"targetId": tab, "url": url})
    assert r.status_code == 200, r.text
    await poll(lambda: js(api, tab, "document.readyState"), until=lambda s: s == "complete",
               every=0.02)


def html_route(body: str | bytes) -> Any:
    """A page-server handler (for ``add_route``) that answers ``body`` as text/html."""
    data = body.encode() if isinstance(body, str) else body

    def handler(req: Any) -> None:
        req.send_response(200)
        req.send_header("Content-Type", "text/html; charset=utf-8")
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        req.wfile.write(data)

    return handler


async def js(api: httpx.AsyncClient, tab: str, expression: str, *, wait: bool = False) -> Any:
    """The value of ``expression`` in the tab (``wait`` awaits a promise); any error fails."""
    r = await api.post("/eval", json={"targetId": tab, "js": expression, "await": wait})
    assert r.status_code == 200, r.text
    return r.json()["result"]


async def post(api: httpx.AsyncClient, path: str, tab: str, **body: Any) -> httpx.Response:
    """POST ``body`` to ``path`` for the tab, whatever the answer."""
    return await api.post(path, json={"targetId": tab, **body})


async def ok(api: httpx.AsyncClient, path: str, tab: str, **body: Any) -> dict[str, Any]:
    """POST for the tab and require ``200 {"ok": true, …}``; the answer."""
    r = await post(api, path, tab, **body)
    assert r.status_code == 200, r.text
    data: dict[str, Any] = r.json()
    assert data["ok"] is True, data
    return data


async def fails(api: httpx.AsyncClient, path: str, tab: str, status: int, code: str,
                **body: Any) -> dict[str, Any]:
    """POST for the tab and require the refusal ``status`` / ``code``; the error body."""
    r = await post(api, path, tab, **body)
    assert r.status_code == status, r.text
    data: dict[str, Any] = r.json()
    assert data["code"] == code, data
    return data


async def ref_of(api: httpx.AsyncClient, tab: str, role: str, name: str) -> str:
    """The ref of the first snapshot node with this role and name (fails if none)."""
    r = await api.get("/snapshot", params={"targetId": tab, "nodes": "true"})
    assert r.status_code == 200, r.text
    for node in r.json()["nodes"]:
        if node["role"] == role and node["name"] == name:
            return str(node["ref"])
    raise AssertionError(f"no {role} {name!r} in {r.json()['text']}")


class Session:
    """An API client working in one session (the X-Browserd-Session header on each call)."""

    def __init__(self, api: httpx.AsyncClient, session_id: str) -> None:
        self.api, self.id = api, session_id
        self.headers = {"X-Browserd-Session": session_id}

    async def post(self, path: str, **body: Any) -> httpx.Response:
        return await self.api.post(path, json=body, headers=self.headers)

    async def get(self, path: str, **params: Any) -> httpx.Response:
        return await self.api.get(path, params=params, headers=self.headers)

    async def ok(self, path: str, **body: Any) -> dict[str, Any]:
        r = await self.post(path, **body)
        assert r.status_code == 200, r.text
        data: dict[str, Any] = r.json()
        return data

    async def open_tab(self) -> str:
        return str((await self.ok("/tabs/open", url="about:blank"))["targetId"])
