"""TabScope: the tabs one client may see — the default scope or one session's.

A scope is a view of the :class:`~browserd.tabs.registry.TabRegistry`, not a
copy: every call is the registry's, with the scope's browser context
(None: the default scope). Request handlers only ever get a scope through
``BrowserRuntime.tabs``, so a session cannot name another session's tab
(404 TAB_NOT_FOUND) and never sees it listed. A scope may also *hide* tabs
(:meth:`TabScope.hiding`): the person's tabs granted to another agent token
are not this token's, listed or named.
"""

from __future__ import annotations

from ..cdp import CdpConnection
from ..errors import TabNotFound
from .actor import TabActor, TabInfo
from .registry import TabRegistry

__all__ = ["TabScope"]


class TabScope:
    """The registry as seen by one scope (``context``: a session's browser context)."""

    def __init__(self, registry: TabRegistry, context: str | None = None,
                 hidden: frozenset[str] = frozenset()) -> None:
        self.registry = registry
        self.context = context
        self.hidden = hidden

    def hiding(self, hidden: frozenset[str]) -> TabScope:
        """This scope without the tabs ``hidden`` (targetIds), as if they did not exist."""
        return TabScope(self.registry, self.context, self.hidden | hidden) if hidden else self

    def _shown(self, tab: TabActor) -> TabActor:
        if tab.target_id in self.hidden:
            raise TabNotFound(f"no tab {tab.target_id!r}", hint="GET /tabs lists your tabs")
        return tab

    @property
    def connection(self) -> CdpConnection:
        return self.registry.connection

    @property
    def has_spare(self) -> bool:
        return self.context is None and self.registry.has_spare

    def infos(self) -> list[TabInfo]:
        return [i for i in self.registry.infos(self.context) if i.target_id not in self.hidden]

    def active_id(self) -> str | None:
        active = self.registry.active_id(self.context)
        return None if active in self.hidden else active

    def target_ids(self) -> list[str]:
        return [t for t in self.registry.target_ids(self.context) if t not in self.hidden]

    def get(self, target_id: str) -> TabActor:
        """Exact id or unique prefix of a tab of this scope; TabNotFound otherwise."""
        return self._shown(self.registry.get(target_id, self.context))

    async def resolve(self, target_id: str | None, *, use: bool = True) -> TabActor:
        return self._shown(await self.registry.resolve(target_id, use=use, scope=self.context))

    async def open(self, url: str = "about:blank") -> TabActor:
        return await self.registry.open(url, scope=self.context)

    async def focus(self, tab: TabActor) -> None:
        await self.registry.focus(self.get(tab.target_id))

    def note_focused(self, tab: TabActor) -> None:
        self.registry.note_focused(tab)

    async def close(self, tab: TabActor) -> None:
        await self.registry.close(self.get(tab.target_id))

    async def wait_pending(self) -> None:
        await self.registry.wait_pending()

    def holds_context(self, context_id: object) -> bool:
        """Whether a target of browser context ``context_id`` belongs to this scope."""
        return self.registry.scope_of_context(context_id) == self.context

    def remember_origin(self, origin: str) -> None:
        """Note that this scope used ``origin`` (its localStorage was written)."""
        self.registry.remember_origin(origin, self.context)

    def origins_seen(self) -> list[str]:
        """Origins this scope's pages showed or were written, most recent last."""
        return self.registry.origins_seen(self.context)

    async def refresh_infos(self) -> None:
        await self.registry.refresh_infos()

    async def suspend_spare(self) -> None:
        await self.registry.spare.suspend()

    def resume_spare(self) -> None:
        self.registry.spare.resume()
