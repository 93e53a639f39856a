"""Which fields of a JSON answer are the page's words: the ``untrusted`` list.

A host reading browserd's JSON can tell page-provided content (titles, URLs,
text, values, console lines, request data) from browserd's own fields: every
route that reaches web pages declares the fields of its answer that hold page
content (:attr:`browserd.http.schema.Route.untrusted`), and every answer of it
carries ``untrusted: [field, …]`` naming those it has
(:meth:`~browserd.http.schema.Route.mark_untrusted`, on every lane:
:func:`browserd.http.calls.run_handler`). ``/openapi.json`` carries the
declaration as ``x-browserd-untrusted``. MCP answers mark the same content
with a nonce boundary instead (:mod:`browserd.mcp.render`). Answers that are
data formats to be saved and loaded back (``/state``, ``/cookies``,
``/storage``) declare none and stay in their format: their values are the
page's by nature.

:func:`mark_untrusted` does the same for code that holds a path rather than
the route (the route table's declaration for that path). Plain code: no I/O.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from .facts import marked_untrusted
from .routes import all_routes

__all__ = ["mark_untrusted", "page_fields"]


@cache
def _declared() -> dict[str, tuple[str, ...]]:
    """Path → the page-content fields its routes declare (in declaration order)."""
    out: dict[str, tuple[str, ...]] = {}
    for route in all_routes():
        fields = (*out.get(route.path, ()), *(route.untrusted or ()))
        out[route.path] = tuple(dict.fromkeys(fields))
    return out


def page_fields(path: str) -> tuple[str, ...]:
    """The fields the answers of the routes at ``path`` hold page content in (none for a
    path of no route)."""
    return _declared().get(path, ())


def mark_untrusted(path: str, result: Any) -> Any:
    """``result`` (an answer of the route at ``path``) with ``untrusted`` naming its
    page-content fields (as it is when it has none)."""
    return marked_untrusted(page_fields(path), result)
