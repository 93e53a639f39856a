"""BrowserRuntime: what a running browser offers to request handlers."""

from __future__ import annotations

import attrs

from ..browser.process import BrowserProcess
from ..cdp import CdpConnection
from ..downloads import DownloadFollower
from ..tabs.capture_gate import CaptureGate
from ..tabs.commits import CommitLog
from ..tabs.navguard import NavGuard
from ..tabs.registry import TabRegistry
from ..tabs.restored import RestoreLedger
from ..tabs.scope import TabScope
from .liveness import LivenessProbe

__all__ = ["BrowserRuntime"]


@attrs.frozen(kw_only=True)
class BrowserRuntime:
    """The live parts of one running attempt (valid until the attempt ends).

    ``process`` is None for an attached browser. ``captures`` is the
    browser's capture admission and front lock. ``navguard`` and
    ``downloads`` are the connection's page guards (None when not
    configured). ``tabs`` is the scope a handler works in: the default
    scope here, a session's in :meth:`scoped`. The tab registry (every tab
    of the browser, given as ``registry=``) is private: callers reach it
    only through the narrow methods below (a scope, the tab count, a
    session's scope added and removed). ``liveness`` is the connection's probe (set by the
    supervisor when it serves the runtime; None in tests that build one).
    ``commits`` is the connection's :class:`~browserd.tabs.commits.CommitLog`
    and ``restored`` the supervisor's restore ledger, which every scope asks
    about ids it does not know (both None where tabs are never restored).
    """

    connection: CdpConnection
    _registry: TabRegistry = attrs.field(alias="registry")
    process: BrowserProcess | None
    version: str
    user_agent: str
    started_at: float
    captures: CaptureGate
    navguard: NavGuard | None = None
    downloads: DownloadFollower | None = None
    liveness: LivenessProbe | None = None
    commits: CommitLog | None = None
    restored: RestoreLedger | None = None
    tabs: TabScope = attrs.field()

    @tabs.default
    def _default_scope(self) -> TabScope:
        return self.scope(None)

    def scope(self, context: str | None = None) -> TabScope:
        """The tabs of browser context ``context`` (a session's; None: the default scope).

        A view, not a copy: it follows the registry. Old ids of tabs a crash
        restore reopened answer from the restore ledger (see
        :class:`~browserd.tabs.scope.TabScope`).
        """
        return TabScope(self._registry, context, restored=self.restored)

    def tab_count(self) -> int:
        """The listed tabs of every scope (the spare tab is not one)."""
        return self._registry.tab_count()

    @property
    def consent_scoped(self) -> bool:
        """True when only offered and browserd-opened pages are tabs (a live profile)."""
        return self._registry.consent_scoped

    def scope_of(self, target_id: str) -> str | None:
        """The scope (a session's browser context) a tab belongs to; None: the default."""
        return self._registry.scope_of(target_id)

    def add_scope(self, context: str, label: str) -> None:
        """Make ``context`` (a session's new browser context) a scope labelled ``label``
        (the session's id: download records of its tabs name it). Plain state."""
        self._registry.add_scope(context, label)

    def remove_scope(self, context: str) -> None:
        """Forget the scope of ``context`` (its browser context was disposed). Plain state."""
        self._registry.remove_scope(context)

    def nudge_liveness(self) -> None:
        """A request on this browser timed out: probe it now (is it hung?).

        Never blocks, never raises; a no-op without a probe. The probe's
        verdict comes later: BROWSER_UNRESPONSIVE for the calls in flight and
        the requests after it, if the browser does not answer either.
        """
        if self.liveness is not None:
            self.liveness.nudge()

    def scoped(self, context: str | None) -> BrowserRuntime:
        """This runtime as a session (browser context ``context``) sees it."""
        return attrs.evolve(self, tabs=self.scope(context))
