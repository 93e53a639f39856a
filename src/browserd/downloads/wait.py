"""Waiting for a tab's next download to finish (``POST /wait {download: true}``)."""

from __future__ import annotations

import trio

from ..tabs.actor import TabActor
from .store import DownloadRecord, DownloadStore

__all__ = ["wait_next_download"]

#: How often the wait looks at the tab when the store does not change (a closed tab).
TAB_CHECK_S = 1.0


async def wait_next_download(store: DownloadStore, tab: TabActor, *,
                             session_id: str | None = None) -> DownloadRecord:
    """Wait (caller's deadline) until the next download ``tab`` begins has finished.

    ``session_id`` is the session the tab belongs to (a record the follower
    could not place is claimed for it).

    A download counts as the tab's when the tab's own session reports it
    (``Page.downloadWillBegin``, subframes included) or the store says it
    came from the tab. Returns the finished record (``completed`` or
    ``canceled``). Raises BrowserGone / TargetCrashed when the tab goes
    away first. Cancellation ends the wait; the download goes on. Does not
    take the tab's work slot, so the action that starts the download can
    run beside it.
    """
    mark = store.mark()
    seen: set[str] = set()
    sub = tab.session.subscribe(frozenset({"Page.downloadWillBegin"}), buffer=64)
    try:
        async with trio.open_nursery() as nursery:
            async def pump() -> None:
                async for event in sub:
                    seen.add(str(event.params.get("guid", "")))

            nursery.start_soon(pump)
            while True:
                # Every download the tab's session reports also changes the store.
                for record in store.records():
                    if record.seq > mark and (record.id in seen
                                              or record.target_id == tab.target_id):
                        store.claim(record.id, tab.target_id, session_id)
                        if record.finished:
                            nursery.cancel_scope.cancel()
                            return store.get(record.id)
                        break
                tab.check_usable()
                with trio.move_on_after(TAB_CHECK_S):
                    await store.wait_changed()
    finally:
        tab.connection.unsubscribe(sub)
