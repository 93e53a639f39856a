"""BrowserRuntime: what a running browser offers to request handlers."""

from __future__ import annotations

import attrs

from ..browser.process import BrowserProcess
from ..cdp import CdpConnection
from ..downloads import DownloadFollower
from ..tabs.capture_gate import CaptureGate
from ..tabs.navguard import NavGuard
from ..tabs.registry import TabRegistry

__all__ = ["BrowserRuntime"]


@attrs.frozen(kw_only=True)
class BrowserRuntime:
    """The live parts of one running attempt (valid until the attempt ends).

    ``process`` is None for an attached browser. ``captures`` is the
    browser's capture admission and front lock. ``navguard`` and
    ``downloads`` are the connection's page guards (None when not
    configured).
    """

    connection: CdpConnection
    tabs: TabRegistry
    process: BrowserProcess | None
    version: str
    user_agent: str
    started_at: float
    captures: CaptureGate
    navguard: NavGuard | None = None
    downloads: DownloadFollower | None = None
