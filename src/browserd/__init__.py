"""browserd: a supervised Chromium of the agent's own behind a small, safe HTTP API."""

__all__ = ["__version__"]

__version__ = "0.1.0"
