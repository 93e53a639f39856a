"""Screenshots an agent can see: ``inline: true`` data within 1 MiB, full pages clipped.

Pages: tests/pages/cap_*.html (a 5,000 px page, a 40,000 px page, a page of
random pixels whose PNG is far above any limit). The inline ``data`` is
decoded and its header read; it must be the very file the store kept.
"""

from __future__ import annotations

import base64
from typing import Any

import httpx
import pytest
import trio

from browserd.tabs import capture
from tests.integration.test_capture import fetch, jpeg_size, js, png_size

pytestmark = pytest.mark.chromium

MIB = 1024 * 1024


async def inline_shot(api: httpx.AsyncClient, tab: str, **body: Any) -> tuple[dict[str, Any],
                                                                              bytes]:
    r = await api.post("/screenshot", json={"targetId": tab, "inline": True, **body})
    assert r.status_code == 200, r.text
    data = r.json()
    image = base64.b64decode(data["data"], validate=True)
    assert len(image) <= MIB and len(image) == data["bytes"]
    assert image == await fetch(api, data)  # the same bytes as the stored file
    size = png_size(image) if data["mime"] == "image/png" else jpeg_size(image)
    assert size == (data["width"], data["height"])
    return data, image


async def goto(api: httpx.AsyncClient, tab: str, url: str) -> None:
    r = await api.post("/navigate", json={"targetId": tab, "url": url})
    assert r.status_code == 200, r.text


async def test_inline_viewport_is_the_png(api, pages, tab):
    with trio.fail_after(40):
        await goto(api, tab, pages.url("/cap_long.html"))
        data, _ = await inline_shot(api, tab)
        assert data["mime"] == "image/png" and (data["width"], data["height"]) == (1280, 720)
        assert "note" not in data and "clipped" not in data and "pageHeight" not in data
        r = await api.post("/screenshot", json={"targetId": tab})
        assert "data" not in r.json()  # only on request


async def test_inline_noise_page_is_made_to_fit(api, pages, tab):
    """Random pixels: no PNG fits 1 MiB; a lower-quality JPEG (or a clipped one) does."""
    with trio.fail_after(60):
        await goto(api, tab, pages.url("/cap_noise.html"))
        data, _ = await inline_shot(api, tab)
        assert data["mime"] == "image/jpeg" and "JPEG quality" in data["note"]
        assert (data["width"], data["height"]) == (1280, 720) or data.get("scaled")
        data, _ = await inline_shot(api, tab, fullPage=True)
        assert data["mime"] == "image/jpeg"
        width = await js(api, tab, "document.documentElement.clientWidth")
        assert data["width"] == width  # never scaled below the viewport's width
        assert data["clipped"] is True and data["pageHeight"] == 3400
        assert data["height"] < 3400 and "clipped to the top" in data["note"]


async def test_inline_tall_page_keeps_its_width(api, pages, tab):
    with trio.fail_after(60):
        await goto(api, tab, pages.url("/cap_huge.html"))
        data, _ = await inline_shot(api, tab, fullPage=True)
        width = await js(api, tab, "document.documentElement.clientWidth")
        assert data["width"] == width and data["clipped"] is True
        assert data["pageHeight"] == 40000 and data["height"] <= capture.MAX_SIDE_PX
        await goto(api, tab, pages.url("/cap_long.html"))
        data, _ = await inline_shot(api, tab, fullPage=True)
        assert data["pageHeight"] == 5000 and "clipped" not in data
        assert data["height"] == 5000
