"""Tab thumbnails for the ops page: small JPEGs, cached briefly, shared by all viewers.

A capture needs its tab in front (see :mod:`browserd.tabs.capture`), so a
thumbnail goes through the browser's capture admission (503 OVERLOADED
when full) and, under its front lock, brings the tab to the front,
captures the visual viewport scaled to :data:`THUMB_WIDTH` px wide, and
brings the tab that should be in front (a live view's tab, else the
agent's current tab) back. Only a headless browser is shuffled like that:
in a headed browser the person sees its window, so only the tab that is
already current gets a thumbnail (:func:`may_capture`).

Thumbnails are cached for :data:`THUMB_TTL_S` per tab, and concurrent
requests for one tab share one capture. Every CDP call runs under
:data:`CAPTURE_DEADLINE_S`; a tab with an open JavaScript dialog or a
crashed renderer gets none (the capture could not answer). Errors come out
as BrowserdError; cancellation abandons the capture (the cache is left as
it was).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import attrs
import trio

from ..errors import BrowserdError, Conflict
from ..supervisor.runtime import BrowserRuntime
from ..tabs.actor import TabActor
from ..tabs.capture import decode_base64

__all__ = ["CAPTURE_DEADLINE_S", "THUMB_QUALITY", "THUMB_TTL_S", "THUMB_WIDTH", "Thumbnail",
           "ThumbnailCache", "may_capture"]

THUMB_WIDTH = 320
THUMB_QUALITY = 60
THUMB_TTL_S = 4.0
CAPTURE_DEADLINE_S = 5.0
_KEPT = 64


@attrs.frozen(kw_only=True)
class Thumbnail:
    """One JPEG and when it was taken (the cache's clock)."""

    data: bytes = attrs.field(repr=lambda d: f"<{len(d)} bytes>")
    taken_at: float


def may_capture(tab: TabActor, *, shuffle_front: bool, current: str | None) -> bool:
    """Whether ``tab`` may be captured now (module docstring)."""
    if tab.halted() is not None:
        return False
    return shuffle_front or tab.target_id == current


class ThumbnailCache:
    """Per-tab thumbnails of one service (entries of gone tabs age out)."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic,
                 ttl_s: float = THUMB_TTL_S) -> None:
        self._clock = clock
        self._ttl = ttl_s
        self._cache: dict[str, Thumbnail] = {}
        self._inflight: dict[str, trio.Event] = {}

    async def get(self, runtime: BrowserRuntime, tab: TabActor, *,
                  front: TabActor | None, shuffle_front: bool) -> Thumbnail:
        """A thumbnail of ``tab`` no older than the TTL; ``front`` is put back in front."""
        target_id = tab.target_id
        while True:
            cached = self._cache.get(target_id)
            if cached is not None and self._clock() - cached.taken_at < self._ttl:
                return cached
            inflight = self._inflight.get(target_id)
            if inflight is None:
                break
            await inflight.wait()  # another viewer is capturing this tab
            if target_id not in self._cache:
                break  # that capture failed: try ourselves
        done = self._inflight[target_id] = trio.Event()
        try:
            data = await _capture(runtime, tab, front=front if shuffle_front else None)
            thumb = Thumbnail(data=data, taken_at=self._clock())
            self._cache[target_id] = thumb
            while len(self._cache) > _KEPT:
                del self._cache[next(iter(self._cache))]
            return thumb
        finally:
            del self._inflight[target_id]
            done.set()


async def _capture(runtime: BrowserRuntime, tab: TabActor, *, front: TabActor | None) -> bytes:
    gate = runtime.captures
    gate.admit()
    async with gate.limiter, gate.front_lock:
        with trio.fail_after(CAPTURE_DEADLINE_S):
            if front is not None:
                await tab.send("Page.bringToFront")
            try:
                metrics = await tab.send("Page.getLayoutMetrics")
                viewport = metrics.get("cssVisualViewport") or {}
                width = float(viewport.get("clientWidth") or 0)
                height = float(viewport.get("clientHeight") or 0)
                if width <= 0 or height <= 0:
                    raise Conflict("the tab has no viewport to capture")
                shot = await tab.send("Page.captureScreenshot", {
                    "format": "jpeg", "quality": THUMB_QUALITY, "optimizeForSpeed": True,
                    "clip": {"x": float(viewport.get("pageX") or 0),
                             "y": float(viewport.get("pageY") or 0),
                             "width": width, "height": height,
                             "scale": min(1.0, THUMB_WIDTH / width)},
                })
            finally:
                if front is not None and front is not tab and not front.view().closed:
                    try:
                        await front.send("Page.bringToFront")
                    except BrowserdError:
                        pass  # that tab went away meanwhile: nothing to restore
    return await decode_base64(shot.get("data"))
