"""Bounded actions and batches: one action under a deadline, and ``act`` (a batch).

When the deadline expires while the renderer does not answer (a hung
page), ``Runtime.terminateExecution`` recovers the tab, and the 504 says
whether the input had already been sent (``uncertain: true``). Nothing is
ever retried or replayed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import trio

from ...errors import BadRequest, BrowserdError, Timeout
from .. import page
from ..actor import TabActor
from .dialog import handle_dialog
from .keyboard import press, type_text
from .pointer import click, hover
from .records import ElementTarget, Progress
from .select import select
from .wait import wait

__all__ = ["ACTION_KINDS", "RESPONSIVE_PROBE_S", "Step", "act", "perform"]

RESPONSIVE_PROBE_S = 0.3
"""How long a renderer may take to answer before a timed-out action counts as hung."""
ACTION_KINDS = ("click", "type", "press", "hover", "select", "wait", "navigate", "dialog")


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
    if tab.dialog is not None or tab.closed or tab.crashed:
        return False
    terminated = False
    with trio.CancelScope(shield=True):
        if not await _responsive(tab):
            await page.terminate(tab)
            terminated = True
    return terminated


def _target_of(args: Mapping[str, Any]) -> ElementTarget:
    return ElementTarget(ref=args.get("ref"), selector=args.get("selector"), text=args.get("text"))


async def _dispatch(tab: TabActor, kind: str, args: Mapping[str, Any], progress: Progress,
                    *, evaluate_enabled: bool, timeout_s: float) -> dict[str, Any]:
    if kind == "click":
        return await click(tab, _target_of(args), button=args.get("button") or "left",
                           click_count=args.get("clickCount") or 1,
                           modifiers=args.get("modifiers") or (), progress=progress)
    if kind == "hover":
        return await hover(tab, _target_of(args), progress=progress)
    if kind == "type":
        return await type_text(
            tab, args.get("text") or "",
            target=ElementTarget(ref=args.get("ref"), selector=args.get("selector")),
            clear=bool(args.get("clear")), submit=bool(args.get("submit")),
            slowly=bool(args.get("slowly")), progress=progress)
    if kind == "press":
        return await press(tab, args["key"], args.get("modifiers") or (), progress=progress)
    if kind == "select":
        return await select(tab, _target_of(args), args.get("values") or [], progress=progress)
    if kind == "wait":
        return await wait(tab, selector=args.get("selector"), text=args.get("text"),
                          text_gone=args.get("textGone"), url=args.get("url"),
                          load_state=args.get("loadState"),
                          timeout_ms=max(1, int(timeout_s * 1000)),
                          evaluate_enabled=evaluate_enabled)
    if kind == "navigate":
        progress.sent = True
        return await page.navigate(tab, args["url"], wait_until=args.get("waitUntil") or "load",
                                   timeout_s=timeout_s)
    if kind == "dialog":
        progress.sent = True
        return await handle_dialog(tab, accept=bool(args.get("accept")),
                                   prompt_text=args.get("promptText"))
    raise BadRequest(f"unknown action kind {kind!r}", field="kind",
                     hint="kinds: " + ", ".join(ACTION_KINDS))


async def perform(tab: TabActor, kind: str, args: Mapping[str, Any], *, timeout_s: float,
                  evaluate_enabled: bool = True) -> dict[str, Any]:
    """Run one action (``kind`` with API-shaped, already validated ``args``) within ``timeout_s``.

    A ``wait`` (or ``navigate``) uses ``timeout_s`` as its own timeout. When
    the time runs out, a hung renderer is recovered with
    ``Runtime.terminateExecution`` and Timeout (504) is raised with
    ``uncertain: true`` if input had already been sent — its effect is
    unknown and it is not replayed. Raises DialogOpen if a dialog is open
    (except for ``dialog``); other errors as the action raises them.
    """
    tab.check_usable(allow_dialog=kind == "dialog")
    progress = Progress()
    with trio.move_on_after(timeout_s + (0.5 if kind in ("wait", "navigate") else 0)) as scope:
        try:
            return await _dispatch(tab, kind, args, progress, evaluate_enabled=evaluate_enabled,
                                   timeout_s=timeout_s)
        except Timeout as exc:
            if kind in ("wait", "navigate"):
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
    """One action of a batch: its kind, its validated API-shaped args, its own timeout."""

    kind: str
    args: Mapping[str, Any]
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
        entry: dict[str, Any] = {"index": index, "kind": step.kind}
        try:
            if remaining <= 0:
                raise Timeout("the batch ran out of time before this step; it was not run",
                              uncertain=False)
            result = await perform(tab, step.kind, step.args,
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
