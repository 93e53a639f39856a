"""Keyboard actions: press a key or chord, type text.

Key events go to the tab's top-level session (the focused element gets
them). Every function runs while the caller holds the tab's work slot.

Typing into a rich editor (:mod:`.editors`: CodeMirror 5/6, Monaco,
ProseMirror, any contenteditable) goes the way a person's would: the editor
is focused through its own input, ``clear`` selects all and deletes by keys
(the page's platform's select-all: Meta+A where ``navigator.platform`` says
macOS, Control+A elsewhere — see :func:`.editors.mac_platform`), and what
the editor shows afterwards is compared with what was typed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from ...errors import BadRequest, CdpError, Conflict
from ..actor import TabActor
from ..pagejs import page_function
from ..resolve import ElementHandle
from ..routing import send_in
from .editors import (
    Editor,
    editor_of,
    editor_text,
    focus_editor,
    focused_element,
    mac_platform,
    page_platform,
    same_text,
    text_contains,
)
from .element import call_on, gone_error, resolve_element, send_input
from .keys import KEYS, MODIFIER_BITS, Chord, KeySpec, parse_chord
from .records import Press, Progress, TypeText

__all__ = ["clearing_keys", "key_events", "press", "type_text"]


async def key_events(tab: TabActor, chord: Chord, progress: Progress, *,
                     commands: Sequence[str] = ()) -> None:
    """Send the chord: modifiers down, the key down and up, modifiers up.

    ``commands``: editing commands the key's down event carries (Chromium
    runs them when the page does not prevent the key's default), as macOS
    needs for its shortcuts. Cancellation may leave a modifier logically
    held in the renderer until the next key event with other modifiers.
    """
    mask = 0
    for name in chord.modifiers:
        mask |= MODIFIER_BITS[name]
        spec = KEYS[name]
        progress.sent = True
        await tab.send("Input.dispatchKeyEvent", {
            "type": "rawKeyDown", "key": spec.key, "code": spec.code,
            "windowsVirtualKeyCode": spec.key_code, "nativeVirtualKeyCode": spec.key_code,
            "location": spec.location, "modifiers": mask})
    spec = chord.key
    key, text = spec.key, spec.text
    if mask & MODIFIER_BITS["Shift"] and spec.shifted:
        key, text = spec.shifted, spec.shifted
    commandish = mask & (MODIFIER_BITS["Control"] | MODIFIER_BITS["Alt"] | MODIFIER_BITS["Meta"])
    down: dict[str, Any] = {
        "type": "keyDown" if text and not commandish else "rawKeyDown",
        "key": key, "code": spec.code, "windowsVirtualKeyCode": spec.key_code,
        "nativeVirtualKeyCode": spec.key_code, "location": spec.location, "modifiers": mask}
    if text and not commandish:
        down["text"] = text
        down["unmodifiedText"] = spec.text
    if commands:
        down["commands"] = list(commands)
    progress.sent = True
    await tab.send("Input.dispatchKeyEvent", down)
    await tab.send("Input.dispatchKeyEvent", {
        "type": "keyUp", "key": key, "code": spec.code, "windowsVirtualKeyCode": spec.key_code,
        "nativeVirtualKeyCode": spec.key_code, "location": spec.location, "modifiers": mask})
    for name in reversed(chord.modifiers):
        mask &= ~MODIFIER_BITS[name]
        spec = KEYS[name]
        await tab.send("Input.dispatchKeyEvent", {
            "type": "keyUp", "key": spec.key, "code": spec.code,
            "windowsVirtualKeyCode": spec.key_code, "nativeVirtualKeyCode": spec.key_code,
            "location": spec.location, "modifiers": mask})


async def press(tab: TabActor, action: Press, *, progress: Progress | None = None
                ) -> dict[str, Any]:
    """Press ``action``'s key or chord ("Enter", "Shift+Tab", "Control+a") with its extra
    modifiers on the focused element.

    Answers ``{ok, effects}`` (the record's key and modifiers are checked
    ones). Cancellation may leave a modifier logically held in the renderer
    until the next key event with other modifiers.
    """
    chord = action.chord
    progress = progress if progress is not None else Progress()
    effects = await send_input(tab, "key press", progress,
                                lambda: key_events(tab, chord, progress))
    return {"ok": True, "effects": effects}


_TYPING_TARGET = page_function("typingTarget")
_CLEAR_FIELD = page_function("clearField")


def clearing_keys(mac: bool) -> tuple[tuple[Chord, tuple[str, ...]], ...]:
    """The keys that empty a focused field, with the editing commands each carries.

    Select-all is Control+A, and on a macOS page (``mac``: see
    :func:`.editors.mac_platform`) Meta+A; there Chromium runs no
    editing shortcut for synthetic keys by itself, so the key down events
    carry the commands (``selectAll``, ``deleteBackward``) too.
    """
    if mac:
        return ((parse_chord("Meta+a"), ("selectAll",)),
                (parse_chord("Backspace"), ("deleteBackward",)))
    return (parse_chord("Control+a"), ()), (parse_chord("Backspace"), ())


async def _focus(tab: TabActor, handle: ElementHandle, editor: Editor | None) -> None:
    """Focus the element (an editor through its own input); BadRequest if it cannot be."""
    with contextlib.suppress(CdpError):
        await send_in(tab, handle.session, "DOM.scrollIntoViewIfNeeded",
                      {"objectId": handle.object_id})
    if editor is not None:
        if await focus_editor(tab, handle) == "refused":
            raise BadRequest(f"the {editor.kind} editor did not take keyboard focus; "
                             "nothing was typed", hint="click the editor first")
        return
    try:
        await send_in(tab, handle.session, "DOM.focus", {"objectId": handle.object_id})
    except CdpError as exc:
        gone = gone_error(exc)
        if gone is not None:
            raise gone from None
        raise BadRequest(f"the element cannot take keyboard focus ({exc.message})",
                         hint="target a text field, textarea or editable element") from None


async def _clear(tab: TabActor, handle: ElementHandle | None, editor: Editor | None,
                 progress: Progress) -> None:
    """Empty the focused field: a plain field's value is set to '' (with an ``input``
    event); an editor, a field whose value did not stay empty, an invisible field
    (a widget's key proxy) and, without a target, whatever has focus get
    select-all + Backspace by keys (the page's platform's, read once).

    Raises Conflict when an editor still shows text afterwards (nothing is typed).
    """
    if handle is not None and editor is None:
        progress.sent = True
        if await call_on(tab, handle, _CLEAR_FIELD) == "value":
            return
    mac = editor.mac if editor is not None else mac_platform(await page_platform(tab, handle))
    for chord, commands in clearing_keys(mac):
        await key_events(tab, chord, progress, commands=commands)
    if handle is None or editor is None:
        return
    shown, drawn = await editor_text(tab, handle)
    if shown is not None and drawn and not same_text(shown, ""):
        raise Conflict(f"the {editor.kind} editor still shows text after select-all and "
                       "Backspace; nothing was typed", editor=editor.kind,
                       hint="it may be read-only; take a snapshot to see what it shows")


async def _verify(tab: TabActor, handle: ElementHandle, editor: Editor, text: str, *,
                  cleared: bool) -> dict[str, Any]:
    """The answer's ``editor``: whether the editor shows the typed text (all of its text
    after ``clear``, else somewhere in it)."""
    out: dict[str, Any] = {"kind": editor.kind}
    shown, drawn = await editor_text(tab, handle)
    matches = shown is not None and (same_text(shown, text) if cleared
                                     else text_contains(shown, text))
    if matches:
        out["verified"] = True
    elif shown is None or not drawn:
        out["verified"] = None
        out["reason"] = ("the editor's text could not be read" if shown is None
                         else "the page drew no frame in time to read the editor")
    else:
        out["verified"] = False
        out["reason"] = ("the editor shows other text than was typed (auto-closed brackets, "
                         "indentation or completion may have changed it)")
    return out


async def type_text(tab: TabActor, action: TypeText, *, progress: Progress | None = None
                    ) -> dict[str, Any]:
    """Type ``action.text`` into its element (focused first) or into the focused element.

    ``clear`` empties it first (see :func:`_clear`). The text goes in with one
    ``Input.insertText`` unless ``slowly``, which sends a key down/up per
    character (for pages that listen to keys). ``submit`` presses Enter
    afterwards. Answers ``{ok, effects}``, plus for a rich editor
    ``editor: {kind, verified: true|false|null, reason?}`` (what it shows
    after the typing, before ``submit``, compared with the text). Raises
    BadRequest when the element cannot take focus or text, Conflict when an
    editor did not clear (nothing typed); errors and cancellation otherwise
    as for :func:`~.pointer.click`; typed text is never retyped.
    """
    text, target, clear, submit, slowly = (action.text, action.target, action.clear,
                                           action.submit, action.slowly)
    progress = progress if progress is not None else Progress()
    handle = None
    if target is not None:
        handle = await resolve_element(tab, target)
    report: dict[str, Any] = {}

    async def run() -> None:
        editor = None
        into = handle
        if handle is not None:
            editor = await editor_of(tab, handle)
            await _focus(tab, handle, editor)
            if text or clear:
                what = await call_on(tab, handle, _TYPING_TARGET)
                if what != "ok":
                    raise BadRequest(
                        f"the element is not editable (a {what}); nothing was typed",
                        hint="target a text field, textarea or editable element")
        elif text or clear:
            into = await focused_element(tab)
            editor = await editor_of(tab, into) if into is not None else None
        if clear:
            await _clear(tab, into, editor, progress)
        if text:
            if slowly:
                for ch in text:
                    spec = KEYS.get(ch) or (KEYS["Enter"] if ch == "\n" else None)
                    chord = Chord(modifiers=(), key=spec or KeySpec(
                        key=ch, code="", key_code=0, text=ch, shifted=ch))
                    await key_events(tab, chord, progress)
            else:
                progress.sent = True
                await tab.send("Input.insertText", {"text": text})
        if into is not None and editor is not None and (text or clear):
            report["editor"] = await _verify(tab, into, editor, text, cleared=clear)
        if submit:
            await key_events(tab, parse_chord("Enter"), progress)

    effects = await send_input(tab, "text", progress, run)
    return {"ok": True, **report, "effects": effects}
