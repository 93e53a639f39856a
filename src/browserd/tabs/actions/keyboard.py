"""Keyboard actions: press a key or chord, type text.

Key events go to the tab's top-level session (the focused element gets
them). Every function runs while the caller holds the tab's work slot.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from ...errors import BadRequest, CdpError
from ..actor import TabActor
from ..routing import send_in
from .element import call_on, gone_error, resolve_element, send_input
from .keys import KEYS, MODIFIER_BITS, Chord, KeySpec, parse_chord
from .records import ElementTarget, Progress

__all__ = ["key_events", "press", "type_text"]


async def key_events(tab: TabActor, chord: Chord, progress: Progress) -> None:
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


async def press(tab: TabActor, key: str, modifiers: Sequence[str] = (), *,
                progress: Progress | None = None) -> dict[str, Any]:
    """Press one key or chord ("Enter", "Shift+Tab", "Control+a") on the focused element.

    Answers ``{ok, effects}``. Raises BadRequest for an unknown key or
    modifier. Cancellation may leave a modifier logically held in the
    renderer until the next key event with other modifiers.
    """
    chord = parse_chord(key, modifiers)
    progress = progress if progress is not None else Progress()
    effects = await send_input(tab, "key press", progress,
                                lambda: key_events(tab, chord, progress))
    return {"ok": True, "effects": effects}


# After DOM.focus: does keyboard text land somewhere editable? (Focus may move
# into a widget's inner field, so the deep active element is what counts.)
_EDITABLE_JS = """function () {
  let a = this.ownerDocument.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  if (!a) return this.localName;
  if (a.isContentEditable) return 'ok';
  const tag = a.localName;
  if (tag === 'textarea') return (a.readOnly || a.disabled) ? 'readonly textarea' : 'ok';
  if (tag === 'input') {
    const nonText = ['button', 'submit', 'reset', 'checkbox', 'radio', 'file', 'image',
                     'range', 'color', 'hidden'];
    if (nonText.includes(a.type)) return 'input type=' + a.type;
    return (a.readOnly || a.disabled) ? 'readonly input' : 'ok';
  }
  return tag;
}"""

_CLEAR_JS = """function () {
  const el = this, tag = el.localName;
  if (tag === 'input' || tag === 'textarea') {
    const proto = tag === 'input' ? HTMLInputElement.prototype : HTMLTextAreaElement.prototype;
    const setter = Object.getOwnPropertyDescriptor(proto, 'value').set;
    setter.call(el, '');
    el.dispatchEvent(new InputEvent('input', {bubbles: true, composed: true,
                                              inputType: 'deleteContentBackward'}));
    return 'value';
  }
  if (el.isContentEditable) {
    const sel = el.ownerDocument.getSelection();
    const range = el.ownerDocument.createRange();
    range.selectNodeContents(el);
    sel.removeAllRanges();
    sel.addRange(range);
    return 'selection';
  }
  return 'none';
}"""


async def type_text(tab: TabActor, text: str, *, target: ElementTarget | None = None,
                    clear: bool = False, submit: bool = False, slowly: bool = False,
                    progress: Progress | None = None) -> dict[str, Any]:
    """Type ``text`` into the element (focused first) or into the focused element.

    ``clear`` empties it first (inputs and textareas: value set to '' with
    an ``input`` event; contenteditable or no target: select all + Delete).
    The text goes in with one ``Input.insertText`` unless ``slowly``, which
    sends a key down/up per character (for pages that listen to keys).
    ``submit`` presses Enter afterwards. Answers ``{ok, effects}``. Errors
    and cancellation as for :func:`click`; typed text is never retyped.
    """
    progress = progress if progress is not None else Progress()
    handle = None
    if target is not None and target.given():
        handle = await resolve_element(tab, target)

    async def run() -> None:
        if handle is not None:
            with contextlib.suppress(CdpError):
                await send_in(tab, handle.session, "DOM.scrollIntoViewIfNeeded",
                            {"objectId": handle.object_id})
            try:
                await send_in(tab, handle.session, "DOM.focus", {"objectId": handle.object_id})
            except CdpError as exc:
                gone = gone_error(exc)
                if gone is not None:
                    raise gone from None
                raise BadRequest(f"the element cannot take keyboard focus ({exc.message})",
                                 hint="target a text field, textarea or editable element"
                                 ) from None
            if text or clear:
                what = await call_on(tab, handle, _EDITABLE_JS)
                if what != "ok":
                    raise BadRequest(
                        f"the element is not editable (a {what}); nothing was typed",
                        hint="target a text field, textarea or editable element")
        if clear:
            how = "none"
            if handle is not None:
                progress.sent = True
                how = str(await call_on(tab, handle, _CLEAR_JS))
            if how != "value":
                if how == "none":
                    await key_events(tab, parse_chord("Control+a"), progress)
                await key_events(tab, parse_chord("Delete"), progress)
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
        if submit:
            await key_events(tab, parse_chord("Enter"), progress)

    effects = await send_input(tab, "text", progress, run)
    return {"ok": True, "effects": effects}
