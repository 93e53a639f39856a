"""Page input like a person: click, type, press, hover, select, wait, dialogs, batches.

Every action runs while the caller holds the tab's work slot
(``async with tab.work()``) and answers ``{ok, ..., effects}`` (see
:mod:`.effects`). Modules, leaves first: :mod:`.keys` (key tables),
:mod:`.records`, :mod:`.effects` (the Observer), :mod:`.element` (resolve,
call, send input), :mod:`.pointer` (click, hover, hit-tested points),
:mod:`.keyboard` (press, type), :mod:`.select`, :mod:`.wait`, :mod:`.dialog`,
and :mod:`.batch` (one bounded action, recovery of a hung page, ``act``).
"""

from .batch import ACTION_KINDS, Step, act, perform
from .dialog import handle_dialog
from .effects import Observer, observing
from .keyboard import press, type_text
from .keys import MODIFIER_BITS, key_spec, modifier_mask, parse_chord
from .pointer import click, hover, locate
from .records import (
    Action,
    AnswerDialog,
    Click,
    ElementTarget,
    Hover,
    Navigate,
    Press,
    Progress,
    Select,
    TypeText,
    Wait,
)
from .select import select
from .wait import LOAD_STATES, glob_regex, wait

__all__ = [
    "ACTION_KINDS",
    "LOAD_STATES",
    "MODIFIER_BITS",
    "Action",
    "AnswerDialog",
    "Click",
    "ElementTarget",
    "Hover",
    "Navigate",
    "Observer",
    "Press",
    "Progress",
    "Select",
    "Step",
    "TypeText",
    "Wait",
    "act",
    "click",
    "glob_regex",
    "handle_dialog",
    "hover",
    "key_spec",
    "locate",
    "modifier_mask",
    "observing",
    "parse_chord",
    "perform",
    "press",
    "select",
    "type_text",
    "wait",
]
