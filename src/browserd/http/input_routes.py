"""Routes for input page work."""

from __future__ import annotations

from .schema import Route


def input_routes() -> list[Route]:
    return []
