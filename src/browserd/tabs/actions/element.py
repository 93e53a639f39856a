"""Acting on one element: resolve it, call a function on it, send input while observing.

Every function runs while the caller holds the tab's work slot. Elements
come from the ref engine (:func:`browserd.tabs.locate.resolve_action_target`), so an
action never lands on another element than the one the ref, selector or
text named. A JavaScript dialog blocks the renderer, so every input runs
under :meth:`TabActor.race_dialog`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from ...errors import BrowserdError, CdpError, DialogOpen, JsException, StaleRef
from ..actor import TabActor
from ..effects import observing, race
from ..locate import resolve_action_target
from ..pagejs import PageFunction, page_function
from ..remote import exception_text
from ..resolve import ElementHandle
from ..routing import send_in
from .records import ElementTarget, Progress

__all__ = ["call_on", "dialog_before_input", "frames_drawn", "gone_error", "resolve_element",
           "send_input"]

_TWO_FRAMES_DRAWN = page_function("twoFramesDrawn")


def gone_error(exc: CdpError) -> BrowserdError | None:
    """The StaleRef a CDP error means when the element or its document went away, else None."""
    text = exc.message
    if "Cannot find context" in text or "Could not find object" in text:
        return StaleRef("the element's document went away before the action",
                        reason="navigated", hint="take a new snapshot")
    if "detached" in text.lower():
        return StaleRef("the element was removed from the page before the action",
                        reason="detached", hint="take a new snapshot")
    return None


async def call_on(tab: TabActor, handle: ElementHandle, function: PageFunction, *args: Any,
                  user_gesture: bool = False) -> Any:
    """Call the page ``function`` with ``this`` = the element in its world; the result by value.

    Raises StaleRef when the element went away, JsException when the page
    threw, CdpError otherwise. Cancellation abandons the call in flight.
    """
    params: dict[str, Any] = {
        "objectId": handle.object_id, "functionDeclaration": function.declaration,
        "arguments": [{"value": a} for a in args], "returnByValue": True,
        "awaitPromise": False, "userGesture": user_gesture,
    }
    try:
        result = await send_in(tab, handle.session, "Runtime.callFunctionOn", params)
    except CdpError as exc:
        raise (gone_error(exc) or exc) from None
    details = result.get("exceptionDetails")
    if details:
        raise JsException("the page threw while acting on the element: "
                          + exception_text(details, fallback=""))
    return (result.get("result") or {}).get("value")


async def frames_drawn(tab: TabActor, handle: ElementHandle, within_s: float) -> bool:
    """Wait (at most ``within_s``) until the element's frame drew two more frames.

    True when it did; False when the frame could not say in time (gone,
    busy, hidden: such a frame may draw nothing at all). Never raises a
    BrowserdError; cancellation abandons the wait.
    """
    with trio.move_on_after(within_s):
        with contextlib.suppress(BrowserdError):
            await send_in(tab, handle.session, "Runtime.evaluate",
                          {"expression": _TWO_FRAMES_DRAWN.call(),
                           "contextId": handle.context_id,
                           "awaitPromise": True, "returnByValue": True})
            return True
    return False


def dialog_before_input(tab: TabActor, what: str) -> DialogOpen:
    """The 409 for a dialog that opened before any of the ``what`` was sent."""
    info = tab.view().dialog
    kind = info.type if info is not None else "JavaScript"
    return DialogOpen(f"a {kind} dialog opened before the {what} was sent; nothing was sent",
                      dialog=info.to_json() if info is not None else None)


async def resolve_element(tab: TabActor, target: ElementTarget) -> ElementHandle:
    """The element ``target`` names (ref, selector, text or role/name locator); errors as
    :func:`~browserd.tabs.locate.resolve_action_target`."""
    return await resolve_action_target(tab, target)


async def send_input(tab: TabActor, what: str, progress: Progress,
                     fn: Callable[[], Awaitable[None]]) -> dict[str, Any]:
    """Run ``fn`` (which sends the input) while observing the tab; the effects.

    Raises DialogOpen when a dialog opened before ``fn`` sent anything
    (``progress.sent``), else whatever ``fn`` raises. Cancellation abandons
    ``fn``'s CDP call in flight.
    """
    with observing(tab) as observer:
        _, dialog = await race(tab, fn)
        if dialog and not progress.sent:
            raise dialog_before_input(tab, what)
        return await observer.settle()
