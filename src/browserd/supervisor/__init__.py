"""Supervision: the restart loop that keeps the agent's browser running."""

from .supervisor import BrowserSupervisor

__all__ = ["BrowserSupervisor"]
