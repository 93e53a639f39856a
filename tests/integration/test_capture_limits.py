"""Capture limits end to end (pages: tests/pages/cap_*.html): pages beyond the pixel
and byte limits, retention and the capture queue on a private instance with tight
limits, a full disk (a private instance whose cache directory is a 200 KiB tmpfs;
skipped when mounting is not possible), the byte-limit ladder of ``capture.screenshot``
called directly, and image sizes read from bad data.

Images are checked with the parsers of tests/integration/_capture.py. The captures
themselves: test_capture.py.
"""

from __future__ import annotations

import contextlib
import os
import struct
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import trio

from browserd.errors import BadRequest, CdpError
from browserd.tabs import capture
from tests.conftest import ServiceInfo, start_service, stop_service
from tests.integration._capture import (
    PNG_SIGNATURE,
    direct_tab,
    fetch,
    jpeg_size,
    media_files,
    open_tab,
    png_size,
    shoot,
)
from tests.integration.helpers import js

pytestmark = pytest.mark.chromium


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


# -- capture.screenshot directly: the byte ladder, image sizes ----------------------------------


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
