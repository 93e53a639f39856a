"""A record as route calls again: every element named by role and name, not by ref.

:func:`replay_plan` turns a record's steps into :class:`PlannedCall` s (the
route's path and its JSON body). A ref is never replayed (it named an element
of a page that is gone): the element is named by what the step found it was,
``{role, name, exact}`` (kinds whose route takes a locator: click, type, hover,
select, also in ``/act``; its ``within`` container likewise), else by the
selector or the text the call gave.
What a kind takes is its own (:data:`browserd.tabs.actions.kinds.RECORDINGS`).
A step that failed when recorded is left out, and so are waits only a person
can end (download, handoff, tab request, confirmation). An element that can
be named in no way the route takes makes a call with ``problem`` set: the
replay stops there (``NO_LOCATOR``). Plain code: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ..tabs.actions.kinds import PERSON_WAITS, RECORDINGS
from .model import Call, Step, Target

__all__ = ["LOCATOR_KINDS", "SKIPPED_WAITS", "PlannedCall", "replay_plan"]

#: Kinds whose routes take ``{role, name, exact, nth}`` (docs/api.md, Input).
LOCATOR_KINDS = frozenset(kind for kind, recording in RECORDINGS.items() if recording.locator)
_TARGET_FIELDS = ("ref", "selector", "text", "role", "name", "exact", "nth", "within")
#: ``/wait`` conditions a replay (and an exported script) leaves out: they waited on
#: something of that run (a download, the person, a tab request), not on the page.
SKIPPED_WAITS = PERSON_WAITS
_DROPPED = ("targetId", "snapshot")


@attrs.frozen(kw_only=True)
class PlannedCall:
    """One call of a replay: ``index`` of the step it repeats, the route, its body."""

    index: int
    path: str
    body: Mapping[str, Any]
    problem: str | None = None


def _naming(target: Target, *, locator: bool, text_target: bool) -> dict[str, Any] | None:
    """The fields that name ``target`` for a route, or None when none it takes can."""
    if locator and target.role and target.name:
        whole = not target.name.endswith("…")
        named: dict[str, Any] = {"role": target.role,
                                 "name": target.name if whole else target.name[:-1],
                                 "exact": whole and target.exact}
        if target.nth is not None and target.ref is None:
            named["nth"] = target.nth
        return _with_container(named, target)
    if target.selector:
        return {"selector": target.selector}
    if target.text and text_target:
        return {"text": target.text}
    if locator and target.role:
        return _with_container({"role": target.role}, target)
    return None


def _with_container(named: dict[str, Any], target: Target) -> dict[str, Any] | None:
    """A locator's fields with its ``within`` container, named as a locator is (None when
    the container cannot be: a ref the page never named)."""
    if target.within is None:
        return named
    container = _naming(target.within, locator=True, text_target=False)
    return None if container is None else {**named, "within": container}


def _body(call: Call) -> tuple[dict[str, Any], str | None]:
    """The route body that repeats ``call`` (and the problem, if it cannot name its element)."""
    kind = call.kind
    recording = RECORDINGS.get(kind)
    text_target = recording is not None and recording.text_names_element
    body = {k: v for k, v in call.args.items() if k not in _DROPPED}
    objects = () if recording is None else tuple(f for f in recording.names if f != "element")
    if objects:  # elements in object fields (a drag's from and to): by selector or text
        for field in objects:
            target = call.targets.get(field)
            if target is None:
                continue  # a point {x, y}, or files: as recorded
            named = _naming(target, locator=False, text_target=True)
            if named is None:
                return body, f"the {kind}'s {field} element has no selector or text"
            body[field] = named
        return body, None
    target = call.targets.get("element")
    if target is None:
        return body, None
    for field in _TARGET_FIELDS:
        if field != "text" or text_target:
            body.pop(field, None)
    locator = kind in LOCATOR_KINDS
    named = _naming(target, locator=locator, text_target=text_target)
    if named is None and _naming(attrs.evolve(target, within=None), locator=locator,
                                 text_target=text_target) is not None:
        return body, f"{kind} named its element's container (within) by ref only"
    if named is None:
        return body, f"{kind} named its element by ref only, and /{kind} takes no role/name"
    body.update(named)
    return body, None


def _skipped(step: Step) -> bool:
    if not step.ok:
        return True
    return step.call.kind == "wait" and any(step.call.args.get(k) for k in SKIPPED_WAITS)


def replay_plan(steps: Sequence[Step]) -> list[PlannedCall]:
    """The calls that repeat ``steps``, in order (module docstring for what is left out)."""
    planned = []
    for step in steps:
        if _skipped(step):
            continue
        if step.call.kind != "act":
            body, problem = _body(step.call)
            planned.append(PlannedCall(index=step.index, path=f"/{step.call.kind}", body=body,
                                       problem=problem))
            continue
        actions, problems = [], []
        for call in step.actions:
            body, problem = _body(call)
            actions.append({"kind": call.kind, **body})
            if problem is not None:
                problems.append(problem)
        batch = {k: v for k, v in step.call.args.items() if k not in _DROPPED}
        planned.append(PlannedCall(index=step.index, path="/act",
                                   body={**batch, "actions": actions},
                                   problem=problems[0] if problems else None))
    return planned
