"""The one way a route runs work on a tab: runtime, tab, work slot, deadline, what blocks it.

:func:`on_tab` resolves the running browser (503 when there is none), then
the tab (``targetId`` or a unique prefix; the current tab when None), takes
the tab's work slot (429 TAB_BUSY when its queue is full) and runs ``fn``.
What refuses the work is the route's own declaration
(:attr:`browserd.http.schema.Route.blocked_by`), never the handler's choice:
the dispatcher (:func:`browserd.http.calls.run_handler`, for every lane)
hands each handler a System that carries it (:meth:`browserd.system.System.running`),
and :func:`on_tab` reads it — ``dialog``: 409 DIALOG_OPEN while a JavaScript dialog is open;
``handoff``: 409 HANDOFF_ACTIVE while the tab is handed to a person, checked
before and again once the slot is held. A handler that uses a tab without
its slot (closing, releasing) asks :func:`check_tab`.
The whole of it runs under ``deadline_s``: expiry raises trio.TooSlowError,
which the façade answers with 504 TIMEOUT. Cancellation (client gone)
abandons ``fn``'s CDP call in flight and releases the slot.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import trio

from ..system import System
from ..tabs.actor import TabActor

__all__ = ["blocked_now", "check_tab", "on_tab"]

T = TypeVar("T")

def blocked_now(system: System) -> frozenset[str]:
    """What blocks the running route's tab work; RuntimeError outside a route call (the
    route's declaration decides, never a default)."""
    if system.blocked_by is None:
        raise RuntimeError("tab work outside a route that declares what blocks it: run it "
                           "through run_handler (or with System.running)")
    return system.blocked_by


def check_tab(system: System, tab: TabActor) -> None:
    """Refuse ``tab`` now as the running route's blockers say (for work without the slot:
    HandoffActive, DialogOpen)."""
    blockers = blocked_now(system)
    if "handoff" in blockers:
        system.handoffs.check_input(tab.target_id)
    if "dialog" in blockers:
        tab.check_usable(allow_dialog=False, allow_crashed=True)


async def on_tab(system: System, target_id: str | None, fn: Callable[[TabActor], Awaitable[T]],
                 *, deadline_s: float, allow_crashed: bool = False,
                 refuse_new_dialog: bool = False) -> T:
    """Run ``fn(tab)`` in the tab's work slot within ``deadline_s``; its result.

    With ``refuse_new_dialog`` a dialog that opens while ``fn`` runs
    abandons it with DialogOpen (read-only work cannot go on beside it).
    """
    blockers = blocked_now(system)
    agent_input = "handoff" in blockers
    runtime = system.require_runtime()
    with trio.fail_after(deadline_s):
        tab = await runtime.tabs.resolve(target_id)
        if agent_input:
            system.handoffs.check_input(tab.target_id)
        async with tab.work(allow_dialog="dialog" not in blockers, allow_crashed=allow_crashed):
            if agent_input:  # a handoff may have begun while this request queued
                system.handoffs.check_input(tab.target_id)
            if not refuse_new_dialog:
                return await fn(tab)
            return await tab.refusing_dialog(lambda: fn(tab))
