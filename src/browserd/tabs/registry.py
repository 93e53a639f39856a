"""TabRegistry: targetId → TabActor, the active tab, and tab resolution.

Target discovery (``Target.setDiscoverTargets``) keeps the registry current;
only ``type == "page"`` targets become tabs.

Consent (the ``live`` driver: the user's own browser): the registry attaches
only to pages the user offered (:meth:`TabRegistry.offer`) and pages browserd
opened on this connection; every other page is never attached, listed or
reported, only remembered (title and URL, untrusted) for the user's
:meth:`TabRegistry.offerable` list. :meth:`TabRegistry.release` ends
control of a tab without closing it; an offered tab is never closed by
browserd (NOT_AGENT_TAB). A new connection starts with nothing offered. The
rules are :class:`~browserd.tabs.consent.ConsentScope`'s.

Scopes: every query and change takes ``scope``, the browser context of a
session (:meth:`TabRegistry.add_scope`), or None for everything else (the
default context, and contexts a CDP gateway client made). A tab is seen
only in its own scope: another scope's tab is TAB_NOT_FOUND, never listed,
and each scope has its own current tab (the bookkeeping is
:class:`~browserd.tabs.scopebook.ScopeBook`'s). Each tab's actor runs in the
registry's nursery, so when the registry closes (browser gone) every tab
actor ends with it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio

from ..cdp import CdpConnection
from ..config import Settings
from ..errors import BadRequest, BrowserdError, BrowserGone, CdpError
from ..events import EventSink, EventType
from .actor import TabActor
from .consent import ConsentScope
from .lookup import MIN_PREFIX, match_target_id
from .navguard import NavGuard
from .scopebook import ScopeBook
from .spare import SpareTab
from .tabinfo import TabInfo

__all__ = ["MIN_PREFIX", "TabRegistry", "open_tab_registry"]

log = logging.getLogger(__name__)

_TARGET_EVENTS = frozenset({
    "Target.targetCreated", "Target.targetInfoChanged", "Target.targetDestroyed",
    "Target.targetCrashed", "Target.detachedFromTarget",
})


class TabRegistry:
    """Handle to the tabs of one browser connection."""

    def __init__(self, connection: CdpConnection, nursery: trio.Nursery, *,
                 settings: Settings, headless: bool, navguard: NavGuard | None = None,
                 events: EventSink | None = None, consent: bool = False) -> None:
        self.connection = connection
        # Consent scope (module docstring): None when every page is a tab.
        self._consent: ConsentScope | None = ConsentScope() if consent else None
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
        # Each tab's scope, each scope's current tab and recent origins.
        self._scopes = ScopeBook()
        self.created_count = 0
        self._changed = trio.Event()
        #: The unlisted blank tab /tabs/open hands out at once (headless; :mod:`.spare`).
        self.spare = SpareTab(
            nursery, connection, enabled=headless,
            create=lambda: self._create("about:blank", background=True),
            wait_tab=self.wait_tab, is_attached=lambda t: t in self._tabs,
            wait_changed=self.wait_changed)
        # The connection's navigation guard, handed to every tab actor.
        self._navguard = navguard

    # -- queries -------------------------------------------------------------

    @property
    def last_used(self) -> str | None:
        """The default scope's last used tab."""
        return self._scopes.last_used(None)

    @last_used.setter
    def last_used(self, target_id: str | None) -> None:
        self._scopes.set_last_used(None, target_id)

    def scope_of(self, target_id: str) -> str | None:
        """The scope a tab belongs to (None: the default scope)."""
        return self._scopes.scope_of(target_id)

    def scope_of_context(self, context_id: object) -> str | None:
        """The scope of a browser context: itself for a session's, else None (default)."""
        return self._scopes.scope_of_context(context_id)

    def session_of(self, target_id: str) -> str | None:
        """The label (session id) of the scope a tab belongs to; None for the default."""
        return self._scopes.label_of(target_id)

    def add_scope(self, context_id: str, label: str | None = None) -> None:
        """Make ``context_id`` (a session's browser context) a scope of its own.

        ``label`` (the session's id) is what :meth:`session_of` answers for its tabs.
        """
        self._scopes.add(context_id, label)

    def remove_scope(self, context_id: str) -> None:
        """Forget a scope's current tab and origins (its context was disposed)."""
        self._scopes.remove(context_id)

    def _listed(self, scope: str | None = None) -> dict[str, TabActor]:
        """The tabs a client of ``scope`` sees: its attached pages but the spare."""
        return {t: a for t, a in self._tabs.items()
                if t != self.spare.target_id and self.scope_of(t) == scope}

    def infos(self, scope: str | None = None) -> list[TabInfo]:
        active = self.active_id(scope)
        listed = self._listed(scope)
        return [listed[t].info(active=t == active) for t in self._order if t in listed]

    def active_id(self, scope: str | None = None) -> str | None:
        listed = self._listed(scope)
        last_used = self._scopes.last_used(scope)
        if last_used in listed:
            return last_used
        focused = [v for v in (t.view() for t in listed.values())
                   if v.last_focused_at is not None]
        if focused:
            return max(focused, key=lambda v: v.last_focused_at or 0).target_id
        order = [t for t in self._order if t in listed]
        return order[0] if order else None

    @property
    def has_spare(self) -> bool:
        """True while an unlisted spare tab is ready (headless, no gateway client)."""
        return self.spare.ready

    def tab_count(self) -> int:
        """Listed tabs of every scope."""
        return sum(1 for t in self._order if t != self.spare.target_id)

    def locate_frame(self, frame_id: str) -> str | None:
        """The tab whose page holds the frame ``frame_id`` (known frames only), or None."""
        for target_id, tab in self._tabs.items():
            if tab.holds_frame(frame_id):
                return target_id
        return None

    @property
    def consent_scoped(self) -> bool:
        """True when only offered and browserd-opened pages are tabs (the live driver)."""
        return self._consent is not None

    def offerable(self) -> list[dict[str, str]]:
        """The user's pages not offered (consent scope only): id, title, URL (untrusted)."""
        return [] if self._consent is None else self._consent.offerable()

    async def offer(self, target_id: str) -> TabActor:
        """Make a page of the user's (exact id) a tab; waits (≤ 10 s) until attached.

        TabNotFound when no such page is waiting to be offered (already
        offered pages are answered as they are). Only in the consent scope.
        """
        consent = self._consent
        if consent is None:
            raise BadRequest("only a live profile's tabs are offered; this one sees every tab")
        if target_id in self._tabs:
            return self._tabs[target_id]
        self._on_created(consent.take_offered(target_id))
        return await self.wait_tab(target_id)  # attaching notifies the waiters

    def release(self, tab: TabActor) -> None:
        """End control of an offered or opened tab, leaving its page open (consent scope)."""
        consent = self._consent
        if consent is None:
            raise BadRequest("only a live profile's tabs are released; close this one instead")
        target_id = tab.target_id
        self._drop(target_id)
        view = tab.view()
        consent.hide({"targetId": target_id, "type": "page", "title": view.title,
                      "url": view.url})

    def target_ids(self, scope: str | None = None) -> list[str]:
        return [t for t in self._order
                if t != self.spare.target_id and self.scope_of(t) == scope]

    def get(self, target_id: str, scope: str | None = None) -> TabActor:
        """Exact id or unique case-insensitive prefix (≥ 4 chars), within ``scope``.

        BadRequest, TabNotFound or AmbiguousTarget as :func:`~.lookup.match_target_id` says.
        """
        listed = self._listed(scope)
        return listed[match_target_id(target_id, listed)]

    async def resolve(self, target_id: str | None, *, use: bool = True,
                      scope: str | None = None) -> TabActor:
        """The tab a request of ``scope`` means (API.md default-tab rule); may open about:blank."""
        if target_id is not None:
            if target_id in self._ready and target_id not in self._tabs:
                await self.wait_pending()
            tab = self.get(target_id, scope)
        else:
            if not self._listed(scope) and self._ready:
                await self.wait_pending()
            active = self.active_id(scope)
            tab = self._tabs[active] if active else await self.open("about:blank", scope=scope)
        if use:
            self._scopes.set_last_used(scope, tab.target_id)
        return tab

    # -- changes -------------------------------------------------------------

    async def open(self, url: str = "about:blank", *, scope: str | None = None) -> TabActor:
        """Open a tab of ``scope`` in front and wait until its actor is attached.

        An ``about:blank`` tab of the default scope is the spare when one is
        ready (headless only): it is listed from now on, brought to the
        front, and a new spare is made in the background. Otherwise the tab
        is created (in the session's browser context for a session scope),
        in a new window when the browser has no page at all (a fresh
        ``--no-startup-window`` browser, or the last tab was closed).
        """
        spare = self.spare.take() if scope is None and url == "about:blank" else None
        if spare is not None:
            tab = self._tabs[spare]
            self._publish_opened(tab)
            await self.connection.send("Target.activateTarget", {"targetId": spare})
        else:
            target_id = await self._create(url, background=False, context=scope)
            if self._consent is not None:
                self._consent.note_opened(target_id)
                self._adopt(target_id)
            tab = await self.wait_tab(target_id)
        self._scopes.set_last_used(scope, tab.target_id)
        self.spare.replenish()
        self._notify()
        return tab

    async def _create(self, url: str, *, background: bool, context: str | None = None) -> str:
        # A fresh browser (or one whose last tab closed) has no window to open in;
        # the user's own browser has theirs.
        first = not self._started and not (self._consent and self._consent.hidden)
        params: dict[str, Any] = {"url": url, "newWindow": first, "background": background}
        if context is not None:
            params["browserContextId"] = context
        try:
            result = await self.connection.send("Target.createTarget", params)
        except CdpError as exc:
            if "no browser is open" not in exc.message:
                raise
            result = await self.connection.send("Target.createTarget",
                                                {**params, "newWindow": True})
        return str(result["targetId"])

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
        self._scopes.set_last_used(self.scope_of(tab.target_id), tab.target_id)

    async def close(self, tab: TabActor) -> None:
        """Close a tab and wait until it is gone from the registry (bounded).

        In the consent scope only tabs browserd opened are closed; an offered
        one is NotAgentTab (its user's page is never closed by browserd).
        """
        target_id = tab.target_id
        if self._consent is not None:
            self._consent.check_closable(target_id)
        try:
            await self.connection.send("Target.closeTarget", {"targetId": target_id})
        except BrowserdError:
            if target_id in self._tabs and not tab.view().crashed:
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
                    self._scopes.note_origin_of(p["targetInfo"])
                if event.method == "Target.targetCreated":
                    self._on_created(p["targetInfo"])
                elif event.method == "Target.targetInfoChanged":
                    self._on_info_changed(p["targetInfo"])
                elif event.method == "Target.targetDestroyed":
                    self._drop(p.get("targetId", ""))
                elif event.method == "Target.targetCrashed":
                    tab = self._tabs.get(p.get("targetId", ""))
                    if tab is not None:
                        tab.mark_crashed()
                self._notify()
        finally:
            self.connection.unsubscribe(sub)

    def remember_origin(self, origin: str, scope: str | None = None) -> None:
        """Note ``origin`` as ``scope``'s most recently used (its localStorage was written)."""
        self._scopes.remember_origin(origin, scope)

    def origins_seen(self, scope: str | None = None) -> list[str]:
        """Origins ``scope``'s pages and frames showed or were written, most recent last."""
        return self._scopes.origins_seen(scope)

    def _adopt(self, target_id: str) -> None:
        """Attach a page browserd just opened if discovery reported it before the reply."""
        assert self._consent is not None
        info = self._consent.take_opened(target_id)
        if info is not None:
            self._on_created(info)

    def _on_info_changed(self, info: dict[str, Any]) -> None:
        tab = self._tabs.get(info.get("targetId", ""))
        if tab is not None:
            tab.note_target_info(title=info.get("title", ""), url=info.get("url", ""))
        elif self._consent is not None and self._consent.note_info(info):
            return  # a page of the user's, still hidden
        elif info.get("type") == "page" and info["targetId"] not in self._ready:
            self._on_created(info)

    def _on_created(self, info: dict[str, Any]) -> None:
        if info.get("type") != "page":
            return
        target_id = info["targetId"]
        if target_id in self._tabs or target_id in self._started:
            return
        if self._consent is not None and not self._consent.admits(info):
            return  # the user's: never attached unless offered
        self._started.add(target_id)
        self._scopes.note_context(target_id, info.get("browserContextId"))
        self._ready.setdefault(target_id, trio.Event())
        self.created_count += 1
        self._nursery.start_soon(self._run_tab, target_id, info.get("title", ""),
                                 info.get("url", ""))

    async def _run_tab(self, target_id: str, title: str, url: str) -> None:
        actor = TabActor(
            self.connection, target_id, title=title, url=url,
            queue_limit=self._settings.tab_queue_limit, headless_viewport=self._viewport,
            navguard=self._navguard, events=self._events,
            network_capture=self._settings.network_capture == "always",
        )
        try:
            await self._nursery.start(actor.run)
            if target_id not in self._started:  # destroyed while it attached
                actor.close()
                return
            self._tabs[target_id] = actor
            if target_id not in self._order:
                self._order.append(target_id)
            if target_id != self.spare.target_id:
                self._publish_opened(actor)
            self._ready.setdefault(target_id, trio.Event()).set()
            self._notify()
        except BrowserdError as exc:
            log.info("could not attach to tab %s: %s", target_id, exc.message)
            self._started.discard(target_id)
            self._ready.pop(target_id, trio.Event()).set()

    def _publish_opened(self, tab: TabActor) -> None:
        if self._events is not None:
            view = tab.view()
            self._events.publish(EventType.TAB_OPENED, target_id=tab.target_id, url=view.url,
                                 title=view.title)

    def _drop(self, target_id: str) -> None:
        if self._consent is not None:
            self._consent.forget(target_id)
        was_spare = self.spare.forget(target_id)
        tab = self._tabs.pop(target_id, None)
        if tab is not None and not was_spare and self._events is not None:
            self._events.publish(EventType.TAB_CLOSED, target_id=target_id)
        self._started.discard(target_id)
        if (ready := self._ready.pop(target_id, None)) is not None:
            ready.set()  # whoever waits for it is told it went away (wait_tab)
        if target_id in self._order:
            self._order.remove(target_id)
        if tab is not None:
            tab.close()
        self._scopes.forget(target_id)
        self._notify()


@asynccontextmanager
async def open_tab_registry(
    connection: CdpConnection, *, settings: Settings, headless: bool,
    navguard: NavGuard | None = None, events: EventSink | None = None,
    consent: bool = False,
) -> AsyncIterator[TabRegistry]:
    """Run target discovery and the tab actors for one connection.

    Ready once discovery is on and the browser's existing pages are attached
    (bounded). ``navguard`` (already running) is handed to every tab actor;
    tab events go to ``events``; ``consent`` makes only offered and opened
    pages tabs (module docstring).
    On exit every tab actor is cancelled.
    """
    async with trio.open_nursery() as nursery:
        registry = TabRegistry(connection, nursery, settings=settings, headless=headless,
                               navguard=navguard, events=events, consent=consent)
        # Ready once discovery is on; existing pages attach in the background
        # (requests for a default tab wait for them, bounded).
        await nursery.start(registry._follow_targets)
        registry.spare.replenish()
        try:
            yield registry
        finally:
            nursery.cancel_scope.cancel()
