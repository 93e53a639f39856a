"""Resolving a role/name locator when the action runs, by ``/find``'s rules.

``{role, name, exact?, nth?}`` walks the page once with the snapshot walker's
``find`` (the same visibility and naming rules as ``/find`` and
``/snapshot``), records the refs it lists, and resolves the chosen match's
ref. Several matches and no ``nth`` is 409 AMBIGUOUS with the candidates'
refs, roles and names (at most :data:`CANDIDATES_SHOWN`), so an agent can
choose without a snapshot. With ``within``, its container is found first (by
ref, selector or role/name, the same rules) and the locator is looked for
inside it only (``/find``'s root). Cancellation: as the CDP calls it makes.
"""

from __future__ import annotations

import attrs
import trio

from ..errors import Ambiguous, BadRequest, BrowserdError, NoMatch, StaleRef
from ..snapshot import FindOptions, find_call
from .actor import TabActor
from .locator import ElementTarget
from .refs import Scope, run_walker
from .resolve import ElementHandle, resolve_ref, resolve_target
from .settle import YOUNG_MS, settle_read

__all__ = ["CANDIDATES_SHOWN", "RETRY_EVERY_S", "SETTLE_RETRY_MS", "resolve_action_target",
           "resolve_locator"]

#: Candidates an AMBIGUOUS answer lists.
CANDIDATES_SHOWN = 5
#: How long an action whose target matched nothing waits for a drawing page to settle.
SETTLE_RETRY_MS = 2000
#: How often such a target is looked for again meanwhile (seconds).
RETRY_EVERY_S = 0.05
_LOOSER = "GET /find with a looser name, or take a snapshot to see what the page shows"


async def resolve_locator(tab: TabActor, target: ElementTarget) -> ElementHandle:
    """The element a role/name locator names, by ``/find``'s rules (one walk of the page;
    with ``within``, one for the container and one inside it).

    NoMatch when none matches; Ambiguous (409, ``candidates`` [{ref, role,
    name}] ≤ 5) when several do and no ``nth`` was given; NoMatch when
    ``nth`` is beyond the matches. A ``within`` container by role/name follows
    the same rules, its messages saying it is the container; one by selector
    that matches nothing is NoMatch; one by ref resolves as ``/find``'s root
    does (RefNotFound, StaleRef).
    """
    within = target.within
    if within is None:
        ref = await _one_match(tab, target, _whole_page(tab), label=target.what,
                               missing=f"no {target.what} on the page", hint=_LOOSER)
        return await resolve_ref(tab, ref)
    scope = await _container(tab, within)
    label = f"{target.what} within {within.what}"
    try:
        ref = await _one_match(tab, target, scope, label=label, missing=f"no {label}",
                               hint=f"GET /snapshot?root={scope.root} shows what the "
                                    "container holds")
    except StaleRef:
        if within.ref is not None:
            raise
        # The container found a moment ago went (the page redrew it): not there yet.
        raise NoMatch(f"no {label}: the container went while it was searched",
                      hint=_LOOSER) from None
    return await resolve_ref(tab, ref)


def _whole_page(tab: TabActor) -> Scope:
    return Scope(session=tab.session, frame_id=tab.main_frame_id)


async def _container(tab: TabActor, within: ElementTarget) -> Scope:
    """Where a locator ``within`` this container is looked for (errors: resolve_locator's)."""
    if within.ref is not None:  # (in its own frame, as /find's root)
        handle = await resolve_ref(tab, within.ref)
        return Scope(session=handle.session, frame_id=handle.frame_id, root_ref=within.ref)
    if within.selector is not None:
        return attrs.evolve(_whole_page(tab), root_selector=within.selector)
    ref = await _one_match(tab, within, _whole_page(tab), label=f"{within.what} (within)",
                           missing=f"no {within.what} on the page: the container within "
                                   "names is missing", hint=_LOOSER,
                           choose="give within.nth (0-based), within.exact: true, or "
                                  "within.ref: one of the candidates' refs")
    return attrs.evolve(_whole_page(tab), root_ref=ref)


async def _one_match(tab: TabActor, target: ElementTarget, scope: Scope, *, label: str,
                     missing: str, hint: str, choose: str | None = None) -> str:
    """The ref of the one element the locator ``target`` names in ``scope``.

    NoMatch (``missing``, ``hint``) when none matches; Ambiguous ("N elements
    match ``label``", ``choose`` its hint) when several do and ``target`` has
    no nth; NoMatch when nth is beyond them. A selector scope that matches
    nothing is NoMatch, an invalid one BadRequest (field ``within``).
    """
    nth = target.nth
    shown = CANDIDATES_SHOWN if nth is None else max(CANDIDATES_SHOWN, nth + 1)
    opts = FindOptions(next_ref=tab.refs.next_ref, role=target.role, name=target.name,
                       exact=target.exact, limit=shown, root_ref=scope.root_ref,
                       root_selector=scope.root_selector)
    try:
        reply, _ = await run_walker(tab, scope.session, scope.frame_id, find_call(opts),
                                    scope.root)
    except NoMatch:
        raise NoMatch(f"no element matches {scope.root!r} (within): the container is "
                      "missing", selector=scope.root,
                      hint="check the selector with GET /query") from None
    except BadRequest as exc:
        raise BadRequest(exc.message, field="within") from None
    matches = list(reply.get("matches") or [])
    count = int(reply.get("count") or 0)
    if not matches:
        raise NoMatch(missing, hint=hint)
    if nth is None and count > 1:
        raise Ambiguous(f"{count} elements match {label}", count=count,
                        candidates=[{k: m.get(k) for k in ("ref", "role", "name")}
                                    for m in matches[:CANDIDATES_SHOWN]],
                        hint=choose or "give nth (0-based), exact: true, or act on one of "
                                       "the refs")
    index = nth or 0
    if index >= len(matches):
        raise NoMatch(f"{label} matches {count} element(s); nth {index} is out of range")
    return str(matches[index]["ref"])


async def resolve_action_target(tab: TabActor, target: ElementTarget) -> ElementHandle:
    """The element an action's ``target`` names: a locator here, anything else as
    :func:`~browserd.tabs.resolve.resolve_target` resolves it.

    A selector, text or locator that matches nothing on a page still drawing (an
    app that renders after its fetches, or on timers) is tried again every
    :data:`RETRY_EVERY_S` while the page settles as a read would, its document
    at least :data:`~.settle.YOUNG_MS` past its load event (within
    :data:`SETTLE_RETRY_MS`): it is acted on as soon as it is drawn, and NoMatch
    comes once the page has settled without it. Other errors (AMBIGUOUS …) are
    raised as they come; cancellation ends the wait and the settling with it.
    """
    target.check()
    try:
        return await _resolve(tab, target)
    except NoMatch:
        if target.ref is not None:
            raise
    settled = trio.Event()
    outcome: list[ElementHandle | BrowserdError] = []

    async def settle() -> None:
        await settle_read(tab, settle_ms=SETTLE_RETRY_MS, young_ms=YOUNG_MS)
        settled.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(settle)
        while not outcome:
            with trio.move_on_after(RETRY_EVERY_S):
                await settled.wait()
            final = settled.is_set()
            try:
                outcome.append(await _resolve(tab, target))
            except NoMatch as exc:
                if final:
                    outcome.append(exc)
            except BrowserdError as exc:
                outcome.append(exc)
        nursery.cancel_scope.cancel()
    if isinstance(outcome[0], BrowserdError):
        raise outcome[0]
    return outcome[0]


async def _resolve(tab: TabActor, target: ElementTarget) -> ElementHandle:
    if target.is_locator:
        return await resolve_locator(tab, target)
    return await resolve_target(tab, target)
