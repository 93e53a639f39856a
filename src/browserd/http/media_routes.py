"""Routes for media page work."""

from __future__ import annotations

from .schema import Route


def media_routes() -> list[Route]:
    return []
