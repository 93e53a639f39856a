"""How the ``browserd`` CLI reads the arguments people type, beyond one field per option.

- ``find [ROLE] [NAME]``: a first word that is a known ARIA role (in
  lowercase, :data:`ARIA_ROLES`) is the role and a second word the name;
  a single word that is not a role is text (part of the name or of the
  element's own text); ``--role``, ``--name`` and ``--text`` still work and win.
- ``select REF VALUE…``: the first word is the ref and the rest the option
  values; with another locator (``--selector``, ``--text``, ``--role``,
  ``--name``) every word is a value. ``--values`` still works.
- ``upload [REF] FILE…``: a first word that looks like a ref (``e12``) is
  the file input; otherwise every word is a file (the page's open chooser).

Pure functions over the field values of one command; a word that cannot be
placed is BadRequest (exit 1, before any request).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..errors import BadRequest
from ..snapshot.roles import ARIA_ROLES

__all__ = ["ARIA_ROLES", "PLACERS", "adjust_find", "adjust_select", "is_ref", "split_upload"]

"""The roles ``find ROLE`` recognises as a role (any other first word is text)."""

_REF = re.compile(r"^e[1-9][0-9]{0,9}$")
_LOCATORS = ("selector", "text", "role", "name")


def is_ref(word: str) -> bool:
    """Whether ``word`` is written like a snapshot ref (``e12``)."""
    return bool(_REF.match(word))


def adjust_find(values: dict[str, Any]) -> dict[str, Any]:
    """``find`` words (``words``: zero to two) placed into role / name / text."""
    words = [w for w in values.pop("words", None) or [] if w]
    if len(words) > 2:
        raise BadRequest("find takes at most two words: ROLE and NAME",
                         hint="quote a name with spaces: browserd find button 'Sign in'")
    placed: dict[str, Any] = {}
    if words and words[0] in ARIA_ROLES:
        placed["role"] = words.pop(0)
        if words:
            placed["name"] = words.pop(0)
    elif len(words) == 2:
        raise BadRequest(f"{words[0]!r} is not an ARIA role (find ROLE NAME)",
                         hint="quote a name with spaces, or give --role/--name/--text")
    elif words:
        placed["text"] = words[0]
    for key, value in placed.items():
        if values.get(key) is None:
            values[key] = value
    return values


def adjust_select(values: dict[str, Any]) -> dict[str, Any]:
    """``select`` words (``words``) placed into ref and values."""
    words = list(values.pop("words", None) or [])
    if words and values.get("ref") is None and not any(values.get(k) for k in _LOCATORS):
        values["ref"] = words.pop(0)
    if words:
        values["values"] = [*words, *(values.get("values") or [])]
    return values


def split_upload(words: list[str], ref: str | None, selector: str | None
                 ) -> tuple[str | None, list[str]]:
    """``upload`` words as (ref, files): a leading ref-like word is the input's ref
    unless ``--ref`` or ``--selector`` named it already."""
    if words and ref is None and selector is None and is_ref(words[0]):
        return words[0], words[1:]
    return ref, words


PLACERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "find": adjust_find, "select": adjust_select}
"""The functions that place a generated command's words into its fields, by the name a
route's CLI fact gives (:class:`browserd.http.facts.Words`)."""
