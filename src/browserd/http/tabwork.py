"""The one way a route runs work on a tab: runtime, tab, work slot, deadline.

:func:`on_tab` resolves the running browser (503 when there is none), then
the tab (``targetId`` or a unique prefix; the current tab when None), takes
the tab's work slot (429 TAB_BUSY when its queue is full; 409 DIALOG_OPEN
when a JavaScript dialog is open, unless ``allow_dialog``) and runs ``fn``.
Work that is ``agent_input`` (it acts on the page: click, type, navigate,
eval…) is refused with 409 HANDOFF_ACTIVE while the tab is handed to a
person, checked before and again once the slot is held.
The whole of it runs under ``deadline_s``: expiry raises trio.TooSlowError,
which the façade answers with 504 TIMEOUT. Cancellation (client gone)
abandons ``fn``'s CDP call in flight and releases the slot.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import trio

from ..errors import DialogOpen
from ..system import System
from ..tabs.actor import TabActor

__all__ = ["on_tab"]

T = TypeVar("T")


async def on_tab(system: System, target_id: str | None, fn: Callable[[TabActor], Awaitable[T]],
                 *, deadline_s: float, allow_dialog: bool = True, allow_crashed: bool = False,
                 refuse_new_dialog: bool = False, agent_input: bool = False) -> T:
    """Run ``fn(tab)`` in the tab's work slot within ``deadline_s``; its result.

    With ``refuse_new_dialog`` a dialog that opens while ``fn`` runs
    abandons it with DialogOpen (read-only work cannot go on beside it).
    """
    runtime = system.supervisor.require_runtime()
    with trio.fail_after(deadline_s):
        tab = await runtime.tabs.resolve(target_id)
        if agent_input:
            system.handoffs.check_input(tab.target_id)
        async with tab.work(allow_dialog=allow_dialog, allow_crashed=allow_crashed):
            if agent_input:  # a handoff may have begun while this request queued
                system.handoffs.check_input(tab.target_id)
            if not refuse_new_dialog:
                return await fn(tab)
            result, dialog = await tab.race_dialog(lambda: fn(tab))
            if dialog is not None:
                raise DialogOpen(f"a {dialog.type} dialog is open: {dialog.message[:200]}",
                                 dialog=dialog.to_json())
            assert result is not None
            return result
