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
:data:`MAX_SIDE_PX` output pixels per side and :data:`MAX_PIXELS` in total,
and at most ``max_bytes`` (default :data:`MAX_BYTES`; :data:`INLINE_MAX_BYTES`
for an image returned inline). A viewport or element region beyond the pixel
limits is scaled down (``scaled=True``); a full page never is — it is clipped
to the top of the page at scale 1 (``clipped=True``, ``page_height``), since
a long page scaled to fit is a strip nobody can read. A PNG of at most
:data:`COMPACT_PNG_MAX_PIXELS` output pixels (a viewport, most elements) is
encoded for size (without ``optimizeForSpeed``, as Playwright does: 22-30%
smaller for a viewport, ~10-15 ms more), a larger one for speed. A PNG above the byte
limit is re-encoded without ``optimizeForSpeed`` (measured 1.3-3.5x smaller,
at 2-2.5x the encode time) unless it already was, then re-captured as JPEG quality
:data:`FALLBACK_JPEG_QUALITY`, then at :data:`LOW_JPEG_QUALITY`, then scaled
down (a full page: clipped shorter); the note says what happened. Every
result is checked: its signature and its dimensions are read from the image
header, never assumed (:mod:`browserd.tabs.imaging`).

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
afterwards (again, until the scrollbars are back: see ``_Restorer``), which
brings them back; a headed tab without one keeps the quirk until its next
navigation.

Base64 payloads above :data:`THREAD_DECODE_MIN_CHARS` are decoded (and
inline images encoded) in a worker thread (see :mod:`browserd.tabs.imaging`).
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import trio

from ..errors import BadRequest, BrowserdError, CdpError, Conflict
from .actor import TabActor
from .geometry import oopif_offset
from .imaging import (
    COMPACT_PNG_MAX_PIXELS,
    DEFAULT_JPEG_QUALITY,
    FALLBACK_JPEG_QUALITY,
    INLINE_MAX_BYTES,
    LOW_JPEG_QUALITY,
    MAX_BYTES,
    MAX_PIXELS,
    MAX_SIDE_PX,
    THREAD_DECODE_MIN_CHARS,
    decode_base64,
    encode_base64,
    fit_scale,
    floor4,
    image_size,
    mb,
)
from .pagejs import page_function
from .resolve import ElementHandle
from .routing import send_in
from .worlds import world_evaluate

__all__ = [
    "DEFAULT_JPEG_QUALITY",
    "FALLBACK_JPEG_QUALITY",
    "INLINE_MAX_BYTES",
    "LOW_JPEG_QUALITY",
    "MAX_BYTES",
    "MAX_PIXELS",
    "MAX_SIDE_PX",
    "THREAD_DECODE_MIN_CHARS",
    "Capture",
    "decode_base64",
    "encode_base64",
    "fit_scale",
    "image_size",
    "pdf",
    "screenshot",
]

_MIME = {"png": "image/png", "jpeg": "image/jpeg"}
_EXT = {"image/png": "png", "image/jpeg": "jpeg", "application/pdf": "pdf"}
_MAX_SHRINK_ATTEMPTS = 4
_SCROLLBAR_GUTTER = page_function("scrollbarGutter").call()
"""The main document's ``innerWidth - clientWidth`` (its scrollbar gutter), asked in
browserd's world."""


@attrs.frozen(kw_only=True)
class Capture:
    """One finished capture: the file's bytes and what they are.

    ``width``/``height`` are the image's pixel size read from its header;
    ``scaled`` is true when a limit made the image smaller than the region at
    scale 1; ``clipped`` when a full-page capture shows only the top of the
    page (``page_height``, CSS px, is the whole page's height; None unless
    full page); ``note`` explains any limit that applied (scaling, clipping,
    a format change), else None. ``region`` is what was captured
    (``viewport``, ``page`` or ``element``) and ``css_width``/``css_height``
    its size in CSS pixels as captured (a clipped page: the part shown), so
    an image pixel is ``width / css_width`` CSS pixels wide.
    """

    data: bytes = attrs.field(repr=lambda d: f"<{len(d)} bytes>")
    width: int
    height: int
    mime: str
    scaled: bool
    note: str | None
    clipped: bool = False
    page_height: float | None = None
    region: str = "viewport"
    css_width: float = 0.0
    css_height: float = 0.0

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
    page_height: float | None = None  # full page: the whole page's CSS height
    clipped: bool = False  # full page: the clip shows only the top of the page


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
    dropped); if a beyond-viewport capture already ran, restoring the tab's
    device metrics (its emulated viewport, else browserd's headless one) is
    still attempted, shielded and bounded to 2 s.
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
    if region.clipped and region.page_height is not None and clip is not None:
        notes.append(
            f"the page is {math.ceil(region.page_height)} px tall, over the limit of "
            f"{MAX_SIDE_PX} px per side / {MAX_PIXELS // 1_000_000} MP; clipped to the top "
            f"{math.floor(clip['height'])} px (never scaled below its width)")
    if scale < 1:
        clip = clip if clip is not None else region.viewport_clip
        notes.append(
            f"the {region.what} is {math.ceil(out_w)}x{math.ceil(out_h)} px, over the limit of "
            f"{MAX_SIDE_PX} px per side / {MAX_PIXELS // 1_000_000} MP; scaled by {scale:g}"
        )

    async def shoot(fmt_: str, quality_: int | None, scale_: float, fast: bool) -> bytes:
        clip_ = None if clip is None else {**clip, "scale": scale_}
        if region.beyond_viewport and not restore.needed:
            restore.gutter = await restore.gutter_now()
            restore.needed = True
        return await _capture(tab, fmt_, quality_, clip_, region.beyond_viewport, fast, lock)

    # Small PNGs (a viewport, an element) are encoded for size, large ones for speed.
    fast = fmt != "png" or out_w * out_h * scale * scale > COMPACT_PNG_MAX_PIXELS
    data = await shoot(fmt, quality, scale, fast)
    mime = _MIME[fmt]
    if len(data) > max_bytes and fmt == "png":
        first = len(data)
        if fast:
            data = await shoot("png", None, scale, False)
        if len(data) <= max_bytes:
            notes.append(f"the PNG was {mb(first)}, over {mb(max_bytes)}; "
                         "re-encoded with better compression")
        else:
            data = await shoot("jpeg", FALLBACK_JPEG_QUALITY, scale, True)
            mime, quality = _MIME["jpeg"], FALLBACK_JPEG_QUALITY
            notes.append(f"the PNG was {mb(first)}, over {mb(max_bytes)}; "
                         f"re-captured as JPEG quality {FALLBACK_JPEG_QUALITY}")
    clipped = region.clipped
    attempts = 0
    while len(data) > max_bytes:
        attempts += 1
        if attempts > _MAX_SHRINK_ATTEMPTS:
            raise BadRequest(
                f"the {region.what} stays above {mb(max_bytes)} even scaled down",
                hint="capture a smaller region (the viewport or one element)",
            )
        clip = clip if clip is not None else region.viewport_clip
        before = len(data)
        if mime != _MIME["jpeg"] or (quality or 100) > LOW_JPEG_QUALITY:
            # First a lower quality at the same size.
            quality = LOW_JPEG_QUALITY
            data = await shoot("jpeg", quality, scale, True)
            mime = _MIME["jpeg"]
            notes.append(f"the image was {mb(before)}, over {mb(max_bytes)}; "
                         f"re-encoded as JPEG quality {LOW_JPEG_QUALITY}")
            continue
        if region.what == "page":
            # A page is never scaled below its width: it shows less of its height.
            height = math.floor(clip["height"] * max_bytes / before * 0.9)
            if height < 1:
                raise BadRequest(f"the page cannot be brought under {mb(max_bytes)}")
            clip = {**clip, "height": float(height)}
            clipped = True
            data = await shoot("jpeg", quality, scale, True)
            notes.append(f"the JPEG was {mb(before)}, over {mb(max_bytes)}; clipped to the "
                         f"top {height} px of the page")
            continue
        scale = floor4(scale * math.sqrt(max_bytes / before) * 0.9)
        if scale <= 0:
            raise BadRequest(f"the {region.what} cannot be brought under {mb(max_bytes)}")
        data = await shoot("jpeg", quality, scale, True)
        notes.append(f"the JPEG was {mb(before)}, over {mb(max_bytes)}; scaled by {scale:g}")
    width, height_px = image_size(data, mime)
    return Capture(data=data, width=width, height=height_px, mime=mime,
                   scaled=scale < 1, note="; ".join(notes) or None, clipped=clipped,
                   page_height=region.page_height, region=region.what,
                   css_width=clip["width"] if clip is not None else region.width,
                   css_height=clip["height"] if clip is not None else region.height)


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
    """Undoes the scrollbar side effect of beyond-viewport captures (see module doc).

    Chromium's own restore after such a capture is asynchronous and now and then
    (~1 in 150) lands after ours: so the scrollbar gutter is measured before the
    capture and the override re-applied until it is back (bounded: 2 s)."""

    def __init__(self, tab: TabActor) -> None:
        self.tab = tab
        self.needed = False
        self.gutter: Any = None

    async def gutter_now(self) -> Any:
        """``innerWidth - clientWidth`` of the main document (browserd's world), or None."""
        try:
            return (await world_evaluate(self.tab, self.tab.session, self.tab.main_frame_id,
                                         _SCROLLBAR_GUTTER)).get("value")
        except BrowserdError:
            return None

    async def run(self) -> None:
        metrics = self.tab.device_metrics()  # the emulated viewport, else browserd's own
        if not self.needed or metrics is None:
            return
        with trio.CancelScope(shield=True), trio.move_on_after(2):
            try:
                while True:
                    await self.tab.send("Emulation.clearDeviceMetricsOverride")
                    await self.tab.send("Emulation.setDeviceMetricsOverride", metrics)
                    if not self.gutter or await self.gutter_now() != 0:
                        return
                    await trio.sleep(0.05)  # Chromium's own restore is still to come
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
    page_width = max(1, math.ceil(float(content.get("width", 0))))
    page_height = max(1, math.ceil(float(content.get("height", 0))))
    # Never scaled (a 265 px wide page is unreadable): clipped to the limits at scale 1.
    width = min(page_width, max(1, math.floor(MAX_SIDE_PX / scale)))
    height_cap = min(MAX_SIDE_PX, MAX_PIXELS / (width * scale)) / scale
    height = min(page_height, max(1, math.floor(height_cap)))
    clip = {"x": float(content.get("x", 0)), "y": float(content.get("y", 0)),
            "width": float(width), "height": float(height), "scale": 1.0}
    fits = width <= float(visual.get("clientWidth", 0)) and height <= float(
        visual.get("clientHeight", 0))
    return _Region(clip=clip, width=width, height=height, viewport_clip=viewport_clip,
                   beyond_viewport=not fits, device_scale=scale, what="page",
                   page_height=float(page_height),
                   clipped=(width, height) != (page_width, page_height))


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
