"""The kinds that only read the page: find.

A find is ``/find`` (its fields, summary and work are :data:`FIND`'s, and the
route takes them from here) and an ``/act`` step that reads inside a batch:
its result is /find's answer, and a find that matches nothing is an answer
(``count: 0``), not a failure. It sends no input, so no ``confirm`` rule holds
it (:data:`READ_KINDS`) and a record has nothing of it to repeat.

Also the fields the page's reads share (:data:`ROOT`, :data:`LINE_CHARS`,
:data:`SETTLE`: ``/snapshot``, ``/query`` and ``/dom`` take them too).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ....argfields import Field
from ....records.model import Call
from ....records.playwright import Writer
from ... import settle, snapshots
from ...actor import TabActor
from ..records import FindElements
from .spec import ActionSpec, BuildContext, PerformContext, Recording

__all__ = ["FIND", "LINE_CHARS", "READ_KINDS", "ROOT", "SETTLE", "find_elements"]

SETTLE = Field(name="settleMs", type="integer", default=settle.DEFAULT_SETTLE_MS, minimum=0,
               maximum=60_000, description="wait up to this long for a loading document to "
               "reach domcontentloaded (0: do not wait); loadState says where it got to")
LINE_CHARS = Field(name="lineChars", type="integer", minimum=0, maximum=1_000_000,
                   description="longest name or text line shown (default 300; 0: whole)")
ROOT = Field(name="root", type="string", max_length=4000,
             description="scope to a ref (e12) or a CSS selector")


def _build_find(args: Mapping[str, Any], ctx: BuildContext) -> FindElements:
    return FindElements(role=args.get("role"), name=args.get("name"), text=args.get("text"),
                        exact=bool(args.get("exact")), limit=args["limit"],
                        around=bool(args.get("around")), root=args.get("root"),
                        line_chars=args.get("lineChars"), settle_ms=args["settleMs"])


async def find_elements(tab: TabActor, action: FindElements) -> dict[str, Any]:
    """/find's answer (:func:`browserd.tabs.snapshots.find`, settling first); errors and
    cancellation as it says."""
    return await snapshots.find(
        tab, role=action.role, name=action.name, text=action.text, exact=action.exact,
        limit=action.limit, root=action.root, line_chars=action.line_chars,
        around=action.around, settle_ms=action.settle_ms)


async def _find(tab: TabActor, action: FindElements, ctx: PerformContext) -> dict[str, Any]:
    """A find step: /find's answer; DialogOpen when a dialog opens meanwhile (as /find)."""
    return await tab.refusing_dialog(lambda: find_elements(tab, action))


def _script_find(w: Writer, call: Call, loc: str | None, index: int) -> None:
    w.comment(f"step {index}: a find reads the page; nothing to repeat")


FIND = ActionSpec(
    kind="find", summary="Elements matching a role, accessible name or visible text, with refs",
    fields=(Field(name="role", type="string", max_length=100,
                  description="the role, e.g. link, button, heading"),
            Field(name="name", type="string", max_length=2000,
                  description="part of the accessible name (case-insensitive)"),
            Field(name="text", type="string", max_length=2000,
                  description="part of the name or of the element's own text"),
            Field(name="exact", type="boolean", default=False,
                  description="match the whole name / text, not a part"),
            Field(name="limit", type="integer", default=20, minimum=1, maximum=1000,
                  description="at most this many matches"),
            Field(name="around", type="boolean", default=False,
                  description="also answer what surrounds each match as one line: its table "
                              "row (cells between |), its term and definitions, or its list "
                              "item, with refs to act on"),
            ROOT, LINE_CHARS, SETTLE),
    record=FindElements, build=_build_find, perform=_find, settles=False,
    recording=Recording(names=(), script=_script_find))

#: The kinds that only read: no ``confirm`` rule holds a step of them, and a record keeps
#: them as ``/act`` steps only (their routes are reads, like ``/snapshot``).
READ_KINDS = (FIND.kind,)
