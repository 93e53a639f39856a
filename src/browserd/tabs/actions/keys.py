"""Key tables and chord parsing: how CDP ``Input.dispatchKeyEvent`` spells a key.

Plain data and pure functions (no I/O). Errors are BadRequest naming the
field (``key`` or ``modifiers``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from ...errors import BadRequest

__all__ = ["KEYS", "MODIFIER_BITS", "Chord", "KeySpec", "held_mask", "key_spec",
           "modifier_mask", "parse_chord"]

MODIFIER_BITS = {"Alt": 1, "Control": 2, "Meta": 4, "Shift": 8}


@attrs.frozen(kw_only=True)
class KeySpec:
    """One key as CDP ``Input.dispatchKeyEvent`` spells it."""

    key: str
    code: str
    key_code: int
    text: str = ""
    shifted: str = ""  # the key/text with Shift held (printable keys)
    location: int = 0


@attrs.frozen(kw_only=True)
class Chord:
    """A parsed key press: modifiers held, then one key."""

    modifiers: tuple[str, ...]
    key: KeySpec


# -- keys ------------------------------------------------------------------------

def _build_keys() -> dict[str, KeySpec]:
    keys: dict[str, KeySpec] = {}
    named = [
        ("Enter", "Enter", 13, "\r"), ("Tab", "Tab", 9, ""), ("Escape", "Escape", 27, ""),
        ("Backspace", "Backspace", 8, ""), ("Delete", "Delete", 46, ""),
        ("Insert", "Insert", 45, ""), ("Home", "Home", 36, ""), ("End", "End", 35, ""),
        ("PageUp", "PageUp", 33, ""), ("PageDown", "PageDown", 34, ""),
        ("ArrowLeft", "ArrowLeft", 37, ""), ("ArrowUp", "ArrowUp", 38, ""),
        ("ArrowRight", "ArrowRight", 39, ""), ("ArrowDown", "ArrowDown", 40, ""),
        ("ContextMenu", "ContextMenu", 93, ""), ("CapsLock", "CapsLock", 20, ""),
    ]
    for key, code, vk, text in named:
        keys[key] = KeySpec(key=key, code=code, key_code=vk, text=text)
    for i in range(1, 13):
        keys[f"F{i}"] = KeySpec(key=f"F{i}", code=f"F{i}", key_code=111 + i)
    for name, code, vk in (("Shift", "ShiftLeft", 16), ("Control", "ControlLeft", 17),
                           ("Alt", "AltLeft", 18), ("Meta", "MetaLeft", 91)):
        keys[name] = KeySpec(key=name, code=code, key_code=vk, location=1)
    keys[" "] = KeySpec(key=" ", code="Space", key_code=32, text=" ", shifted=" ")
    for c in "abcdefghijklmnopqrstuvwxyz":
        spec = KeySpec(key=c, code=f"Key{c.upper()}", key_code=ord(c.upper()), text=c,
                       shifted=c.upper())
        keys[c] = spec
        keys[c.upper()] = attrs.evolve(spec, key=c.upper(), text=c.upper())
    for digit, shifted in zip("0123456789", ")!@#$%^&*(", strict=True):
        spec = KeySpec(key=digit, code=f"Digit{digit}", key_code=ord(digit), text=digit,
                       shifted=shifted)
        keys[digit] = spec
        keys[shifted] = attrs.evolve(spec, key=shifted, text=shifted)
    for plain, shifted, code, vk in (
        ("-", "_", "Minus", 189), ("=", "+", "Equal", 187), ("[", "{", "BracketLeft", 219),
        ("]", "}", "BracketRight", 221), ("\\", "|", "Backslash", 220),
        (";", ":", "Semicolon", 186), ("'", '"', "Quote", 222), (",", "<", "Comma", 188),
        (".", ">", "Period", 190), ("/", "?", "Slash", 191), ("`", "~", "Backquote", 192),
    ):
        spec = KeySpec(key=plain, code=code, key_code=vk, text=plain, shifted=shifted)
        keys[plain] = spec
        keys[shifted] = attrs.evolve(spec, key=shifted, text=shifted)
    return keys


KEYS = _build_keys()
_ALIASES = {
    "enter": "Enter", "return": "Enter", "tab": "Tab", "escape": "Escape", "esc": "Escape",
    "backspace": "Backspace", "delete": "Delete", "del": "Delete", "insert": "Insert",
    "home": "Home", "end": "End", "pageup": "PageUp", "pagedown": "PageDown",
    "arrowleft": "ArrowLeft", "left": "ArrowLeft", "arrowright": "ArrowRight",
    "right": "ArrowRight", "arrowup": "ArrowUp", "up": "ArrowUp", "arrowdown": "ArrowDown",
    "down": "ArrowDown", "space": " ", "spacebar": " ", "contextmenu": "ContextMenu",
    "capslock": "CapsLock", "shift": "Shift", "control": "Control", "ctrl": "Control",
    "alt": "Alt", "option": "Alt", "meta": "Meta", "cmd": "Meta", "command": "Meta",
    "super": "Meta", "win": "Meta", "plus": "+",
}
_MODIFIER_NAMES = {"shift": "Shift", "control": "Control", "ctrl": "Control", "alt": "Alt",
                   "option": "Alt", "meta": "Meta", "cmd": "Meta", "command": "Meta",
                   "super": "Meta", "win": "Meta"}


def key_spec(name: str) -> KeySpec:
    """The :class:`KeySpec` of a key name ("Enter", "a", "ArrowDown", "F5", "Esc", …).

    Single characters outside the table are typed as themselves. Raises
    BadRequest for an unknown multi-character name.
    """
    if name in KEYS:
        return KEYS[name]
    alias = _ALIASES.get(name.lower())
    if alias is not None:
        return KEYS[alias]
    if re.fullmatch(r"[fF]([1-9]|1[0-2])", name):
        return KEYS[name.upper()]
    if len(name) == 1:
        return KeySpec(key=name, code="", key_code=0, text=name, shifted=name)
    raise BadRequest(f"unknown key {name!r}", field="key",
                     hint="use a key name like Enter, Tab, Escape, ArrowDown, Backspace, F5, "
                          "a single character, or a chord like Control+a")


def _modifier_name(name: str) -> str:
    """The canonical name of a modifier as a chord spells it (``ctrl``, ``Cmd``, …);
    BadRequest if it is none."""
    canonical = _MODIFIER_NAMES.get(name.lower()) if isinstance(name, str) else None
    if canonical is None:
        raise BadRequest(f"unknown modifier {name!r}", field="modifiers",
                         hint="modifiers are Alt, Control, Meta and Shift")
    return canonical


def held_mask(modifiers: Sequence[str]) -> int:
    """The CDP modifiers bitmask (Alt=1, Control=2, Meta=4, Shift=8) of checked modifier
    names (:data:`MODIFIER_BITS`' own: a record checked them)."""
    mask = 0
    for name in modifiers:
        mask |= MODIFIER_BITS[name]
    return mask


def modifier_mask(modifiers: Sequence[str]) -> int:
    """The CDP modifiers bitmask of modifier names as a chord spells them; BadRequest if
    one is unknown."""
    return held_mask([_modifier_name(name) for name in modifiers])


def parse_chord(key: str, modifiers: Sequence[str] = ()) -> Chord:
    """Parse ``"Control+a"`` / ``"Shift+Tab"`` / ``"Control++"`` plus extra ``modifiers``
    (checked names: a record checked them).

    Every part before the last is a modifier; the last is the key (a
    trailing ``+`` is the plus key itself). Raises BadRequest for an empty
    key, an unknown key or an unknown modifier in the chord.
    """
    if not isinstance(key, str) or key == "":
        raise BadRequest("key must be a non-empty string", field="key")
    if key == "+" or "+" not in key:
        parts = [key]
    elif key.endswith("++"):
        parts = [*key[:-2].split("+"), "+"]
    else:
        parts = key.split("+")
    if any(p == "" for p in parts):
        raise BadRequest(f"cannot parse the key chord {key!r}", field="key",
                         hint="write chords like Control+a or Shift+Tab")
    mods: list[str] = []
    for name in [*modifiers, *(_modifier_name(part) for part in parts[:-1])]:
        if name not in mods:
            mods.append(name)
    return Chord(modifiers=tuple(mods), key=key_spec(parts[-1]))
