"""What one request sees of a profile's supervisor: the supervisor itself, but its runtime.

A :class:`BoundSupervisor` is a frozen record of two things: the profile's
:class:`~browserd.supervisor.BrowserSupervisor` — every state, figure and
command a handler reads of it is the supervisor's own — and the one thing
that varies, ``runtime_of``, which answers
:meth:`~BoundSupervisor.require_runtime`. Three bindings make one:

- :func:`session_bound` resolves the session first (404 SESSION_NOT_FOUND
  when it is unknown, idle-closed or ended with a browser restart; it counts
  as use of the session) and answers with the runtime whose ``tabs`` is that
  session's scope;
- :func:`live_with_fallback` (a live profile with ``live_fallback``) answers
  with the fallback profile's runtime while the user's browser is not
  reachable (any 503 of its own); start, stop and status stay the live
  profile's;
- :func:`grants_hidden` wraps any handle for one agent token: the person's
  tabs granted to *other* tokens (approved tab requests) are not in its
  runtime's ``tabs``, as if they did not exist.

Handlers hold a :class:`~browserd.supervisor.handle.SupervisorHandle` and
never tell a bound supervisor from the profile's own. Plain code: nothing
here does I/O or can be cancelled half-way; ``require_runtime`` raises what
the binding says (and the supervisor's own 503s).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import attrs

from ..errors import Unavailable
from ..supervisor.handle import SupervisorHandle
from ..supervisor.runtime import BrowserRuntime
from ..supervisor.state import SupervisorState
from ..supervisor.supervisor import BrowserSupervisor, SupervisorStatistics
from .profile import Profile

__all__ = ["BoundSupervisor", "grants_hidden", "live_with_fallback", "session_bound"]


@attrs.frozen(kw_only=True)
class BoundSupervisor:
    """``supervisor`` as one request sees it: its runtime is ``runtime_of()``'s."""

    supervisor: BrowserSupervisor
    runtime_of: Callable[[], BrowserRuntime]

    def require_runtime(self) -> BrowserRuntime:
        return self.runtime_of()

    # Everything else is the supervisor's own (SupervisorHandle's members).
    @property
    def state(self) -> SupervisorState:
        return self.supervisor.state

    @property
    def runtime(self) -> BrowserRuntime | None:
        return self.supervisor.runtime

    @property
    def headless(self) -> bool:
        return self.supervisor.headless

    @property
    def chosen_browser(self) -> str | None:
        return self.supervisor.chosen_browser

    @property
    def executable_path(self) -> str | None:
        return self.supervisor.executable_path

    @property
    def profile_dir(self) -> Path:
        return self.supervisor.profile_dir

    async def start(self, *, headless: bool | None = None) -> None:
        await self.supervisor.start(headless=headless)

    async def stop(self) -> bool:
        return await self.supervisor.stop()

    def statistics(self) -> SupervisorStatistics:
        return self.supervisor.statistics()


def session_bound(profile: Profile, session_id: str) -> BoundSupervisor:
    """``profile``'s supervisor bound to its session ``session_id`` (see the module)."""

    def runtime_of() -> BrowserRuntime:
        runtime = profile.supervisor.require_runtime()
        session = profile.sessions.resolve(session_id, runtime)
        return runtime.scoped(session.context_id)

    return BoundSupervisor(supervisor=profile.supervisor, runtime_of=runtime_of)


def live_with_fallback(profile: Profile, fallback: Callable[[], Profile]) -> BoundSupervisor:
    """A live ``profile`` whose requests go to ``fallback()``'s browser while its own is away.

    ``fallback`` looks the fallback profile up when needed (ProfileNotFound
    then, when it was deleted); that profile's own 503 is answered as is.
    """

    def runtime_of() -> BrowserRuntime:
        try:
            return profile.supervisor.require_runtime()
        except Unavailable:
            return fallback().supervisor.require_runtime()

    return BoundSupervisor(supervisor=profile.supervisor, runtime_of=runtime_of)


def grants_hidden(profile: Profile, inner: SupervisorHandle,
                  hidden: Callable[[], frozenset[str]]) -> BoundSupervisor:
    """``inner`` (a handle of ``profile``) without the tabs ``hidden()`` names."""

    def runtime_of() -> BrowserRuntime:
        runtime = inner.require_runtime()
        gone = hidden()
        return attrs.evolve(runtime, tabs=runtime.tabs.hiding(gone)) if gone else runtime

    return BoundSupervisor(supervisor=profile.supervisor, runtime_of=runtime_of)
