"""Small helpers shared by the integration tests (no fixtures here: see tests/conftest.py)."""

from __future__ import annotations

from typing import Any

import httpx
import trio


async def navigate(api: httpx.AsyncClient, tab: str, url: str) -> None:
    """Navigate, then make sure the document has finished parsing.

    (/navigate can answer while a large page is still being parsed, so the
    tests wait for readyState themselves rather than race the parser.)
    Polls until then: the caller's deadline bounds it.
    """
    r = await api.post("/navigate", json={"targetId": tab, "url": url})
    assert r.status_code == 200, r.text
    while True:
        r = await api.post("/eval", json={"targetId": tab, "js": "document.readyState"})
        assert r.status_code == 200, r.text
        if r.json()["result"] == "complete":
            return
        await trio.sleep(0.02)


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
