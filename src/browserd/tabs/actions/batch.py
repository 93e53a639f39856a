"""Bounded actions and batches: one action under a deadline, and ``act`` (a batch).

What each kind does, and whether it settles or times out on its own, is its
spec's (:mod:`browserd.tabs.actions.kinds`); this runs any of them the same way.

When the deadline expires while the renderer does not answer (a hung
page), ``Runtime.terminateExecution`` recovers the tab, and the 504 says
whether the input had already been sent (``uncertain: true``). Nothing is
ever retried or replayed. An input action that navigated then waits, within
its deadline, until the new document reaches its ``wait_until``
(:mod:`browserd.tabs.settle`) and reports ``effects.loadState``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import trio

from ...errors import BrowserdError, Timeout
from .. import page
from ..actor import TabActor
from ..settle import settle_after_input
from .kinds import ACTION_KINDS, ACTION_SPECS, PerformContext
from .records import Action, Progress

__all__ = ["ACTION_KINDS", "RESPONSIVE_PROBE_S", "SETTLE_MARGIN_S", "Step", "act", "perform"]

RESPONSIVE_PROBE_S = 0.3
"""How long a renderer may take to answer before a timed-out action counts as hung."""
SETTLE_MARGIN_S = 0.2
"""What a navigating action keeps of its deadline for answering after the load wait."""


async def _responsive(tab: TabActor) -> bool:
    """Does the renderer answer a trivial evaluation quickly?"""
    with trio.move_on_after(RESPONSIVE_PROBE_S):
        try:
            await tab.send("Runtime.evaluate", {"expression": "0", "returnByValue": True})
        except BrowserdError:
            pass
        return True
    return False


async def _recover(tab: TabActor) -> bool:
    """After a timed-out action: end a hung script, if the page is hung. True if terminated.

    Never terminates while a dialog is open or when the page answers
    (``Runtime.terminateExecution`` on an idle page would kill the page's
    *next* script). Bounded (~2.5 s), shielded from the caller's cancel.
    """
    if tab.halted() is not None:
        return False
    terminated = False
    with trio.CancelScope(shield=True):
        if not await _responsive(tab):
            await page.terminate(tab)
            terminated = True
    return terminated


async def perform(tab: TabActor, action: Action, *, timeout_s: float,
                  evaluate_enabled: bool = True) -> dict[str, Any]:
    """Run one ``action`` within ``timeout_s``.

    A ``wait`` (or ``navigate``) uses ``timeout_s`` as its own timeout. When
    the time runs out, a hung renderer is recovered with
    ``Runtime.terminateExecution`` and Timeout (504) is raised with
    ``uncertain: true`` if input had already been sent — its effect is
    unknown and it is not replayed. Raises DialogOpen if a dialog is open
    (except for ``dialog``); other errors as the action raises them. An
    input action that navigated then waits, within ``timeout_s``, for its
    ``wait_until`` and reports ``effects.loadState`` (a slow page is
    reported, never an error).
    """
    kind = action.kind
    spec = ACTION_SPECS[kind]
    tab.check_usable(allow_dialog=spec.during_dialog)
    progress = Progress()
    settle_until = trio.current_time() + max(0.0, timeout_s - SETTLE_MARGIN_S)
    with trio.move_on_after(timeout_s + (0.5 if spec.own_timeout else 0)) as scope:
        try:
            result = await spec.perform(tab, action, PerformContext(
                progress=progress, timeout_s=timeout_s, evaluate_enabled=evaluate_enabled))
            if spec.settles:
                await settle_after_input(tab, result,
                                         wait_until=getattr(action, "wait_until", "load"),
                                         until=settle_until)
            return result
        except Timeout as exc:
            if spec.own_timeout:
                raise
            raise Timeout(exc.message, hint=exc.hint, uncertain=progress.sent) from None
    assert scope.cancelled_caught
    terminated = await _recover(tab)
    if progress.sent:
        message = (f"the {kind} did not finish within {timeout_s * 1000:.0f} ms after its input "
                   "was sent; its effect is unknown and it was not retried")
    else:
        message = f"the {kind} did not finish within {timeout_s * 1000:.0f} ms; nothing was sent"
    hint = ("the page was busy and its script was stopped; the tab has recovered" if terminated
            else "check the page with GET /snapshot before acting again")
    raise Timeout(message, hint=hint, uncertain=progress.sent, terminated=terminated)


@attrs.frozen(kw_only=True)
class Step:
    """One action of a batch, with its own timeout."""

    action: Action
    timeout_s: float


async def act(tab: TabActor, steps: Sequence[Step], *, timeout_s: float,
              evaluate_enabled: bool = True) -> dict[str, Any]:
    """Run ``steps`` in order on one tab; stop at the first failure.

    Answers ``{ok, steps: [{index, kind, ok, result | error}], failedAt?}``.
    Each step is bounded by its own timeout and by what is left of
    ``timeout_s``; a step that timed out after sending input carries
    ``uncertain: true`` and is never replayed. Steps after a failure are not
    run. Cancellation (the caller's deadline) ends the batch at once.
    """
    report: list[dict[str, Any]] = []
    deadline = trio.current_time() + timeout_s
    for index, step in enumerate(steps):
        remaining = deadline - trio.current_time()
        entry: dict[str, Any] = {"index": index, "kind": step.action.kind}
        try:
            if remaining <= 0:
                raise Timeout("the batch ran out of time before this step; it was not run",
                              uncertain=False)
            result = await perform(tab, step.action,
                                   timeout_s=min(step.timeout_s, remaining),
                                   evaluate_enabled=evaluate_enabled)
        except BrowserdError as exc:
            entry.update(ok=False, error=exc.to_dict())
            if isinstance(exc, Timeout) and exc.details.get("uncertain"):
                entry["uncertain"] = True
            report.append(entry)
            return {"ok": False, "targetId": tab.target_id, "steps": report, "failedAt": index}
        entry.update(ok=True, result=result)
        report.append(entry)
    return {"ok": True, "targetId": tab.target_id, "steps": report}
