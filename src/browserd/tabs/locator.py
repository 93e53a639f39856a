"""ElementTarget: which element an action or a capture names.

One of: a snapshot ref, a CSS selector, a visible text, or a *locator* —
``role`` and/or ``name`` (``exact``, ``nth``) resolved when the action runs
by ``/find``'s rules, so an agent acts in one call without a snapshot first.
A locator may be looked for ``within`` one container (a ref, a selector or a
role/name locator of its own: "the Edit link in Bob's row").
"""

from __future__ import annotations

import attrs

from ..errors import BadRequest

__all__ = ["ElementTarget"]

_WITHIN_EXAMPLE = '{"role": "link", "name": "Edit", "within": {"role": "row", "name": "Bob"}}'


@attrs.frozen(kw_only=True)
class ElementTarget:
    """What to act on: exactly one of a ref, a selector, a text or a role/name locator.

    ``exact``: the name matches whole (else a case-insensitive substring);
    ``nth``: which of several matches (0-based; without it, several are 409
    AMBIGUOUS with the candidates). ``within``: a locator's container, one
    element named by a ref, a selector or a role/name locator (no text, no
    ``within`` of its own); the locator is looked for inside it only.
    """

    ref: str | None = None
    selector: str | None = None
    text: str | None = None
    role: str | None = None
    name: str | None = None
    exact: bool = False
    nth: int | None = None
    within: ElementTarget | None = None

    @property
    def is_locator(self) -> bool:
        return self.role is not None or self.name is not None

    @property
    def what(self) -> str:
        """The target in words, for messages: ``link 'Edit'``, ``e12``, ``'#orders'``."""
        if self.is_locator:
            return " ".join(part for part in (self.role or "", repr(self.name)
                                              if self.name is not None else "") if part)
        if self.ref is not None:
            return self.ref
        if self.selector is not None:
            return repr(self.selector)
        return f"text {self.text!r}"

    def given(self) -> list[str]:
        """The names of the parts that are set (API spelling; a locator counts once)."""
        parts = [name for name, value in (("ref", self.ref), ("selector", self.selector),
                                           ("text", self.text)) if value is not None]
        return parts + (["role/name"] if self.is_locator else [])

    def check(self) -> None:
        """The one "exactly one of ref, selector, text or role/name" rule, and ``within``'s
        (:meth:`check_within`); BadRequest otherwise."""
        if self.within is not None:
            self.check_within()
        given = self.given()
        if len(given) != 1:
            raise BadRequest("give exactly one of ref, selector, text or role/name"
                             + (f" (got {', '.join(given)})" if given else ""),
                             field="ref", hint='e.g. {"ref": "e12"} from GET /snapshot, or '
                                               '{"role": "button", "name": "Save"}')
        if self.nth is not None and (not self.is_locator or self.nth < 0):
            raise BadRequest("nth (0 or more) goes with a role/name locator", field="nth")

    def check_within(self) -> None:
        """``within`` goes with a role/name locator, and names its one container by exactly
        one of ref, selector or role/name; BadRequest (field ``within``) otherwise."""
        within = self.within
        assert within is not None
        if not self.is_locator:
            given = self.given()
            raise BadRequest("within goes with a role/name locator" + (
                f", not with {given[0]} (which names one element already)" if given else ""),
                field="within", hint=f"e.g. {_WITHIN_EXAMPLE}")
        if within.within is not None or within.text is not None:
            raise BadRequest("within names its container by ref, selector or role/name "
                             "(not by text, and with no within of its own)", field="within",
                             hint='e.g. "within": {"role": "row", "name": "Bob"}')
        given = within.given()
        if len(given) != 1:
            raise BadRequest("within: give exactly one of ref, selector or role/name"
                             + (f" (got {', '.join(given)})" if given else ""),
                             field="within", hint='e.g. "within": {"ref": "e12"} or '
                                                  '{"role": "row", "name": "Bob"}')
        if within.nth is not None and (not within.is_locator or within.nth < 0):
            raise BadRequest("within.nth (0 or more) goes with a role/name container",
                             field="within", hint=f"e.g. {_WITHIN_EXAMPLE}")
