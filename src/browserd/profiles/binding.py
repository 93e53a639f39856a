"""SessionBoundSupervisor: a profile's supervisor as one session's requests see it.

It is the profile's :class:`~browserd.supervisor.BrowserSupervisor` in every
respect but one: :meth:`require_runtime` resolves the session first (404
SESSION_NOT_FOUND when it is unknown, idle-closed or ended with a browser
restart; it counts as use of the session) and answers with the runtime whose
``tabs`` is that session's scope. Handlers hold a
:class:`~browserd.supervisor.handle.SupervisorHandle` and never tell the two apart.
"""

from __future__ import annotations

from pathlib import Path

from ..config import Settings
from ..paths import Paths
from ..supervisor.runtime import BrowserRuntime
from ..supervisor.state import SupervisorState
from ..supervisor.supervisor import SupervisorStatistics
from .profile import Profile

__all__ = ["SessionBoundSupervisor"]


class SessionBoundSupervisor:
    """The supervisor of ``profile`` bound to the session ``session_id``."""

    def __init__(self, profile: Profile, session_id: str) -> None:
        self._profile = profile
        self._supervisor = profile.supervisor
        self.session_id = session_id

    def require_runtime(self) -> BrowserRuntime:
        runtime = self._supervisor.require_runtime()
        session = self._profile.sessions.resolve(self.session_id, runtime)
        return runtime.scoped(session.context_id)

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
