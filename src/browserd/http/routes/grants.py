"""What each route needs of the caller: the one table of the API's authority.

Every route names the token scope it needs (:attr:`~browserd.http.schema.Route.needs`):
an agent scope, ``owner`` (the person's alone: offering tabs, answering tab
requests, the ops page's login) or ``any`` (every principal; the handler
decides, as ``/tokens`` does). The table is here, in one place, so a review of
who may do what reads one page; :func:`with_grants` puts it on the routes and
refuses a route the table does not name (a new route must be placed
deliberately, never by a default).

Some calls need more than their route's scope because of what they carry;
:func:`extra_needs` names those (an ``/act`` batch with an upload step).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from ...principals import OWNER_SCOPE, PUBLIC_SCOPE
from ..schema import Route

__all__ = ["GRANTS", "extra_needs", "with_grants"]

#: (path, method) → scope. Methods: a route's methods are looked up one by one.
GRANTS: dict[tuple[str, str], str] = {
    ("/", "GET"): "read", ("/status", "GET"): "read",
    ("/start", "POST"): "profiles", ("/stop", "POST"): "profiles",
    ("/profiles", "GET"): "profiles", ("/profiles", "POST"): "profiles",
    ("/profiles/<name>", "DELETE"): "profiles",
    ("/sessions", "GET"): "profiles", ("/sessions", "POST"): "profiles",
    ("/sessions/<sessionId>", "DELETE"): "profiles",
    ("/tabs", "GET"): "read", ("/tabs/open", "POST"): "act", ("/tabs/focus", "POST"): "act",
    ("/tabs/close", "POST"): "act", ("/tabs/<targetId>", "DELETE"): "act",
    ("/tabs/release", "POST"): "act", ("/tabs/request", "POST"): "act",
    ("/tabs/offerable", "GET"): OWNER_SCOPE, ("/tabs/offer", "POST"): OWNER_SCOPE,
    ("/tabs/requests", "GET"): OWNER_SCOPE, ("/tabs/requests/<requestId>", "POST"): OWNER_SCOPE,
    ("/tabs/requests/<requestId>", "DELETE"): "act",
    ("/navigate", "POST"): "act", ("/eval", "POST"): "eval",
    # Reads served for GET and POST (a body for long parameters) are reads either way.
    **{(path, method): "read" for path in ("/snapshot", "/find", "/query", "/dom", "/console",
                                           "/screenshot", "/network")
       for method in ("GET", "POST")},
    ("/back", "POST"): "act", ("/forward", "POST"): "act", ("/reload", "POST"): "act",
    ("/scroll", "POST"): "act", ("/click", "POST"): "act", ("/type", "POST"): "act",
    ("/press", "POST"): "act", ("/hover", "POST"): "act", ("/select", "POST"): "act",
    ("/wait", "POST"): "act", ("/dialog", "POST"): "act", ("/upload", "POST"): "files",
    ("/drag", "POST"): "act", ("/mouse", "POST"): "act", ("/keyboard", "POST"): "act",
    ("/act", "POST"): "act",
    ("/pdf", "POST"): "read", ("/media/<name>", "GET"): "read",
    ("/cookies", "GET"): "state", ("/cookies", "POST"): "state", ("/cookies", "DELETE"): "state",
    ("/storage", "GET"): "state", ("/storage", "POST"): "state",
    ("/storage", "DELETE"): "state", ("/state", "GET"): "state", ("/state", "POST"): "state",
    ("/emulate", "GET"): "read", ("/emulate", "POST"): "act", ("/emulate", "DELETE"): "act",
    ("/downloads", "GET"): "read", ("/downloads/<id>", "GET"): "files",
    ("/network/<id>", "GET"): "network",
    ("/network/block", "POST"): "network", ("/network/headers", "POST"): "network",
    ("/network/har", "POST"): "network",
    ("/handoff", "POST"): "act", ("/handoff", "DELETE"): "act", ("/metrics", "GET"): "read",
    ("/ui-codes", "POST"): OWNER_SCOPE,
    ("/secrets", "GET"): OWNER_SCOPE, ("/secrets/<name>", "PUT"): OWNER_SCOPE,
    ("/secrets/<name>", "DELETE"): OWNER_SCOPE, ("/login", "POST"): "act",
    ("/confirmations", "GET"): OWNER_SCOPE, ("/confirmations/<id>", "POST"): OWNER_SCOPE,
    ("/tokens", "GET"): PUBLIC_SCOPE, ("/tokens", "POST"): PUBLIC_SCOPE,
    ("/tokens/<name>", "DELETE"): PUBLIC_SCOPE,
    # Session records: an agent reads and replays its own (read/act, checked by the
    # handler); the person reads and deletes all.
    ("/record/start", "POST"): "act", ("/record/stop", "POST"): "act",
    ("/records", "GET"): PUBLIC_SCOPE, ("/records/<id>", "GET"): PUBLIC_SCOPE,
    ("/records/<id>/shots/<name>", "GET"): PUBLIC_SCOPE,
    ("/records/<id>/video", "GET"): PUBLIC_SCOPE,
    ("/records/<id>", "DELETE"): PUBLIC_SCOPE,
    ("/records/<id>/replay", "POST"): "act",
}


def _scope_of(route: Route) -> str:
    if not route.auth:
        return "none"
    missing = [m for m in route.methods if (route.path, m) not in GRANTS]
    if missing:  # every method of every route is placed deliberately, never by default
        raise ValueError(f"route {'/'.join(missing)} {route.path} is not in the grants "
                         "table (browserd.http.routes.grants)")
    scopes = {GRANTS[(route.path, m)] for m in route.methods}
    if len(scopes) != 1:
        raise ValueError(f"route {route.path} needs different scopes per method: {scopes}")
    return scopes.pop()


def with_grants(routes: Iterable[Route]) -> list[Route]:
    """``routes`` with :attr:`Route.needs` set from :data:`GRANTS`; ValueError for a missing one."""
    return [attrs.evolve(route, needs=_scope_of(route)) for route in routes]


def extra_needs(route: Route, args: dict[str, Any]) -> tuple[str, ...]:
    """Scopes a call needs beyond its route's, because of what its arguments carry
    (an ``/act`` batch with an upload step needs ``files`` as ``/upload`` does; typing
    a vault secret needs ``secrets``)."""
    if route.path == "/act":
        actions = [a for a in args.get("actions") or () if isinstance(a, dict)]
        extra = []
        if any(a.get("kind") == "upload" for a in actions):
            extra.append("files")
        if any(a.get("secret") is not None for a in actions):
            extra.append("secrets")
        return tuple(extra)
    if route.path == "/type" and args.get("secret") is not None:
        return ("secrets",)
    if route.path == "/login":
        return ("secrets",)
    return ()
