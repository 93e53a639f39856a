"""The live view: a tab's screencast streamed to the ops page, the person's input sent back.

:func:`run_live_view` serves one viewer over a :class:`LiveChannel` (the
``/ui/api/live`` WebSocket). It opens a CDP session of its own on the tab
(``Target.attachToTarget``, flattened), so several viewers and browserd's
own tab session never disturb each other; detaching it at the end stops
its screencast. Then it

- brings the tab to the front (under the browser's front lock) and starts
  ``Page.startScreencast`` (JPEG); each frame is sent to the viewer as a
  JSON ``{type: "frame", ...metadata}`` message followed by the image bytes,
  and acknowledged to Chromium only after the viewer took it, so a slow
  viewer slows the stream instead of piling frames up;
- reads the viewer's messages (:func:`input_command`: mouse, keys, text,
  each validated) and sends them with ``Input.dispatch*`` on its session;
- tells the viewer when a JavaScript dialog opens or closes on the tab
  (``{type: "dialog", dialog: {type, message, defaultPrompt} | null}``: it
  is not part of the picture) and answers it on the viewer's word
  (``{type: "dialog", accept, promptText?}``, sent on the tab's own session,
  where the Page domain is enabled);
- ends when the viewer goes, the tab goes away (``{type: "closed"}``) or
  the browser connection closes.

Every CDP call has a deadline (:data:`CDP_DEADLINE_S`). Cancellation (the
viewer gone, the service stopping) detaches the session under a shielded
:data:`DETACH_DEADLINE_S`. A bad viewer message is answered with
``{type: "error", error}`` and otherwise ignored; a failed input (a page
stuck in a dialog) likewise. Errors starting the view come out as
BrowserdError.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any, Protocol

import orjson
import trio

from ..cdp import CdpConnection, CdpSession
from ..errors import BadRequest, BrowserdError
from ..tabs.actions.keys import KEYS
from ..tabs.actor import TabActor
from ..tabs.capture import decode_base64

__all__ = ["CDP_DEADLINE_S", "DETACH_DEADLINE_S", "DIALOG_METHOD", "INPUT_QUEUE", "SCREENCAST",
           "LiveChannel", "LiveViews",
           "input_command", "run_live_view"]

log = logging.getLogger(__name__)

CDP_DEADLINE_S = 5.0
DETACH_DEADLINE_S = 2.0
SCREENCAST = {"format": "jpeg", "quality": 70, "maxWidth": 1600, "maxHeight": 1200,
              "everyNthFrame": 1}
_MAX_COORD = 100_000.0
_MOUSE_TYPES = {"down": "mousePressed", "up": "mouseReleased", "move": "mouseMoved",
                "wheel": "mouseWheel"}
_BUTTONS = frozenset({"none", "left", "middle", "right"})
_CONTROL_OR_META = 2 | 4
_FRAME_EVENTS = frozenset({"Page.screencastFrame"})
DIALOG_METHOD = "Page.handleJavaScriptDialog"
INPUT_QUEUE = 64
"""Viewer input messages that may wait for the page; more are dropped (and the viewer told)."""


class LiveChannel(Protocol):
    """The viewer's end (a WebSocket): JSON and bytes out, messages in."""

    async def send_json(self, message: dict[str, Any]) -> None: ...

    async def send_bytes(self, data: bytes) -> None: ...

    async def receive(self) -> str | bytes | None:
        """The next message; None once the viewer has gone."""
        ...


class LiveViews:
    """Which tabs have a live view open (the newest decides which tab stays in front)."""

    def __init__(self) -> None:
        self._open: list[str] = []

    def opened(self, target_id: str) -> None:
        self._open.append(target_id)

    def closed(self, target_id: str) -> None:
        if target_id in self._open:
            # Remove the newest occurrence: the view that just ended.
            index = len(self._open) - 1 - self._open[::-1].index(target_id)
            del self._open[index]

    def front(self) -> str | None:
        """The tab of the newest open live view, if any."""
        return self._open[-1] if self._open else None

    def count(self) -> int:
        return len(self._open)


def _number(message: dict[str, Any], name: str, *, default: float | None = None,
            low: float = -_MAX_COORD, high: float = _MAX_COORD) -> float:
    value = message.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadRequest(f"{name} must be a finite number", field=name)
    if not low <= value <= high:
        raise BadRequest(f"{name} must be within {low}..{high}", field=name)
    return float(value)


def _text(message: dict[str, Any], name: str, limit: int) -> str:
    value = message.get(name, "")
    if not isinstance(value, str) or len(value) > limit:
        raise BadRequest(f"{name} must be a string of at most {limit} characters", field=name)
    return value


def input_command(message: Any) -> tuple[str, dict[str, Any]]:
    """The CDP command (method, params) for one viewer input message; BadRequest if invalid.

    Messages: ``{type: "mouse", event: down|up|move|wheel, x, y, button?,
    clicks?, modifiers?, deltaX?, deltaY?}`` (CSS pixels of the tab's
    viewport), ``{type: "key", event: down|up, key, code?, keyCode?,
    modifiers?}``, ``{type: "text", text}`` (inserted as typed, e.g. a paste) and
    ``{type: "dialog", accept, promptText?}`` (answers the open JavaScript dialog).
    """
    if not isinstance(message, dict):
        raise BadRequest("a message must be a JSON object")
    kind = message.get("type")
    modifiers = int(_number(message, "modifiers", default=0, low=0, high=15))
    if kind == "mouse":
        event = message.get("event")
        if event not in _MOUSE_TYPES:
            raise BadRequest("mouse event must be down, up, move or wheel", field="event")
        button = message.get("button", "none" if event in ("move", "wheel") else "left")
        if button not in _BUTTONS:
            raise BadRequest("button must be none, left, middle or right", field="button")
        params: dict[str, Any] = {
            "type": _MOUSE_TYPES[event], "x": _number(message, "x", low=0),
            "y": _number(message, "y", low=0), "modifiers": modifiers, "button": button,
        }
        if event in ("down", "up"):
            params["clickCount"] = int(_number(message, "clicks", default=1, low=1, high=3))
        if event == "wheel":
            params["deltaX"] = _number(message, "deltaX", default=0)
            params["deltaY"] = _number(message, "deltaY", default=0)
        return "Input.dispatchMouseEvent", params
    if kind == "key":
        event = message.get("event")
        if event not in ("down", "up"):
            raise BadRequest("key event must be down or up", field="event")
        key = _text(message, "key", 40)
        if not key:
            raise BadRequest("key must name the key", field="key")
        spec = KEYS.get(key)
        code = _text(message, "code", 40) or (spec.code if spec else "")
        key_code = int(_number(message, "keyCode", default=spec.key_code if spec else 0,
                               low=0, high=255))
        params = {"key": key, "code": code, "windowsVirtualKeyCode": key_code,
                  "modifiers": modifiers}
        if event == "up":
            return "Input.dispatchKeyEvent", {"type": "keyUp", **params}
        text = ""
        if not modifiers & _CONTROL_OR_META:
            text = spec.text if spec is not None and len(key) > 1 else (key if len(key) == 1
                                                                        else "")
        if text:
            return "Input.dispatchKeyEvent", {"type": "keyDown", **params, "text": text,
                                              "unmodifiedText": text}
        return "Input.dispatchKeyEvent", {"type": "rawKeyDown", **params}
    if kind == "text":
        text = _text(message, "text", 10_000)
        return "Input.insertText", {"text": text}
    if kind == "dialog":
        accept = message.get("accept")
        if not isinstance(accept, bool):
            raise BadRequest("accept must be true or false", field="accept")
        params = {"accept": accept}
        if "promptText" in message:
            params["promptText"] = _text(message, "promptText", 10_000)
        return DIALOG_METHOD, params
    raise BadRequest("type must be mouse, key or text", field="type")


async def run_live_view(connection: CdpConnection, tab: TabActor, channel: LiveChannel, *,
                        front_lock: trio.Lock, views: LiveViews,
                        on_input: Callable[[str], None] | None = None) -> None:
    """Serve one viewer of ``tab`` until it goes, the tab goes or the browser does.

    ``on_input`` is told the CDP method of each input sent (for counting).
    Raises BrowserdError when the view cannot start.
    """
    with trio.fail_after(CDP_DEADLINE_S):
        attached = await connection.send("Target.attachToTarget",
                                          {"targetId": tab.target_id, "flatten": True})
    session = connection.session(str(attached["sessionId"]))
    frames = session.subscribe(_FRAME_EVENTS, buffer=16)
    views.opened(tab.target_id)
    try:
        async with front_lock:
            with trio.fail_after(CDP_DEADLINE_S):
                await session.send("Page.bringToFront")
        with trio.fail_after(CDP_DEADLINE_S):
            await session.send("Page.startScreencast", SCREENCAST)
        await channel.send_json({"type": "started", "targetId": tab.target_id})
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_forward_frames, session, frames, channel)
            nursery.start_soon(_watch_tab, tab, channel, nursery.cancel_scope)
            await _forward_input(session, tab, channel, on_input)
            nursery.cancel_scope.cancel()
    finally:
        views.closed(tab.target_id)
        connection.unsubscribe(frames)
        with trio.move_on_after(DETACH_DEADLINE_S) as scope:
            scope.shield = True
            try:
                await connection.send("Target.detachFromTarget",
                                      {"sessionId": session.session_id})
            except BrowserdError:
                pass  # the tab or the browser is gone: so is the session


async def _forward_frames(session: CdpSession, frames: Any, channel: LiveChannel) -> None:
    async for event in frames:
        params = event.params
        meta = params.get("metadata") or {}
        data = await decode_base64(params.get("data"))
        await channel.send_json({
            "type": "frame",
            "deviceWidth": meta.get("deviceWidth"), "deviceHeight": meta.get("deviceHeight"),
            "offsetTop": meta.get("offsetTop", 0), "pageScaleFactor": meta.get("pageScaleFactor"),
        })
        await channel.send_bytes(data)
        with trio.fail_after(CDP_DEADLINE_S):
            await session.send("Page.screencastFrameAck", {"sessionId": params.get("sessionId")})


async def _watch_tab(tab: TabActor, channel: LiveChannel, scope: trio.CancelScope) -> None:
    shown = None
    while not (view := tab.view()).closed:
        if view.dialog != shown:
            shown = view.dialog
            await channel.send_json({"type": "dialog",
                                     "dialog": shown.to_json() if shown else None})
        await tab.wait_changed()
    await channel.send_json({"type": "closed", "targetId": tab.target_id})
    scope.cancel()


async def _forward_input(session: CdpSession, tab: TabActor, channel: LiveChannel,
                         on_input: Callable[[str], None] | None) -> None:
    """Read the viewer's messages until it goes; input is sent in order by one task.

    A page that opens a dialog does not answer the input that opened it
    until the dialog closes, so the reader never waits for input: it queues
    it (:data:`INPUT_QUEUE`; a full queue drops the message and says so) and
    answers a dialog at once, beside the queue.
    """
    send_input, queued = trio.open_memory_channel[tuple[str, dict[str, Any]]](INPUT_QUEUE)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_dispatch_input, session, queued, channel, on_input)
        async with send_input:
            while True:
                raw = await channel.receive()
                if raw is None:
                    break
                try:
                    method, params = input_command(orjson.loads(raw))
                except orjson.JSONDecodeError:
                    await channel.send_json({"type": "error", "error": "a message must be JSON"})
                    continue
                except BadRequest as exc:
                    await channel.send_json({"type": "error", "error": exc.message})
                    continue
                if method == DIALOG_METHOD:
                    await _send_reporting(tab.session, method, params, channel, on_input)
                    continue
                try:
                    send_input.send_nowait((method, params))
                except trio.WouldBlock:
                    await channel.send_json({"type": "error", "error": (
                        f"input dropped: the page has not taken the last {INPUT_QUEUE}")})
        nursery.cancel_scope.cancel()


async def _dispatch_input(session: CdpSession,
                          queued: trio.MemoryReceiveChannel[tuple[str, dict[str, Any]]],
                          channel: LiveChannel, on_input: Callable[[str], None] | None) -> None:
    async with queued:
        async for method, params in queued:
            await _send_reporting(session, method, params, channel, on_input)


async def _send_reporting(session: CdpSession, method: str, params: dict[str, Any],
                          channel: LiveChannel, on_input: Callable[[str], None] | None) -> None:
    """Send one command (deadline :data:`CDP_DEADLINE_S`); a failure is told to the viewer."""
    try:
        with trio.fail_after(CDP_DEADLINE_S):
            await session.send(method, params)
    except (BrowserdError, trio.TooSlowError) as exc:
        await channel.send_json({"type": "error", "error": f"{method} failed: {exc}"})
        return
    if on_input is not None:
        on_input(method)
