"""Resolving a role/name locator when the action runs, by ``/find``'s rules.

``{role, name, exact?, nth?}`` walks the page once with the snapshot walker's
``find`` (the same visibility and naming rules as ``/find`` and
``/snapshot``), records the refs it lists, and resolves the chosen match's
ref. Several matches and no ``nth`` is 409 AMBIGUOUS with the candidates'
refs, roles and names (at most :data:`CANDIDATES_SHOWN`), so an agent can
choose without a snapshot. Cancellation: as the CDP calls it makes.
"""

from __future__ import annotations

import trio

from ..errors import Ambiguous, BrowserdError, NoMatch
from ..snapshot import FindOptions, find_call
from .actor import TabActor
from .locator import ElementTarget
from .refs import run_walker
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


async def resolve_locator(tab: TabActor, target: ElementTarget) -> ElementHandle:
    """The element a role/name locator names, by ``/find``'s rules (one walk of the page).

    NoMatch when none matches; Ambiguous (409, ``candidates`` [{ref, role,
    name}] ≤ 5) when several do and no ``nth`` was given; NoMatch when
    ``nth`` is beyond the matches.
    """
    nth = target.nth
    shown = CANDIDATES_SHOWN if nth is None else max(CANDIDATES_SHOWN, nth + 1)
    opts = FindOptions(next_ref=tab.refs.next_ref, role=target.role, name=target.name,
                       exact=target.exact, limit=shown)
    reply, _ = await run_walker(tab, tab.session, tab.main_frame_id, find_call(opts), None)
    matches = list(reply.get("matches") or [])
    count = int(reply.get("count") or 0)
    what = " ".join(part for part in (target.role or "", repr(target.name)
                                      if target.name is not None else "") if part)
    if not matches:
        raise NoMatch(f"no {what} on the page", hint="GET /find with a looser name, or take "
                      "a snapshot to see what the page shows")
    if nth is None and count > 1:
        raise Ambiguous(f"{count} elements match {what}", count=count,
                        candidates=[{k: m.get(k) for k in ("ref", "role", "name")}
                                    for m in matches[:CANDIDATES_SHOWN]],
                        hint="give nth (0-based), exact: true, or act on one of the refs")
    index = nth or 0
    if index >= len(matches):
        raise NoMatch(f"{what} matches {count} element(s); nth {index} is out of range")
    return await resolve_ref(tab, str(matches[index]["ref"]))



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
