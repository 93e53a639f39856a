"""Profile: one profile's handles, as the ProfileManager owns them."""

from __future__ import annotations

from typing import Any

import trio

from ..config import Settings
from ..downloads import DownloadStore
from ..errors import BrowserdError
from ..profilespec import ProfileSpec
from ..supervisor import BrowserSupervisor
from ..supervisor.state import SupervisorState
from .sessions import SessionTable

__all__ = ["Profile"]


class Profile:
    """A profile: its spec and settings, its supervisor, its sessions, its downloads
    (``<data>/downloads/<name>/``), its gateway port.

    Created and run only by :class:`~browserd.profiles.manager.ProfileManager`
    (``scope`` cancels its subtree, ``done`` is set when the subtree has ended).
    """

    def __init__(self, *, spec: ProfileSpec, settings: Settings, supervisor: BrowserSupervisor,
                 sessions: SessionTable, downloads: DownloadStore, gateway_port: int | None,
                 is_default: bool) -> None:
        self.spec = spec
        self.settings = settings
        self.supervisor = supervisor
        self.sessions = sessions
        self.downloads = downloads
        self.gateway_port = gateway_port
        self.is_default = is_default
        self.scope = trio.CancelScope()
        self.done = trio.Event()
        self.gateway_shutdown = trio.Event()
        self.gateway_error: BrowserdError | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    def summary(self) -> dict[str, Any]:
        """The ``GET /profiles`` entry."""
        sup = self.supervisor
        runtime = sup.runtime
        stats = sup.statistics()
        out: dict[str, Any] = {
            "name": self.name,
            "driver": str(self.spec.driver),
            "color": self.settings.color,
            "state": str(stats.state),
            "running": stats.state == SupervisorState.RUNNING,
            "tabs": runtime.tab_count() if runtime is not None else 0,
            "sessions": len(self.sessions.live(runtime)),
            "default": self.is_default,
            "origin": str(self.spec.origin),
        }
        if stats.pid is not None:
            out["pid"] = stats.pid
        if self.gateway_port is not None:
            out["cdpPort"] = self.gateway_port
        if self.settings.cdp_url:
            out["cdpUrl"] = self.settings.cdp_url
        elif self.settings.live_user_data_dir is not None:  # the user's, never browserd's
            out["userDataDir"] = self.settings.live_user_data_dir
            if self.spec.live_fallback is not None:
                out["liveFallback"] = self.spec.live_fallback
        else:
            out["userDataDir"] = str(sup.profile_dir)
        if self.gateway_error is not None:
            out["gatewayError"] = self.gateway_error.message
        return out
