"""RecentOrigins: the http(s) origins a browser context showed, most recent last.

``GET /state`` exports the ``localStorage`` of the origins a scope has seen
(:mod:`browserd.state.storage_state`); the tab registry keeps one
:class:`RecentOrigins` per tab scope, so a session's export never names the
default context's origins, nor the other way round. Plain code, no I/O.
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["ORIGINS_SEEN_MAX", "RecentOrigins", "origin_of"]

#: Origins remembered per scope (the oldest are forgotten first).
ORIGINS_SEEN_MAX = 500


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of an http(s) URL (the port as written), or None."""
    if not url.startswith(("http:", "https:")):
        return None
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not host:
        return None
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")


class RecentOrigins:
    """A bounded, most-recent-last set of origins."""

    def __init__(self, limit: int = ORIGINS_SEEN_MAX) -> None:
        self._limit = limit
        self._origins: dict[str, None] = {}

    def remember(self, origin: str) -> None:
        """Note ``origin`` as the most recently used."""
        self._origins.pop(origin, None)
        self._origins[origin] = None
        while len(self._origins) > self._limit:
            del self._origins[next(iter(self._origins))]

    def listed(self) -> list[str]:
        """The origins, most recent last."""
        return list(self._origins)
