"""Screenshots, PDFs and /media end to end (pages: tests/pages/cap_*.html).

Images are checked with parsers written here (PNG IHDR and a small PNG
decoder for pixel checks, JPEG SOF markers), independent of the service's.
Private instances: one with tight retention and one capture slot, one whose
cache directory is a 200 KiB tmpfs (skipped when mounting is not possible).
"""

from __future__ import annotations

import contextlib
import os
import struct
import subprocess
import zlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from supervision.harness import LOOPBACK_TLS

from browserd.cdp import open_cdp_connection
from browserd.errors import BadRequest, CdpError
from browserd.tabs import capture, resolve, snapshots
from browserd.tabs.actor import TabActor
from tests.conftest import ServiceInfo, start_service, stop_service
from tests.integration.helpers import js

pytestmark = pytest.mark.chromium

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
LIME = (0, 255, 0)


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


# -- viewport, full page, element ---------------------------------------------------------------


async def test_viewport_png_and_jpeg(api, pages, tab):
    with trio.fail_after(30):
        r = await api.post("/navigate", json={"targetId": tab, "url": pages.url("/cap_long.html")})
        assert r.status_code == 200, r.text
        body = await shoot(api, tab)
        assert body["ok"] is True and body["targetId"] == tab
        assert body["url"].endswith("/cap_long.html")
        assert body["mime"] == "image/png" and body["mediaUrl"].endswith(".png")
        data = await fetch(api, body)
        assert png_size(data) == (body["width"], body["height"]) == (1280, 720)
        assert "scaled" not in body and "note" not in body
        top = png_rows(data, rows=60)
        assert close_to(pixel(top, 50, 50), (255, 255, 0))  # #top is yellow at (20..140, 30..110)

        body = await shoot(api, tab, format="jpeg", quality=40)
        data = await fetch(api, body)
        assert body["mime"] == "image/jpeg" and data.endswith(b"\xff\xd9")
        assert jpeg_size(data) == (body["width"], body["height"]) == (1280, 720)

        # GET with query parameters works the same.
        r = await api.get("/screenshot", params={"targetId": tab, "format": "jpeg",
                                                 "quality": "90"})
        assert r.status_code == 200, r.text
        assert jpeg_size(await fetch(api, r.json())) == (1280, 720)


async def test_bad_argument_combinations(api, pages, tab):
    with trio.fail_after(20):
        cases = [
            {"format": "png", "quality": 50},
            {"quality": 50},
            {"format": "gif"},
            {"quality": 101, "format": "jpeg"},
            {"fullPage": True, "selector": "#box"},
            {"selector": "#box", "ref": "e1"},
        ]
        for body in cases:
            r = await api.post("/screenshot", json={"targetId": tab, **body})
            assert r.status_code == 400, (body, r.text)
            assert r.json()["code"] == "BAD_REQUEST"


async def test_full_page_long(api, pages, tab):
    with trio.fail_after(30):
        await api.post("/navigate", json={"targetId": tab, "url": pages.url("/cap_long.html")})
        before = await js(api, tab, "[document.documentElement.scrollHeight,"
                                    " document.documentElement.clientWidth]")
        assert before[0] == 5000
        body = await shoot(api, tab, fullPage=True)
        data = await fetch(api, body)
        assert png_size(data) == (body["width"], body["height"]) == (before[1], 5000)
        assert "scaled" not in body
        # The capture leaves the page's layout as it was (Chromium drops the
        # scrollbars after captureBeyondViewport unless the viewport is restored).
        after = await js(api, tab, "[document.documentElement.scrollHeight,"
                                   " document.documentElement.clientWidth]")
        assert after == before
        assert png_size(await fetch(api, await shoot(api, tab))) == (1280, 720)


async def test_element_by_selector(api, pages, tab):
    with trio.fail_after(30):
        await api.post("/navigate", json={"targetId": tab, "url": pages.url("/cap_long.html")})
        size = await js(api, tab, "(() => { const r = document.getElementById('box')"
                                  ".getBoundingClientRect(); return [r.width, r.height]; })()")
        body = await shoot(api, tab, selector="#box")  # 3000 px down: scrolled into view
        decoded = png_rows(await fetch(api, body))
        assert (decoded[0], decoded[1]) == (body["width"], body["height"]) == tuple(size)
        for x, y in ((0, 0), (150, 75), (299, 149)):
            assert close_to(pixel(decoded, x, y), LIME), (x, y, pixel(decoded, x, y))

        body = await shoot(api, tab, selector="#top")
        decoded = png_rows(await fetch(api, body))
        assert (decoded[0], decoded[1]) == (120, 80)
        assert close_to(pixel(decoded, 60, 40), (255, 255, 0))

        # Taller than the viewport: captured beyond it, whole, and the layout is restored.
        width = await js(api, tab, "document.documentElement.clientWidth")
        body = await shoot(api, tab, selector="#tall")
        assert png_size(await fetch(api, body)) == (body["width"], body["height"]) == (width, 5000)
        assert await js(api, tab, "document.documentElement.clientWidth") == width

        r = await api.post("/screenshot", json={"targetId": tab, "selector": "#hidden"})
        assert r.status_code == 400 and "box" in r.json()["error"], r.text
        r = await api.post("/screenshot", json={"targetId": tab, "selector": "#nothing-here"})
        assert r.status_code == 404 and r.json()["code"] == "NO_MATCH", r.text


async def test_element_by_ref(api, pages, tab):
    with trio.fail_after(30):
        spec = (await api.get("/openapi.json")).json()
        if "/snapshot" not in spec["paths"]:
            pytest.skip("GET /snapshot is not wired yet: no refs to capture by")
        await api.post("/navigate", json={"targetId": tab, "url": pages.url("/cap_long.html")})
        r = await api.get("/snapshot", params={"targetId": tab, "format": "aria", "nodes": "true"})
        assert r.status_code == 200, r.text
        ref = next(n["ref"] for n in r.json()["nodes"]
                   if n["role"] == "button" and n["name"] == "Box button")
        body = await shoot(api, tab, ref=ref)
        decoded = png_rows(await fetch(api, body))
        assert (body["width"], body["height"]) == (300, 150)
        assert close_to(pixel(decoded, 150, 75), LIME)
        r = await api.post("/screenshot", json={"targetId": tab, "ref": "e999999"})
        assert r.status_code == 404 and r.json()["code"] == "REF_NOT_FOUND", r.text


# -- limits -------------------------------------------------------------------------------------


async def test_oversize_page_is_clipped_not_scaled(api, pages, tab):
    """A page beyond the pixel limits keeps its width: the capture shows its top part."""
    with trio.fail_after(40):
        await api.post("/navigate", json={"targetId": tab, "url": pages.url("/cap_huge.html")})
        width = await js(api, tab, "document.documentElement.clientWidth")
        body = await shoot(api, tab, fullPage=True)
        data = await fetch(api, body)
        w, h = png_size(data)
        assert (w, h) == (body["width"], body["height"])
        assert body["clipped"] is True and "clipped to the top" in body["note"]
        assert "scaled" not in body
        assert body["pageHeight"] == 40000
        assert w == width  # never scaled below the viewport's width
        assert h <= capture.MAX_SIDE_PX and w * h <= capture.MAX_PIXELS
        assert h >= capture.MAX_SIDE_PX - 2  # clipped at the limit, not far below it


async def test_png_over_byte_limit_becomes_jpeg(api, pages, tab):
    with trio.fail_after(40):
        await api.post("/navigate", json={"targetId": tab, "url": pages.url("/cap_noise.html")})
        size = await js(api, tab, "[document.documentElement.scrollWidth,"
                                  " document.documentElement.scrollHeight]")
        body = await shoot(api, tab, fullPage=True)
        data = await fetch(api, body)
        assert body["mime"] == "image/jpeg" and body["mediaUrl"].endswith(".jpeg")
        assert "JPEG quality 80" in body["note"]
        assert len(data) <= capture.MAX_BYTES
        assert jpeg_size(data) == (body["width"], body["height"]) == tuple(size)


# -- background tabs, PDF -----------------------------------------------------------------------


async def test_background_tab_is_rendered(api, pages):
    """Tabs behind another one: captures are neither blank nor stuck (viewport and full).

    Measured without bringing the tab to the front: when no tab of the window
    animates, Chromium never answers a capture of a background tab (504
    after the deadline). So both pages here are static.
    """
    with trio.fail_after(50):
        tabs = [await open_tab(api, pages.url("/cap_long.html")) for _ in range(2)]
        try:
            for _ in range(2):
                for target in tabs:  # each capture sends the other tab to the back
                    for full in (False, True):
                        with trio.fail_after(10):
                            body = await shoot(api, target, fullPage=full)
                        decoded = png_rows(await fetch(api, body), rows=60)
                        assert body["height"] == (5000 if full else 720)
                        for x, y, colour in ((50, 50, (255, 255, 0)), (600, 2, (204, 0, 0))):
                            rgb = pixel(decoded, x, y)
                            assert close_to(rgb, colour, tol=2), (target, full, x, y, rgb)
            # Animation frames run in the tab now behind the other (focus emulation).
            r = await api.post("/eval", json={
                "targetId": tabs[0], "await": True,
                "js": "new Promise(r => requestAnimationFrame(() =>"
                      " requestAnimationFrame(() => r('ran'))))"})
            assert r.status_code == 200 and r.json()["result"] == "ran", r.text
        finally:
            for target in tabs:
                await api.post("/tabs/close", json={"targetId": target})


async def test_concurrent_captures_across_tabs(api, pages):
    """Captures of several tabs at once all finish (the bring-to-front + capture
    step is serialised; measured without that: some never answer)."""
    with trio.fail_after(60):
        tabs = [await open_tab(api, pages.url("/cap_long.html")) for _ in range(3)]
        try:
            async def one(target: str, full: bool, results: list[dict[str, Any]]) -> None:
                with trio.fail_after(20):
                    results.append(await shoot(api, target, fullPage=full))

            for full in (False,) * 6 + (True,) + (False,) * 6:
                results: list[dict[str, Any]] = []
                async with trio.open_nursery() as nursery:
                    for target in tabs:
                        nursery.start_soon(one, target, full, results)
                assert sorted(b["targetId"] for b in results) == sorted(tabs)
                for body in results:
                    assert body["height"] == (5000 if full else 720)
        finally:
            for target in tabs:
                await api.post("/tabs/close", json={"targetId": target})


async def test_pdf(api, pages, tab):
    with trio.fail_after(30):
        await api.post("/navigate", json={"targetId": tab, "url": pages.url("/cap_long.html")})
        r = await api.post("/pdf", json={"targetId": tab})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["mime"] == "application/pdf" and body["mediaUrl"].endswith(".pdf")
        assert body["width"] is None and body["height"] is None
        data = await fetch(api, body)
        assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")


# -- /media -------------------------------------------------------------------------------------


async def test_media_needs_auth_and_refuses_bad_names(api, service, pages, tab):
    with trio.fail_after(30):
        await api.post("/navigate", json={"targetId": tab, "url": pages.url("/hello.html")})
        body = await shoot(api, tab)
        name = body["mediaUrl"].removeprefix("/media/")
        async with httpx.AsyncClient(base_url=service.base_url, timeout=10,
                                     verify=LOOPBACK_TLS) as anon:
            r = await anon.get(body["mediaUrl"])
            assert r.status_code == 401 and r.json()["code"] == "UNAUTHORIZED"
            assert r.content != Path(body["path"]).read_bytes()
        # Names that are not ours, or escape the directory: one and the same 404.
        stray = Path(body["path"]).parent / "notes.txt"
        stray.write_text("not media")
        bad = [
            "screenshot-20260101-000000-" + "0" * 24 + ".png",  # our shape, absent
            "notes.txt",
            "..%2Fconfig%2Ftoken", "..%2F..%2Fconfig%2Ftoken", "%2e%2e", ".",
            f".{name}.tmp", name.upper(), name + "%00", name + "/", "x" * 500,
            "%2Fetc%2Fpasswd",
        ]
        for candidate in bad:
            r = await api.get("/media/" + candidate)
            assert r.status_code == 404, (candidate, r.status_code, r.text)
            assert r.json()["code"] == "NOT_FOUND"
        r = await api.get("/media/../config/token")
        assert r.status_code == 404
        assert service.token not in r.text
        stray.unlink()


# -- private instances: retention + overload, disk full ------------------------------------------


@pytest.fixture(scope="module")
def tight(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceInfo]:
    info = start_service(tmp_path_factory.mktemp("captight"), env={
        "BROWSERD_MEDIA_MAX_FILES": "3", "BROWSERD_MAX_CONCURRENT_CAPTURES": "1"})
    yield info
    stop_service(info)


async def test_retention_keeps_newest(tight, pages):
    with trio.fail_after(40):
        async with tight.client() as api:
            target = await open_tab(api, pages.url("/hello.html"))
            names = []
            for _ in range(5):
                names.append((await shoot(api, target))["mediaUrl"].removeprefix("/media/"))
            assert media_files(tight.home) == sorted(names[-3:])
            r = await api.get("/media/" + names[0])
            assert r.status_code == 404
            await fetch(api, {**(await shoot(api, target))})


async def test_capture_queue_overload(tight, pages):
    """One capture slot: beyond 2 waiting captures, the next is refused at once."""
    with trio.fail_after(60):
        async with tight.client() as api:
            targets = [await open_tab(api, pages.url("/cap_huge.html")) for _ in range(6)]
            results: list[httpx.Response] = []

            async def one(target: str) -> None:
                results.append(await api.post("/screenshot", json={"targetId": target,
                                                                   "fullPage": True}))

            async with trio.open_nursery() as nursery:
                for target in targets:
                    nursery.start_soon(one, target)
            codes = sorted(r.status_code for r in results)
            assert codes.count(200) >= 3, [r.text[:200] for r in results]
            refused = [r for r in results if r.status_code != 200]
            assert refused, codes
            for r in refused:
                assert r.status_code == 503 and r.json()["code"] == "OVERLOADED", r.text
            await shoot(api, targets[0])  # the queue drained: captures work again
            for target in targets:
                await api.post("/tabs/close", json={"targetId": target})


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[ServiceInfo]:
    home = tmp_path / "home"
    cache = home / "cache"
    cache.mkdir(parents=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(cache)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        info = start_service(home)
        try:
            yield info
        finally:
            stop_service(info)
    finally:
        subprocess.run(["umount", str(cache)], check=False)
        if os.path.ismount(cache):
            subprocess.run(["umount", "-l", str(cache)], check=False)


async def test_disk_full(tiny_disk, pages):
    with trio.fail_after(60):
        media_dir = tiny_disk.home / "cache" / "media"
        async with tiny_disk.client() as api:
            target = await open_tab(api, pages.url("/cap_long.html"))
            first = await shoot(api, target)  # small: fits
            assert media_files(tiny_disk.home) == [first["mediaUrl"].removeprefix("/media/")]

            r = await api.post("/screenshot", json={"targetId": target, "fullPage": True})
            assert r.status_code == 507, r.text
            err = r.json()
            assert err["code"] == "INSUFFICIENT_STORAGE" and err["errno"] == "ENOSPC"
            assert media_files(tiny_disk.home) == [first["mediaUrl"].removeprefix("/media/")]
            assert (await fetch(api, first))  # the earlier file is intact and served

            r = await api.get("/healthz")
            assert r.status_code == 200 and r.json()["browser"] == "open"

            # Fill the disk completely: even a small capture fails, then works once freed.
            filler = tiny_disk.home / "cache" / "filler"
            fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                with contextlib.suppress(OSError):
                    while True:
                        os.write(fd, b"\0" * 1024)
            finally:
                os.close(fd)
            r = await api.post("/screenshot", json={"targetId": target})
            assert r.status_code == 507, r.text
            assert not [n for n in os.listdir(media_dir) if n.endswith(".tmp")]
            filler.unlink()
            again = await shoot(api, target)
            await fetch(api, again)


# -- capture.screenshot directly: byte ladder, out-of-process frames -----------------------------


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


async def test_byte_limit_ladder(api, pages, monkeypatch):
    """PNG too big: better compression, then JPEG 80, then scaled down; each step said.

    Viewport captures; the limits sit between the sizes measured first.
    """
    with trio.fail_after(60):
        async with direct_tab(api, pages.url("/cap_long.html")) as tab:
            default = await capture.screenshot(tab)
            assert default.mime == "image/png" and default.note is None

            async def raw_png(fast: bool) -> bytes:
                return await capture.decode_base64((await tab.send("Page.captureScreenshot", {
                    "format": "png", "optimizeForSpeed": fast}))["data"])

            fast, compact = await raw_png(True), await raw_png(False)
            jpeg = await capture.screenshot(tab, fmt="jpeg")
            assert len(jpeg.data) < len(compact) < len(fast)
            # A viewport is encoded for size, not for speed.
            assert len(default.data) == len(compact)
            assert png_size(default.data) == (default.width, default.height) == (1280, 720)

            # A PNG first encoded for speed (one above COMPACT_PNG_MAX_PIXELS, here
            # the viewport with the threshold at 0), between the two PNG sizes:
            # still a PNG, better compressed.
            limit = (len(compact) + len(fast)) // 2
            with monkeypatch.context() as patch:
                patch.setattr(capture, "COMPACT_PNG_MAX_PIXELS", 0)
                assert len((await capture.screenshot(tab)).data) == len(fast)
                shot = await capture.screenshot(tab, max_bytes=limit)
            assert shot.mime == "image/png" and len(shot.data) <= limit
            assert "better compression" in (shot.note or "") and not shot.scaled
            assert png_size(shot.data) == (shot.width, shot.height) == (1280, 720)

            # Below the compact PNG, above the JPEG: a JPEG of the same size.
            limit = (len(jpeg.data) + len(compact)) // 2
            shot = await capture.screenshot(tab, max_bytes=limit)
            assert shot.mime == "image/jpeg" and len(shot.data) <= limit
            assert "JPEG quality 80" in (shot.note or "") and not shot.scaled
            assert jpeg_size(shot.data) == (shot.width, shot.height) == (1280, 720)

            # Below even the JPEG: scaled down until it fits, and said so.
            limit = len(jpeg.data) // 3
            shot = await capture.screenshot(tab, fmt="jpeg", max_bytes=limit)
            assert shot.mime == "image/jpeg" and len(shot.data) <= limit
            assert shot.scaled and "scaled by" in (shot.note or "")
            assert jpeg_size(shot.data) == (shot.width, shot.height)
            assert shot.width < 1280 and shot.height < 720

            with pytest.raises(BadRequest):
                await capture.screenshot(tab, max_bytes=10)


async def test_element_in_out_of_process_frame(api, pages, other_origin):
    with trio.fail_after(60):
        url = pages.url("/cap_frame.html?child=" + other_origin.url("/cap_child.html"))
        async with direct_tab(api, url) as tab:
            while not tab.child_sessions:
                await tab.wait_changed()
            snap = await snapshots.take_snapshot(tab, nodes=True)
            ref = next(n["ref"] for n in snap["nodes"] if n.get("name") == "Child target")
            handle = await resolve.resolve_ref(tab, ref)
            assert handle.session.session_id != tab.session.session_id  # really out of process
            # The child process may not have painted its frame yet (white under load):
            # capture again until it has, within 10 s; a wrong clip never turns magenta.
            with trio.move_on_after(10):
                while True:
                    shot = await capture.screenshot(tab, element=handle)
                    decoded = png_rows(shot.data)
                    if close_to(pixel(decoded, 100, 50), (255, 0, 255)):
                        break
                    await trio.sleep(0.2)
            assert (decoded[0], decoded[1]) == (shot.width, shot.height) == (200, 100)
            for x, y in ((1, 1), (100, 50), (198, 98)):
                assert close_to(pixel(decoded, x, y), (255, 0, 255)), (x, y)


def test_image_size_rejects_garbage():
    assert capture.image_size(PNG_SIGNATURE + b"\0\0\0\x0dIHDR" + struct.pack(">II", 3, 2),
                              "image/png") == (3, 2)
    for data, mime in ((b"", "image/png"), (b"GIF89a" + b"\0" * 30, "image/png"),
                       (b"\xff\xd8\xff\xda\0\x02", "image/jpeg"), (b"%PDF-", "image/jpeg")):
        with pytest.raises(CdpError):
            capture.image_size(data, mime)
    assert capture.fit_scale(1000, 1000) == 1.0
    assert capture.fit_scale(1265, 40000) == 0.4096
    assert capture.fit_scale(10000, 10000) == 0.5
