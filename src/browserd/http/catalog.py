"""The operations of the route table, for the lanes that are not plain HTTP (/ws, MCP).

Every :class:`Operation` is one :class:`~browserd.http.schema.Route` under the
name the route declares (``tabs_open``, ``cookies_get``): the ``/ws`` method
and the MCP tool alike, in its declared MCP group. Descriptions and JSON
schemas come from the route's summary and :class:`~browserd.http.schema.Field`
s, so nothing is listed twice: a new route is a new operation. Like an HTTP
request, a call takes the ``profile`` (and ``session``) fields its route's
scope takes; they win over the connection's headers.

Not offered: routes declared in no group (:data:`~browserd.http.facts.NO_TOOL`):
the person's, those without the token (``/healthz``), those whose answer is
not JSON (``/media/<name>``: a capture answers the path to fetch over HTTP),
those with path parameters (their twins take the field: ``DELETE
/tabs/<id>`` is ``tabs_close``) and ``/`` (``status``).

The ``/ws`` methods used to be spelled with ``/`` for ``_`` (``tabs/open``,
``cookies/get``): :func:`lookup` still takes those spellings, so a client
written then keeps working.
Groups (MCP ``--caps``) are :data:`~browserd.http.facts.GROUPS`, ``core``
(fewer than 20 tools: enough to finish a form) first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .facts import GROUPS, NO_TOOL
from .fields import with_scope_fields
from .routes import all_routes
from .schema import Route

__all__ = ["GROUPS", "Operation", "catalog", "lookup", "select"]


@attrs.frozen(kw_only=True)
class Operation:
    """One route as a named call."""

    route: Route

    @property
    def name(self) -> str:
        """The route's name: the ``/ws`` method and the MCP tool."""
        return self.route.name

    @property
    def group(self) -> str:
        return self.route.group

    @property
    def http_method(self) -> str:
        """The HTTP method the call is made as (POST when the route takes it)."""
        return "POST" if "POST" in self.route.methods else self.route.methods[0]

    @property
    def description(self) -> str:
        return self.route.summary

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the params (the route's fields; no others accepted).

        A nullable field (``null`` clears a setting) also takes null.
        """
        fields = self.route.fields
        properties = {}
        for field in fields:
            schema = field.schema()
            if field.nullable:
                schema["type"] = [field.type, "null"]
            properties[field.name] = schema
        return {"type": "object", "properties": properties,
                "required": [f.name for f in fields if f.required],
                "additionalProperties": False}


def catalog(routes: Iterable[Route] | None = None) -> dict[str, Operation]:
    """Name → operation for ``routes`` (default: the whole route table), in table order."""
    return {route.name: Operation(route=with_scope_fields(route))
            for route in (all_routes() if routes is None else routes)
            if route.group != NO_TOOL}


def lookup(operations: Mapping[str, Operation], name: str) -> Operation | None:
    """The operation called ``name``, or by its former spelling (``tabs/open``); None."""
    return operations.get(name) or operations.get(name.replace("/", "_"))


def select(operations: dict[str, Operation], caps: Iterable[str]) -> list[Operation]:
    """The operations of the groups ``caps`` (``all``: every one); ValueError for unknowns."""
    wanted = {c.strip() for c in caps if c.strip()}
    known = {*GROUPS, "all"}
    unknown = wanted - known
    if unknown:
        raise ValueError(f"unknown capability group(s): {', '.join(sorted(unknown))} "
                         f"(known: {', '.join(sorted(known))})")
    return [op for op in operations.values() if "all" in wanted or op.group in wanted]
