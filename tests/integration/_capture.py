"""What the capture tests share (test_capture.py, test_capture_limits.py;
test_capture_inline.py takes some through test_capture.py).

Image parsers written here, independent of browserd's (PNG IHDR and a small PNG
decoder for pixel checks, JPEG SOF markers); calls on the API (open a tab, take a
screenshot, fetch the stored file through /media and check it against the one on
disk, list the media directory); and :func:`direct_tab`, a TabActor of the test's
own on a tab of the service's browser, for calling ``capture.screenshot`` directly.
"""

from __future__ import annotations

import contextlib
import struct
import zlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import trio
from supervision.harness import LOOPBACK_TLS

from browserd.cdp import open_cdp_connection
from browserd.tabs.actor import TabActor

__all__ = ["PNG_SIGNATURE", "close_to", "direct_tab", "fetch", "jpeg_size", "media_files",
           "open_tab", "pixel", "png_rows", "png_size", "shoot"]


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


# -- image parsers (independent of browserd's) -------------------------------------------------


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE, data[:8]
    length, ctype = struct.unpack(">I4s", data[8:16])
    assert ctype == b"IHDR" and length == 13
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def jpeg_size(data: bytes) -> tuple[int, int]:
    assert data[:3] == b"\xff\xd8\xff", data[:4]
    pos = 2
    while pos < len(data):
        assert data[pos] == 0xFF
        marker = data[pos + 1]
        (length,) = struct.unpack(">H", data[pos + 2:pos + 4])
        if marker in (0xC0, 0xC2):  # SOF0 baseline, SOF2 progressive
            height, width = struct.unpack(">HH", data[pos + 5:pos + 9])
            return width, height
        assert marker != 0xDA, "scan before SOF"
        pos += 2 + length
    raise AssertionError("no SOF marker")


def png_rows(data: bytes, rows: int | None = None) -> tuple[int, int, int, list[bytes]]:
    """Decode the first ``rows`` rows of an 8-bit RGB/RGBA PNG (all when None)."""
    width, height = png_size(data)
    pos, idat = 8, bytearray()
    depth = color = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        ctype, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if ctype == b"IHDR":
            depth, color = body[8], body[9]
        elif ctype == b"IDAT":
            idat += body
        elif ctype == b"IEND":
            break
    assert depth == 8 and color in (2, 6), (depth, color)
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(bytes(idat))
    stride = width * bpp
    out: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height if rows is None else min(rows, height)):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out.append(bytes(line))
        prev = line
    return width, height, bpp, out


def pixel(decoded: tuple[int, int, int, list[bytes]], x: int, y: int) -> tuple[int, int, int]:
    _w, _h, bpp, rows = decoded
    r, g, b = rows[y][x * bpp:x * bpp + 3]
    return r, g, b


def close_to(actual: tuple[int, int, int], expected: tuple[int, int, int], tol: int = 3) -> bool:
    return all(abs(a - e) <= tol for a, e in zip(actual, expected, strict=True))


# -- helpers ------------------------------------------------------------------------------------


async def open_tab(api: httpx.AsyncClient, url: str) -> str:
    r = await api.post("/tabs/open", json={"url": url})
    assert r.status_code == 200, r.text
    return str(r.json()["targetId"])


async def shoot(api: httpx.AsyncClient, target: str, **body: Any) -> dict[str, Any]:
    r = await api.post("/screenshot", json={"targetId": target, **body})
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    return out


async def fetch(api: httpx.AsyncClient, body: dict[str, Any]) -> bytes:
    """The stored file through GET /media, checked against the file on disk."""
    r = await api.get(body["mediaUrl"])
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == body["mime"]
    assert len(r.content) == body["bytes"]
    assert body["media"] == "MEDIA:" + body["path"]
    assert Path(body["path"]).read_bytes() == r.content
    return r.content


def media_files(home: Path) -> list[str]:
    return sorted(p.name for p in (home / "cache" / "media").iterdir())


# -- capture.screenshot directly ----------------------------------------------------------------


@contextlib.asynccontextmanager
async def direct_tab(api: httpx.AsyncClient, url: str) -> AsyncIterator[TabActor]:
    """A TabActor of our own, over our own CDP connection, on a tab of the service's browser.

    (Opened and closed through the API; the service's own actor stays attached too.)
    """
    status = (await api.get("/status")).json()
    auth = {"Authorization": api.headers["authorization"]}  # the CDP gateway's token
    async with httpx.AsyncClient(headers=auth, timeout=10, verify=LOOPBACK_TLS) as gateway:
        version = (await gateway.get(status["cdpUrl"] + "/json/version")).json()
    ws_url = version["webSocketDebuggerUrl"]
    target = await open_tab(api, url)
    try:
        async with open_cdp_connection(ws_url, headers=auth) as conn, \
                trio.open_nursery() as nursery:
            actor = TabActor(conn, target, headless_viewport=(1280, 720))
            tab: TabActor = await nursery.start(actor.run)
            yield tab
            nursery.cancel_scope.cancel()
    finally:
        await api.post("/tabs/close", json={"targetId": target})
