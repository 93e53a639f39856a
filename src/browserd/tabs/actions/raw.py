"""Raw input: one mouse or keyboard event at a time, for canvas, maps and odd widgets.

Coordinates are top-level viewport CSS pixels; events go to the tab's
top-level session (Chromium routes them into iframes by hit-testing). The
tab remembers, between requests, which mouse buttons are down, where the
pointer is and which modifier keys are held (:class:`browserd.tabs.inputstate.InputState`),
so ``down`` → ``move`` → ``up`` is a drag and a click while ``Shift`` is
down is a shift-click. Runs in the tab's work slot; errors and cancellation
as for :func:`browserd.tabs.actions.pointer.click` (an event already sent
is never resent).
"""

from __future__ import annotations

from typing import Any

from ..actor import TabActor
from ..inputstate import BUTTON_BITS
from .element import send_input
from .keys import MODIFIER_BITS, KeySpec, key_spec
from .records import KeyInput, MouseInput, Progress

__all__ = ["KEY_ACTIONS", "MOUSE_ACTIONS", "keyboard", "mouse"]

MOUSE_ACTIONS = ("move", "down", "up", "click", "wheel")
KEY_ACTIONS = ("down", "up", "insertText")


async def mouse(tab: TabActor, action: MouseInput, *, progress: Progress | None = None
                ) -> dict[str, Any]:
    """Send one mouse action; ``{ok, x, y, buttons: [held], effects}``.

    ``move`` carries the buttons still held; ``down``/``up`` press or
    release ``button``; ``click`` moves there and presses and releases
    ``click_count`` times; ``wheel`` scrolls by ``delta_x``/``delta_y``.
    The record's values are its fields' (its kind's fields checked them).
    """
    assert action.action in MOUSE_ACTIONS and action.button in BUTTON_BITS
    progress = progress if progress is not None else Progress()
    state = tab.input
    x, y = action.x, action.y

    async def send(kind: str, **extra: Any) -> None:
        progress.sent = True
        await tab.send("Input.dispatchMouseEvent",
                       {"type": kind, "x": x, "y": y, "modifiers": state.modifiers, **extra})

    async def run() -> None:
        match action.action:
            case "move":
                await send("mouseMoved", button=state.held_button(), buttons=state.buttons)
            case "down":
                state.press(action.button)
                await send("mousePressed", button=action.button, buttons=state.buttons,
                           clickCount=action.click_count)
            case "up":
                state.release(action.button)
                await send("mouseReleased", button=action.button, buttons=state.buttons,
                           clickCount=action.click_count)
            case "click":
                await send("mouseMoved", button=state.held_button(), buttons=state.buttons)
                bit = BUTTON_BITS[action.button]
                for count in range(1, action.click_count + 1):
                    await send("mousePressed", button=action.button,
                               buttons=state.buttons | bit, clickCount=count)
                    await send("mouseReleased", button=action.button,
                               buttons=state.buttons & ~bit, clickCount=count)
            case "wheel":
                await send("mouseWheel", deltaX=action.delta_x, deltaY=action.delta_y,
                           button="none", buttons=state.buttons)
        state.move(x, y)

    effects = await send_input(tab, "mouse input", progress, run)
    held = [name for name, bit in BUTTON_BITS.items() if state.buttons & bit]
    return {"ok": True, "x": x, "y": y, "buttons": held, "effects": effects}


def _modifier_of(spec: KeySpec) -> int:
    return MODIFIER_BITS.get(spec.key, 0)


async def keyboard(tab: TabActor, action: KeyInput, *, progress: Progress | None = None
                   ) -> dict[str, Any]:
    """Send one key ``down`` or ``up`` (``key``), or ``insertText`` (``text``).

    A modifier key (Shift, Control, Alt, Meta) stays held from its ``down``
    to its ``up`` and applies to every key and mouse event in between;
    with Shift held a letter's ``down`` types the shifted character.
    Answers ``{ok, modifiers: [held], effects}``. The record is a checked one
    (a known action; a key that exists, or a non-empty text).
    """
    progress = progress if progress is not None else Progress()
    state = tab.input
    if action.action == "insertText":
        assert action.text is not None
        text = action.text

        async def insert() -> None:
            progress.sent = True
            await tab.send("Input.insertText", {"text": text})

        effects = await send_input(tab, "text", progress, insert)
        return {"ok": True, "modifiers": _held(state.modifiers), "effects": effects}
    assert action.key is not None
    spec = key_spec(action.key)
    modifier = _modifier_of(spec)

    async def run() -> None:
        base = {"code": spec.code, "windowsVirtualKeyCode": spec.key_code,
                "nativeVirtualKeyCode": spec.key_code, "location": spec.location}
        if action.action == "down":
            mask = state.modifiers | modifier
            key, text = spec.key, spec.text
            if mask & MODIFIER_BITS["Shift"] and spec.shifted:
                key, text = spec.shifted, spec.shifted
            commandish = mask & (MODIFIER_BITS["Control"] | MODIFIER_BITS["Alt"]
                                 | MODIFIER_BITS["Meta"])
            params: dict[str, Any] = {**base, "key": key, "modifiers": mask,
                                      "type": "keyDown" if text and not commandish
                                      else "rawKeyDown"}
            if text and not commandish:
                params["text"] = text
                params["unmodifiedText"] = spec.text
            progress.sent = True
            await tab.send("Input.dispatchKeyEvent", params)
            state.hold_modifiers(mask)
        else:
            mask = state.modifiers & ~modifier
            key = spec.shifted if (mask & MODIFIER_BITS["Shift"] and spec.shifted) else spec.key
            progress.sent = True
            await tab.send("Input.dispatchKeyEvent",
                           {**base, "type": "keyUp", "key": key, "modifiers": mask})
            state.hold_modifiers(mask)

    effects = await send_input(tab, "key", progress, run)
    return {"ok": True, "modifiers": _held(state.modifiers), "effects": effects}


def _held(mask: int) -> list[str]:
    return [name for name, bit in MODIFIER_BITS.items() if mask & bit]
