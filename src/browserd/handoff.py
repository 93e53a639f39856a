"""Human handoff: an agent hands a tab to a person and waits until they are done.

``POST /handoff {targetId?, reason}`` marks a tab (:meth:`HandoffBoard.request`);
the ops page (``/ui``) shows it first and offers the live view; the person
clicks Done (:meth:`HandoffBoard.end` with :attr:`HandoffOutcome.DONE`) and
the agent's ``POST /wait {handoff: true}`` returns (:func:`wait_handoff_end`).
Meanwhile agent input on that tab is refused with 409 HANDOFF_ACTIVE
(:meth:`HandoffBoard.check_input`, called by ``on_tab`` for input routes);
reads still work. ``DELETE /handoff`` ends it with
:attr:`HandoffOutcome.CANCELLED`; a tab that goes away ends it with
:attr:`HandoffOutcome.CLOSED`.

One board per service (it outlives browser restarts; a handoff of a tab
that no longer exists is ended as CLOSED by :meth:`HandoffBoard.prune`).
The board is plain state changed only from trio tasks; nothing here does
I/O. Reasons are agent text, kept to :data:`REASON_MAX_CHARS`.
"""

from __future__ import annotations

import enum
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Collection
from typing import Any

import attrs
import trio

from .errors import HandoffActive
from .tabs.actor import TabActor

__all__ = ["ENDED_KEPT", "REASON_MAX_CHARS", "Handoff", "HandoffBoard", "HandoffEnd",
           "HandoffOutcome", "wait_handoff_end"]

log = logging.getLogger(__name__)

REASON_MAX_CHARS = 500
ENDED_KEPT = 200
"""How many ended handoffs are remembered (the latest per tab), for a late ``/wait``."""


class HandoffOutcome(enum.StrEnum):
    """How a handoff ended."""

    DONE = "done"  # a person clicked Done on the ops page
    CANCELLED = "cancelled"  # the agent withdrew it (DELETE /handoff)
    CLOSED = "closed"  # the tab (or the browser) went away


@attrs.frozen(kw_only=True)
class Handoff:
    """A tab handed to a person: why, and since when (Unix seconds)."""

    target_id: str
    reason: str
    since: float

    def to_json(self) -> dict[str, Any]:
        return {"reason": self.reason, "since": self.since}


@attrs.frozen(kw_only=True)
class HandoffEnd:
    """A handoff that ended: how, when (Unix seconds) and by whom (``ui``, ``agent``, …)."""

    handoff: Handoff
    outcome: HandoffOutcome
    ended_at: float
    by: str

    def to_json(self) -> dict[str, Any]:
        return {**self.handoff.to_json(), "outcome": str(self.outcome),
                "endedAt": self.ended_at}


class HandoffBoard:
    """The service's handoffs: at most one active per tab, and the latest end of each."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._active: dict[str, Handoff] = {}
        self._ended: OrderedDict[str, HandoffEnd] = OrderedDict()
        self._changed = trio.Event()

    # -- queries -----------------------------------------------------------------

    def active(self, target_id: str) -> Handoff | None:
        return self._active.get(target_id)

    def all_active(self) -> list[Handoff]:
        """Active handoffs, oldest first."""
        return sorted(self._active.values(), key=lambda h: h.since)

    def last_end(self, target_id: str) -> HandoffEnd | None:
        """How the latest handoff of ``target_id`` ended (None: none ended, or forgotten)."""
        return self._ended.get(target_id)

    def check_input(self, target_id: str) -> None:
        """Raise 409 HANDOFF_ACTIVE when ``target_id`` is handed to a person."""
        handoff = self._active.get(target_id)
        if handoff is not None:
            raise HandoffActive(
                f"tab {target_id} is handed to a person ({handoff.reason[:100]}); "
                "agent input waits until they are done",
                handoff=handoff.to_json())

    # -- changes -----------------------------------------------------------------

    def request(self, target_id: str, reason: str) -> Handoff:
        """Mark ``target_id`` as handed to a person; a repeated request keeps ``since``."""
        reason = reason[:REASON_MAX_CHARS]
        current = self._active.get(target_id)
        since = current.since if current is not None else self._clock()
        handoff = Handoff(target_id=target_id, reason=reason, since=since)
        self._active[target_id] = handoff
        if current is None:
            log.warning("tab %s handed to a person: %s", target_id, reason[:200])
        self._notify()
        return handoff

    def end(self, target_id: str, outcome: HandoffOutcome, *, by: str) -> HandoffEnd | None:
        """End the active handoff of ``target_id``; None when there was none."""
        handoff = self._active.pop(target_id, None)
        if handoff is None:
            return None
        ended = HandoffEnd(handoff=handoff, outcome=outcome, ended_at=self._clock(), by=by)
        self._ended.pop(target_id, None)
        self._ended[target_id] = ended
        while len(self._ended) > ENDED_KEPT:
            self._ended.popitem(last=False)
        log.info("handoff of tab %s ended: %s (by %s)", target_id, outcome, by)
        self._notify()
        return ended

    def prune(self, live_target_ids: Collection[str]) -> None:
        """End (CLOSED) the handoffs of tabs not in ``live_target_ids``."""
        for target_id in [t for t in self._active if t not in live_target_ids]:
            self.end(target_id, HandoffOutcome.CLOSED, by="browserd")

    async def wait_changed(self) -> None:
        """Wait for the next change of the board."""
        await self._changed.wait()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()


async def wait_handoff_end(board: HandoffBoard, tab: TabActor, handoff: Handoff) -> HandoffEnd:
    """Wait until ``handoff`` (of ``tab``) ends; the tab going away ends it as CLOSED.

    Returns at once when it already ended. The caller owns the deadline;
    cancellation ends the wait only (the handoff stays as it is).
    """
    target_id = tab.target_id
    while True:
        if board.active(target_id) != handoff:
            ended = board.last_end(target_id)
            if ended is not None and ended.handoff == handoff:
                return ended
            # Replaced by a newer request (same since): keep waiting for that one.
            current = board.active(target_id)
            if current is None:
                return HandoffEnd(handoff=handoff, outcome=HandoffOutcome.CLOSED,
                                  ended_at=time.time(), by="browserd")
            handoff = current
        if tab.view().closed:
            board.end(target_id, HandoffOutcome.CLOSED, by="browserd")
            continue
        async with trio.open_nursery() as nursery:
            async def board_changed() -> None:
                await board.wait_changed()
                nursery.cancel_scope.cancel()

            async def tab_changed() -> None:
                await tab.wait_changed()
                nursery.cancel_scope.cancel()

            nursery.start_soon(board_changed)
            nursery.start_soon(tab_changed)
