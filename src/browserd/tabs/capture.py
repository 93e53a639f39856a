"""Screenshots and PDFs of one tab.

:func:`screenshot` captures the viewport, the whole page, or one element's
border box; :func:`pdf` prints the tab. Both are called while holding the
tab's work slot and under a deadline the caller owns; neither has a timeout
of its own.

Regions (CSS pixels, document coordinates, which is what Chromium's
``Page.captureScreenshot`` clip expects — measured: a clip in viewport
coordinates of a scrolled page captures the wrong place):

- viewport: no clip; exactly what the tab shows (1280x720 in headless);
- full page: ``Page.getLayoutMetrics().cssContentSize`` at scale 1 with
  ``captureBeyondViewport``;
- element: ``DOM.scrollIntoViewIfNeeded``, then the union of
  ``DOM.getContentQuads`` plus the visual viewport's page offset (plus the
  content boxes of the owner ``<iframe>``s for an element of an out-of-process
  frame, nested ones included: :mod:`browserd.tabs.geometry`).
  ``captureBeyondViewport`` is used only when the element does not fit the
  viewport.

Limits, so the result is always a file a model or a viewer can open: at most
:data:`MAX_SIDE_PX` output pixels per side and :data:`MAX_PIXELS` in total
(beyond, the clip is scaled down, ``scaled=True`` and a ``note`` says so),
and at most ``max_bytes`` (default :data:`MAX_BYTES`). A PNG above the byte
limit is re-encoded without ``optimizeForSpeed`` (measured 1.3-3.5x smaller,
at 2-2.5x the encode time), then
re-captured as JPEG quality :data:`FALLBACK_JPEG_QUALITY`, then scaled down;
the note says what happened. Every result is checked: its signature and its
dimensions are read from the image header, never assumed.

Background tabs: focus emulation is not enough. Measured on Chromium 156
headless: a capture of a tab that is not its window's front tab never
answers when nothing in the window animates (viewport captures included;
an animating page keeps producing frames and hides the problem), and a
capture whose tab another capture sends to the back meanwhile hangs the
same way (2 of 12 concurrent captures of 3 tabs). So every capture is
``Page.bringToFront`` (1-3 ms when already in front, ~30 ms otherwise) and
then ``Page.captureScreenshot``, both under one lock shared by all tabs of
the browser (``front_lock``). In a headed browser this shows the captured
tab to the user. ``Page.printToPDF`` works on background tabs and takes no
lock.

A capture with ``captureBeyondViewport`` makes Chromium 156 drop the page's
scrollbars afterwards (the layout gets 15 px wider). On a tab with a
device-metrics override (browserd's headless viewport, or one set by
``/emulate``) the override is cleared and that same override set again
afterwards, which brings them back; a headed tab without one keeps the quirk
until its next navigation.

Base64 payloads above :data:`THREAD_DECODE_MIN_CHARS` are decoded in a worker
thread: measured here, ``binascii.a2b_base64`` costs 3.8-5.7 ms per MB of
base64 text (idle vs loaded machine), so 1 MiB is about the 5 ms a task may
hold the event loop; the thread hop costs well under 1 ms.
"""

from __future__ import annotations

import binascii
import math
import struct
from typing import Any

import attrs
import trio

from ..errors import BadRequest, BrowserdError, CdpError, Conflict
from .actor import TabActor
from .geometry import oopif_offset
from .resolve import ElementHandle
from .routing import send_in

__all__ = [
    "DEFAULT_JPEG_QUALITY",
    "FALLBACK_JPEG_QUALITY",
    "MAX_BYTES",
    "MAX_PIXELS",
    "MAX_SIDE_PX",
    "THREAD_DECODE_MIN_CHARS",
    "Capture",
    "decode_base64",
    "fit_scale",
    "image_size",
    "pdf",
    "screenshot",
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

_MIME = {"png": "image/png", "jpeg": "image/jpeg"}
_EXT = {"image/png": "png", "image/jpeg": "jpeg", "application/pdf": "pdf"}
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_MAX_SHRINK_ATTEMPTS = 3


@attrs.frozen(kw_only=True)
class Capture:
    """One finished capture: the file's bytes and what they are.

    ``width``/``height`` are the image's pixel size read from its header;
    ``scaled`` is true when a limit made the image smaller than the region at
    scale 1; ``note`` explains any limit that applied (scaling, a format
    change), else None.
    """

    data: bytes = attrs.field(repr=lambda d: f"<{len(d)} bytes>")
    width: int
    height: int
    mime: str
    scaled: bool
    note: str | None

    @property
    def ext(self) -> str:
        """The file extension for :attr:`mime` (``png`` or ``jpeg``)."""
        return _EXT[self.mime]


@attrs.frozen(kw_only=True)
class _Region:
    """What to capture: ``clip`` None means the viewport as shown."""

    clip: dict[str, float] | None
    width: float  # CSS px of the region
    height: float
    viewport_clip: dict[str, float]  # the visible viewport as a clip (for scaling it)
    beyond_viewport: bool
    device_scale: float
    what: str  # "viewport" | "page" | "element"


async def screenshot(
    tab: TabActor,
    *,
    full_page: bool = False,
    fmt: str = "png",
    quality: int | None = None,
    element: ElementHandle | None = None,
    max_bytes: int = MAX_BYTES,
    front_lock: trio.Lock | None = None,
) -> Capture:
    """Capture the tab's viewport, whole page (``full_page``) or ``element``.

    ``fmt`` is ``"png"`` or ``"jpeg"``; ``quality`` (0-100) only applies to
    JPEG (default :data:`DEFAULT_JPEG_QUALITY`). See the module docstring for
    regions and limits. ``front_lock`` is the browser-wide lock that
    serialises "bring to front, capture" across tabs (see the module
    docstring); None uses a private one, which is only right when nothing
    else captures in that browser at the same time.

    Errors: BadRequest for bad arguments (quality with PNG, full_page with an
    element, an unknown format), for an element without a visible box, and
    if the image cannot be brought under ``max_bytes``; CdpError if Chromium
    refuses the capture or returns something that is not a valid image;
    BrowserGone/TargetCrashed from the tab's session.

    On cancellation: the pending CDP command is abandoned (its reply is
    dropped); if a beyond-viewport capture already ran, restoring the
    headless viewport is still attempted, shielded and bounded to 2 s.
    """
    if fmt not in _MIME:
        raise BadRequest(f"format must be png or jpeg, got {fmt!r}", field="format")
    if fmt == "png" and quality is not None:
        raise BadRequest("quality applies to JPEG only", field="quality",
                         hint="drop quality, or ask for format: jpeg")
    if quality is not None and not 0 <= quality <= 100:
        raise BadRequest("quality must be 0-100", field="quality")
    if full_page and element is not None:
        raise BadRequest("fullPage and an element are exclusive",
                         hint="capture either the whole page or one element")
    if fmt == "jpeg" and quality is None:
        quality = DEFAULT_JPEG_QUALITY

    region = await _region(tab, full_page=full_page, element=element)
    restore = _Restorer(tab)
    lock = front_lock if front_lock is not None else trio.Lock()
    try:
        return await _capture_within_limits(tab, region, fmt, quality, max_bytes, restore, lock)
    finally:
        await restore.run()


async def _capture_within_limits(
    tab: TabActor, region: _Region, fmt: str, quality: int | None, max_bytes: int,
    restore: _Restorer, lock: trio.Lock,
) -> Capture:
    notes: list[str] = []
    out_w = region.width * region.device_scale
    out_h = region.height * region.device_scale
    scale = fit_scale(out_w, out_h)
    clip = region.clip
    if scale < 1:
        clip = clip if clip is not None else region.viewport_clip
        notes.append(
            f"the {region.what} is {math.ceil(out_w)}x{math.ceil(out_h)} px, over the limit of "
            f"{MAX_SIDE_PX} px per side / {MAX_PIXELS // 1_000_000} MP; scaled by {scale:g}"
        )

    async def shoot(fmt_: str, quality_: int | None, scale_: float, fast: bool) -> bytes:
        clip_ = None if clip is None else {**clip, "scale": scale_}
        if region.beyond_viewport:
            restore.needed = True
        return await _capture(tab, fmt_, quality_, clip_, region.beyond_viewport, fast, lock)

    data = await shoot(fmt, quality, scale, True)
    mime = _MIME[fmt]
    if len(data) > max_bytes and fmt == "png":
        first = len(data)
        data = await shoot("png", None, scale, False)
        if len(data) <= max_bytes:
            notes.append(f"the PNG was {_mb(first)}, over {_mb(max_bytes)}; "
                         "re-encoded with better compression")
        else:
            data = await shoot("jpeg", FALLBACK_JPEG_QUALITY, scale, True)
            mime, quality = _MIME["jpeg"], FALLBACK_JPEG_QUALITY
            notes.append(f"the PNG was {_mb(first)}, over {_mb(max_bytes)}; "
                         f"re-captured as JPEG quality {FALLBACK_JPEG_QUALITY}")
    attempts = 0
    while len(data) > max_bytes:
        attempts += 1
        if attempts > _MAX_SHRINK_ATTEMPTS:
            raise BadRequest(
                f"the {region.what} stays above {_mb(max_bytes)} even scaled down",
                hint="capture a smaller region (the viewport or one element)",
            )
        clip = clip if clip is not None else region.viewport_clip
        before = len(data)
        quality = min(quality or FALLBACK_JPEG_QUALITY, FALLBACK_JPEG_QUALITY)
        scale = _floor4(scale * math.sqrt(max_bytes / before) * 0.9)
        if scale <= 0:
            raise BadRequest(f"the {region.what} cannot be brought under {_mb(max_bytes)}")
        data = await shoot("jpeg", quality, scale, True)
        mime = _MIME["jpeg"]
        notes.append(f"the JPEG was {_mb(before)}, over {_mb(max_bytes)}; scaled by {scale:g}")
    width, height = image_size(data, mime)
    return Capture(data=data, width=width, height=height, mime=mime,
                   scaled=scale < 1, note="; ".join(notes) or None)


async def _capture(tab: TabActor, fmt: str, quality: int | None, clip: dict[str, float] | None,
                   beyond_viewport: bool, fast: bool, lock: trio.Lock) -> bytes:
    params: dict[str, Any] = {"format": fmt, "optimizeForSpeed": fast, "fromSurface": True}
    if fmt == "jpeg" and quality is not None:
        params["quality"] = quality
    if clip is not None:
        params["clip"] = clip
    if beyond_viewport:
        params["captureBeyondViewport"] = True
    async with lock:
        await tab.send("Page.bringToFront")
        tab.mark_focused()
        result = await tab.send("Page.captureScreenshot", params)
    data = await decode_base64(result.get("data"))
    if not data:
        raise CdpError("Chromium returned an empty screenshot", method="Page.captureScreenshot")
    return data


class _Restorer:
    """Undoes the scrollbar side effect of beyond-viewport captures (see module doc)."""

    def __init__(self, tab: TabActor) -> None:
        self.tab = tab
        self.needed = False

    async def run(self) -> None:
        metrics = self.tab.device_metrics()  # the emulated viewport, else browserd's own
        if not self.needed or metrics is None:
            return
        with trio.CancelScope(shield=True), trio.move_on_after(2):
            try:
                await self.tab.send("Emulation.clearDeviceMetricsOverride")
                await self.tab.send("Emulation.setDeviceMetricsOverride", metrics)
            except BrowserdError:
                pass  # the tab is gone or crashed: nothing left to restore


# -- regions ---------------------------------------------------------------------------------


async def _region(tab: TabActor, *, full_page: bool, element: ElementHandle | None) -> _Region:
    if element is not None:
        return await _element_region(tab, element)
    metrics = await tab.send("Page.getLayoutMetrics")
    scale = _device_scale(metrics)
    visual = metrics.get("cssVisualViewport") or {}
    viewport_clip = _viewport_clip(metrics)
    if not full_page:
        # The capture includes scrollbars; the visual viewport's client size does not.
        return _Region(clip=None, width=viewport_clip["width"], height=viewport_clip["height"],
                       viewport_clip=viewport_clip, beyond_viewport=False,
                       device_scale=scale, what="viewport")
    content = metrics.get("cssContentSize") or metrics.get("contentSize") or {}
    width = max(1, math.ceil(float(content.get("width", 0))))
    height = max(1, math.ceil(float(content.get("height", 0))))
    clip = {"x": float(content.get("x", 0)), "y": float(content.get("y", 0)),
            "width": float(width), "height": float(height), "scale": 1.0}
    fits = width <= float(visual.get("clientWidth", 0)) and height <= float(
        visual.get("clientHeight", 0))
    return _Region(clip=clip, width=width, height=height, viewport_clip=viewport_clip,
                   beyond_viewport=not fits, device_scale=scale, what="page")


async def _element_region(tab: TabActor, element: ElementHandle) -> _Region:
    await _scroll_into_view(tab, element)
    # One geometry for every element (see browserd.tabs.geometry): walks
    # nested out-of-process iframes up to the page, scrolling each into view.
    offset = await oopif_offset(tab, element.session)
    if offset is None:
        raise BadRequest(
            "cannot place this element: its frame's position in the page is unknown",
            hint="capture the page (fullPage) or an element of the top document",
        )
    offset_x, offset_y = offset
    quads = await _quads(tab, element)
    xs = [q[i] for q in quads for i in range(0, 8, 2)]
    ys = [q[i] for q in quads for i in range(1, 8, 2)]
    left, top = min(xs) + offset_x, min(ys) + offset_y
    width, height = max(xs) - min(xs), max(ys) - min(ys)
    if width < 1 or height < 1:
        raise BadRequest(
            f"the element's box is {width:g}x{height:g} px: nothing to capture",
            hint="capture a visible element, or the page with fullPage",
        )
    metrics = await tab.send("Page.getLayoutMetrics")
    visual = metrics.get("cssVisualViewport") or {}
    page_x, page_y = float(visual.get("pageX", 0)), float(visual.get("pageY", 0))
    fits = (left >= 0 and top >= 0
            and left + width <= float(visual.get("clientWidth", 0))
            and top + height <= float(visual.get("clientHeight", 0)))
    clip = {"x": left + page_x, "y": top + page_y, "width": width, "height": height,
            "scale": 1.0}
    return _Region(clip=clip, width=width, height=height, viewport_clip=_viewport_clip(metrics),
                   beyond_viewport=not fits, device_scale=_device_scale(metrics),
                   what="element")


async def _scroll_into_view(tab: TabActor, element: ElementHandle) -> None:
    try:
        await send_in(tab, element.session, "DOM.scrollIntoViewIfNeeded",
                      {"objectId": element.object_id})
    except CdpError:
        pass  # e.g. "Node does not have a layout object": _quads reports it properly


async def _quads(tab: TabActor, element: ElementHandle) -> list[list[float]]:
    try:
        result = await send_in(tab, element.session, "DOM.getContentQuads",
                               {"objectId": element.object_id})
    except CdpError as exc:
        raise BadRequest(f"the element has no box to capture ({exc.message})",
                         hint="it is hidden (display: none) or detached; take a new snapshot"
                         ) from None
    quads = [q for q in result.get("quads", []) if len(q) == 8]
    if not quads:
        raise BadRequest("the element has no visible box to capture",
                         hint="it is hidden or outside any layout; scroll or pick another")
    return quads


def _viewport_clip(metrics: dict[str, Any]) -> dict[str, float]:
    visual = metrics.get("cssVisualViewport") or {}
    layout = metrics.get("cssLayoutViewport") or {}
    return {"x": float(visual.get("pageX", 0)), "y": float(visual.get("pageY", 0)),
            "width": float(max(visual.get("clientWidth", 0), layout.get("clientWidth", 0), 1)),
            "height": float(max(visual.get("clientHeight", 0), layout.get("clientHeight", 0), 1)),
            "scale": 1.0}


def _device_scale(metrics: dict[str, Any]) -> float:
    """Device pixels per CSS pixel (the deprecated metrics are in device pixels)."""
    css = float((metrics.get("cssVisualViewport") or {}).get("clientWidth") or 0)
    device = float((metrics.get("visualViewport") or {}).get("clientWidth") or 0)
    if css <= 0 or device <= 0:
        return 1.0
    return max(device / css, 0.1)


# -- limits and formats ----------------------------------------------------------------------


def fit_scale(width_px: float, height_px: float) -> float:
    """The largest scale ≤ 1 (floored to 4 decimals) that keeps an image of
    ``width_px``x``height_px`` output pixels within MAX_SIDE_PX and MAX_PIXELS."""
    width_px, height_px = max(width_px, 1.0), max(height_px, 1.0)
    scale = min(1.0, MAX_SIDE_PX / width_px, MAX_SIDE_PX / height_px,
                math.sqrt(MAX_PIXELS / (width_px * height_px)))
    return 1.0 if scale >= 1.0 else _floor4(scale)


def _floor4(value: float) -> float:
    return math.floor(value * 10_000) / 10_000


def _mb(n: int) -> str:
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


# -- PDF -------------------------------------------------------------------------------------


async def pdf(tab: TabActor) -> bytes:
    """Print the tab to PDF (backgrounds included) and return the file's bytes.

    Errors: :class:`~browserd.errors.Conflict` (409 CONFLICT) when Chromium
    refuses to print — some builds only print in headless mode, so this is a
    state of the browser, not a transient fault, and the hint says how to
    restart it headless; CdpError if the answer is not a PDF;
    BrowserGone/TargetCrashed from the tab's session.

    On cancellation: the print command is abandoned (Chromium finishes it and
    its reply is dropped).
    """
    try:
        result = await tab.send("Page.printToPDF", {
            "printBackground": True, "transferMode": "ReturnAsBase64"})
    except CdpError as exc:
        raise Conflict(
            f"Chromium refused to print this tab to PDF: {exc.message}",
            hint="some Chromium builds print only when headless: POST /stop, then "
                 "POST /start {\"headless\": true}",
        ) from None
    data = await decode_base64(result.get("data"))
    if not data.startswith(b"%PDF-"):
        raise CdpError("Chromium's printToPDF answer is not a PDF", method="Page.printToPDF")
    return data
