"""ElementTarget: which element an action or a capture names (a ref, a selector or a text)."""

from __future__ import annotations

import attrs

from ..errors import BadRequest

__all__ = ["ElementTarget"]


@attrs.frozen(kw_only=True)
class ElementTarget:
    """What to act on: exactly one of a snapshot ref, a CSS selector or a visible text."""

    ref: str | None = None
    selector: str | None = None
    text: str | None = None

    def given(self) -> list[str]:
        """The names of the parts that are set (API spelling)."""
        return [name for name, value in (("ref", self.ref), ("selector", self.selector),
                                          ("text", self.text)) if value is not None]

    def check(self) -> None:
        """The one "exactly one of ref, selector or text" rule; BadRequest otherwise."""
        given = self.given()
        if len(given) != 1:
            raise BadRequest("give exactly one of ref, selector or text"
                             + (f" (got {', '.join(given)})" if given else ""),
                             field="ref", hint='e.g. {"ref": "e12"} from GET /snapshot')
