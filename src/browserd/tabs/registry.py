"""TabRegistry: targetId → TabActor, the active tab, and tab resolution.

Target discovery (``Target.setDiscoverTargets``) keeps the registry current;
only ``type == "page"`` targets become tabs. Each tab's actor runs in the
registry's nursery, so when the registry closes (browser gone) every tab
actor ends with it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import trio

from ..cdp import CdpConnection
from ..config import Settings
from ..errors import (
    AmbiguousTarget,
    BadRequest,
    BrowserdError,
    BrowserGone,
    CdpError,
    TabNotFound,
)
from ..events import EventSink, EventType
from .actor import TabActor, TabInfo
from .navguard import NavGuard

__all__ = ["MIN_PREFIX", "TabRegistry", "open_tab_registry"]

log = logging.getLogger(__name__)

MIN_PREFIX = 4
ORIGINS_SEEN_MAX = 500
_TARGET_EVENTS = frozenset({
    "Target.targetCreated", "Target.targetInfoChanged", "Target.targetDestroyed",
    "Target.targetCrashed", "Target.detachedFromTarget",
})


class TabRegistry:
    """Handle to the tabs of one browser connection."""

    def __init__(self, connection: CdpConnection, nursery: trio.Nursery, *,
                 settings: Settings, headless: bool, navguard: NavGuard | None = None,
                 events: EventSink | None = None) -> None:
        self.connection = connection
        # tab.opened / tab.closed here (listed tabs only: never the spare); each
        # actor publishes its own tab's events.
        self._events = events
        self._nursery = nursery
        self._settings = settings
        self._viewport = (1280, 720) if headless else None
        self._tabs: dict[str, TabActor] = {}
        self._ready: dict[str, trio.Event] = {}
        self._order: list[str] = []
        self._started: set[str] = set()
        self.last_used: str | None = None
        self.created_count = 0
        self._changed = trio.Event()
        # Headless only: one pre-created, unlisted about:blank tab that
        # /tabs/open hands out at once (then replaces in the background).
        self._spare_wanted = headless
        self._spare_enabled = headless
        self._spare_holds = 0
        self._spare: str | None = None
        self._making_spare = False
        # The connection's navigation guard, handed to every tab actor.
        self._navguard = navguard
        # Origins of pages and out-of-process frames seen since the browser
        # started, most recent last (GET /state exports their localStorage).
        self._origins_seen: dict[str, None] = {}

    # -- queries -------------------------------------------------------------

    @property
    def _listed(self) -> dict[str, TabActor]:
        """The tabs a client sees: every attached page but the spare."""
        return {t: a for t, a in self._tabs.items() if t != self._spare}

    def infos(self) -> list[TabInfo]:
        active = self.active_id()
        listed = self._listed
        return [listed[t].info(active=t == active) for t in self._order if t in listed]

    def active_id(self) -> str | None:
        listed = self._listed
        if self.last_used in listed:
            return self.last_used
        focused = [t for t in listed.values() if t.last_focused_at is not None]
        if focused:
            return max(focused, key=lambda t: t.last_focused_at or 0).target_id
        order = [t for t in self._order if t in listed]
        return order[0] if order else None

    @property
    def has_spare(self) -> bool:
        """True while an unlisted spare tab is ready (headless, no gateway client)."""
        return self._spare is not None and self._spare in self._tabs

    def locate_frame(self, frame_id: str) -> str | None:
        """The tab whose page holds the frame ``frame_id`` (known frames only), or None."""
        for target_id, tab in self._tabs.items():
            if tab.holds_frame(frame_id):
                return target_id
        return None

    def target_ids(self) -> list[str]:
        return [t for t in self._order if t != self._spare]

    def get(self, target_id: str) -> TabActor:
        """Exact id or unique case-insensitive prefix (≥ 4 chars)."""
        if not isinstance(target_id, str) or not target_id:
            raise BadRequest("targetId must be a non-empty string")
        listed = self._listed
        if target_id in listed:
            return listed[target_id]
        needle = target_id.lower()
        if len(needle) < MIN_PREFIX:
            raise TabNotFound(
                f"no tab {target_id!r}",
                hint=f"use the full targetId or a unique prefix of at least {MIN_PREFIX} "
                "characters",
            )
        hits = [t for t in listed if t.lower().startswith(needle)]
        if not hits:
            raise TabNotFound(f"no tab {target_id!r}")
        if len(hits) > 1:
            raise AmbiguousTarget(f"{target_id!r} matches {len(hits)} tabs", matches=hits)
        return listed[hits[0]]

    async def resolve(self, target_id: str | None, *, use: bool = True) -> TabActor:
        """The tab a request means (API.md default-tab rule); may open about:blank."""
        if target_id is not None:
            if target_id in self._ready and target_id not in self._tabs:
                await self.wait_pending()
            tab = self.get(target_id)
        else:
            if not self._listed and self._ready:
                await self.wait_pending()
            active = self.active_id()
            tab = self._tabs[active] if active else await self.open("about:blank")
        if use:
            self.last_used = tab.target_id
        return tab

    # -- changes -------------------------------------------------------------

    async def open(self, url: str = "about:blank") -> TabActor:
        """Open a tab in front and wait until its actor is attached.

        An ``about:blank`` tab is the spare when one is ready (headless
        only): it is listed from now on, brought to the front, and a new
        spare is made in the background. Otherwise the tab is created, in a
        new window when the browser has no page at all (a fresh
        ``--no-startup-window`` browser, or the last tab was closed).
        """
        spare = self._spare
        if url == "about:blank" and spare is not None and spare in self._tabs and (
            self._spare_wanted  # not a spare being closed for a CDP gateway client
        ):
            self._spare = None
            tab = self._tabs[spare]
            self._publish_opened(tab)
            await self.connection.send("Target.activateTarget", {"targetId": spare})
        else:
            tab = await self.wait_tab(await self._create(url, background=False))
        self.last_used = tab.target_id
        self.replenish_spare()
        self._notify()
        return tab

    async def _create(self, url: str, *, background: bool) -> str:
        params = {"url": url, "newWindow": not self._started, "background": background}
        try:
            result = await self.connection.send("Target.createTarget", params)
        except CdpError as exc:
            if "no browser is open" not in exc.message:
                raise
            result = await self.connection.send("Target.createTarget",
                                                {**params, "newWindow": True})
        return str(result["targetId"])

    def replenish_spare(self) -> None:
        """Start making a spare tab if one is wanted and none exists (never blocks)."""
        if self._spare_wanted and self._spare is None and not self._making_spare:
            self._making_spare = True
            self._nursery.start_soon(self._make_spare)

    async def _make_spare(self) -> None:
        try:
            with trio.fail_after(15):
                # Marked before it attaches, so it is never listed.
                self._spare = await self._create("about:blank", background=True)
                await self.wait_tab(self._spare)
                if not self._spare_wanted:  # a CDP gateway client came meanwhile
                    await self._close_spare()
        except (BrowserdError, trio.TooSlowError) as exc:
            log.info("no spare tab: %s", exc)
            self._spare = None
        finally:
            self._making_spare = False

    async def suspend_spare(self) -> None:
        """No unlisted spare tab while a CDP gateway client is connected.

        A gateway client sees every page target; a page it may use must never
        be the hidden spare, so the spare is closed (bounded, ≤ 5 s) and none
        is made until every :meth:`suspend_spare` has its :meth:`resume_spare`.
        Errors closing it are logged, not raised.
        """
        self._spare_holds += 1
        self._spare_wanted = False
        await self._close_spare()

    def resume_spare(self) -> None:
        """Undo one :meth:`suspend_spare`; the last one makes a spare again (headless)."""
        self._spare_holds = max(0, self._spare_holds - 1)
        if self._spare_holds == 0 and self._spare_enabled:
            self._spare_wanted = True
            self.replenish_spare()

    async def _close_spare(self) -> None:
        spare = self._spare
        if spare is None or spare not in self._tabs:
            return
        with trio.move_on_after(5):
            try:
                await self.connection.send("Target.closeTarget", {"targetId": spare})
            except BrowserdError as exc:
                log.info("could not close the spare tab: %s", exc.message)
                return
            while spare in self._tabs:
                await self.wait_changed()

    async def refresh_infos(self) -> None:
        """Re-read every page's title and URL (events can lag behind the page)."""
        try:
            result = await self.connection.send("Target.getTargets")
        except BrowserdError:
            return
        for info in result.get("targetInfos", []):
            tab = self._tabs.get(info.get("targetId", ""))
            if tab is not None:
                tab.note_target_info(title=info.get("title"), url=info.get("url"))

    async def wait_pending(self) -> None:
        """Wait (≤ 5 s) for tabs discovered but still attaching."""
        with trio.move_on_after(5):
            while any(not e.is_set() for e in self._ready.values()):
                await self.wait_changed()

    async def wait_tab(self, target_id: str) -> TabActor:
        """Wait (caller's deadline) until ``target_id``'s actor is attached."""
        event = self._ready.setdefault(target_id, trio.Event())
        with trio.fail_after(10):
            await event.wait()
        tab = self._tabs.get(target_id)
        if tab is None:
            raise BrowserGone(f"tab {target_id} went away while opening")
        return tab

    async def focus(self, tab: TabActor) -> None:
        """Bring ``tab`` to the front and make it the active tab."""
        await self.connection.send("Target.activateTarget", {"targetId": tab.target_id})
        self.note_focused(tab)

    def note_focused(self, tab: TabActor) -> None:
        """Record that ``tab`` is in front (it was just created or activated)."""
        tab.mark_focused()
        self.last_used = tab.target_id

    async def close(self, tab: TabActor) -> None:
        """Close a tab and wait until it is gone from the registry (bounded)."""
        target_id = tab.target_id
        try:
            await self.connection.send("Target.closeTarget", {"targetId": target_id})
        except BrowserdError:
            if target_id in self._tabs and not tab.crashed:
                raise
        with trio.move_on_after(5):
            while target_id in self._tabs:
                await self.wait_changed()
        self._drop(target_id)

    async def wait_changed(self) -> None:
        await self._changed.wait()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    # -- discovery -----------------------------------------------------------

    async def _follow_targets(self, task_status: trio.TaskStatus[None]) -> None:
        sub = self.connection.subscribe(None, _TARGET_EVENTS, buffer=10000)
        try:
            with trio.fail_after(10):
                await self.connection.send("Target.setDiscoverTargets", {"discover": True})
            task_status.started()
            async for event in sub:
                p = event.params
                if "targetInfo" in p:
                    self._note_origin(p["targetInfo"])
                if event.method == "Target.targetCreated":
                    self._on_created(p["targetInfo"])
                elif event.method == "Target.targetInfoChanged":
                    info = p["targetInfo"]
                    tab = self._tabs.get(info.get("targetId", ""))
                    if tab is not None:
                        tab.note_target_info(title=info.get("title", ""),
                                             url=info.get("url", ""))
                    elif info.get("type") == "page" and info["targetId"] not in self._ready:
                        self._on_created(info)
                elif event.method == "Target.targetDestroyed":
                    self._drop(p.get("targetId", ""))
                elif event.method == "Target.targetCrashed":
                    tab = self._tabs.get(p.get("targetId", ""))
                    if tab is not None:
                        tab.mark_crashed()
                self._notify()
        finally:
            self.connection.unsubscribe(sub)

    def _note_origin(self, info: dict[str, Any]) -> None:
        url = str(info.get("url", ""))
        if info.get("type") not in ("page", "iframe") or not url.startswith(("http:", "https:")):
            return
        try:
            parts = urlsplit(url)
            host, port = parts.hostname, parts.port
        except ValueError:
            return
        if host:
            host = f"[{host}]" if ":" in host else host
            self.remember_origin(f"{parts.scheme}://{host}"
                                 + (f":{port}" if port is not None else ""))

    def remember_origin(self, origin: str) -> None:
        """Note ``origin`` as the most recently used (its localStorage was written)."""
        self._origins_seen.pop(origin, None)
        self._origins_seen[origin] = None
        while len(self._origins_seen) > ORIGINS_SEEN_MAX:
            del self._origins_seen[next(iter(self._origins_seen))]

    def origins_seen(self) -> list[str]:
        """Origins of pages and frames seen or written since the start, most recent last."""
        return list(self._origins_seen)

    def _on_created(self, info: dict[str, Any]) -> None:
        if info.get("type") != "page":
            return
        target_id = info["targetId"]
        if target_id in self._tabs or target_id in self._started:
            return
        self._started.add(target_id)
        self._ready.setdefault(target_id, trio.Event())
        self.created_count += 1
        self._nursery.start_soon(self._run_tab, target_id, info.get("title", ""),
                                 info.get("url", ""))

    async def _run_tab(self, target_id: str, title: str, url: str) -> None:
        actor = TabActor(
            self.connection, target_id, title=title, url=url,
            queue_limit=self._settings.tab_queue_limit, headless_viewport=self._viewport,
            navguard=self._navguard, events=self._events,
        )
        try:
            await self._nursery.start(actor.run)
            self._tabs[target_id] = actor
            if target_id not in self._order:
                self._order.append(target_id)
            if target_id != self._spare:
                self._publish_opened(actor)
            self._ready.setdefault(target_id, trio.Event()).set()
            self._notify()
        except BrowserdError as exc:
            log.info("could not attach to tab %s: %s", target_id, exc.message)
            self._started.discard(target_id)
            self._ready.pop(target_id, trio.Event()).set()

    def _publish_opened(self, tab: TabActor) -> None:
        if self._events is not None:
            self._events.publish(EventType.TAB_OPENED, target_id=tab.target_id, url=tab.url,
                                 title=tab.title)

    def _drop(self, target_id: str) -> None:
        was_spare = target_id == self._spare
        if was_spare:
            self._spare = None
        tab = self._tabs.pop(target_id, None)
        if tab is not None and not was_spare and self._events is not None:
            self._events.publish(EventType.TAB_CLOSED, target_id=target_id)
        self._started.discard(target_id)
        self._ready.pop(target_id, None)
        if target_id in self._order:
            self._order.remove(target_id)
        if tab is not None:
            tab.close()
        if self.last_used == target_id:
            self.last_used = None
        self._notify()


@asynccontextmanager
async def open_tab_registry(
    connection: CdpConnection, *, settings: Settings, headless: bool,
    navguard: NavGuard | None = None, events: EventSink | None = None,
) -> AsyncIterator[TabRegistry]:
    """Run target discovery and the tab actors for one connection.

    Ready once discovery is on and the browser's existing pages are attached
    (bounded). ``navguard`` (already running) is handed to every tab actor;
    tab events go to ``events``.
    On exit every tab actor is cancelled.
    """
    async with trio.open_nursery() as nursery:
        registry = TabRegistry(connection, nursery, settings=settings, headless=headless,
                               navguard=navguard, events=events)
        # Ready once discovery is on; existing pages attach in the background
        # (requests for a default tab wait for them, bounded).
        await nursery.start(registry._follow_targets)
        registry.replenish_spare()
        try:
            yield registry
        finally:
            nursery.cancel_scope.cancel()
