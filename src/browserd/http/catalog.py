"""The operations of the route table, for the lanes that are not plain HTTP (/ws, MCP).

Every :class:`Operation` is one :class:`~browserd.http.schema.Route` under a
name: the route's path without its leading slash (``eval``, ``tabs/open``),
or, where several routes share a path, the path plus a verb (``cookies/get``,
``cookies/set``, ``cookies/delete`` for GET, POST and DELETE). The name is the
``/ws`` method; the MCP tool is the same name with ``_`` for ``/``
(``tabs_open``). Descriptions and JSON schemas come from the route's summary
and :class:`~browserd.http.schema.Field` s, so nothing is listed twice: a new
route is a new operation. Like an HTTP request, a call takes the ``profile``
(and ``session``) fields its route's scope takes; they win over the
connection's headers.

Not offered: routes without the token (``/healthz``), routes whose answer is
not JSON (``/media/<name>``, ``/downloads/<id>``: a capture or a download
answers the path to fetch over HTTP), routes with path parameters (their
twins take the field: ``DELETE /tabs/<id>`` is ``tabs/close``) and ``/``
(``status``).

Groups (MCP ``--caps``): :data:`CORE` is what an agent needs to browse (fewer
than 12 tools); ``files`` (PDF, downloads), ``emulation`` (``/emulate``), and
otherwise the route's tag: ``page`` (tabs, page and input work beyond core),
``state``, ``service``, and any tag a later route brings (``network``,
``profiles``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from ..principals import OWNER_SCOPE
from .fields import with_scope_fields
from .routes import all_routes
from .schema import Route

__all__ = ["CORE", "GROUPS", "Operation", "catalog", "groups_table", "select"]

#: The core tools (``--caps core``, the default; at most 20): enough to finish a form —
#: tabs, navigate and back, read (snapshot, find, console), act (click, type, press,
#: hover, select, upload, drag, dialog), wait, look (screenshot), evaluate, hand over.
CORE = frozenset({"tabs", "tabs/open", "tabs/close", "navigate", "back", "snapshot", "find",
                  "click", "type", "press", "hover", "select", "upload", "drag", "wait",
                  "dialog", "screenshot", "console", "eval", "handoff/set"})
#: Groups by path where the tag says too little.
_PATH_GROUPS = {"/pdf": "files", "/downloads": "files", "/emulate": "emulation"}
_TAG_GROUPS = {"tabs": "page", "page": "page", "input": "page", "sessions": "profiles",
               "ops": "service", "tokens": "service"}
#: Every group name known today (a route with a new tag brings its own).
GROUPS = ("core", "page", "files", "state", "network", "emulation", "profiles", "service")
_VERBS = {"GET": "get", "POST": "set", "DELETE": "delete"}


@attrs.frozen(kw_only=True)
class Operation:
    """One route as a named call."""

    name: str
    route: Route
    http_method: str
    group: str

    @property
    def tool_name(self) -> str:
        return self.name.replace("/", "_")

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


def _offered(route: Route) -> bool:
    return (route.auth and not route.raw_response and not route.path_params
            and route.needs != OWNER_SCOPE  # the person's routes are never an agent's call
            and route.path not in ("/", "/openapi.json"))


def catalog(routes: Iterable[Route] | None = None) -> dict[str, Operation]:
    """Name → operation for ``routes`` (default: the whole route table), in table order."""
    offered = [r for r in (all_routes() if routes is None else routes) if _offered(r)]
    per_path: dict[str, int] = {}
    for route in offered:
        per_path[route.path] = per_path.get(route.path, 0) + 1
    out: dict[str, Operation] = {}
    for route in offered:
        http_method = "POST" if "POST" in route.methods else route.methods[0]
        name = route.path.strip("/")
        if per_path[route.path] > 1:
            name += "/" + _VERBS.get(http_method, http_method.lower())
        if name in CORE:
            group = "core"
        elif route.path in _PATH_GROUPS:
            group = _PATH_GROUPS[route.path]
        else:
            group = _TAG_GROUPS.get(route.tag, route.tag)
        if name in out:
            raise ValueError(f"two routes are both called {name!r}")
        out[name] = Operation(name=name, route=with_scope_fields(route),
                              http_method=http_method, group=group)
    return out


def select(operations: dict[str, Operation], caps: Iterable[str]) -> list[Operation]:
    """The operations of the groups ``caps`` (``all``: every one); ValueError for unknowns."""
    wanted = {c.strip() for c in caps if c.strip()}
    known = set(GROUPS) | {op.group for op in operations.values()} | {"all"}
    unknown = wanted - known
    if unknown:
        raise ValueError(f"unknown capability group(s): {', '.join(sorted(unknown))} "
                         f"(known: {', '.join(sorted(known))})")
    return [op for op in operations.values() if "all" in wanted or op.group in wanted]


def groups_table(operations: dict[str, Operation] | None = None) -> str:
    """The MCP tool groups as a Markdown table (docs/mcp.md holds it; a test checks it)."""
    ops = catalog() if operations is None else operations
    rows = ["| group | tools |", "|---|---|"]
    for group in GROUPS:
        names = [f"`{op.tool_name}`" for op in ops.values() if op.group == group]
        if names:
            rows.append(f"| `{group}` | {', '.join(names)} |")
    rows.append("| `all` | every tool |")
    return "\n".join(rows)
