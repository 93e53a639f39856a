"""The supervisor's states, typed."""

from __future__ import annotations

import enum
from typing import Any

import attrs

__all__ = ["SupervisorState", "SupervisorStatistics"]


class SupervisorState(enum.StrEnum):
    """Where the browser is in its life, as ``/status`` reports it (``state``).

    A StrEnum: it is its value in JSON and compares equal to it.
    """

    DISABLED = "disabled"
    """``enabled = false`` in settings: nothing is ever launched."""
    STOPPED = "stopped"
    """Not wanted (never started, or stopped)."""
    STARTING = "starting"
    """Wanted; the first attempt is launching or attaching."""
    AWAITING_APPROVAL = "awaiting_approval"
    """Live driver: connecting to the user's browser, which asks its user to allow it."""
    AWAITING_EXTENSION = "awaiting_extension"
    """Extension driver: up, but no browser extension is connected to the relay."""
    RUNNING = "running"
    """Ready: requests are served."""
    UNRESPONSIVE = "unresponsive"
    """The liveness probe got no answer (hung): requests fail fast (503
    BROWSER_UNRESPONSIVE) while the attempt is torn down; then ``restarting``."""
    RESTARTING = "restarting"
    """It died while wanted; waiting out the backoff, or relaunching."""
    STOPPING = "stopping"
    """A stop was asked; the attempt is being torn down."""
    FAILED = "failed"
    """A refusal, or the restart budget ran out; ``last_error`` says why."""


@attrs.frozen(kw_only=True)
class SupervisorStatistics:
    """A snapshot of the supervisor for ``/status``."""

    state: SupervisorState
    restarts: int
    spawns: int
    last_error: dict[str, Any] | None
    pid: int | None
    version: str | None
    uptime_s: float | None
    last_crash: dict[str, Any] | None = None
