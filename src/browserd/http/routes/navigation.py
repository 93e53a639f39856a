"""Routes that move around a tab: ``/back``, ``/forward``, ``/reload`` and ``/scroll``.

History moves (:mod:`browserd.tabs.history`) answer ``{ok, targetId, url,
title, status, loadState, effects}`` once the move committed and the
document reached ``waitUntil`` (the conventions of ``/navigate`` and input
actions; ``effects`` as input actions report them); 409 NO_HISTORY when
there is no entry in that direction, 409 DIALOG_OPEN when a dialog
(``beforeunload``) holds the move, 504 TIMEOUT when it did not commit
within ``timeoutMs``. The entry moved to passes the URL policy first (403
URL_BLOCKED, nothing sent). ``/reload`` also revives a crashed tab.

``/scroll`` (:mod:`browserd.tabs.actions.scroll`) answers ``{ok, targetId,
scrollX, scrollY, atTop, atBottom, scroller, method, fallbackReason?}``.

All of them hold the tab's work slot and refuse to start beside an open
JavaScript dialog (409 DIALOG_OPEN). Deadline: ``timeoutMs`` plus a short
grace for the slot and the answer (504 TIMEOUT). Cancellation (client gone)
abandons the CDP call in flight; a move or wheel already sent goes on.
"""

from __future__ import annotations

from typing import Any

from ...errors import BadRequest
from ...system import System
from ...tabs import history, settle
from ...tabs.actions.scroll import SCROLL_TO, scroll
from ...tabs.actor import TabActor
from ...tabs.locator import ElementTarget
from ..answers import returns
from ..facts import ACTS, DIALOG, HANDOFF, NOT_HELD, Cli, HeldAs, Render
from ..fields import REF, SELECTOR, TARGET, TEXT_TARGET, timeout_field
from ..schema import Field, Route
from ..tabwork import on_tab

__all__ = ["navigation_routes"]

GRACE_S = 3.0
"""Time beyond ``timeoutMs`` for waiting for the tab's slot and answering."""

#: Every route here acts on the page: not beside a dialog, not while a person has the tab.
_BLOCKED_BY = DIALOG | HANDOFF
#: A history move is a navigation to the ``confirm`` rules; its answer's title, URL and
#: effects are the page's.
_NAVIGATES = HeldAs(kind="navigate")
_MOVED = ("title", "url", "effects")
_WAIT_UNTIL = Field(name="waitUntil", type="string", default="domcontentloaded",
                    enum=settle.WAIT_UNTIL,
                    description="none: do not wait; commit: the move committed; "
                                "domcontentloaded / load: the document got that far")


async def back(system: System, args: dict[str, Any]) -> dict[str, Any]:
    timeout_s = args["timeoutMs"] / 1000
    return await on_tab(system, args["targetId"], lambda tab: history.go_back(
        tab, wait_until=args["waitUntil"], timeout_s=timeout_s,
        check_url=system.url_policy.check), deadline_s=timeout_s + GRACE_S)


async def forward(system: System, args: dict[str, Any]) -> dict[str, Any]:
    timeout_s = args["timeoutMs"] / 1000
    return await on_tab(system, args["targetId"], lambda tab: history.go_forward(
        tab, wait_until=args["waitUntil"], timeout_s=timeout_s,
        check_url=system.url_policy.check), deadline_s=timeout_s + GRACE_S)


async def reload(system: System, args: dict[str, Any]) -> dict[str, Any]:
    timeout_s = args["timeoutMs"] / 1000
    return await on_tab(system, args["targetId"], lambda tab: history.reload(
        tab, ignore_cache=args["ignoreCache"], wait_until=args["waitUntil"],
        timeout_s=timeout_s), deadline_s=timeout_s + GRACE_S,
        allow_crashed=True)


async def scroll_route(system: System, args: dict[str, Any]) -> dict[str, Any]:
    given = ElementTarget(ref=args["ref"], selector=args["selector"], text=args["text"])
    target = given if given.given() else None
    if target is not None:
        target.check()
    if args["to"] is not None and (args["dx"] is not None or args["dy"] is not None):
        raise BadRequest("give to or dx/dy, not both", field="to")
    if args["to"] == "intoView" and target is None:
        raise BadRequest("to: intoView needs an element: ref, selector or text", field="to")
    timeout_s = args["timeoutMs"] / 1000

    async def run(tab: TabActor) -> dict[str, Any]:
        result = await scroll(tab, target, to=args["to"], dx=args["dx"], dy=args["dy"])
        return {"targetId": tab.target_id, **result}

    return await on_tab(system, args["targetId"], run, deadline_s=timeout_s + GRACE_S)


def navigation_routes() -> list[Route]:
    return [
        Route(path="/back", methods=("POST",), handler=back, tag="page",
              summary="Go one entry back in the tab's history",
              fields=(TARGET, _WAIT_UNTIL, timeout_field(30_000)),
              name="back", group="core", hints=ACTS, needs="act",
              confirm=_NAVIGATES, untrusted=_MOVED, render=Render.ACTION,
              answer=returns("HistoryAnswer"), blocked_by=_BLOCKED_BY, cli=Cli()),
        Route(path="/forward", methods=("POST",), handler=forward, tag="page",
              summary="Go one entry forward in the tab's history",
              fields=(TARGET, _WAIT_UNTIL, timeout_field(30_000)),
              name="forward", group="page", hints=ACTS, needs="act",
              confirm=_NAVIGATES, untrusted=_MOVED, render=Render.ACTION,
              answer=returns("HistoryAnswer"), blocked_by=_BLOCKED_BY, cli=Cli()),
        Route(path="/reload", methods=("POST",), handler=reload, tag="page",
              summary="Reload the tab (also revives a crashed tab)",
              fields=(TARGET,
                      Field(name="ignoreCache", type="boolean", default=False,
                            description="bypass the HTTP cache"),
                      _WAIT_UNTIL, timeout_field(30_000)),
              name="reload", group="page", hints=ACTS, needs="act",
              confirm=_NAVIGATES, untrusted=_MOVED, render=Render.ACTION,
              answer=returns("HistoryAnswer"), blocked_by=_BLOCKED_BY, cli=Cli()),
        Route(path="/scroll", methods=("POST",), handler=scroll_route, tag="input",
              summary="Scroll the page or an element's container (mouse wheel), or an "
                      "element into view",
              fields=(TARGET, REF, SELECTOR, TEXT_TARGET,
                      Field(name="to", type="string", enum=SCROLL_TO,
                            description="top | bottom | intoView (default with an element)"),
                      Field(name="dx", type="number", minimum=-1_000_000, maximum=1_000_000,
                            description="CSS px right (negative: left)"),
                      Field(name="dy", type="number", minimum=-1_000_000, maximum=1_000_000,
                            description="CSS px down (negative: up); nothing given: one "
                                        "page down"),
                      timeout_field(15_000)),
              name="scroll", group="page", hints=ACTS, needs="act",
              confirm=NOT_HELD, untrusted=(), render=Render.FIELDS,
              answer=returns("ScrollAnswer"), blocked_by=_BLOCKED_BY, cli=Cli()),
    ]
