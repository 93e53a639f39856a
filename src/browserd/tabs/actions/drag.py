"""Drag with the real mouse: press on an element, move in steps, release over the target.

Both kinds of drag a page may implement work with the same gesture:

- **pointer drags** (mousedown/mousemove/mouseup or pointer events, as
  sortable and map libraries do) see real mouse events at every step;
- **native HTML5 drag-and-drop** (``draggable``, ``dragstart``/``drop``):
  while the drag runs, ``Input.setInterceptDrags`` is on, so when the page
  starts a drag Chromium hands its data to us (``Input.dragIntercepted``)
  instead of running an OS drag loop, and the rest of the gesture is sent as
  ``Input.dispatchDragEvent`` (dragEnter, dragOver… and drop), then the mouse
  is released (``dragend``).

:func:`drop_files` drops host files (already checked against the upload
roots) onto a drop zone as if dragged in from outside the browser: drag
events only (dragEnter, dragOver, drop), no mouse.

Points are top-level viewport CSS pixels (OOPIF offsets included, see
:func:`browserd.tabs.actions.pointer.locate`). The source must be visible
and not covered (409 otherwise: a person could not grab it either); the
target is the centre of its visible box, covered or not (the dragged item
often covers it). Runs in the tab's work slot. On error or cancellation
the gesture is ended (a started native drag is cancelled, the button
released) and interception turned off, shielded and bounded.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import trio

from ...errors import BrowserdError, Conflict
from ..actor import TabActor
from .element import resolve_element, send_input
from .pointer import Spot, locate
from .records import Drag, Progress

__all__ = ["CLEANUP_S", "LATE_DRAG_S", "drag", "drop_files"]

LATE_DRAG_S = 0.1
"""After the last move, how long to wait for a native drag the page starts late."""
CLEANUP_S = 2.0
"""Bound on ending an interrupted gesture."""


def _grab_point(spot: Spot, what: str) -> tuple[float, float]:
    if spot.usable:
        assert spot.x is not None and spot.y is not None
        return spot.x, spot.y
    if what == "to" and spot.x is not None and spot.y is not None:
        return spot.x, spot.y  # covered: still the place to drop on
    details: dict[str, Any] = {"reason": spot.reason}
    if spot.covered_by is not None:
        details["coveredBy"] = spot.covered_by
    reason = {"covered": "another element covers it", "noBox": "it has no visible box",
              "offscreen": "it is outside the viewport",
              "frame": "its frame's position is unknown"}.get(spot.reason or "", "")
    raise Conflict(f"cannot drag {'from' if what == 'from' else 'to'} the element: {reason}",
                   hint="take a snapshot; scroll or close what covers it", **details)


class _Gesture:
    """One drag gesture's state: what has been sent, so it can be ended cleanly."""

    def __init__(self, tab: TabActor) -> None:
        self.tab = tab
        self.pressed = False
        self.data: dict[str, Any] | None = None  # the intercepted native drag's data
        self.entered = False
        self.dropped = False
        self.intercepted = trio.Event()
        self.at = (0.0, 0.0)

    async def mouse(self, kind: str, x: float, y: float, **extra: Any) -> None:
        params = {"type": kind, "x": x, "y": y, "modifiers": self.tab.input.modifiers, **extra}
        await self.tab.send("Input.dispatchMouseEvent", params)
        self.at = (x, y)

    async def drag_event(self, kind: str, x: float, y: float) -> None:
        assert self.data is not None
        await self.tab.send("Input.dispatchDragEvent", {
            "type": kind, "x": x, "y": y, "data": self.data,
            "modifiers": self.tab.input.modifiers})
        self.at = (x, y)

    async def move_to(self, x: float, y: float) -> None:
        if self.data is None:
            await self.mouse("mouseMoved", x, y, button="left", buttons=1)
        else:
            await self.drag_event("dragOver" if self.entered else "dragEnter", x, y)
            self.entered = True

    async def pump(self, events: Any) -> None:
        """Take the first ``Input.dragIntercepted`` (the page started a native drag)."""
        with contextlib.suppress(BrowserdError):
            async for event in events:
                if self.data is None:
                    data = event.params.get("data")
                    self.data = data if isinstance(data, dict) else {"items": [],
                                                                     "dragOperationsMask": 1}
                    self.intercepted.set()

    async def end(self) -> None:
        """End whatever is still open (shielded, bounded); errors are swallowed."""
        with trio.CancelScope(shield=True), trio.move_on_after(CLEANUP_S):
            x, y = self.at
            with contextlib.suppress(BrowserdError):
                if self.data is not None and not self.dropped:
                    await self.drag_event("dragCancel", x, y)
            with contextlib.suppress(BrowserdError):
                if self.pressed:
                    await self.mouse("mouseReleased", x, y, button="left", buttons=0,
                                     clickCount=1)
                    self.pressed = False
            with contextlib.suppress(BrowserdError):
                await self.tab.send("Input.setInterceptDrags", {"enabled": False})


async def drag(tab: TabActor, action: Drag, *, progress: Progress | None = None
               ) -> dict[str, Any]:
    """Drag ``action.source`` to its ``target`` (an element) or ``point`` (viewport CSS
    pixels) in ``action.steps`` moves.

    Answers ``{ok, native, from: {x, y}, to: {x, y}, effects}`` (``native``:
    the page started an HTML5 drag-and-drop, which was dropped on the
    target). The record is a checked one (one source, one drop place).
    Raises the ref engine's errors (both elements are resolved before any
    input), Conflict when the source cannot be grabbed or the target has no
    visible box, DialogOpen when a dialog opened before the press.
    """
    source, target, point, steps = action.source, action.target, action.point, action.steps
    assert source is not None
    progress = progress if progress is not None else Progress()
    source_handle = await resolve_element(tab, source)
    target_handle = await resolve_element(tab, target) if target is not None else None
    gesture = _Gesture(tab)
    ends: dict[str, tuple[float, float]] = {}

    async def run() -> None:
        start = _grab_point(await locate(tab, source_handle), "from")
        events = tab.session.subscribe(frozenset({"Input.dragIntercepted"}), buffer=16)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(gesture.pump, events)
                try:
                    await tab.send("Input.setInterceptDrags", {"enabled": True})
                    await gesture.mouse("mouseMoved", *start)
                    progress.sent = True
                    gesture.pressed = True
                    await gesture.mouse("mousePressed", *start, button="left", buttons=1,
                                        clickCount=1)
                    if target_handle is not None:
                        end = _grab_point(await locate(tab, target_handle), "to")
                    else:
                        assert point is not None
                        end = point
                    ends.update({"from": start, "to": end})
                    for i in range(1, steps + 1):
                        f = i / steps
                        await gesture.move_to(start[0] + (end[0] - start[0]) * f,
                                              start[1] + (end[1] - start[1]) * f)
                    if gesture.data is None:  # a drag may begin on the last move
                        with trio.move_on_after(LATE_DRAG_S):
                            await gesture.intercepted.wait()
                    if gesture.data is not None:
                        if not gesture.entered:
                            await gesture.move_to(*end)  # dragEnter
                        await gesture.move_to(*end)  # a dragOver at the drop point
                        await gesture.drag_event("drop", *end)
                        gesture.dropped = True
                    await gesture.mouse("mouseReleased", *end, button="left", buttons=0,
                                        clickCount=1)
                    gesture.pressed = False
                    tab.input.move(*end)
                finally:
                    await gesture.end()
                    nursery.cancel_scope.cancel()
        finally:
            tab.connection.unsubscribe(events)

    effects = await send_input(tab, "drag", progress, run)
    start, end = ends.get("from", (0.0, 0.0)), ends.get("to", (0.0, 0.0))
    return {"ok": True, "native": gesture.dropped, "from": {"x": start[0], "y": start[1]},
            "to": {"x": end[0], "y": end[1]}, "effects": effects}


async def drop_files(tab: TabActor, action: Drag, *, progress: Progress | None = None
                     ) -> dict[str, Any]:
    """Drop ``action.files`` onto its ``target`` (an element) or ``point``, as dragged in
    from outside.

    Answers ``{ok, native: true, files: [names], to: {x, y}, effects}``. The
    record is a checked one (files, one drop place). Raises the ref
    engine's errors, Conflict when the target has no visible box. The page
    sees dragenter, dragover and drop with ``dataTransfer.files``; whether it
    accepts them is up to it (its ``drop`` handler).
    """
    files, point = action.files, action.point
    assert files is not None
    progress = progress if progress is not None else Progress()
    target_handle = (await resolve_element(tab, action.target) if action.target is not None
                     else None)
    data = {"items": [], "files": list(files), "dragOperationsMask": 1}
    spot: list[tuple[float, float]] = []

    async def run() -> None:
        if target_handle is not None:
            x, y = _grab_point(await locate(tab, target_handle), "to")
        else:
            assert point is not None
            x, y = point
        spot.append((x, y))
        progress.sent = True
        dropped = False
        try:
            for kind in ("dragEnter", "dragOver", "drop"):
                await tab.send("Input.dispatchDragEvent", {
                    "type": kind, "x": x, "y": y, "data": data,
                    "modifiers": tab.input.modifiers})
            dropped = True
        finally:
            if not dropped:
                with trio.CancelScope(shield=True), trio.move_on_after(CLEANUP_S), \
                        contextlib.suppress(BrowserdError):
                    await tab.send("Input.dispatchDragEvent",
                                   {"type": "dragCancel", "x": x, "y": y, "data": data})

    effects = await send_input(tab, "drop", progress, run)
    x, y = spot[0] if spot else (0.0, 0.0)
    return {"ok": True, "native": True, "files": [os.path.basename(f) for f in files],
            "to": {"x": x, "y": y}, "effects": effects}
