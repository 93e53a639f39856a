"""Image limits and formats: the size rules captures obey, and reading image headers.

Plain code (no tab, no CDP): :func:`fit_scale` (the largest scale that keeps
an image within :data:`MAX_SIDE_PX` / :data:`MAX_PIXELS`), :func:`image_size`
(dimensions read from a PNG's or JPEG's header, never assumed) and
:func:`decode_base64` / :func:`encode_base64` (long payloads in a worker
thread: measured here, base64 costs 3.8-5.7 ms per MB, so 1 MiB is about the
5 ms a task may hold the event loop; the thread hop costs well under 1 ms).
"""

from __future__ import annotations

import binascii
import math
import struct
from typing import Any

import trio

from ..errors import CdpError

__all__ = [
    "COMPACT_PNG_MAX_PIXELS",
    "DEFAULT_JPEG_QUALITY",
    "FALLBACK_JPEG_QUALITY",
    "INLINE_MAX_BYTES",
    "LOW_JPEG_QUALITY",
    "MAX_BYTES",
    "MAX_PIXELS",
    "MAX_SIDE_PX",
    "THREAD_DECODE_MIN_CHARS",
    "decode_base64",
    "encode_base64",
    "fit_scale",
    "floor4",
    "image_size",
    "mb",
]

#: Output pixels allowed per side (Chromium's and most viewers' texture limit).
MAX_SIDE_PX = 16384
#: Output pixels allowed in total (~25 MP).
MAX_PIXELS = 25_000_000
#: Bytes allowed in one screenshot file.
MAX_BYTES = 10 * 1024 * 1024
#: The JPEG quality a too-large PNG is re-captured at.
FALLBACK_JPEG_QUALITY = 80
#: Default JPEG quality when the caller names none.
DEFAULT_JPEG_QUALITY = 80
#: Base64 texts longer than this are decoded in a worker thread.
THREAD_DECODE_MIN_CHARS = 1024 * 1024

#: The JPEG quality tried next when a JPEG is still too large (before scaling or clipping).
LOW_JPEG_QUALITY = 50
#: PNGs of at most this many output pixels are encoded for size, larger ones
#: for speed (Chromium's ``optimizeForSpeed``). Measured on Chromium 156: a
#: 1280x720 viewport is 22-30% smaller (84 KB instead of 108 KB on a 1k-element
#: page, what Playwright gets) for ~10-15 ms more; the encode costs ~15 ms per
#: MP more, so a 15 MP full page would take 50% longer (+230 ms).
COMPACT_PNG_MAX_PIXELS = 4_000_000
#: Bytes allowed in an image returned inline (``data``, base64) with the answer.
INLINE_MAX_BYTES = 1024 * 1024

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def fit_scale(width_px: float, height_px: float) -> float:
    """The largest scale ≤ 1 (floored to 4 decimals) that keeps an image of
    ``width_px``x``height_px`` output pixels within MAX_SIDE_PX and MAX_PIXELS."""
    width_px, height_px = max(width_px, 1.0), max(height_px, 1.0)
    scale = min(1.0, MAX_SIDE_PX / width_px, MAX_SIDE_PX / height_px,
                math.sqrt(MAX_PIXELS / (width_px * height_px)))
    return 1.0 if scale >= 1.0 else floor4(scale)


def floor4(value: float) -> float:
    return math.floor(value * 10_000) / 10_000


def mb(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB"


def image_size(data: bytes, mime: str) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR or a JPEG's SOF marker.

    Raises CdpError when the bytes are not a well-formed image of that type
    (so an unusable file is never stored).
    """
    size: tuple[int, int] | None = None
    if mime == "image/png":
        if data[:8] == _PNG_SIGNATURE and data[12:16] == b"IHDR" and len(data) >= 24:
            size = struct.unpack(">II", data[16:24])
    elif mime == "image/jpeg":
        size = _jpeg_size(data)
    if size is None or size[0] <= 0 or size[1] <= 0:
        raise CdpError(f"Chromium returned an unreadable {mime} image ({len(data)} bytes)",
                       method="Page.captureScreenshot")
    return size


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    if data[:2] != b"\xff\xd8":
        return None
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # no length field
            pos += 2
            continue
        (length,) = struct.unpack(">H", data[pos + 2:pos + 4])
        is_sof = 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC)
        if is_sof and pos + 9 <= len(data):
            height, width = struct.unpack(">HH", data[pos + 5:pos + 9])
            return int(width), int(height)
        if marker == 0xDA:  # start of scan before any SOF
            return None
        pos += 2 + length
    return None


async def decode_base64(text: Any) -> bytes:
    """Decode a CDP base64 payload; long ones in a worker thread (see module doc).

    Raises CdpError for a missing or malformed payload. On cancellation
    during a threaded decode, the decode finishes first (never abandoned).
    """
    if not isinstance(text, str):
        raise CdpError("Chromium sent no data", method="Page.captureScreenshot")
    try:
        if len(text) >= THREAD_DECODE_MIN_CHARS:
            return await trio.to_thread.run_sync(binascii.a2b_base64, text)
        return binascii.a2b_base64(text)
    except (binascii.Error, ValueError) as exc:
        raise CdpError(f"Chromium sent malformed base64: {exc}") from None


async def encode_base64(data: bytes) -> str:
    """``data`` as base64 text (no newline); long ones in a worker thread (see module doc)."""
    if len(data) * 4 // 3 >= THREAD_DECODE_MIN_CHARS:
        encoded = await trio.to_thread.run_sync(lambda: binascii.b2a_base64(data, newline=False))
    else:
        encoded = binascii.b2a_base64(data, newline=False)
    return encoded.decode("ascii")

