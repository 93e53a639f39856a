"""The kinds that point at the page: click, hover, select, upload, drag and the raw mouse.

Each :class:`~.spec.ActionSpec` here is the whole of its kind (see :mod:`.spec`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ....argfields import Field, timeout_field
from ....errors import BadRequest
from ....records.model import Call
from ....records.playwright import Writer, lit, locator_expression, selector_of
from ...actor import TabActor
from ...locator import ElementTarget
from ..drag import drag, drop_files
from ..pointer import click, hover
from ..raw import MOUSE_ACTIONS, mouse
from ..records import Click, Drag, Hover, MouseInput, Select, Upload
from ..select import select
from ..upload import click_upload, upload
from .spec import (
    FILES,
    LOCATOR,
    MODIFIERS,
    REF,
    SELECTOR,
    TEXT_TARGET,
    WAIT_UNTIL,
    ActionSpec,
    BuildContext,
    PerformContext,
    Recording,
    TraceHook,
    element_target,
)

__all__ = ["CLICK", "COORDINATE_LIMIT", "DRAG", "HOVER", "MOUSE", "SELECT", "UPLOAD"]

COORDINATE_LIMIT = 100_000.0
"""|x|, |y| and wheel deltas are at most this many CSS pixels."""
_TARGET_DOC = "{ref} | {selector} | {text}: the element"
_ELEMENT = (REF, SELECTOR, TEXT_TARGET, *LOCATOR)


def _files_needs(args: Mapping[str, Any]) -> tuple[str, ...]:
    """Giving local files (to a chooser, or dropped) needs ``files``, as ``/upload`` does."""
    return ("files",) if args.get("files") is not None else ()


def _on_locator(cls: str, method: str, api: str) -> TraceHook:
    """The trace call of an element kind: Playwright's on a locator, ``browserd.<kind>``
    when the element has none."""
    def hook(call: Call, selector: str | None, params: dict[str, Any]) -> tuple[str, str, str]:
        if selector is None:
            return "Browserd", call.kind, f"browserd.{call.kind}"
        return cls, method, api
    return hook


# -- click ---------------------------------------------------------------------------


def _build_click(args: Mapping[str, Any], ctx: BuildContext) -> Click:
    files = None if args.get("files") is None else ctx.check_files(args["files"])
    return Click(target=element_target(args), button=args["button"],
                 click_count=args["clickCount"], modifiers=tuple(args.get("modifiers") or ()),
                 files=files, wait_until=args["waitUntil"])


async def _click(tab: TabActor, action: Click, ctx: PerformContext) -> dict[str, Any]:
    if action.files is not None:
        return await click_upload(tab, action, progress=ctx.progress)
    return await click(tab, action, progress=ctx.progress)


def _script_click(w: Writer, call: Call, loc: str | None, index: int) -> None:
    if loc is None:
        return w.no_element(call, index)
    args = call.args
    count, button = int(args.get("clickCount") or 1), args.get("button") or "left"
    opts = w.kw(button=None if button == "left" else button,
                clickCount=None if count == 1 else count,
                modifiers=list(args["modifiers"]) if args.get("modifiers") else None)
    w.stmt(f"{loc}.click({opts})")


CLICK = ActionSpec(
    kind="click", summary="Click an element (real mouse at its centre; DOM click when covered)",
    fields=(*_ELEMENT,
            Field(name="button", type="string", default="left",
                  enum=("left", "right", "middle"), description="the mouse button"),
            Field(name="clickCount", type="integer", default=1, minimum=1, maximum=3,
                  description="1: click, 2: double-click, 3: triple-click"),
            MODIFIERS, FILES, WAIT_UNTIL, timeout_field(15_000)),
    record=Click, build=_build_click, perform=_click, settles=True, extra_needs=_files_needs,
    recording=Recording(names=("element",), text_names_element=True, locator=True,
                        script=_script_click,
                        trace=_on_locator("Frame", "click", "locator.click")))


# -- hover ---------------------------------------------------------------------------


def _build_hover(args: Mapping[str, Any], ctx: BuildContext) -> Hover:
    return Hover(target=element_target(args), wait_until=args["waitUntil"])


async def _hover(tab: TabActor, action: Hover, ctx: PerformContext) -> dict[str, Any]:
    return await hover(tab, action, progress=ctx.progress)


def _script_hover(w: Writer, call: Call, loc: str | None, index: int) -> None:
    if loc is None:
        return w.no_element(call, index)
    w.stmt(f"{loc}.hover()")


HOVER = ActionSpec(
    kind="hover", summary="Move the mouse over an element",
    fields=(*_ELEMENT, WAIT_UNTIL, timeout_field(15_000)),
    record=Hover, build=_build_hover, perform=_hover, settles=True,
    recording=Recording(names=("element",), text_names_element=True, locator=True,
                        script=_script_hover,
                        trace=_on_locator("Frame", "hover", "locator.hover")))


# -- select --------------------------------------------------------------------------


def _build_select(args: Mapping[str, Any], ctx: BuildContext) -> Select:
    return Select(target=element_target(args), values=tuple(args.get("values") or ()),
                  wait_until=args["waitUntil"])


async def _select(tab: TabActor, action: Select, ctx: PerformContext) -> dict[str, Any]:
    return await select(tab, action, progress=ctx.progress)


def _script_select(w: Writer, call: Call, loc: str | None, index: int) -> None:
    if loc is None:
        return w.no_element(call, index)
    values = lit(list(call.args.get("values") or ()))
    w.stmt(f"{loc}.{w.m('select_option', 'selectOption')}({values})")


SELECT = ActionSpec(
    kind="select", summary="Choose options of a <select> by value or label",
    fields=(*_ELEMENT,
            Field(name="values", type="array", items="string", required=True,
                  description="option values or visible labels"),
            WAIT_UNTIL, timeout_field(15_000)),
    record=Select, build=_build_select, perform=_select, settles=True,
    recording=Recording(names=("element",), text_names_element=True, locator=True,
                        script=_script_select,
                        trace=_on_locator("Frame", "selectOption", "locator.selectOption")))


# -- upload --------------------------------------------------------------------------


def _build_upload(args: Mapping[str, Any], ctx: BuildContext) -> Upload:
    target = None
    if args.get("ref") is not None or args.get("selector") is not None:
        target = ElementTarget(ref=args.get("ref"), selector=args.get("selector"))
    return Upload(files=ctx.check_files(args["files"]), target=target,
                  wait_until=args["waitUntil"])


async def _upload(tab: TabActor, action: Upload, ctx: PerformContext) -> dict[str, Any]:
    return await upload(tab, action, progress=ctx.progress)


def _script_upload(w: Writer, call: Call, loc: str | None, index: int) -> None:
    if loc is None:
        return w.no_element(call, index)
    files = lit(list(call.args.get("files") or ()))
    w.stmt(f"{loc}.{w.m('set_input_files', 'setInputFiles')}({files})")


def _upload_needs(args: Mapping[str, Any]) -> tuple[str, ...]:
    """Uploading local files needs ``files``."""
    return ("files",)


UPLOAD = ActionSpec(
    kind="upload",
    summary="Set the files of a file input, or answer the file chooser a page opened",
    fields=(REF, SELECTOR,
            Field(name="files", type="array", items="string", required=True,
                  description=FILES.description),
            WAIT_UNTIL, timeout_field(15_000)),
    record=Upload, build=_build_upload, perform=_upload, settles=True,
    extra_needs=_upload_needs,
    recording=Recording(names=("element",), script=_script_upload,
                        trace=_on_locator("Frame", "setInputFiles",
                                          "locator.setInputFiles")))


# -- drag ----------------------------------------------------------------------------


def _object_target(value: Any, name: str) -> ElementTarget:
    """``{ref} | {selector} | {text}`` in the object field ``name`` (BadRequest otherwise)."""
    if not isinstance(value, dict) or not value:
        raise BadRequest(f"{name} must be an object: {{ref}}, {{selector}} or {{text}}",
                         field=name)
    unknown = sorted(set(value) - {"ref", "selector", "text"})
    if unknown:
        raise BadRequest(f"{name}: unknown field(s) {', '.join(unknown)}", field=name,
                         hint="accepted: ref, selector, text" + (", or x and y"
                                                                  if name == "to" else ""))
    limits = {"ref": 32, "selector": 4000, "text": 2000}
    for key, item in value.items():
        if not isinstance(item, str) or not item or len(item) > limits[key]:
            raise BadRequest(f"{name}.{key} must be a non-empty string of at most "
                             f"{limits[key]} characters", field=name)
    target = ElementTarget(ref=value.get("ref"), selector=value.get("selector"),
                           text=value.get("text"))
    try:
        target.check()
    except BadRequest as exc:
        raise BadRequest(f"{name}: {exc.message}", field=name) from None
    return target


def _point(value: dict[str, Any]) -> tuple[float, float]:
    if set(value) != {"x", "y"}:
        raise BadRequest("to: a point is exactly {x, y}", field="to")
    coords = []
    for key in ("x", "y"):
        item = value[key]
        if isinstance(item, bool) or not isinstance(item, (int, float)) \
                or not math.isfinite(item) or abs(item) > COORDINATE_LIMIT:
            raise BadRequest(f"to.{key} must be a number within ±{COORDINATE_LIMIT:.0f}",
                             field="to")
        coords.append(float(item))
    return coords[0], coords[1]


def _build_drag(args: Mapping[str, Any], ctx: BuildContext) -> Drag:
    to = args["to"]
    where: dict[str, Any] = (
        {"point": _point(to)} if isinstance(to, dict) and ("x" in to or "y" in to)
        else {"target": _object_target(to, "to")})
    source = None if args.get("from") is None else _object_target(args["from"], "from")
    files = None if args.get("files") is None else ctx.check_files(args["files"])
    return Drag(source=source, files=files, steps=args["steps"], wait_until=args["waitUntil"],
                **where)


async def _drag(tab: TabActor, action: Drag, ctx: PerformContext) -> dict[str, Any]:
    if action.files is not None:
        return await drop_files(tab, action, progress=ctx.progress)
    return await drag(tab, action, progress=ctx.progress)


def _script_drag(w: Writer, call: Call, loc: str | None, index: int) -> None:
    if "from" not in call.targets or "to" not in call.targets:
        return w.no_element(call, index)
    source = locator_expression(call.targets["from"], w.lang)
    dest = locator_expression(call.targets["to"], w.lang)
    if source and dest:
        w.stmt(f"{source}.{w.m('drag_to', 'dragTo')}({dest})")
    else:
        w.comment(f"step {index}: drag: its elements have no locator")


def _trace_drag(call: Call, selector: str | None, params: dict[str, Any]
                ) -> tuple[str, str, str]:
    params.update({k: s for k, s in (("source", selector_of(call, "from")),
                                     ("target", selector_of(call, "to"))) if s is not None})
    params.pop("from", None)
    params.pop("to", None)
    return "Frame", "dragAndDrop", "locator.dragTo"


DRAG = ActionSpec(
    kind="drag", summary="Drag an element to another element or a point with the real mouse",
    fields=(Field(name="from", type="object", description=f"what to drag: {_TARGET_DOC}"),
            Field(name="files", type="array", items="string",
                  description="instead of from: files under upload_roots, dropped on `to` "
                              "as if dragged in from outside"),
            Field(name="to", type="object", required=True,
                  description=f"where to drop: {_TARGET_DOC}, or {{x, y}} in viewport pixels"),
            Field(name="steps", type="integer", default=10, minimum=1, maximum=100,
                  description="mouse moves between the two points"),
            WAIT_UNTIL, timeout_field(15_000)),
    record=Drag, build=_build_drag, perform=_drag, settles=True, extra_needs=_files_needs,
    recording=Recording(names=("from", "to"), text_names_element=True, script=_script_drag,
                        trace=_trace_drag))


# -- mouse ---------------------------------------------------------------------------

_MOUSE_CALLS = {"move": "mouseMove", "down": "mouseDown", "up": "mouseUp",
                "click": "mouseClick", "wheel": "mouseWheel"}


def _build_mouse(args: Mapping[str, Any], ctx: BuildContext) -> MouseInput:
    return MouseInput(action=args["action"], x=float(args["x"]), y=float(args["y"]),
                      button=args["button"], click_count=args["clickCount"],
                      delta_x=float(args["deltaX"]), delta_y=float(args["deltaY"]),
                      wait_until=args["waitUntil"])


async def _mouse(tab: TabActor, action: MouseInput, ctx: PerformContext) -> dict[str, Any]:
    return await mouse(tab, action, progress=ctx.progress)


def _script_mouse(w: Writer, call: Call, loc: str | None, index: int) -> None:
    args = call.args
    x, y = float(args.get("x") or 0), float(args.get("y") or 0)
    action = args.get("action")
    if action == "wheel":
        w.stmt(f"page.mouse.move({x}, {y})")
        w.stmt(f"page.mouse.wheel({float(args.get('deltaX') or 0)}, "
               f"{float(args.get('deltaY') or 0)})")
    elif action == "click":
        w.stmt(f"page.mouse.click({x}, {y})")
    elif action == "move":
        w.stmt(f"page.mouse.move({x}, {y})")
    else:
        w.stmt(f"page.mouse.move({x}, {y})")
        w.stmt(f"page.mouse.{action}()")


def _trace_mouse(call: Call, selector: str | None, params: dict[str, Any]
                 ) -> tuple[str, str, str]:
    action = call.args.get("action")
    if action in _MOUSE_CALLS:
        return "Page", _MOUSE_CALLS[str(action)], f"mouse.{action}"
    return "Browserd", "mouse", "browserd.mouse"


def _coordinate(name: str, description: str, **extra: Any) -> Field:
    return Field(name=name, type="number", minimum=-COORDINATE_LIMIT, maximum=COORDINATE_LIMIT,
                 description=description, **extra)


MOUSE = ActionSpec(
    kind="mouse", summary="One raw mouse action (move, down, up, click, wheel) at viewport pixels",
    fields=(Field(name="action", type="string", required=True, enum=MOUSE_ACTIONS,
                  description="move, press (down), release (up), click, or turn the wheel"),
            _coordinate("x", "viewport CSS pixels", required=True),
            _coordinate("y", "viewport CSS pixels", required=True),
            Field(name="button", type="string", default="left",
                  enum=("left", "right", "middle", "back", "forward"),
                  description="the mouse button"),
            Field(name="clickCount", type="integer", default=1, minimum=1, maximum=3,
                  description="1: click, 2: double-click, 3: triple-click"),
            _coordinate("deltaX", "wheel: horizontal scroll", default=0),
            _coordinate("deltaY", "wheel: vertical scroll", default=0),
            WAIT_UNTIL, timeout_field(15_000)),
    record=MouseInput, build=_build_mouse, perform=_mouse, settles=True,
    recording=Recording(names=(), script=_script_mouse, trace=_trace_mouse))
