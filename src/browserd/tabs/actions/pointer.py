"""Pointer actions (click, hover) and where a mouse would press (:func:`locate`).

**Clicks.** The element is scrolled into view (``DOM.scrollIntoViewIfNeeded``),
its boxes taken (``DOM.getContentQuads``) and the centre of the first box
that is visible in its frame's viewport chosen. That point is hit-tested in
the element's own document (``elementFromPoint``, descending into open
shadow roots): only when the topmost element there is the target or inside
it is a real mouse press and release sent (``method: "mouse"``). If another
element covers the point, or the element has no box (zero size,
``display: contents``, off-screen), the click falls back to
``element.click()`` and says so (``method: "dom"``, ``coveredBy``) — except
on a rich editor's own input or drawn text (:mod:`.editors`), which is
pressed on the editor's drawn surface or else focused (see
:func:`_aim_at_editor`).

**Coordinates.** Input events always go to the tab's top-level session;
Chromium routes them into OOPIFs by hit-testing, so the OOPIF offset from
:mod:`browserd.tabs.geometry` is added. The in-page hit test needs
coordinates local to the element's document: for elements of same-origin
subframes reached from the main world the frame offsets are subtracted in
page JavaScript (walking ``frameElement``), and for a world that lives in a
non-root in-process frame the owner's box is subtracted.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from ...errors import CdpError, StaleRef
from ..actor import TabActor
from ..geometry import oopif_offset, owner_content_origin
from ..pagejs import page_function
from ..resolve import ElementHandle
from ..routing import send_in, session_root_frame
from .editors import editor_of, editor_surface, focus_editor
from .element import call_on, frames_drawn, gone_error, resolve_element, send_input
from .keys import held_mask
from .records import Click, Hover, Progress

__all__ = ["BUTTONS", "EditorAim", "Spot", "click", "hover", "locate"]

BUTTONS = {"left": 1, "right": 2, "middle": 4}


_CLICK_POINT = page_function("clickPoint")
_CLICK_ELEMENT = page_function("clickElement")
_HOVER_BY_EVENTS = page_function("hoverByEvents")
#: At most this long for a frame to draw (a hidden or busy frame may not draw at all).
DRAWN_WAIT_S = 0.15


@attrs.frozen(kw_only=True)
class Spot:
    """Where to act: a top-level point, or why the DOM fallback is needed."""

    x: float | None = None
    y: float | None = None
    covered_by: dict[str, Any] | None = None
    reason: str | None = None  # "covered" | "noBox" | "offscreen" | "frame"

    @property
    def usable(self) -> bool:
        return self.reason is None and self.x is not None and self.y is not None


async def locate(tab: TabActor, handle: ElementHandle) -> Spot:
    """Scroll the element into view and find the point a mouse would use.

    Returns a :class:`Spot` with top-level CSS-pixel coordinates when the
    element's centre is visible and not covered, else the reason for the
    DOM fallback (and ``covered_by``). Raises StaleRef if the element went
    away, JsException / CdpError when the page or browser fails.
    """
    try:
        await send_in(tab, handle.session, "DOM.scrollIntoViewIfNeeded",
                    {"objectId": handle.object_id})
    except CdpError as exc:  # no layout object: the quads below say "no box"
        gone = gone_error(exc)
        if gone is not None:
            raise gone from None
    try:
        quads = (await send_in(tab, handle.session, "DOM.getContentQuads",
                             {"objectId": handle.object_id})).get("quads") or []
    except CdpError as exc:
        gone = gone_error(exc)
        if gone is not None:
            raise gone from None
        quads = []
    quads = [q for q in quads if isinstance(q, list) and len(q) == 8]
    if not quads:
        return Spot(reason="noBox")
    base = (0.0, 0.0)
    root = session_root_frame(tab, handle.session)
    if handle.frame_id and root is not None and handle.frame_id != root:
        origin = await owner_content_origin(tab, handle.session, handle.frame_id, scroll=False)
        if origin is None:
            return Spot(reason="frame")
        base = origin
    probe = await call_on(tab, handle, _CLICK_POINT, quads, base[0], base[1])
    if not isinstance(probe, dict):
        return Spot(reason="noBox")
    if probe.get("detached"):
        raise StaleRef("the element was removed from the page before the action",
                       reason="detached", hint="take a new snapshot")
    if probe.get("noFrame"):
        return Spot(reason="frame")
    if probe.get("noBox"):
        return Spot(reason="noBox")
    if probe.get("offscreen"):
        return Spot(reason="offscreen")
    offset = await oopif_offset(tab, handle.session)
    if offset is None:
        return Spot(reason="frame")
    x, y = float(probe["x"]) + offset[0], float(probe["y"]) + offset[1]
    if probe.get("covered"):
        return Spot(x=x, y=y, covered_by=dict(probe["covered"]), reason="covered")
    return Spot(x=x, y=y)


def _fallback_fields(spot: Spot) -> dict[str, Any]:
    out: dict[str, Any] = {"fallbackReason": spot.reason}
    if spot.covered_by is not None:
        out["coveredBy"] = spot.covered_by
    return out


async def _pointer_action(tab: TabActor, what: str, progress: Progress, handle: ElementHandle,
                   act: Callable[[Spot], Awaitable[None]]) -> dict[str, Any]:
    """Locate the element, then ``act`` on its :class:`Spot` (see :func:`send_input`).

    Answers ``{ok, method: "mouse"|"dom", fallbackReason?, coveredBy?, effects}``.
    """
    spot_box: list[Spot] = []

    async def run() -> None:
        spot = await locate(tab, handle)
        spot_box.append(spot)
        await act(spot)

    effects = await send_input(tab, what, progress, run)
    spot = spot_box[0] if spot_box else Spot(reason="noBox")
    out: dict[str, Any] = {"ok": True, "method": "mouse" if spot.usable else "dom"}
    if not spot.usable:
        out.update(_fallback_fields(spot))
    out["effects"] = effects
    return out


# -- actions -----------------------------------------------------------------------

async def click(tab: TabActor, action: Click, *, progress: Progress | None = None,
                then: Callable[[], Awaitable[None]] | None = None) -> dict[str, Any]:
    """Click ``action.target`` like a person; fall back to ``element.click()`` when covered.

    Answers ``{ok, method: "mouse"|"dom"|"focus", effects, coveredBy?, fallbackReason?,
    editor?}`` (``focus`` and ``editor``: a rich editor, see :func:`_aim_at_editor`).
    ``then`` (if given) runs right after the click, observed with it: the
    effects are those of both (e.g. filling the file chooser the click opened).
    The record is a checked one (its button, count, modifiers and target).
    Raises RefNotFound / StaleRef / NoMatch from the ref engine, DialogOpen
    when a dialog opened before the press was sent. Cancellation abandons
    the CDP call in flight; a press already sent is not undone and never
    resent (see ``progress.sent``).
    """
    button, click_count = action.button, action.click_count
    mask = held_mask(action.modifiers)
    progress = progress if progress is not None else Progress()
    handle = await resolve_element(tab, action.target)
    answer: dict[str, Any] = {}

    async def press(spot: Spot) -> None:
        assert spot.x is not None and spot.y is not None
        base = {"x": spot.x, "y": spot.y, "modifiers": mask}
        await tab.send("Input.dispatchMouseEvent", {**base, "type": "mouseMoved"})
        if handle.session is not tab.session:
            # An out-of-process frame: the browser routes the press by the frame's
            # hit-test data, which follows its drawn frames: let it draw once more.
            await frames_drawn(tab, handle, DRAWN_WAIT_S)
        for count in range(1, click_count + 1):
            one = {**base, "button": button, "clickCount": count}
            progress.sent = True
            await tab.send("Input.dispatchMouseEvent",
                           {**one, "type": "mousePressed", "buttons": BUTTONS[button]})
            await tab.send("Input.dispatchMouseEvent",
                           {**one, "type": "mouseReleased", "buttons": 0})

    async def run() -> None:
        spot = await locate(tab, handle)
        if spot.usable:
            answer["method"] = "mouse"
            await press(spot)
        else:
            aim = await _aim_at_editor(tab, handle, spot, progress)
            if aim is not None and aim.spot is not None:
                answer.update(method="mouse", editor=aim.editor)
                await press(aim.spot)
            elif aim is not None:
                answer.update(method="focus", **_fallback_fields(spot), editor=aim.editor)
            else:
                answer.update(method="dom", **_fallback_fields(spot))
                progress.sent = True
                await call_on(tab, handle, _CLICK_ELEMENT, user_gesture=True)
        if then is not None:
            await then()

    effects = await send_input(tab, "click", progress, run)
    return {"ok": True, **answer, "effects": effects}


@attrs.frozen(kw_only=True)
class EditorAim:
    """How a click reaches a rich editor: at ``spot`` on its surface, or (None) by focus."""

    spot: Spot | None
    editor: dict[str, Any]  # the answer's ``editor``: {kind, via, because?}


async def _aim_at_editor(tab: TabActor, handle: ElementHandle, spot: Spot, progress: Progress
                         ) -> EditorAim | None:
    """Where a click on a rich editor goes when the element's own point is unusable.

    None when the element is not an editor's own input nor inside its drawn
    surface, or the "editor" is the whole document (see :func:`.editors.editor_of`
    with ``click``; the DOM click follows). When the
    element is the editor's hidden input, its centre shows the editor's own
    parts, or it has no visible box: the editor's drawn surface, if a mouse
    reaches it (``editor: {kind, via: "surface", because}``). Otherwise —
    another element covers the editor, or its surface cannot be reached
    either — the editor is focused as its own scripts expect (no spot;
    ``editor: {kind, via: "focus"}``); a page that refuses that focus gets the
    DOM click (None). Errors and cancellation: as :func:`click`'s.
    """
    editor = await editor_of(tab, handle, click=True)
    if editor is None:
        return None
    if spot.reason in ("noBox", "offscreen") or editor.covered_by_itself():
        surface = await editor_surface(tab, handle)
        if surface is not None:
            aimed = await locate(tab, surface)
            if aimed.usable:
                return EditorAim(spot=aimed, editor={"kind": editor.kind, "via": "surface",
                                                     "because": spot.reason})
    progress.sent = True
    if await focus_editor(tab, handle, click=True) == "refused":
        return None
    return EditorAim(spot=None, editor={"kind": editor.kind, "via": "focus"})


async def hover(tab: TabActor, action: Hover, *, progress: Progress | None = None
                ) -> dict[str, Any]:
    """Move the mouse to the centre of ``action.target`` (real ``mouseMoved``: CSS ``:hover``
    applies).

    When the centre is covered or the element has no box, mouseover /
    mouseenter / mousemove events are dispatched on the element instead
    (``method: "dom"``; CSS ``:hover`` does not apply then). Errors and
    cancellation as for :func:`click`.
    """
    progress = progress if progress is not None else Progress()
    handle = await resolve_element(tab, action.target)

    async def act(spot: Spot) -> None:
        progress.sent = True
        if spot.usable:
            await tab.send("Input.dispatchMouseEvent",
                           {"type": "mouseMoved", "x": spot.x, "y": spot.y})
        else:
            await call_on(tab, handle, _HOVER_BY_EVENTS)

    return await _pointer_action(tab, "hover", progress, handle, act)
