"""SpareTab: one pre-created, unlisted ``about:blank`` tab (headless browsers only).

``/tabs/open`` of a blank tab hands the spare out at once (it is listed from
then on) and a new one is made in the background, so opening a tab costs no
target creation on the request's path. While a CDP gateway client is
connected there is no spare (:meth:`SpareTab.suspend`): a client sees every
page, and a page it may use must never be the hidden one.

The :class:`~browserd.tabs.registry.TabRegistry` owns it and hands it the
calls it needs (create a blank target, wait for its actor, ask whether a
target is attached, wait for a change). Its background work runs in the
registry's nursery and ends with it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from ..cdp import CdpConnection
from ..errors import BrowserdError

__all__ = ["SpareTab"]

log = logging.getLogger(__name__)

#: Bound on making one spare; bound on closing it for a gateway client.
MAKE_DEADLINE_S = 15.0
CLOSE_DEADLINE_S = 5.0


class SpareTab:
    """The spare of one registry (module docstring)."""

    def __init__(self, nursery: trio.Nursery, connection: CdpConnection, *, enabled: bool,
                 create: Callable[[], Awaitable[str]],
                 wait_tab: Callable[[str], Awaitable[Any]],
                 is_attached: Callable[[str], bool],
                 wait_changed: Callable[[], Awaitable[None]]) -> None:
        self._nursery = nursery
        self._connection = connection
        self._enabled = enabled
        self._wanted = enabled
        self._holds = 0
        self._making = False
        self._create, self._wait_tab = create, wait_tab
        self._is_attached, self._wait_changed = is_attached, wait_changed
        #: The spare's target while one exists (also while it is still attaching).
        self.target_id: str | None = None

    @property
    def ready(self) -> bool:
        """True while an unlisted spare is attached and may be handed out."""
        return self.target_id is not None and self._is_attached(self.target_id)

    def take(self) -> str | None:
        """Hand the spare out (its target id), or None when none is ready or wanted."""
        if not (self._wanted and self.ready):  # not one being closed for a gateway client
            return None
        target_id, self.target_id = self.target_id, None
        return target_id

    def forget(self, target_id: str) -> bool:
        """The target went away; True when it was the spare."""
        if target_id != self.target_id:
            return False
        self.target_id = None
        return True

    def replenish(self) -> None:
        """Start making a spare if one is wanted and none exists (never blocks)."""
        if self._wanted and self.target_id is None and not self._making:
            self._making = True
            self._nursery.start_soon(self._make)

    async def _make(self) -> None:
        try:
            with trio.fail_after(MAKE_DEADLINE_S):
                # Marked before it attaches, so it is never listed.
                self.target_id = await self._create()
                await self._wait_tab(self.target_id)
                if not self._wanted:  # a CDP gateway client came meanwhile
                    await self._close()
        except (BrowserdError, trio.TooSlowError) as exc:
            log.info("no spare tab: %s", exc)
            self.target_id = None
        finally:
            self._making = False

    async def suspend(self) -> None:
        """No spare until every suspend has its :meth:`resume`; closes the current one.

        Bounded (≤ :data:`CLOSE_DEADLINE_S`); errors closing it are logged, not raised.
        """
        self._holds += 1
        self._wanted = False
        await self._close()

    def resume(self) -> None:
        """Undo one :meth:`suspend`; the last one makes a spare again (headless)."""
        self._holds = max(0, self._holds - 1)
        if self._holds == 0 and self._enabled:
            self._wanted = True
            self.replenish()

    async def _close(self) -> None:
        spare = self.target_id
        if spare is None or not self._is_attached(spare):
            return
        with trio.move_on_after(CLOSE_DEADLINE_S):
            try:
                await self._connection.send("Target.closeTarget", {"targetId": spare})
            except BrowserdError as exc:
                log.info("could not close the spare tab: %s", exc.message)
                return
            while self._is_attached(spare):
                await self._wait_changed()
