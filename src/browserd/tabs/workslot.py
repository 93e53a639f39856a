"""The tab actor's work slot and its race against a dialog: helpers of the actor alone.

:class:`WorkSlot` serialises work on one tab with a bounded queue: when
``queue_limit`` callers already wait, the next gets 429 TAB_BUSY at once.
:func:`race_event` runs a call unless an event (the tab's "a dialog
opened") fires first. The actor (:class:`~browserd.tabs.actor.TabActor`)
checks its own state around both.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

import trio

from ..errors import TabBusy, unwrap_group

__all__ = ["WorkSlot", "race_event"]

T = TypeVar("T")


class WorkSlot:
    """One tab's single work slot: a lock with a bounded queue."""

    def __init__(self, target_id: str, *, queue_limit: int) -> None:
        self._target_id = target_id
        self._queue_limit = queue_limit
        self._waiting = 0
        self._lock = trio.Lock()

    @asynccontextmanager
    async def hold(self, ready: trio.Event) -> AsyncIterator[None]:
        """Hold the slot, once ``ready`` is set, for the block.

        Raises TabBusy at once when ``queue_limit`` callers already wait.
        Cancellation while waiting leaves the queue cleanly; the slot is
        released however the block ends.
        """
        if self._waiting >= self._queue_limit:
            raise TabBusy(f"tab {self._target_id} has {self._waiting} requests queued")
        self._waiting += 1
        try:
            await self._lock.acquire()
        finally:
            self._waiting -= 1
        try:
            await ready.wait()
            yield
        finally:
            self._lock.release()


async def race_event(fn: Callable[[], Awaitable[T]], event: trio.Event
                     ) -> tuple[bool, T | None]:
    """Run ``fn`` unless ``event`` is set first: (True, its result) or (False, None).

    The loser is cancelled. Errors of ``fn`` come out as themselves, not in
    an exception group.
    """
    result: list[T] = []
    try:
        async with trio.open_nursery() as nursery:
            async def run() -> None:
                result.append(await fn())
                nursery.cancel_scope.cancel()

            async def watch() -> None:
                await event.wait()
                nursery.cancel_scope.cancel()

            nursery.start_soon(run)
            nursery.start_soon(watch)
    except BaseExceptionGroup as group:
        raise unwrap_group(group) from None
    return (True, result[0]) if result else (False, None)
