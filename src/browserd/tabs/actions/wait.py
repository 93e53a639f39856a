"""Waiting for a condition: a selector, text, text gone, a URL glob or a load state."""

from __future__ import annotations

import math
from typing import Any

import trio

from ...errors import BadRequest, CdpError, Timeout
from ...textmatch import Glob, compile_glob
from ..actor import TabActor
from ..effects import race
from ..navwait import Probe, wait_load_state
from ..pagejs import page_function
from ..state import LoadState
from ..worlds import world_evaluate
from .records import Wait

__all__ = ["LOAD_STATES", "POLL_S", "glob_regex", "wait"]

POLL_S = 0.1
"""The polling interval of JS-based waits."""
LOAD_STATES = (LoadState.DOMCONTENTLOADED.value, LoadState.LOAD.value)
"""The load states a wait can name."""


def glob_regex(pattern: str) -> Glob:
    """A URL glob (``**`` anything, ``*`` anything but ``/``), matched in bounded time."""
    return compile_glob(pattern)


_WAIT_CONDITION = page_function("waitCondition")


async def wait(tab: TabActor, action: Wait, *, timeout_ms: int = 15000,
               evaluate_enabled: bool = True) -> dict[str, Any]:
    """Wait until ``action``'s one condition holds: answers ``{ok, waitedMs}``.

    ``selector`` (an element matching it is attached and visible), ``text``
    / ``textGone`` (the page's visible text contains / no longer contains
    it) poll every ~100 ms in the ``browserd`` isolated world of the main
    frame (its kind's build refused them without ``evaluate_enabled``).
    ``url`` (a glob: ``*`` within a path segment, ``**`` across) and
    ``loadState`` ("domcontentloaded" | "load") follow the tab's events
    without JS. The record is a checked one (exactly one condition).

    Raises Timeout (504) after ``timeout_ms``, BadRequest for a selector the
    page cannot parse, DialogOpen when a dialog blocks the page.
    Cancellation stops the wait; nothing on the page changes.
    """
    what, value = action.condition
    assert evaluate_enabled or what in ("url", "loadState")  # (its kind's build checked it)
    started = trio.current_time()
    with trio.move_on_after(timeout_ms / 1000) as scope:
        if what == "url":
            pattern = glob_regex(value)
            while not pattern.match(tab.view().url):
                _check_waitable(tab)
                await tab.wait_changed()
        elif what == "loadState":
            await _wait_load_state(tab, value)
        else:
            expression = _WAIT_CONDITION.call(
                {"selector": "selector", "text": "text", "textGone": "gone"}[what], value)
            while True:
                _check_waitable(tab)
                seen, dialog = await race(tab, lambda: _world_value(tab, expression))
                if dialog:
                    _check_waitable(tab)
                if isinstance(seen, str) and seen.startswith("{"):
                    raise BadRequest(f"invalid selector {value!r}", field="selector")
                if seen is True:
                    break
                await trio.sleep(POLL_S)
    waited = round((trio.current_time() - started) * 1000)
    if scope.cancelled_caught:
        shown = value[:200]
        raise Timeout(f"waited {waited} ms for {what} {shown!r}",
                      hint="raise timeoutMs, or check the page with GET /snapshot",
                      waitedMs=waited)
    return {"ok": True, "waitedMs": waited}


def _check_waitable(tab: TabActor) -> None:
    tab.check_usable(allow_dialog=False)


async def _world_value(tab: TabActor, expression: str) -> Any:
    try:
        remote = await world_evaluate(tab, tab.session, tab.main_frame_id, expression)
    except CdpError as exc:
        # The frame is between documents: not yet there.
        if "context" in exc.message.lower() or "frame" in exc.message.lower():
            return False
        raise
    return remote.get("value")


async def _wait_load_state(tab: TabActor, state: str) -> None:
    """The navigation waiter's load-state wait, unbounded (the caller's timeout ends it);
    while the tab's events say LOADING the document is asked too (their lifecycle events
    may have been missed). A dialog, a crash or the tab going raise as ``check_usable``."""
    want = LoadState(state)
    reached = await wait_load_state(tab, want, until=math.inf, probe=Probe.WHILE_LOADING)
    if reached.rank < want.rank:
        _check_waitable(tab)
