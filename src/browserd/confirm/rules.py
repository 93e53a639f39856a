"""Which agent actions wait for the person: the ``confirm`` setting's rules.

A rule is ``{kind?, origin?, name?}``; an action matches when every field
given matches: ``kind`` one of :data:`KINDS`, ``origin`` a glob on the page's
origin (``https://*.shop.example``; for a navigation, the target's), ``name``
a case-insensitive regular expression searched in the target element's
accessible name (``pay|buy|delete``; from the snapshot's ref, or the ``text``
target). A rule with no field is refused (it would hold everything by
accident: write ``kind`` for each kind instead).

Plain code, no I/O. The rules are the person's (config.toml or
``BROWSERD_CONFIRM`` as JSON); no route changes them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import orjson

from ..textmatch import glob_match

__all__ = ["KINDS", "ConfirmRule", "parse_rules"]

#: What a rule's ``kind`` may name (``submit``: type with submit, Enter, /login;
#: ``download``: handing a downloaded file to the agent — its name is the file name).
KINDS = frozenset({"click", "type", "press", "submit", "select", "drag", "upload", "dialog",
                   "navigate", "eval", "download"})
_NAME_MAX = 500


@attrs.frozen(kw_only=True)
class ConfirmRule:
    """One rule of ``confirm``."""

    kind: str | None = None
    origin: str | None = None
    name: str | None = None

    def matches(self, *, kind: str, origin: str | None, name: str | None) -> bool:
        if self.kind is not None and self.kind != kind:
            return False
        if self.origin is not None and (origin is None or not glob_match(self.origin, origin)):
            return False
        return self.name is None or (
            name is not None and re.search(self.name, name[:_NAME_MAX], re.I) is not None)

    def to_json(self) -> dict[str, str]:
        return {k: v for k, v in (("kind", self.kind), ("origin", self.origin),
                                  ("name", self.name)) if v is not None}


def parse_rules(raw: Any) -> tuple[ConfirmRule, ...]:
    """Rules from TOML (a list of tables) or JSON text; ValueError naming what is wrong."""
    if isinstance(raw, str):
        raw = orjson.loads(raw) if raw.strip() else []
    if not isinstance(raw, list):
        raise ValueError("expected a list of {kind?, origin?, name?} tables")
    return tuple(_rule(item) for item in raw)


def _rule(item: Any) -> ConfirmRule:
    if not isinstance(item, Mapping) or not item or set(item) - {"kind", "origin", "name"}:
        raise ValueError(f"a rule is a table with kind, origin and/or name, got {item!r}")
    if not all(isinstance(v, str) and v for v in item.values()):
        raise ValueError(f"rule values are non-empty strings, got {item!r}")
    kind = item.get("kind")
    if kind is not None and kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r} (kinds: {', '.join(sorted(KINDS))})")
    name = item.get("name")
    if name is not None:
        try:
            re.compile(name)
        except re.error as exc:
            raise ValueError(f"name {name!r} is not a regular expression: {exc}") from None
    return ConfirmRule(kind=kind, origin=item.get("origin"), name=name)


def first_match(rules: Iterable[ConfirmRule], *, kind: str, origin: str | None,
                name: str | None) -> ConfirmRule | None:
    return next((r for r in rules if r.matches(kind=kind, origin=origin, name=name)), None)


__all__ += ["first_match"]
