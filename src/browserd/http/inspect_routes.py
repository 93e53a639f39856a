"""Routes for inspect page work."""

from __future__ import annotations

from .schema import Route


def inspect_routes() -> list[Route]:
    return []
