"""Views of a profile's supervisor: what one session's, or a live profile's, requests see.

Each view is the profile's :class:`~browserd.supervisor.BrowserSupervisor` in
every respect but :meth:`~SupervisorView.require_runtime`:

- :class:`SessionBoundSupervisor` resolves the session first (404
  SESSION_NOT_FOUND when it is unknown, idle-closed or ended with a browser
  restart; it counts as use of the session) and answers with the runtime
  whose ``tabs`` is that session's scope;
- :class:`LiveWithFallback` (a live profile with ``live_fallback``) answers
  with the fallback profile's runtime while the user's browser is not
  reachable (any 503 of its own); start, stop and status stay the live
  profile's;
- :class:`GrantsHidden` wraps any of them for one agent token: the person's
  tabs granted to *other* tokens (approved tab requests) are not in its
  runtime's ``tabs``, as if they did not exist.

Handlers hold a :class:`~browserd.supervisor.handle.SupervisorHandle` and
never tell them apart.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import attrs

from ..config import Settings
from ..errors import Unavailable
from ..paths import Paths
from ..supervisor.handle import SupervisorHandle
from ..supervisor.runtime import BrowserRuntime
from ..supervisor.state import SupervisorState
from ..supervisor.supervisor import SupervisorStatistics
from .profile import Profile

__all__ = ["GrantsHidden", "LiveWithFallback", "SessionBoundSupervisor", "SupervisorView"]


class SupervisorView:
    """``profile``'s supervisor, unchanged (subclasses change :meth:`require_runtime`)."""

    def __init__(self, profile: Profile) -> None:
        self._profile = profile
        self._supervisor = profile.supervisor

    def require_runtime(self) -> BrowserRuntime:
        return self._supervisor.require_runtime()

    @property
    def settings(self) -> Settings:
        return self._supervisor.settings

    @property
    def paths(self) -> Paths:
        return self._supervisor.paths

    @property
    def state(self) -> SupervisorState:
        return self._supervisor.state

    @property
    def runtime(self) -> BrowserRuntime | None:
        return self._supervisor.runtime

    @property
    def headless(self) -> bool:
        return self._supervisor.headless

    @property
    def chosen_browser(self) -> str | None:
        return self._supervisor.chosen_browser

    @property
    def executable_path(self) -> str | None:
        return self._supervisor.executable_path

    @property
    def profile_dir(self) -> Path:
        return self._supervisor.profile_dir

    async def start(self, *, headless: bool | None = None) -> None:
        await self._supervisor.start(headless=headless)

    async def stop(self) -> bool:
        return await self._supervisor.stop()

    def statistics(self) -> SupervisorStatistics:
        return self._supervisor.statistics()


class SessionBoundSupervisor(SupervisorView):
    """The supervisor of ``profile`` bound to the session ``session_id``."""

    def __init__(self, profile: Profile, session_id: str) -> None:
        super().__init__(profile)
        self.session_id = session_id

    def require_runtime(self) -> BrowserRuntime:
        runtime = self._supervisor.require_runtime()
        session = self._profile.sessions.resolve(self.session_id, runtime)
        return runtime.scoped(session.context_id)


class LiveWithFallback(SupervisorView):
    """A live profile whose requests go to ``fallback()`` while its browser is away.

    ``fallback`` looks the fallback profile up when needed (ProfileNotFound
    then, when it was deleted); that profile's own 503 is answered as is.
    """

    def __init__(self, profile: Profile, fallback: Callable[[], Profile]) -> None:
        super().__init__(profile)
        self._fallback = fallback

    def require_runtime(self) -> BrowserRuntime:
        try:
            return self._supervisor.require_runtime()
        except Unavailable:
            return self._fallback().supervisor.require_runtime()


class GrantsHidden(SupervisorView):
    """``inner`` (a view of ``profile``) without the tabs ``hidden()`` names."""

    def __init__(self, profile: Profile, inner: SupervisorHandle,
                 hidden: Callable[[], frozenset[str]]) -> None:
        super().__init__(profile)
        self._inner = inner
        self._hidden = hidden

    def require_runtime(self) -> BrowserRuntime:
        runtime = self._inner.require_runtime()
        hidden = self._hidden()
        return attrs.evolve(runtime, tabs=runtime.tabs.hiding(hidden)) if hidden else runtime
