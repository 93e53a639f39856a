"""Records the actions share: what to act on, and whether input was sent yet."""

from __future__ import annotations

import attrs

__all__ = ["ElementTarget", "Progress"]


@attrs.frozen(kw_only=True)
class ElementTarget:
    """What to act on: exactly one of a snapshot ref, a CSS selector or a visible text."""

    ref: str | None = None
    selector: str | None = None
    text: str | None = None

    def given(self) -> bool:
        return any(v is not None for v in (self.ref, self.selector, self.text))


@attrs.define
class Progress:
    """Whether the current action has sent input to the page yet (for ``uncertain``)."""

    sent: bool = False
