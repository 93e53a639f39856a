"""TabScope: the tabs one client may see — the default scope or one session's.

A scope is a view of the :class:`~browserd.tabs.registry.TabRegistry`, not a
copy: every call is the registry's, with the scope's browser context
(None: the default scope). Request handlers only ever get a scope through
``BrowserRuntime.tabs``, so a session cannot name another session's tab
(404 TAB_NOT_FOUND) and never sees it listed. A scope may also *hide* tabs
(:meth:`TabScope.hiding`): the person's tabs granted to another agent token
are not this token's, listed or named.

After a crash whose tabs were restored (:mod:`browserd.tabs.restored`), an
id the registry does not know is looked up in the restore ledger, within the
scope: a reopened tab's old id is 409 TAB_RESTORED (with the new id), a lost
one's 410 TAB_LOST, for ``restored_id_ttl_s``; listed tabs that were reopened
carry ``restoredFrom``. Another scope's old ids stay 404 TAB_NOT_FOUND.

In a live profile (the person's own browser, consent-scoped) the person's
pages are offered and released through the scope too
(:meth:`TabScope.offerable`, :meth:`TabScope.offer`, :meth:`TabScope.release`);
the registry itself is private to the scope.
"""

from __future__ import annotations

from ..cdp import CdpConnection
from ..errors import TabNotFound
from .actor import TabActor, TabInfo
from .registry import TabRegistry
from .restored import RestoreLedger

__all__ = ["TabScope"]


class TabScope:
    """The registry as seen by one scope (``context``: a session's browser context)."""

    def __init__(self, registry: TabRegistry, context: str | None = None,
                 hidden: frozenset[str] = frozenset(), *,
                 restored: RestoreLedger | None = None) -> None:
        self._registry = registry
        self.context = context
        self.hidden = hidden
        self.restored = restored

    def hiding(self, hidden: frozenset[str]) -> TabScope:
        """This scope without the tabs ``hidden`` (targetIds), as if they did not exist."""
        return TabScope(self._registry, self.context, self.hidden | hidden,
                        restored=self.restored) if hidden else self

    def _shown(self, tab: TabActor) -> TabActor:
        if tab.target_id in self.hidden:
            raise TabNotFound(f"no tab {tab.target_id!r}", hint="GET /tabs lists your tabs")
        return tab

    @property
    def connection(self) -> CdpConnection:
        return self._registry.connection

    @property
    def has_spare(self) -> bool:
        return self.context is None and self._registry.has_spare

    def _restored_or(self, error: TabNotFound, target_id: str) -> TabNotFound:
        """TabRestored / TabLost for an old id of this scope (raised), else ``error``."""
        if self.restored is not None:
            self.restored.check(target_id, self.context)
        return error

    def infos(self) -> list[TabInfo]:
        infos = [i for i in self._registry.infos(self.context) if i.target_id not in self.hidden]
        return infos if self.restored is None else self.restored.annotate(infos, self.context)

    def active_id(self) -> str | None:
        active = self._registry.active_id(self.context)
        return None if active in self.hidden else active

    def target_ids(self) -> list[str]:
        return [t for t in self._registry.target_ids(self.context) if t not in self.hidden]

    def get(self, target_id: str) -> TabActor:
        """Exact id or unique prefix of a tab of this scope; TabNotFound otherwise
        (TabRestored / TabLost for an old id of a crashed browser's tab)."""
        try:
            tab = self._registry.get(target_id, self.context)
        except TabNotFound as exc:
            raise self._restored_or(exc, target_id) from None
        return self._shown(tab)

    async def resolve(self, target_id: str | None, *, use: bool = True) -> TabActor:
        try:
            tab = await self._registry.resolve(target_id, use=use, scope=self.context)
        except TabNotFound as exc:
            if target_id is None:
                raise
            raise self._restored_or(exc, target_id) from None
        return self._shown(tab)

    async def open(self, url: str = "about:blank") -> TabActor:
        return await self._registry.open(url, scope=self.context)

    async def focus(self, tab: TabActor) -> None:
        await self._registry.focus(self.get(tab.target_id))

    def note_focused(self, tab: TabActor) -> None:
        self._registry.note_focused(tab)

    async def close(self, tab: TabActor) -> None:
        await self._registry.close(self.get(tab.target_id))

    async def wait_pending(self) -> None:
        await self._registry.wait_pending()

    def holds_context(self, context_id: object) -> bool:
        """Whether a target of browser context ``context_id`` belongs to this scope."""
        return self._registry.scope_of_context(context_id) == self.context

    def remember_origin(self, origin: str) -> None:
        """Note that this scope used ``origin`` (its localStorage was written)."""
        self._registry.remember_origin(origin, self.context)

    def origins_seen(self) -> list[str]:
        """Origins this scope's pages showed or were written, most recent last."""
        return self._registry.origins_seen(self.context)

    def offerable(self) -> list[dict[str, str]]:
        """The person's pages not offered yet (a live profile; else none): id, title, URL.

        Titles and URLs are the page's: untrusted. Plain state.
        """
        return self._registry.offerable()

    async def offer(self, target_id: str) -> TabActor:
        """Make the person's page ``target_id`` (exact id) a tab; waits until attached.

        The page joins the browser's default scope, as every page the person
        offers does. Raises BadRequest when the browser is not consent-scoped
        (not a live profile), TabNotFound when no such page waits to be
        offered; the caller bounds the wait (cancellation abandons it, the
        page stays offered).
        """
        return await self._registry.offer(target_id)

    def release(self, tab: TabActor) -> None:
        """End control of an offered or opened tab of this scope; its page stays open.

        Raises TabNotFound when the tab is not this scope's, BadRequest when
        the browser is not consent-scoped. Plain state.
        """
        self._registry.release(self.get(tab.target_id))

    async def refresh_infos(self) -> None:
        await self._registry.refresh_infos()

    async def suspend_spare(self) -> None:
        await self._registry.spare.suspend()

    def resume_spare(self) -> None:
        self._registry.spare.resume()
