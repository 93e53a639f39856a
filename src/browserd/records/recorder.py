"""Recording one call: what it names before it runs, what it did after, two small shots.

:func:`record_call` wraps a route call of a session that is being recorded
(:data:`RECORDED_PATHS`: the paths of the recorded kinds of
:data:`browserd.tabs.actions.kinds.RECORDINGS`: input, navigation, history,
scroll, dialog, wait and ``/act``, its find steps too, but not ``/find``).
Before the call, in the tab's work slot, it looks up what every ref the call
names is (role and accessible name from the tab's ref map: after the call the
ref may be stale) and takes a small JPEG of the viewport;
then it runs the call; then, in the slot again, it takes the second shot and
collects the console errors and failed requests the tab logged meanwhile,
and appends the :class:`~browserd.records.model.Step` to the record.

The recording never changes the call's outcome: the call's answer or error
comes back as it would without a record; what the recorder could not do (a
busy tab, an open dialog, a full capture queue, a full disk) is left out of
the step and logged. Arguments, effects, errors and page text are passed
through the vault's redactor first (a ``secret`` argument stays its name).
Every piece of recorder work on the tab runs under :data:`SIDE_DEADLINE_S`.
Cancellation of the call (client gone) records nothing and propagates.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import trio

from ..errors import BrowserdError
from ..redact import loggable_url
from ..tabs.actions.kinds import READ_KINDS, RECORDINGS
from ..tabs.actor import TabActor
from ..tabs.capture import decode_base64
from .model import Call, Step, Target
from .store import ActiveRecord, ShotData

if TYPE_CHECKING:
    from ..system import System

__all__ = ["RECORDED_PATHS", "SHOT_QUALITY", "SHOT_WIDTH", "SIDE_DEADLINE_S", "describe_call",
           "record_call"]

log = logging.getLogger(__name__)

#: The routes whose calls a record keeps: one per recorded kind but the reads (a find is
#: kept as an ``/act`` step; ``/find``, like ``/snapshot``, is not recorded).
RECORDED_PATHS = frozenset(f"/{kind}" for kind in RECORDINGS if kind not in READ_KINDS)
#: The shots: JPEG of this quality, at most this many CSS pixels wide.
SHOT_WIDTH = 320
SHOT_QUALITY = 40
#: Deadline of each piece of the recorder's own work (a shot, the lookups).
SIDE_DEADLINE_S = 3.0
_LOGGED = 10  # console errors and failed requests kept per step
_TEXT_CHARS = 500


def _target(tab: TabActor, spec: Mapping[str, Any], *, text: bool) -> Target | None:
    """The element ``spec`` names (ref, selector, text, role/name and the locator's
    ``within`` container), a ref looked up."""
    ref, selector = spec.get("ref"), spec.get("selector")
    role, name = spec.get("role"), spec.get("name")
    given_text = spec.get("text") if text else None
    if not any(v is not None for v in (ref, selector, role, name, given_text)):
        return None
    exact, nth = bool(spec.get("exact")), spec.get("nth")
    if isinstance(ref, str):
        known = tab.refs.get(ref)
        if known is not None:
            role, name, exact, nth = known.role, known.name, True, None
    within = spec.get("within")
    return Target(ref=ref, role=role, name=name, exact=exact, nth=nth, selector=selector,
                  text=given_text, within=_target(tab, within, text=False)
                  if isinstance(within, dict) else None)


def describe_call(tab: TabActor | None, kind: str, args: Mapping[str, Any]) -> Call:
    """The call as a record keeps it: ``args`` without nulls, its elements as targets.

    ``tab`` None (it could not be reached): targets keep only what the call gave.
    """
    clean = {k: v for k, v in args.items() if v is not None and k != "targetId"}
    recording = RECORDINGS.get(kind)
    if tab is None or recording is None:
        return Call(kind=kind, args=clean)
    targets: dict[str, Target] = {}
    for field in recording.names:  # its own fields ("element"), or an object field each
        spec = clean if field == "element" else clean.get(field)
        if isinstance(spec, dict) and (found := _target(
                tab, spec, text=recording.text_names_element)) is not None:
            targets[field] = found
    return Call(kind=kind, args=clean, targets=targets)


def _describe(tab: TabActor | None, kind: str, args: Mapping[str, Any]
              ) -> tuple[Call, tuple[Call, ...]]:
    call = describe_call(tab, kind, args)
    if kind != "act":
        return call, ()
    actions = tuple(describe_call(tab, str(a.get("kind")), {k: v for k, v in a.items()
                                                               if k != "kind"})
                    for a in args.get("actions") or () if isinstance(a, dict))
    return Call(kind="act", args={k: v for k, v in call.args.items() if k != "actions"}), actions


async def _shoot(system: System, tab: TabActor) -> ShotData | None:
    """A small JPEG of ``tab``'s viewport (caller holds its slot); None when it cannot be."""
    if tab.halted() is not None:
        return None
    gate = system.require_runtime().captures
    gate.admit()
    async with gate.limiter, gate.front_lock:
        metrics = await tab.send("Page.getLayoutMetrics")
        viewport = metrics.get("cssVisualViewport") or {}
        width = float(viewport.get("clientWidth") or 0)
        height = float(viewport.get("clientHeight") or 0)
        if width <= 0 or height <= 0:
            return None
        scale = min(1.0, SHOT_WIDTH / width)
        await tab.send("Page.bringToFront")
        tab.mark_focused()
        shot = await tab.send("Page.captureScreenshot", {
            "format": "jpeg", "quality": SHOT_QUALITY, "optimizeForSpeed": True,
            "clip": {"x": float(viewport.get("pageX") or 0),
                     "y": float(viewport.get("pageY") or 0),
                     "width": width, "height": height, "scale": scale}})
    data = await decode_base64(shot.get("data"))
    return ShotData(data=data, width=round(width * scale), height=round(height * scale))


async def _in_slot(tab: TabActor, fn: Callable[[], Awaitable[Any]]) -> Any:
    """``fn()`` in the tab's work slot under the side deadline; None if that cannot be."""
    try:
        with trio.fail_after(SIDE_DEADLINE_S):
            async with tab.work(allow_dialog=False):
                return await fn()
    except (BrowserdError, trio.TooSlowError) as exc:
        log.info("record: %s skipped on tab %s: %s", getattr(fn, "__name__", "work"),
                 tab.target_id, type(exc).__name__)
        return None


def _logged(system: System, tab: TabActor, since: float) -> tuple[list[dict[str, Any]],
                                                                   list[dict[str, Any]]]:
    """The console errors and failed requests ``tab`` logged since ``since`` (wall clock)."""
    text = system.vault.redactor.text
    console = [{"level": e.level, "text": text(e.text[:_TEXT_CHARS]), "source": e.source,
                "timestamp": e.timestamp}
               for e in tab.console.entries()
               if e.timestamp >= since and e.level in ("error", "assert")][-_LOGGED:]
    failed = [{"method": r.method, "url": text(loggable_url(r.url)), "status": r.status,
               "errorText": None if r.error_text is None else text(r.error_text),
               "resourceType": r.resource_type}
              for r in tab.network.entries()
              if r.started_at >= since and (r.failed or (r.status or 0) >= 400)][-_LOGGED:]
    return console, failed


async def record_call(system: System, active: ActiveRecord, path: str, args: dict[str, Any],
                      call: Callable[[], Awaitable[Any]]) -> Any:
    """``call()``'s answer (or error), the call appended to ``active`` as one step.

    Not recorded: a call on another tab than the record's, and a call that
    was cancelled. Errors of the recorder itself are logged, never raised.
    """
    kind = path.strip("/")
    tab: TabActor | None = None
    try:
        with trio.fail_after(SIDE_DEADLINE_S):
            tab = await system.require_runtime().tabs.resolve(
                args.get("targetId"), use=False)
    except (BrowserdError, trio.TooSlowError):
        tab = None  # the call finds out itself (no browser, no such tab)
    wanted = active.info.target_id
    if wanted is not None and (tab is None or tab.target_id != wanted):
        return await call()
    described: tuple[Call, tuple[Call, ...]] = _describe(tab, kind, args)
    before: ShotData | None = None
    if tab is not None:

        async def look() -> ShotData | None:
            nonlocal described
            described = _describe(tab, kind, args)  # in the slot: the refs as they are now
            return await _shoot(system, tab)

        before = await _in_slot(tab, look)
    started_wall, started = time.time(), time.perf_counter()
    error: dict[str, Any] | None = None
    result: Any = None
    try:
        result = await call()
    except BrowserdError as exc:
        error = {"code": exc.code, "message": exc.message}
        raise
    except trio.TooSlowError:
        error = {"code": "TIMEOUT", "message": f"{path} did not finish within its deadline"}
        raise
    except Exception as exc:
        error = {"code": "INTERNAL", "message": type(exc).__name__}
        raise
    finally:
        if error is not None or result is not None:
            with trio.CancelScope(shield=True):
                await _finish(system, active, tab, described, started_wall, started,
                              result, error, before)
    return result


def _redacted(system: System, call: Call) -> Call:
    """``call`` with every vault value in its arguments and targets replaced by its marker."""
    redact = system.vault.redactor.redact
    return Call(kind=call.kind, args=redact(dict(call.args)),
                targets={k: Target.from_json(redact(t.to_json()))
                         for k, t in call.targets.items()})


async def _finish(system: System, active: ActiveRecord, tab: TabActor | None,
                  described: tuple[Call, tuple[Call, ...]], started_wall: float,
                  started: float, result: Any, error: dict[str, Any] | None,
                  before: ShotData | None) -> None:
    """Take the after-shot, collect the logs, append the step (shielded; bounded)."""
    duration = round((time.perf_counter() - started) * 1000, 1)
    redact = system.vault.redactor.redact
    after: ShotData | None = None
    console: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    if tab is not None:
        after = await _in_slot(tab, lambda: _shoot(system, tab))
        console, failed = _logged(system, tab, started_wall)
    answer = result if isinstance(result, dict) else {}
    call, actions = described
    step = Step(
        index=0, call=_redacted(system, call),
        actions=tuple(_redacted(system, a) for a in actions),
        target_id=tab.target_id if tab is not None else None, started_at=started_wall,
        duration_ms=duration, ok=error is None,
        error=None if error is None else redact(error),
        effects=redact(answer.get("effects")) if isinstance(answer.get("effects"), dict)
        else None,
        url=system.vault.redactor.text(tab.view().url) if tab is not None else None,
        title=system.vault.redactor.text(tab.view().title) if tab is not None else None,
        console=tuple(console), failed_requests=tuple(failed))
    try:
        with trio.fail_after(SIDE_DEADLINE_S):
            await system.records.append(active, step, {"before": before, "after": after})
    except (BrowserdError, trio.TooSlowError) as exc:
        log.warning("record %s: a step was not stored: %s", active.info.id, exc)
