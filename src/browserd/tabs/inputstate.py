"""The tab's input state between requests: the pending file chooser, held keys and buttons.

Held by one :class:`browserd.tabs.actor.TabActor`. The actor's event task
records a file chooser the page opened (:class:`FileChooser`, via
:meth:`InputState.chooser_opened`); raw ``/mouse`` and ``/keyboard`` input
(running in the tab's work slot) keeps the pressed mouse buttons, the
pointer position and the held modifier keys here, so that a ``move`` after
a ``down`` carries the held button and a click while Shift is held carries
the Shift modifier. Plain code: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

__all__ = ["BUTTON_BITS", "FileChooser", "InputState"]

BUTTON_BITS = {"left": 1, "right": 2, "middle": 4, "back": 8, "forward": 16}
"""CDP's ``buttons`` bitmask, by button name."""


@attrs.frozen(kw_only=True)
class FileChooser:
    """A file chooser the page opened and Chromium intercepted (``Page.fileChooserOpened``).

    ``session_id`` is None for the tab's own session. ``serial`` counts the
    tab's choosers, so an action can tell whether *it* opened one.
    """

    serial: int
    frame_id: str
    backend_node_id: int
    multiple: bool
    session_id: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"multiple": self.multiple}


@attrs.define
class InputState:
    """Pending file chooser, pressed mouse buttons, pointer position, held modifiers."""

    chooser: FileChooser | None = None
    choosers_seen: int = 0
    buttons: int = 0  # CDP bitmask of pressed buttons (BUTTON_BITS)
    x: float = 0.0
    y: float = 0.0
    modifiers: int = 0  # CDP bitmask of held modifier keys (Alt=1 Control=2 Meta=4 Shift=8)

    def chooser_opened(self, *, frame_id: str, backend_node_id: int, multiple: bool,
                       session_id: str | None = None) -> FileChooser:
        """Record a newly opened chooser (it replaces any earlier one)."""
        self.choosers_seen += 1
        self.chooser = FileChooser(serial=self.choosers_seen, frame_id=frame_id,
                                   backend_node_id=backend_node_id, multiple=multiple,
                                   session_id=session_id)
        return self.chooser

    def note_opened(self, params: Mapping[str, Any], session_id: str | None) -> bool:
        """Record the chooser of a ``Page.fileChooserOpened`` event; False if it names none."""
        node = params.get("backendNodeId")
        if not isinstance(node, int):
            return False
        self.chooser_opened(frame_id=str(params.get("frameId", "")), backend_node_id=node,
                            multiple=params.get("mode") == "selectMultiple",
                            session_id=session_id)
        return True

    def forget_session(self, session_id: str) -> None:
        """A frame's session ended: its pending chooser (if that is the pending one) is gone."""
        if self.chooser is not None and self.chooser.session_id == session_id:
            self.chooser = None

    def chooser_answered(self, chooser: FileChooser) -> None:
        """``chooser`` was filled (or its input is gone): no longer pending, if it still was."""
        if self.chooser is chooser:
            self.chooser = None

    def forget_chooser(self) -> None:
        """The chooser's document went away (a main-frame navigation)."""
        self.chooser = None

    def press(self, button: str) -> None:
        self.buttons |= BUTTON_BITS[button]

    def release(self, button: str) -> None:
        self.buttons &= ~BUTTON_BITS[button]

    def held_button(self) -> str:
        """The button a ``mouseMoved`` names: the first held one, or ``none``."""
        for name, bit in BUTTON_BITS.items():
            if self.buttons & bit:
                return name
        return "none"

    def move(self, x: float, y: float) -> None:
        self.x, self.y = x, y

    def hold_modifiers(self, mask: int) -> None:
        """The modifier keys now held (CDP bitmask), after a raw key down or up."""
        self.modifiers = mask
