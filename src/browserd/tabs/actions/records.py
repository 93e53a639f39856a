"""Action records: what a call asks for, typed and checked.

Each action kind's spec builds its record (:mod:`browserd.tabs.actions.kinds`:
a kind's ``build`` is the one place that reads its camelCase arguments), and
a record checks its own rules when it is made — exactly one element, known
modifiers, a key that exists, a drag from one thing to one place, something to
find (BadRequest, naming the field) — so the rules are checked once, with one
message, for ``/<kind>`` (``/find``) and ``/act`` alike; the domain takes
records as they are. Frozen attrs records, one per action kind; :data:`Action`
is their union.
:class:`RouteWait` is a wait only ``/wait`` runs (for a download, the person…).

``wait_until`` (every input action: click, hover, type, press, select,
dialog, upload, drag, mouse, keyboard): if the action navigates, what the
new document is waited for afterwards, within the action's deadline —
"domcontentloaded" (the default), "load", "commit" or "none" (see
:func:`browserd.tabs.settle.settle_after_input`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import attrs

from ...errors import BadRequest
from ...snapshot import FindOptions
from ..locator import ElementTarget
from ..settle import DEFAULT_SETTLE_MS
from .keys import MODIFIER_BITS, Chord, key_spec, parse_chord

__all__ = ["Action", "AnswerDialog", "Click", "Drag", "ElementTarget", "FindElements", "Hover",
           "KeyInput", "MouseInput", "Navigate", "Press", "Progress", "RouteWait", "Select",
           "TypeText", "Upload", "Wait", "check_modifiers"]


def check_modifiers(modifiers: Sequence[str]) -> None:
    """BadRequest unless every modifier is Alt, Control, Meta or Shift."""
    bad = [m for m in modifiers if m not in MODIFIER_BITS]
    if bad:
        raise BadRequest(f"unknown modifier(s): {', '.join(map(repr, bad))}", field="modifiers",
                         hint="modifiers are Alt, Control, Meta and Shift")


@attrs.frozen(kw_only=True)
class Click:
    """Click an element (``button``: left | right | middle; ``click_count`` 1-3).

    With ``files`` (paths already checked against the upload roots) the
    click must open a file chooser, which is then filled with them.
    """

    kind: ClassVar[str] = "click"
    target: ElementTarget
    button: str = "left"
    click_count: int = 1
    modifiers: tuple[str, ...] = ()
    files: tuple[str, ...] | None = None
    wait_until: str = "domcontentloaded"

    def __attrs_post_init__(self) -> None:
        check_modifiers(self.modifiers)
        self.target.check()


@attrs.frozen(kw_only=True)
class Hover:
    """Move the mouse over an element."""

    kind: ClassVar[str] = "hover"
    target: ElementTarget
    wait_until: str = "domcontentloaded"

    def __attrs_post_init__(self) -> None:
        self.target.check()


@attrs.frozen(kw_only=True)
class TypeText:
    """Type ``text`` into the element (or the focused one when ``target`` is None).

    ``origin``: when set (``text`` is a vault secret), the text is typed only
    while the tab's page is on that origin (403 SECRET_ORIGIN otherwise); the
    record's repr never shows the text.
    """

    kind: ClassVar[str] = "type"
    text: str = attrs.field(repr=False)
    target: ElementTarget | None = None
    origin: str | None = None
    secret: str | None = None
    clear: bool = False
    submit: bool = False
    slowly: bool = False
    wait_until: str = "domcontentloaded"

    def __attrs_post_init__(self) -> None:
        if self.target is not None:
            self.target.check()


@attrs.frozen(kw_only=True)
class Press:
    """Press a key or chord (``"Enter"``, ``"Control+a"``) with extra ``modifiers`` held."""

    kind: ClassVar[str] = "press"
    key: str
    modifiers: tuple[str, ...] = ()
    wait_until: str = "domcontentloaded"

    def __attrs_post_init__(self) -> None:
        check_modifiers(self.modifiers)
        parse_chord(self.key, self.modifiers)

    @property
    def chord(self) -> Chord:
        """The key, with the chord's own modifiers and ``modifiers`` held."""
        return parse_chord(self.key, self.modifiers)


@attrs.frozen(kw_only=True)
class Select:
    """Choose options of a ``<select>`` by value or visible label."""

    kind: ClassVar[str] = "select"
    target: ElementTarget
    values: tuple[str, ...]
    wait_until: str = "domcontentloaded"

    def __attrs_post_init__(self) -> None:
        self.target.check()
        if not self.values:
            raise BadRequest("values must name at least one option", field="values")


@attrs.frozen(kw_only=True)
class Wait:
    """Wait for exactly one condition of the page.

    Its kind's build checks that exactly one is given (the rule spans the
    waits only ``/wait`` runs too, :class:`RouteWait`, so only the build sees
    all of them) and that a selector or text wait may run JavaScript;
    ``load_state``'s values are its field's.
    """

    kind: ClassVar[str] = "wait"
    selector: str | None = None
    text: str | None = None
    text_gone: str | None = None
    url: str | None = None
    load_state: str | None = None

    @property
    def condition(self) -> tuple[str, str]:
        """The one condition: its API name (``textGone``) and its value."""
        given = [(name, value) for name, value in (
            ("selector", self.selector), ("text", self.text), ("textGone", self.text_gone),
            ("url", self.url), ("loadState", self.load_state)) if value is not None]
        assert len(given) == 1, given  # (its kind's build checked it)
        return given[0]


@attrs.frozen(kw_only=True)
class Navigate:
    """Navigate the tab (the URL already passed the URL policy)."""

    kind: ClassVar[str] = "navigate"
    url: str
    wait_until: str = "load"


@attrs.frozen(kw_only=True)
class AnswerDialog:
    """Accept or dismiss the open JavaScript dialog."""

    kind: ClassVar[str] = "dialog"
    accept: bool
    prompt_text: str | None = None
    wait_until: str = "domcontentloaded"


@attrs.frozen(kw_only=True)
class Upload:
    """Set the files of a file input (``target``), or answer the pending file chooser (None).

    ``files`` are resolved paths that already passed the upload policy.
    """

    kind: ClassVar[str] = "upload"
    files: tuple[str, ...]
    target: ElementTarget | None = None
    wait_until: str = "domcontentloaded"

    def __attrs_post_init__(self) -> None:
        if self.target is not None and (self.target.given() not in (["ref"], ["selector"])):
            raise BadRequest("give at most one of ref or selector", field="ref")


@attrs.frozen(kw_only=True)
class Drag:
    """Drag ``source`` with the real mouse to ``target`` or to the viewport point ``point``.

    With ``files`` instead of a source (resolved paths that passed the upload
    policy), those files are dropped there as if dragged in from outside.
    """

    kind: ClassVar[str] = "drag"
    source: ElementTarget | None = None
    files: tuple[str, ...] | None = None
    target: ElementTarget | None = None
    point: tuple[float, float] | None = None
    steps: int = 10
    wait_until: str = "domcontentloaded"

    def __attrs_post_init__(self) -> None:
        if (self.source is None) == (self.files is None):
            raise BadRequest("give exactly one of from (an element to drag) or files "
                             "(files to drop)", field="from")
        if (self.target is None) == (self.point is None):
            raise BadRequest("give the drop place as an element or as {x, y}, not both",
                             field="to")


@attrs.frozen(kw_only=True)
class MouseInput:
    """One raw mouse action at viewport CSS pixels (move | down | up | click | wheel)."""

    kind: ClassVar[str] = "mouse"
    action: str
    x: float
    y: float
    button: str = "left"
    click_count: int = 1
    delta_x: float = 0.0
    delta_y: float = 0.0
    wait_until: str = "domcontentloaded"


@attrs.frozen(kw_only=True)
class KeyInput:
    """One raw keyboard action: a key ``down`` / ``up`` (``key``), or ``insertText`` (``text``)."""

    kind: ClassVar[str] = "keyboard"
    action: str
    key: str | None = None
    text: str | None = None
    wait_until: str = "domcontentloaded"

    def __attrs_post_init__(self) -> None:
        if self.action == "insertText":
            if not self.text:
                raise BadRequest("insertText needs a non-empty text", field="text")
            if self.key is not None:
                raise BadRequest("insertText takes text, not key", field="key")
            return
        if not self.key:
            raise BadRequest(f"{self.action} needs a key", field="key")
        if self.text is not None:
            raise BadRequest(f"{self.action} takes key, not text", field="text")
        key_spec(self.key)


@attrs.frozen(kw_only=True)
class FindElements:
    """Find elements by ``role``, accessible ``name`` or visible ``text`` (a read: /find).

    At least one of them, with the walker's own rule and message
    (:class:`~browserd.snapshot.FindOptions`, which also bounds ``limit`` and
    ``line_chars``); ``root`` scopes the search to a ref (``e12``) or else a CSS
    selector, told apart when it runs as /find tells them.
    """

    kind: ClassVar[str] = "find"
    role: str | None = None
    name: str | None = None
    text: str | None = None
    exact: bool = False
    limit: int = 20
    around: bool = False
    root: str | None = None
    line_chars: int | None = None
    settle_ms: int = DEFAULT_SETTLE_MS

    def __attrs_post_init__(self) -> None:
        FindOptions(role=self.role, name=self.name, text=self.text, exact=self.exact,
                    limit=self.limit, line_chars=self.line_chars, around=self.around)


@attrs.frozen(kw_only=True)
class RouteWait:
    """A wait only ``/wait`` runs, beside the tab's work: ``download`` (the tab's next
    download), ``handoff`` (the person ends the tab's handoff), ``tabRequest`` (the person
    answers the request ``request_id``), ``confirmation`` (the person answers the held
    action ``request_id``, which then runs)."""

    kind: ClassVar[str] = "wait"
    condition: str
    request_id: str | None = None


Action = (Click | Hover | TypeText | Press | Select | Wait | Navigate | AnswerDialog | Upload
          | Drag | MouseInput | KeyInput | FindElements)
"""Any one action."""


@attrs.define
class Progress:
    """Whether the current action has sent input to the page yet (for ``uncertain``)."""

    sent: bool = False
