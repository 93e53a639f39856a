"""The tab actor's session plumbing: what it subscribes to, the enables, the event loop.

Helpers of :class:`~browserd.tabs.actor.TabActor` alone (its own module
keeps the state): :func:`subscribe` opens the tab session's event stream
(floods: console events queue apart and may be dropped, oldest first,
everything else keeps its own room), :func:`post_enables` writes the
enable commands without waiting for their replies, :func:`finish_enable`
awaits them (bounded) and answers the main frame of the frame tree and the
document's ``readyState``, and :func:`follow` hands each event to the
actor in wire order, counting what the stream dropped as lost console
messages.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import trio

from ..cdp import CdpEvent, CdpSession, Subscription
from ..cdp.connection import PendingReply
from ..errors import BrowserdError
from .children import AUTO_ATTACH
from .frames import FRAME_EVENTS
from .netlog import NETWORK_ENABLE, NETWORK_QUIET, NetworkLog
from .pagejs import page_function
from .remote import CONSOLE_EVENTS
from .state import ConsoleLog

__all__ = ["DROPPABLE_EVENTS", "DROPPABLE_QUEUE", "ENABLE_DEADLINE_S", "EVENT_BUFFER",
           "TAB_EVENTS", "finish_enable", "follow", "post_enables", "subscribe"]

_READY_STATE = page_function("readyState").call()
"""The document's readyState (the lifecycle events of a document loaded before we came)."""

log = logging.getLogger(__name__)

TAB_EVENTS = FRAME_EVENTS | CONSOLE_EVENTS | frozenset({
    "Page.javascriptDialogOpening", "Page.javascriptDialogClosed", "Page.loadEventFired",
    "Page.domContentEventFired", "Page.frameStartedLoading", "Inspector.targetCrashed",
    "Inspector.detached", "Target.attachedToTarget", "Target.detachedFromTarget",
    "Runtime.executionContextsCleared", "Log.entryAdded", "Inspector.targetReloadedAfterCrash",
    "Page.fileChooserOpened",
})
"""What a tab's actor follows on its session."""
#: What an actor that is behind may lose, oldest first (counted in the console's ``dropped``):
#: at most DROPPABLE_QUEUE of them wait, apart from the EVENT_BUFFER other (essential) events.
DROPPABLE_EVENTS = CONSOLE_EVENTS | {"Log.entryAdded"}
EVENT_BUFFER, DROPPABLE_QUEUE = 5000, 1000
ENABLE_DEADLINE_S = 10.0
"""Bound on the enables' replies (the tab works without them, less well)."""


def subscribe(session: CdpSession) -> Subscription:
    """The tab session's event stream (:data:`TAB_EVENTS`); unsubscribe it when done."""
    return session.subscribe(TAB_EVENTS, buffer=EVENT_BUFFER, droppable=DROPPABLE_EVENTS,
                             droppable_limit=DROPPABLE_QUEUE)


async def post_enables(session: CdpSession, *, network: NetworkLog | None,
                       device_metrics: dict[str, Any] | None) -> dict[str, PendingReply]:
    """Write the enable commands (replies awaited later by :func:`finish_enable`).

    ``network``: the tab records network from the start (its ring is marked);
    ``device_metrics``: the viewport override the tab starts with. Raises as
    the session's ``post`` does (the connection is gone).
    """
    calls: list[tuple[str, dict[str, Any]]] = [
        ("Page.enable", {}),
        ("Page.setLifecycleEventsEnabled", {"enabled": True}),
        ("Runtime.enable", {}),
        ("Inspector.enable", {}),
        ("Emulation.setFocusEmulationEnabled", {"enabled": True}),
        # No native file dialog ever opens: Page.fileChooserOpened instead (uploads).
        ("Page.setInterceptFileChooserDialog", {"enabled": True}),
        # Frames and workers start paused until the actor's children resume them,
        # so an OOPIF's network set-up lands before its first request.
        ("Target.setAutoAttach", dict(AUTO_ATTACH)),
        ("Page.getFrameTree", {}),
        ("Runtime.evaluate", {"expression": _READY_STATE, "returnByValue": True}),
    ]
    # The Network domain is always on: its events say what is in flight (reads settle on
    # it); the ring records, and bodies are kept, only once capture is on.
    calls.append(("Network.enable", dict(NETWORK_ENABLE if network is not None
                                         else NETWORK_QUIET)))
    if network is not None:
        network.mark_recording(time.time())
    if device_metrics is not None:
        calls.append(("Emulation.setDeviceMetricsOverride", device_metrics))
    return {method: await session.post(method, params) for method, params in calls}


async def finish_enable(pending: dict[str, PendingReply], target_id: str
                        ) -> tuple[Mapping[str, Any] | None, object]:
    """Await the enables (≤ :data:`ENABLE_DEADLINE_S`): the frame tree's main frame and the
    document's ``readyState`` value; (None, None) when they failed (logged)."""
    try:
        with trio.fail_after(ENABLE_DEADLINE_S):
            results = {method: await reply.result() for method, reply in pending.items()}
    except (BrowserdError, trio.TooSlowError) as exc:
        log.info("tab %s: enabling failed: %s", target_id, exc)
        return None, None
    frame = results["Page.getFrameTree"]["frameTree"]["frame"]
    return frame, results["Runtime.evaluate"].get("result", {}).get("value")


async def follow(events: Subscription, apply: Callable[[CdpEvent], None],
                 console: ConsoleLog) -> None:
    """Apply the tab's events in order; what the stream dropped counts as lost console.

    Returns when the stream ends; raises what the stream raises (it overflowed).
    """
    counted = 0
    async for event in events:
        apply(event)
        if events.dropped != counted:
            console.note_lost(events.dropped - counted)
            counted = events.dropped
