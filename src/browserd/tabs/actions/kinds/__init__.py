"""The action kinds: one :class:`~.spec.ActionSpec` per kind, every fact about it once.

:data:`ACTION_SPECS` (kind → spec, in the order ``/act`` lists them) is what
the ``/<kind>`` routes and ``/act`` steps take and build
(:mod:`browserd.http.routes.input`; ``/find``, a read, in
:mod:`browserd.http.routes.page`), what :func:`browserd.tabs.actions.perform`
runs, and — with the kinds that are routes but no step (:mod:`.moves`) —
:data:`RECORDINGS`, how the recorder, the replay, the Playwright scripts and
the trace name and write out a recorded call. A new kind is one spec here
(and its performer in :mod:`browserd.tabs.actions`).

Modules: :mod:`.spec` (the records, the shared fields), :mod:`.pointing`
(click, hover, select, upload, drag, mouse), :mod:`.keys` (type, press,
keyboard), :mod:`.page` (wait, navigate, dialog), :mod:`.reads` (find),
:mod:`.moves` (scroll, back, forward, reload, act as recorded).
"""

from __future__ import annotations

from .keys import KEYBOARD, PRESS, TYPE
from .moves import ROUTE_RECORDINGS
from .page import DIALOG, NAVIGATE, PERSON_WAITS, WAIT
from .pointing import CLICK, COORDINATE_LIMIT, DRAG, HOVER, MOUSE, SELECT, UPLOAD
from .reads import FIND, READ_KINDS
from .spec import ActionSpec, BuildContext, PerformContext, Recording

__all__ = ["ACTION_KINDS", "ACTION_SPECS", "COORDINATE_LIMIT", "PERSON_WAITS", "READ_KINDS",
           "RECORDINGS", "ActionSpec", "BuildContext", "PerformContext", "Recording"]

#: Every action kind, in the order ``/act`` lists them.
ACTION_SPECS: dict[str, ActionSpec] = {spec.kind: spec for spec in (
    CLICK, TYPE, PRESS, HOVER, SELECT, WAIT, NAVIGATE, DIALOG, UPLOAD, DRAG, MOUSE, KEYBOARD,
    FIND)}
ACTION_KINDS = tuple(ACTION_SPECS)
#: Every kind a session record keeps a call of: the action kinds and the routes of
#: :mod:`.moves`.
RECORDINGS: dict[str, Recording] = {
    **{kind: spec.recording for kind, spec in ACTION_SPECS.items()}, **ROUTE_RECORDINGS}
