"""The upload, drag, mouse and keyboard kinds: their fields and their action records.

Shared by the input routes (``/upload``, ``/drag``, ``/mouse``, ``/keyboard``
and ``/act``), which is why this is not a route module itself. Building a
record checks what a field table cannot say — the shape of ``from``/``to``,
and every upload path against the upload roots (403 UPLOAD_BLOCKED, 400
FILE_NOT_FOUND) — before any work is done on a tab.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import BadRequest
from ..system import System
from ..tabs import actions as inp
from ..tabs.actions.records import Action
from ..tabs.locator import ElementTarget
from .fields import REF, SELECTOR, WAIT_UNTIL, timeout_field
from .schema import Field

__all__ = ["COORDINATE_LIMIT", "FILES", "GESTURE_FIELDS", "GESTURE_SUMMARIES", "checked_files",
           "gesture_action"]

COORDINATE_LIMIT = 100_000.0
"""|x|, |y| and wheel deltas are at most this many CSS pixels."""

FILES = Field(name="files", type="array", items="string",
              description="paths of files under upload_roots (relative: to the first root)")
_TARGET_DOC = "{ref} | {selector} | {text}: the element"

GESTURE_FIELDS: dict[str, tuple[Field, ...]] = {
    "upload": (REF, SELECTOR, Field(name="files", type="array", items="string", required=True,
                                    description=FILES.description),
               WAIT_UNTIL, timeout_field(15_000)),
    "drag": (Field(name="from", type="object",
                   description=f"what to drag: {_TARGET_DOC}"),
             Field(name="files", type="array", items="string",
                   description="instead of from: files under upload_roots, dropped on `to` "
                               "as if dragged in from outside"),
             Field(name="to", type="object", required=True,
                   description=f"where to drop: {_TARGET_DOC}, or {{x, y}} in viewport pixels"),
             Field(name="steps", type="integer", default=10, minimum=1, maximum=100,
                   description="mouse moves between the two points"),
             WAIT_UNTIL, timeout_field(15_000)),
    "mouse": (Field(name="action", type="string", required=True, enum=inp.MOUSE_ACTIONS,
                    description="move, press (down), release (up), click, or turn the wheel"),
              Field(name="x", type="number", required=True, minimum=-COORDINATE_LIMIT,
                    maximum=COORDINATE_LIMIT, description="viewport CSS pixels"),
              Field(name="y", type="number", required=True, minimum=-COORDINATE_LIMIT,
                    maximum=COORDINATE_LIMIT, description="viewport CSS pixels"),
              Field(name="button", type="string", default="left",
                    enum=("left", "right", "middle", "back", "forward"),
                    description="the mouse button"),
              Field(name="clickCount", type="integer", default=1, minimum=1, maximum=3,
                    description="1: click, 2: double-click, 3: triple-click"),
              Field(name="deltaX", type="number", default=0, minimum=-COORDINATE_LIMIT,
                    maximum=COORDINATE_LIMIT, description="wheel: horizontal scroll"),
              Field(name="deltaY", type="number", default=0, minimum=-COORDINATE_LIMIT,
                    maximum=COORDINATE_LIMIT, description="wheel: vertical scroll"),
              WAIT_UNTIL, timeout_field(15_000)),
    "keyboard": (Field(name="action", type="string", required=True, enum=inp.KEY_ACTIONS,
                       description="press a key (down), release it (up), or insert text as "
                                   "typed"),
                 Field(name="key", type="string", max_length=100,
                       description='down/up: a key name ("a", "Shift", "Enter", "ArrowLeft")'),
                 Field(name="text", type="string", max_length=100_000,
                       description="insertText: the text"),
                 WAIT_UNTIL, timeout_field(15_000)),
}

GESTURE_SUMMARIES = {
    "upload": "Set the files of a file input, or answer the file chooser a page opened",
    "drag": "Drag an element to another element or a point with the real mouse",
    "mouse": "One raw mouse action (move, down, up, click, wheel) at viewport pixels",
    "keyboard": "One raw key down or up, or insert text",
}


def checked_files(system: System, files: Any) -> tuple[str, ...]:
    """The resolved paths of ``files``, every one under the upload roots.

    Raises BadRequest (not a list of strings), UploadBlocked, UploadFileMissing.
    """
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise BadRequest("files must be a list of paths", field="files")
    return tuple(f.path for f in system.uploads.check(files))


def _element_target(value: Any, name: str) -> ElementTarget:
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


def gesture_action(kind: str, args: dict[str, Any], system: System) -> Action:
    """The action record of a gesture kind for validated ``args``.

    Raises BadRequest for shapes the field table cannot check, and the
    upload policy's errors for ``files``.
    """
    if kind == "upload":
        if args.get("ref") is not None and args.get("selector") is not None:
            raise BadRequest("give at most one of ref or selector", field="ref")
        files = checked_files(system, args["files"])
        target = None
        if args.get("ref") is not None or args.get("selector") is not None:
            target = ElementTarget(ref=args.get("ref"), selector=args.get("selector"))
        return inp.Upload(files=files, target=target, wait_until=args["waitUntil"])
    if kind == "drag":
        if (args.get("from") is None) == (args.get("files") is None):
            raise BadRequest("give exactly one of from (an element to drag) or files "
                             "(files to drop)", field="from")
        to = args["to"]
        where: dict[str, Any] = (
            {"point": _point(to)} if isinstance(to, dict) and ("x" in to or "y" in to)
            else {"target": _element_target(to, "to")})
        if args.get("files") is not None:
            return inp.Drag(files=checked_files(system, args["files"]),
                            wait_until=args["waitUntil"], **where)
        return inp.Drag(source=_element_target(args["from"], "from"), steps=args["steps"],
                        wait_until=args["waitUntil"], **where)
    if kind == "mouse":
        return inp.MouseInput(action=args["action"], x=float(args["x"]), y=float(args["y"]),
                              button=args["button"], click_count=args["clickCount"],
                              delta_x=float(args["deltaX"]), delta_y=float(args["deltaY"]),
                              wait_until=args["waitUntil"])
    if kind == "keyboard":
        action = args["action"]
        if action == "insertText":
            if not args.get("text"):
                raise BadRequest("insertText needs a non-empty text", field="text")
            if args.get("key") is not None:
                raise BadRequest("insertText takes text, not key", field="key")
            return inp.KeyInput(action=action, text=args["text"], wait_until=args["waitUntil"])
        if not args.get("key"):
            raise BadRequest(f"{action} needs a key", field="key")
        if args.get("text") is not None:
            raise BadRequest(f"{action} takes key, not text", field="text")
        inp.key_spec(args["key"])
        return inp.KeyInput(action=action, key=args["key"], wait_until=args["waitUntil"])
    raise BadRequest(f"unknown kind {kind!r}", field="kind")
