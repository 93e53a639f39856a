"""CLI commands for uploads, drag and raw input.

``browserd upload [REF] FILE…`` (a first word written like a ref, ``e9``, is
the file input: :func:`browserd.cli.args.split_upload`), ``browserd drag FROM_REF TO_REF|X,Y``,
``browserd mouse ACTION X Y`` and ``browserd keyboard ACTION KEY|TEXT``.
Each is one request to the service (see docs/api.md); ``browserd click
REF --files FILE…`` lives with ``click`` in :mod:`browserd.cli.main`. Files are
named as the service sees them: they must lie under its ``upload_roots``.
"""

from __future__ import annotations

from typing import Any

from .args import split_upload

__all__ = ["GESTURE_COMMANDS", "add_gesture_commands", "drop_place"]


def add_gesture_commands(sub: Any) -> None:
    """Add the commands to the ``browserd`` subparsers ``sub``."""
    p = sub.add_parser("upload", help="set the files of a file input, or answer a file chooser")
    p.add_argument("files", nargs="*", metavar="[REF] FILE",
                   help="the file input's ref (e9; none: the chooser the page opened), "
                        "then files under upload_roots")
    p.add_argument("--ref", help="the file input (the same as a leading REF)")
    p.add_argument("--selector")
    p.add_argument("--target")
    p = sub.add_parser("drag", help="drag an element (by ref) to another one or to X,Y")
    p.add_argument("source", metavar="FROM_REF")
    p.add_argument("to", metavar="TO_REF|X,Y")
    p.add_argument("--steps", type=int)
    p.add_argument("--target")
    p = sub.add_parser("mouse", help="one raw mouse action at viewport pixels")
    p.add_argument("action", choices=("move", "down", "up", "click", "wheel"))
    p.add_argument("x", type=float)
    p.add_argument("y", type=float)
    p.add_argument("--button", choices=("left", "right", "middle", "back", "forward"))
    p.add_argument("--click-count", type=int)
    p.add_argument("--delta-x", type=float)
    p.add_argument("--delta-y", type=float)
    p.add_argument("--target")
    p = sub.add_parser("keyboard", help="one raw key down/up (KEY) or insertText (TEXT)")
    p.add_argument("action", choices=("down", "up", "insertText"))
    p.add_argument("value", metavar="KEY|TEXT")
    p.add_argument("--target")


def drop_place(text: str) -> dict[str, Any]:
    """``TO`` of ``browserd drag``: ``X,Y`` (viewport pixels) or a ref."""
    parts = text.split(",")
    if len(parts) == 2:
        try:
            return {"x": float(parts[0]), "y": float(parts[1])}
        except ValueError:
            pass
    return {"ref": text}


def _upload(c: Any, a: Any) -> Any:
    ref, files = split_upload(a.files, a.ref, a.selector)
    return c.post("/upload", files=files, ref=ref, selector=a.selector, targetId=a.target)


GESTURE_COMMANDS: dict[str, Any] = {
    "upload": _upload,
    "drag": lambda c, a: c.post("/drag", targetId=a.target, steps=a.steps,
                                **{"from": {"ref": a.source}, "to": drop_place(a.to)}),
    "mouse": lambda c, a: c.post("/mouse", action=a.action, x=a.x, y=a.y, button=a.button,
                                 clickCount=a.click_count, deltaX=a.delta_x, deltaY=a.delta_y,
                                 targetId=a.target),
    "keyboard": lambda c, a: c.post("/keyboard", action=a.action, targetId=a.target,
                                    **({"text": a.value} if a.action == "insertText"
                                       else {"key": a.value})),
}
