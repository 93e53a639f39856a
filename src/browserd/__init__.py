"""browserd: a supervised Chromium of the agent's own behind a small, safe HTTP API."""

__version__ = "0.1.0"
