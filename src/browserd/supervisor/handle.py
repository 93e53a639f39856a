"""SupervisorHandle: what a request handler may use of a profile's supervisor.

:class:`~browserd.supervisor.BrowserSupervisor` is one; a bound supervisor
(``browserd.profiles.binding``: a session's, a live profile's with its
fallback, one token's without the tabs granted to others) is another, whose
``require_runtime`` answers with the runtime that request may use. Handlers
are typed against this protocol, so they cannot tell (and need not care)
which one they hold.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from .runtime import BrowserRuntime
from .state import SupervisorState
from .supervisor import SupervisorStatistics

__all__ = ["SupervisorHandle"]


class SupervisorHandle(Protocol):
    """The supervisor's handle API as a request sees it."""

    @property
    def state(self) -> SupervisorState: ...

    @property
    def runtime(self) -> BrowserRuntime | None: ...

    @property
    def headless(self) -> bool: ...

    @property
    def chosen_browser(self) -> str | None: ...

    @property
    def executable_path(self) -> str | None: ...

    @property
    def profile_dir(self) -> Path: ...

    def require_runtime(self) -> BrowserRuntime: ...

    async def start(self, *, headless: bool | None = None) -> None: ...

    async def stop(self) -> bool: ...

    def statistics(self) -> SupervisorStatistics: ...
