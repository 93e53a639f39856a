"""ElementTarget: which element an action or a capture names.

One of: a snapshot ref, a CSS selector, a visible text, or a *locator* —
``role`` and/or ``name`` (``exact``, ``nth``) resolved when the action runs
by ``/find``'s rules, so an agent acts in one call without a snapshot first.
"""

from __future__ import annotations

import attrs

from ..errors import BadRequest

__all__ = ["ElementTarget"]


@attrs.frozen(kw_only=True)
class ElementTarget:
    """What to act on: exactly one of a ref, a selector, a text or a role/name locator.

    ``exact``: the name matches whole (else a case-insensitive substring);
    ``nth``: which of several matches (0-based; without it, several are 409
    AMBIGUOUS with the candidates).
    """

    ref: str | None = None
    selector: str | None = None
    text: str | None = None
    role: str | None = None
    name: str | None = None
    exact: bool = False
    nth: int | None = None

    @property
    def is_locator(self) -> bool:
        return self.role is not None or self.name is not None

    def given(self) -> list[str]:
        """The names of the parts that are set (API spelling; a locator counts once)."""
        parts = [name for name, value in (("ref", self.ref), ("selector", self.selector),
                                           ("text", self.text)) if value is not None]
        return parts + (["role/name"] if self.is_locator else [])

    def check(self) -> None:
        """The one "exactly one of ref, selector, text or role/name" rule; BadRequest otherwise."""
        given = self.given()
        if len(given) != 1:
            raise BadRequest("give exactly one of ref, selector, text or role/name"
                             + (f" (got {', '.join(given)})" if given else ""),
                             field="ref", hint='e.g. {"ref": "e12"} from GET /snapshot, or '
                                               '{"role": "button", "name": "Save"}')
        if self.nth is not None and (not self.is_locator or self.nth < 0):
            raise BadRequest("nth (0 or more) goes with a role/name locator", field="nth")
