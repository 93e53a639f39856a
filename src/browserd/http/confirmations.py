"""Holding an agent's action for the person: the gate every lane's call passes.

:func:`hold_if_confirmed` runs before a route's handler (in
:func:`browserd.http.calls.run_handler`, so HTTP, ``/ws`` and MCP alike).
What of a call the rules judge is the route's own ``confirm`` fact
(:data:`browserd.http.facts.Confirm`): one action of a kind
(:class:`~browserd.http.facts.HeldAs`), raw input by what its ``action``
does (:class:`~browserd.http.facts.HeldByAction`), each step of a batch as
its own kind (a find, a hover or a wait never) (:class:`~browserd.http.facts.HeldSteps`),
or a download's file (:class:`~browserd.http.facts.HeldDownload`).
When a ``confirm`` rule matches the action — its kind, the page's origin (a
navigation's target origin), the target's accessible name (resolved in the
page for a selector, text or role/name locator; a raw mouse press or key,
or typing into the focused element, has a name that cannot be told first
and is held by any name rule of its kind) — the action is
held on the :class:`~browserd.confirm.ConfirmationBoard` and the call answers
202 CONFIRMATION_REQUIRED ``{confirmation: {id, kind, summary, target}}`` at
once; nothing reached the page. ``POST /wait {confirmation: id}`` waits for
the person and then runs it (:func:`wait_for_confirmation`). The person's
own calls are never held.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import trio

from ..confirm import ConfirmRule, first_match
from ..errors import (
    Ambiguous,
    BadRequest,
    BrowserdError,
    ConfirmationRequired,
    NoMatch,
    StaleRef,
    Timeout,
)
from ..events import EventType
from ..system import System
from ..tabs.actions.kinds import ACTION_SPECS
from ..tabs.actions.kinds.spec import element_target
from ..tabs.actor import TabActor
from ..tabs.locate import resolve_action_target
from ..tabs.locator import ElementTarget
from ..tabs.origins import origin_of
from .facts import Confirm, HeldAs, HeldByAction, HeldDownload, HeldSteps
from .schema import Route, parse_args

__all__ = ["RESOLVE_S", "UNKNOWN", "hold_if_confirmed", "kinds_of", "wait_for_confirmation"]


def kinds_of(kind: str, step: dict[str, Any]) -> tuple[str, ...]:
    """The rule kinds one action answers to (a type that submits is also a ``submit``)."""
    if kind == "type" and step.get("submit"):
        return ("type", "submit")
    if kind == "press" and str(step.get("key", "")).split("+")[-1] == "Enter":
        return ("press", "submit")
    return (kind,)


@attrs.frozen(kw_only=True)
class _Judged:
    """One action of a call as the rules judge it: its ``rule_kind``, its own ``kind``
    (what its fields mean), whether it is ``raw`` input (whose element cannot be told
    first) and its arguments."""

    rule_kind: str
    kind: str
    raw: bool
    step: dict[str, Any]


def _by_action(by: HeldByAction, kind: str, step: dict[str, Any]) -> list[_Judged]:
    """Raw input as the rules judge it: by what its ``action`` does (nothing when no rule
    kind is that action)."""
    rule_kind = by.kinds.get(str(step.get("action")))
    return [] if rule_kind is None else [
        _Judged(rule_kind=rule_kind, kind=kind, raw=True, step=step)]


def _checked_steps(actions: Any) -> list[dict[str, Any]]:
    """A batch's steps with their fields checked as its handler checks them; none when any
    step is malformed (the handler refuses the whole batch before a step runs, so there is
    nothing to hold, and a rule never reads a field of the wrong type)."""
    if not isinstance(actions, list):
        return []
    steps = []
    for step in actions:
        spec = ACTION_SPECS.get(str(step.get("kind"))) if isinstance(step, dict) else None
        if spec is None:
            return []
        try:
            checked = parse_args(spec.fields, query={},
                                 body={k: v for k, v in step.items() if k != "kind"})
        except BrowserdError:
            return []
        steps.append({**checked, "kind": spec.kind})
    return steps


def _judged(confirm: Confirm | None, name: str, args: dict[str, Any]) -> list[_Judged]:
    """The actions a rule may hold of a call of the route ``name`` whose ``confirm`` fact is
    ``confirm``."""
    if isinstance(confirm, HeldAs):
        return [_Judged(rule_kind=confirm.kind, kind=confirm.kind, raw=False, step=args)]
    if isinstance(confirm, HeldByAction):
        return _by_action(confirm, name, args)
    if not isinstance(confirm, HeldSteps):
        return []
    out: list[_Judged] = []
    for step in _checked_steps(args.get("actions")):
        kind = str(step["kind"])
        if kind in confirm.unheld:
            continue  # a read, or a kind its own route never holds
        by = confirm.raw.get(kind)
        out += (_by_action(by, kind, step) if by is not None
                else [_Judged(rule_kind=kind, kind=kind, raw=False, step=step)])
    return out


def _tab(system: System, target_id: Any) -> TabActor | None:
    try:
        tabs = system.require_runtime().tabs
        ident = target_id if isinstance(target_id, str) else tabs.active_id()
        return tabs.get(ident) if ident else None
    except BrowserdError:
        return None  # the handler reports it


class _Unknown:
    """The target's name cannot be known before the action runs (raw input at pixels,
    the focused element, a page too busy to answer): name rules hold it (fail closed)."""


UNKNOWN = _Unknown()
#: How long resolving a target's accessible name for the rules may take.
RESOLVE_S = 5.0


def _element_target(kind: str, step: dict[str, Any]) -> ElementTarget:
    """What ``step`` acts on, but by ref (the ref map tells a ref's name)."""
    return attrs.evolve(element_target(step, text=kind not in ("type", "press")), ref=None)


async def _name(tab: TabActor | None, action: _Judged) -> str | _Unknown | None:
    """The accessible name of the element ``action`` acts on, as the rules judge it: a
    ref's from the tab's refs; a selector's, text's or role/name locator's resolved in the
    page (under the tab's work slot, within :data:`RESOLVE_S`) — the element's own name,
    not the words the agent chose. None when there is no such element (the action itself
    answers the error); UNKNOWN when it cannot be told (raw input, the focused element)."""
    if tab is None:
        return None
    step = action.step
    ref = step.get("ref")
    if isinstance(ref, str):
        record = tab.refs.get(ref)
        return record.name if record is not None else None
    if action.raw:
        return UNKNOWN
    target = _element_target(action.kind, step)
    if not target.given():
        return UNKNOWN  # the focused element
    try:
        target.check()
        with trio.fail_after(RESOLVE_S):
            async with tab.work() as working:
                return (await resolve_action_target(working, target)).name
    except (NoMatch, Ambiguous, StaleRef, BadRequest):
        return None  # the action answers the same error; nothing reaches the page
    except (BrowserdError, trio.TooSlowError):
        return UNKNOWN


def _first_match(rules: tuple[ConfirmRule, ...], *, kind: str, origin: str | None,
                 name: str | _Unknown | None) -> ConfirmRule | None:
    if isinstance(name, _Unknown):  # any name could be the one a rule names
        return next((r for r in rules if attrs.evolve(r, name=None).matches(
            kind=kind, origin=origin, name=None)), None)
    return first_match(rules, kind=kind, origin=origin, name=name)


def _download_step(system: System, download_id: str) -> tuple[str | None, str | None]:
    """(origin, name) of a download: its page's origin and its suggested file name."""
    try:
        record = system.downloads.get(download_id)
    except BrowserdError:
        return None, None  # the route answers 404
    return origin_of(record.url), record.suggested_filename


async def hold_if_confirmed(system: System, route: Route, args: dict[str, Any],
                            run: Callable[[], Awaitable[Any]]) -> None:
    """Raise ConfirmationRequired (202) holding ``run`` when a ``confirm`` rule matches.

    A ``download`` rule holds the *file*: the download itself happened in the
    browser (into browserd's own directory), but ``GET /downloads/<id>`` gives
    it to the agent only once the person approved (the approval releases it
    to that token; the agent's ``/wait {confirmation}`` answers when it may fetch).
    """
    rules = system.settings.confirm
    if not rules or system.principal.is_owner:
        return
    if isinstance(route.confirm, HeldDownload):
        await _hold_download(system, route, str(args.get(route.confirm.field, "")))
        return
    actions = _judged(route.confirm, route.name, args)
    if not actions:
        return
    tab = _tab(system, args.get("targetId"))
    page_origin = origin_of(tab.view().url) if tab is not None else None
    for action in actions:
        step = action.step
        url = step.get("url")
        origin = (origin_of(url) if action.kind == "navigate" and isinstance(url, str)
                  else page_origin)
        candidates = kinds_of(action.rule_kind, step)
        found: str | _Unknown | None = None
        if any(r.name is not None and attrs.evolve(r, name=None).matches(
                kind=c, origin=origin, name=None) for r in rules for c in candidates):
            found = await _name(tab, action)  # only when a name rule could apply
        for candidate in candidates:
            rule = _first_match(rules, kind=candidate, origin=origin, name=found)
            if rule is None:
                continue
            name = found if isinstance(found, str) else None
            what = f"{candidate}" + (f" {name[:80]!r}" if name else (
                " (the target's name cannot be told first)" if found is UNKNOWN else "")) + (
                f" on {origin}" if origin else "")
            held = system.confirmations.hold(
                kind=candidate, summary=what, profile=system.profile.name,
                target={"targetId": tab.target_id if tab else None, "name": name,
                        "origin": origin, "route": route.path},
                token=system.principal.name, runner=run)
            system.events.publish(EventType.CONFIRMATION_REQUESTED, profile=held.profile,
                                  target_id=held.target["targetId"], confirmation=held.to_json())
            raise ConfirmationRequired(f"held for the person's confirmation: {what}",
                                       confirmation=held.to_json(), rule=rule.to_json())


async def _hold_download(system: System, route: Route, download_id: str) -> None:
    board, token = system.confirmations, system.principal.name
    if board.released(download_id, token=token):
        return
    origin, name = _download_step(system, download_id)
    rule = first_match(system.settings.confirm, kind="download", origin=origin, name=name)
    if rule is None:
        return
    what = "download" + (f" {name[:80]!r}" if name else "") + (f" from {origin}" if origin
                                                               else "")

    async def release() -> dict[str, Any]:
        return board.release(download_id, token=token)

    held = board.hold(kind="download", summary=what, profile=system.profile.name,
                      target={"download": download_id, "name": name, "origin": origin,
                              "route": route.path}, token=token, runner=release)
    system.events.publish(EventType.CONFIRMATION_REQUESTED, profile=held.profile,
                          confirmation=held.to_json())
    raise ConfirmationRequired(f"held for the person's confirmation: {what}",
                               confirmation=held.to_json(), rule=rule.to_json())


async def wait_for_confirmation(system: System, confirmation_id: str,
                                timeout_ms: int) -> dict[str, Any]:
    """Wait for the person's answer (within ``timeout_ms``), then run the held action.

    Answers ``{ok, waitedMs, confirmation, result}`` (the action's own answer);
    403 DENIED when denied; 504 TIMEOUT ``{waitedMs}`` while still pending
    (it stays held); 404 for another token's id. The action runs under its
    own deadline, not the wait's.
    """
    board = system.confirmations
    started = trio.current_time()
    with trio.move_on_after(timeout_ms / 1000) as scope:
        held = await board.wait_answered(confirmation_id, token=system.principal.name)
    waited = round((trio.current_time() - started) * 1000)
    if scope.cancelled_caught:
        raise Timeout(f"the person has not answered {confirmation_id} after {waited} ms",
                      hint="wait again; it stays held", waitedMs=waited)
    system.events.publish(EventType.CONFIRMATION_ENDED, profile=held.profile,
                          confirmation=held.to_json())
    result = await board.run_approved(confirmation_id)
    return {"ok": True, "waitedMs": waited, "confirmation": held.to_json(), "result": result}
