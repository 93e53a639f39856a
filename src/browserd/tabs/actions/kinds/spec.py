"""What an action kind is: one :class:`ActionSpec` says everything about it, once.

Its fields (what ``/<kind>`` and an ``/act`` step take), its summary, its
record class (:mod:`browserd.tabs.actions.records`, which checks its own
rules when made), how the record is built from the checked arguments
(:data:`Build`: the one place that reads the API's camelCase for the kind),
how it is performed on a tab (:data:`Perform`), the scopes its arguments add
(``extra_needs``) and how a recorded call of it is named, replayed and
written out again (:class:`Recording`). :mod:`browserd.tabs.actions.kinds`
holds them all; the routes, ``/act``, the batch runner, the recorder, the
replay, the Playwright scripts and the trace read them there.

Also the fields the kinds share (:data:`REF`, :data:`SELECTOR`,
:data:`TEXT_TARGET`, :data:`LOCATOR` with its :data:`WITHIN`, :data:`MODIFIERS`,
:data:`WAIT_UNTIL`, :data:`FILES`). Plain records: no I/O.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

import attrs

from ....argfields import Field
from ....records.model import Call
from ....records.playwright import Writer
from ...actor import TabActor
from ...locator import ElementTarget
from ...settle import WAIT_UNTIL as WAIT_STATES
from ..records import Progress

__all__ = ["FILES", "LOCATOR", "MODIFIERS", "REF", "SELECTOR", "TEXT_TARGET", "WAIT_UNTIL",
           "WITHIN",
           "ActionSpec", "Build", "BuildContext", "Perform", "PerformContext", "Recording",
           "ScriptHook", "TraceHook", "element_target", "no_needs"]

REF = Field(name="ref", type="string", max_length=32, description="a ref from GET /snapshot")
SELECTOR = Field(name="selector", type="string", max_length=4000, description="a CSS selector")
TEXT_TARGET = Field(name="text", type="string", max_length=2000,
                    description="visible text of the element (buttons and links first)")
_ROLE_NAME = (
    Field(name="role", type="string", max_length=100,
          description="the element's role (button, link, textbox …), with or without name"),
    Field(name="name", type="string", max_length=2000,
          description="part of its accessible name (case-insensitive; whole with exact)"),
    Field(name="exact", type="boolean", default=False,
          description="name must match whole"),
    Field(name="nth", type="integer", minimum=0, maximum=1000,
          description="which match when several do (0-based; without it: 409 AMBIGUOUS)"),
)
#: Where a role/name locator is looked for: inside one container only.
WITHIN = Field(name="within", type="object", properties=(REF, SELECTOR, *_ROLE_NAME),
               description="with role/name: look only inside this one container (a table "
                           "row, a dialog, a form), named by {ref} | {selector} | "
                           "{role, name?, exact?, nth?}")
#: A role/name locator, resolved when the action runs by /find's rules (instead of a ref).
LOCATOR = (*_ROLE_NAME, WITHIN)
MODIFIERS = Field(name="modifiers", type="array", items="string",
                  description="held modifiers: any of Alt, Control, Meta, Shift")
WAIT_UNTIL = Field(name="waitUntil", type="string", default="domcontentloaded",
                   enum=WAIT_STATES,
                   description="if the action navigates: wait (within timeoutMs) until the new "
                   "document reaches this; effects.loadState says where it got to")
FILES = Field(name="files", type="array", items="string",
              description="paths of files under upload_roots (relative: to the first root)")


class BuildContext(Protocol):
    """What building a record may ask of the service (the HTTP layer provides it)."""

    @property
    def evaluate_enabled(self) -> bool:
        """Whether page JavaScript may run (``evaluate_enabled``)."""
        ...

    def check_url(self, url: str) -> str:
        """The URL, if the URL policy lets it through (else UrlBlocked)."""
        ...

    def check_files(self, files: Any) -> tuple[str, ...]:
        """The resolved paths, each under the upload roots (BadRequest, UploadBlocked,
        UploadFileMissing)."""
        ...

    def secret_for_typing(self, name: str) -> tuple[str, str | None]:
        """A vault secret's value and the origin it may be typed on (SecretNotFound)."""
        ...


@attrs.frozen(kw_only=True)
class PerformContext:
    """What a performer is given beside the tab and the record."""

    progress: Progress
    timeout_s: float
    evaluate_enabled: bool


Build = Callable[[Mapping[str, Any], BuildContext], Any]
"""Checked arguments (camelCase) → the kind's record (or a
:class:`~browserd.tabs.actions.records.RouteWait`)."""
Perform = Callable[[TabActor, Any, PerformContext], Awaitable[dict[str, Any]]]
"""Runs the record on the tab (the caller holds its work slot): the answer."""
ScriptHook = Callable[[Writer, Call, str | None, int], None]
"""Writes the Playwright statements that repeat a recorded call (its element's locator,
the step's index)."""
TraceHook = Callable[[Call, str | None, dict[str, Any]], tuple[str, str, str]]
"""The Playwright call a recorded call is in a trace: (class, method, apiName), given its
element's selector and its params (which it may complete)."""


def no_needs(args: Mapping[str, Any]) -> tuple[str, ...]:
    """A kind whose arguments add no scope."""
    return ()


@attrs.frozen(kw_only=True)
class Recording:
    """How a recorded call of one kind names its elements and is written out again.

    ``names``: where its elements are: ``("element",)`` its own ref, selector,
    text or role/name; object fields (a drag's ``("from", "to")``); ``()`` none.
    ``text_names_element``: its ``text`` names the element (a click's), not what
    to type or wait for. ``locator``: its route takes ``{role, name, exact, nth}``,
    so a replay names the element by role and name. ``script`` writes it as
    Playwright, ``script_ahead`` before the step that comes first (a dialog's
    handler), ``trace`` is its Playwright call in a trace (None: ``browserd.<kind>``).
    """

    names: tuple[str, ...]
    text_names_element: bool = False
    locator: bool = False
    script: ScriptHook
    script_ahead: Callable[[Writer, Call], None] | None = None
    trace: TraceHook | None = None


@attrs.frozen(kw_only=True)
class ActionSpec:
    """One action kind: everything ``/<kind>``, an ``/act`` step, the batch runner and the
    records know about it.

    ``route_only``: fields ``/act`` steps do not take (a wait for a download, the
    person, a tab request, a held action: ``/wait``'s alone; a record or a script
    leaves such a wait out). ``settles``: an input that may navigate waits, within
    its deadline, for the new document's ``waitUntil``; ``own_timeout``: the
    kind's timeout is its own result (wait, navigate: a timeout is their answer,
    never an uncertain input); ``during_dialog``: it runs while a JavaScript dialog
    is open (answering it).
    """

    kind: str
    summary: str
    fields: tuple[Field, ...]
    route_only: tuple[str, ...] = ()
    record: type
    build: Build
    perform: Perform
    settles: bool
    own_timeout: bool = False
    during_dialog: bool = False
    extra_needs: Callable[[Mapping[str, Any]], tuple[str, ...]] = no_needs
    recording: Recording

    @property
    def step_fields(self) -> tuple[Field, ...]:
        """The fields of an ``/act`` step of this kind."""
        return tuple(f for f in self.fields if f.name not in self.route_only)


def element_target(args: Mapping[str, Any], *, text: bool = True) -> ElementTarget:
    """The element ``args`` name (ref, selector, text unless it is data, role/name, the
    locator's ``within`` container); the record that holds it checks that exactly one is
    given (and ``within``'s rules)."""
    within = args.get("within")
    return ElementTarget(ref=args.get("ref"), selector=args.get("selector"),
                         text=args.get("text") if text else None, role=args.get("role"),
                         name=args.get("name"), exact=bool(args.get("exact")),
                         nth=args.get("nth"),
                         within=element_target(within) if isinstance(within, Mapping)
                         else None)

