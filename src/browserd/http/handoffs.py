"""Waits on the person shared by routes: ``/wait {handoff: true}``, ``/wait {tabRequest}``.

(The ``/handoff`` routes themselves are in :mod:`browserd.http.routes.ops`;
``/wait`` is an input route, so the wait lives here, where both may reach it.)
"""

from __future__ import annotations

import trio

from ..errors import Conflict, Timeout
from ..handoff import wait_handoff_end
from ..system import System

__all__ = ["wait_for_handoff", "wait_for_tab_request"]

RESOLVE_DEADLINE_S = 10.0


async def wait_for_tab_request(system: System, request_id: str,
                               timeout_ms: int) -> dict[str, object]:
    """``{ok, waitedMs, tabRequest: {requestId, state, targetId, …}}`` once it ended.

    Only the requesting token's own requests (404 REQUEST_NOT_FOUND otherwise);
    at once when it already ended; 504 TIMEOUT (``waitedMs``) while it is still
    pending after ``timeout_ms``. Waiting holds no tab and no page deadline.
    Cancellation (client gone) ends the wait only; the request stays pending.
    """
    started = trio.current_time()
    with trio.move_on_after(timeout_ms / 1000) as scope:
        request = await system.tab_requests.wait_ended(request_id,
                                                       token=system.principal.name)
    waited = round((trio.current_time() - started) * 1000)
    if scope.cancelled_caught:
        raise Timeout(f"tab request {request_id} is still pending after {waited} ms",
                      hint="wait again: the person has not answered yet", waitedMs=waited)
    return {"ok": True, "waitedMs": waited, "tabRequest": request.to_json()}


async def wait_for_handoff(system: System, target_id: str | None,
                           timeout_ms: int) -> dict[str, object]:
    """``{ok, targetId, waitedMs, handoff: {reason, since, outcome, endedAt}}``.

    Waits until the tab's handoff ends (a person's Done, the agent's
    DELETE /handoff, the tab going away) and answers how it ended; at once
    when the latest one already ended. 409 CONFLICT when none was ever
    requested on the tab, 504 TIMEOUT (with ``waitedMs``) when it is still
    active after ``timeout_ms``. Cancellation (client gone) ends the wait only.
    """
    runtime = system.require_runtime()
    started = trio.current_time()
    with trio.fail_after(RESOLVE_DEADLINE_S):
        tab = await runtime.tabs.resolve(target_id, use=False)
    board = system.handoffs
    handoff = board.active(tab.target_id)
    if handoff is None:
        latest = board.last_end(tab.target_id)
        if latest is None:
            raise Conflict(f"no handoff was requested on tab {tab.target_id}",
                           hint="request one with POST /handoff {targetId, reason}")
        return {"ok": True, "targetId": tab.target_id, "waitedMs": 0,
                "handoff": latest.to_json()}
    timeout_s = timeout_ms / 1000
    with trio.move_on_after(max(0.0, timeout_s - (trio.current_time() - started))) as scope:
        ended = await wait_handoff_end(board, tab, handoff)
    waited = round((trio.current_time() - started) * 1000)
    if scope.cancelled_caught:
        raise Timeout(f"the handoff of tab {tab.target_id} is still active after {waited} ms",
                      hint="wait again: the person has not clicked Done yet",
                      waitedMs=waited)
    return {"ok": True, "targetId": tab.target_id, "waitedMs": waited,
            "handoff": ended.to_json()}
