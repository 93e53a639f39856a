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
