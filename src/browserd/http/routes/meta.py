"""The API's description of itself: ``GET /openapi.json``.

The document is the route table rendered (:func:`api_document`): every
route with the ``profile``/``session`` fields its scope takes, its answer
and its ``x-browserd-*`` facts. It is built at the first request and kept:
the table does not change while the service runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import __version__
from ...principals import PUBLIC_SCOPE
from ...system import System
from ..answers import components, returns
from ..facts import LOCAL_READS, NO_TOOL, NOTHING, by_hand
from ..fields import with_scope_fields
from ..schema import Route, openapi

__all__ = ["api_document", "meta_routes"]


def api_document(routes: list[Route]) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``routes`` (as the service serves it)."""
    return openapi([with_scope_fields(route) for route in routes], version=__version__,
                   schemas=components())


def meta_routes(table: Callable[[], list[Route]]) -> list[Route]:
    """``/openapi.json``; ``table`` gives the whole route table (its document)."""
    built: list[dict[str, Any]] = []

    async def openapi_document(system: System, args: dict[str, Any]) -> dict[str, Any]:
        if not built:
            built.append(api_document(table()))
        return built[0]

    return [
        Route(path="/openapi.json", methods=("GET",), handler=openapi_document,
              summary="This API's OpenAPI document", tag="meta", scope="none",
              name="openapi", group=NO_TOOL, hints=LOCAL_READS, needs=PUBLIC_SCOPE,
              answer=returns("ApiDocument"), blocked_by=NOTHING, cli=by_hand("openapi")),
    ]
