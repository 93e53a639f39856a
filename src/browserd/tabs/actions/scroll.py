"""Scrolling like a person: mouse-wheel events, with a script fallback that says so.

**What scrolls.** With no element: the page (the main document's viewport).
With an element (ref, selector or text): its *scroll container* — the
element itself when it scrolls, else its nearest scrolling ancestor, else
its document's viewport (``scroller: "element"`` or ``"page"`` in the
answer).

**How.** ``to: "top"`` / ``"bottom"`` and ``dx`` / ``dy`` send one real
``mouseWheel`` (``Input.dispatchMouseEvent``) with the needed delta: at the
viewport's centre for the page, at the element's visible centre (found by
:func:`~browserd.tabs.actions.pointer.locate`, which first scrolls it into
view) for an element. The position is then read until it stops moving.
When the wheel moved nothing although the container could move (a covering
element took the wheel, the element has no box, the page cancels wheel
events), the container is scrolled by script instead and the answer says
``method: "script"`` with a ``fallbackReason``. ``to: "intoView"`` (the
default with an element and no deltas) is ``DOM.scrollIntoViewIfNeeded``:
every scrolling ancestor moves so the element is shown (``method: "intoView"``).
With neither an element nor a direction, the page moves down by 90 % of the
viewport's height (one "page down").

Answers ``{ok, scrollX, scrollY, atTop, atBottom, scroller, method,
fallbackReason?}`` — the container's position after the move (CSS px).

Runs while the caller holds the tab's work slot, under its deadline, on
arguments its caller checked (``POST /scroll``: ``to`` one of
:data:`SCROLL_TO` and not with deltas, ``intoView`` with an element).
Errors: BadRequest (the element cannot be scrolled into view), RefNotFound /
StaleRef / NoMatch from resolving the element, DialogOpen
when a dialog opens (a scroll handler may open one; the wheel already sent
is not undone). Cancellation abandons the CDP call in flight; a wheel
already sent has moved what it moved.
"""

from __future__ import annotations

from typing import Any

import trio

from ...errors import BadRequest, CdpError, DialogOpen
from ..actor import TabActor
from ..pagejs import page_function
from ..resolve import ElementHandle
from ..routing import own_session_id, send_in
from ..worlds import decode_value, world_evaluate
from .element import call_on, gone_error, resolve_element
from .pointer import locate
from .records import ElementTarget

__all__ = ["PAGE_STEP", "SCROLL_TO", "scroll"]

SCROLL_TO = ("top", "bottom", "intoView")
PAGE_STEP = 0.9
"""The default move with nothing given: this share of the viewport's height, down."""
_POLL_S = 0.05
_STABLE_READS = 3
"""Reads without movement after which a scroll counts as finished."""
_SETTLE_S = 2.0
"""The longest a scroll is watched for movement."""

_SCROLL_STATE = page_function("scrollState")
_PAGE_SCROLL_STATE = page_function("pageScrollState")


async def scroll(tab: TabActor, target: ElementTarget | None, *, to: str | None = None,
                 dx: float | None = None, dy: float | None = None) -> dict[str, Any]:
    """Scroll the page or ``target``'s container; see the module docstring."""
    assert to is None or (dx is None and dy is None)  # (its route checked it)
    result, dialog = await tab.race_dialog(lambda: _scroll(tab, target, to, dx, dy))
    if dialog is not None:
        raise DialogOpen(f"a {dialog.type} dialog opened while scrolling: "
                         f"{dialog.message[:200]}", dialog=dialog.to_json())
    assert result is not None
    return result


async def _scroll(tab: TabActor, target: ElementTarget | None, to: str | None,
                  dx: float | None, dy: float | None) -> dict[str, Any]:
    handle = await resolve_element(tab, target) if target is not None else None
    if handle is not None and (to == "intoView" or (to is None and dx is None and dy is None)):
        try:
            await send_in(tab, handle.session, "DOM.scrollIntoViewIfNeeded",
                          {"objectId": handle.object_id})
        except CdpError as exc:
            gone = gone_error(exc)
            if gone is not None:
                raise gone from None
            raise BadRequest(f"the element cannot be scrolled into view ({exc.message})",
                             hint="it is hidden (display: none) or has no box") from None
        state = await _settled(tab, handle, None)
        return _answer(state, "intoView")
    before = await _state(tab, handle, "read")
    want_x, want_y = _wanted(before, to, dx, dy)
    if (want_x, want_y) == (before["x"], before["y"]):
        return _answer(before, "none")
    point, reason = await _wheel_point(tab, handle, before)
    moved = None
    if point is not None:
        await tab.send("Input.dispatchMouseEvent", {
            "type": "mouseWheel", "x": point[0], "y": point[1],
            "deltaX": want_x - before["x"], "deltaY": want_y - before["y"]})
        moved = await _settled(tab, handle, (want_x, want_y))
        if (moved["x"], moved["y"]) != (before["x"], before["y"]):
            return _answer(moved, "wheel")
        reason = "noWheelEffect"
    state = await _state(tab, handle, "to", want_x, want_y)
    state = await _settled(tab, handle, (want_x, want_y), first=state)
    return _answer(state, "script", reason)


def _wanted(state: dict[str, Any], to: str | None, dx: float | None, dy: float | None
            ) -> tuple[float, float]:
    """The position aimed at (clamped to the container's range)."""
    x, y = float(state["x"]), float(state["y"])
    if to == "top":
        return x, 0.0
    if to == "bottom":
        return x, float(state["maxY"])
    if dx is None and dy is None:
        dy = round(float(state["vh"]) * PAGE_STEP)
    return (min(max(x + (dx or 0.0), 0.0), float(state["maxX"])),
            min(max(y + (dy or 0.0), 0.0), float(state["maxY"])))


async def _wheel_point(tab: TabActor, handle: ElementHandle | None, state: dict[str, Any]
                       ) -> tuple[tuple[float, float] | None, str | None]:
    """Where the wheel goes (top-level CSS px), or None and why the script must do it."""
    if handle is None or (state["page"] and own_session_id(tab, handle.session) is None
                          and handle.frame_id == tab.main_frame_id):
        # The page: the centre of the viewport (an element of the main document
        # whose container is the page scrolls the same way).
        metrics = await tab.send("Page.getLayoutMetrics")
        visual = metrics.get("cssVisualViewport") or {}
        return (float(visual.get("clientWidth", 0)) / 2,
                float(visual.get("clientHeight", 0)) / 2), None
    spot = await locate(tab, handle)
    if spot.x is None or spot.y is None:
        return None, spot.reason
    return (spot.x, spot.y), None


async def _state(tab: TabActor, handle: ElementHandle | None, op: str,
                 a: float | None = None, b: float | None = None) -> dict[str, Any]:
    """The container's position (after moving it by script for ``op`` "by"/"to")."""
    if handle is not None:
        value = await call_on(tab, handle, _SCROLL_STATE, op, a, b)
    else:
        value = decode_value(await world_evaluate(tab, tab.session, tab.main_frame_id,
                                                  _PAGE_SCROLL_STATE.call(op, a, b)))
    if not isinstance(value, dict):
        raise CdpError("the page did not report its scroll position")
    return value


async def _settled(tab: TabActor, handle: ElementHandle | None,
                   want: tuple[float, float] | None, *, first: dict[str, Any] | None = None
                   ) -> dict[str, Any]:
    """Read the position until it reaches ``want`` or stops moving (bounded)."""
    state = first if first is not None else await _state(tab, handle, "read")
    still = 0
    with trio.move_on_after(_SETTLE_S):
        while True:
            if want is not None and _near((state["x"], state["y"]), want):
                break
            await trio.sleep(_POLL_S)
            now = await _state(tab, handle, "read")
            still = still + 1 if _near((now["x"], now["y"]), (state["x"], state["y"])) else 0
            state = now
            if still >= _STABLE_READS:
                break
    return state


def _near(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return abs(float(a[0]) - float(b[0])) < 1 and abs(float(a[1]) - float(b[1])) < 1


def _answer(state: dict[str, Any], method: str, reason: str | None = None) -> dict[str, Any]:
    x, y = float(state["x"]), float(state["y"])
    out: dict[str, Any] = {
        "ok": True, "scrollX": round(x, 1), "scrollY": round(y, 1),
        "atTop": y <= 1, "atBottom": y >= float(state["maxY"]) - 1,
        "scroller": "page" if state["page"] else "element", "method": method,
    }
    if reason is not None:
        out["fallbackReason"] = reason
    return out
