"""Page input like a person: click, type, press, hover, select, wait, dialogs, uploads,
drag, raw mouse and keyboard, batches (which may also find: a read).

Every action runs while the caller holds the tab's work slot
(``async with tab.work()``) and answers ``{ok, ..., effects}`` (see
:mod:`browserd.tabs.effects`, the Observer: below this package, which builds on
:mod:`browserd.tabs.page` and :mod:`browserd.tabs.history` and is never imported
by them). Modules, leaves first: :mod:`.keys` (key tables),
:mod:`.records`, :mod:`.element` (resolve,
call, send input), :mod:`.editors` (rich editors: which one, focus, where to
click, what it shows), :mod:`.pointer` (click, hover, hit-tested points),
:mod:`.keyboard` (press, type), :mod:`.select`, :mod:`.wait`, :mod:`.dialog`,
:mod:`.upload` (file inputs and choosers), :mod:`.drag`, :mod:`.raw` (one mouse
or key event), and :mod:`.batch` (one bounded action, recovery of a hung page,
``act``).
"""

from .batch import ACTION_KINDS, Step, act, perform
from .dialog import handle_dialog
from .drag import drag, drop_files
from .keyboard import press, type_text
from .keys import MODIFIER_BITS, key_spec, modifier_mask, parse_chord
from .pointer import click, hover, locate
from .raw import KEY_ACTIONS, MOUSE_ACTIONS, keyboard, mouse
from .records import (
    Action,
    AnswerDialog,
    Click,
    Drag,
    ElementTarget,
    FindElements,
    Hover,
    KeyInput,
    MouseInput,
    Navigate,
    Press,
    Progress,
    Select,
    TypeText,
    Upload,
    Wait,
)
from .select import select
from .upload import click_upload, upload
from .wait import LOAD_STATES, glob_regex, wait

__all__ = [
    "ACTION_KINDS",
    "KEY_ACTIONS",
    "LOAD_STATES",
    "MODIFIER_BITS",
    "MOUSE_ACTIONS",
    "Action",
    "AnswerDialog",
    "Click",
    "Drag",
    "ElementTarget",
    "FindElements",
    "Hover",
    "KeyInput",
    "MouseInput",
    "Navigate",
    "Press",
    "Progress",
    "Select",
    "Step",
    "TypeText",
    "Upload",
    "Wait",
    "act",
    "click",
    "click_upload",
    "drag",
    "drop_files",
    "glob_regex",
    "handle_dialog",
    "hover",
    "key_spec",
    "keyboard",
    "locate",
    "modifier_mask",
    "mouse",
    "parse_chord",
    "perform",
    "press",
    "select",
    "type_text",
    "upload",
    "wait",
]
