"""Running a route's handler: the one path every lane takes (HTTP, /ws, MCP).

:func:`run_handler` calls the handler and turns a deadline that expired inside
it into 504 TIMEOUT; :func:`domain_error` is the one policy for what else can
come out of a handler (a BrowserdError as itself, a stray TooSlowError as
TIMEOUT, any other Exception as 500 INTERNAL, logged; cancellation and other
BaseExceptions are re-raised); :func:`audit` writes the one audit-log line a
call leaves (these live in :mod:`browserd.http.calls`, which route handlers may
import too; they are re-exported here). :func:`call_operation` is the three
together for the lanes that get their params as a JSON object (``/ws``, MCP).
"""

from __future__ import annotations

import time
from typing import Any

from ..principals import Principal
from ..system import System
from .calls import audit, audit_field, authorize, domain_error, redacted, run_handler
from .catalog import Operation
from .fields import PROFILE, PROFILE_HEADER, SESSION, SESSION_HEADER
from .schema import check_value, parse_args

__all__ = ["audit", "audit_field", "authorize", "call_operation", "domain_error",
           "header_binding", "redacted", "run_handler"]


def header_binding(scope: Any) -> tuple[str | None, str | None]:
    """The (profile, session) an ASGI request names in its X-Browserd-Profile and
    X-Browserd-Session headers (None where absent; ``/ws`` and ``/mcp`` calls work
    there). Raises BadRequest for a value the ``profile``/``session`` fields refuse."""
    found: dict[str, str] = {}
    wanted = {PROFILE_HEADER.lower().encode(): PROFILE, SESSION_HEADER.lower().encode(): SESSION}
    for name, value in (scope or {}).get("headers", ()):
        field = wanted.get(bytes(name).lower())
        if field is not None and value:
            found[field.name] = check_value(field, bytes(value).decode("latin-1"))
    return found.get(PROFILE.name), found.get(SESSION.name)


async def call_operation(system: System, op: Operation, params: Any, *, lane: str,
                         who: str | None = None, principal: Principal | None = None,
                         profile: str | None = None, session: str | None = None) -> Any:
    """Validate ``params`` against the operation's fields and run its handler.

    Raises the BrowserdError the call is answered with (400 for bad params);
    cancellation (the caller went away) abandons the handler like a closed
    HTTP request does. ``lane`` ("WS", "MCP") is the method in the audit line,
    ``who`` the caller's name there (the principal's when not given);
    ``principal``: who calls (None: the service's own record, for tests).
    ``profile``/``session``: where it works unless the params name them
    (:meth:`System.bind`: None is the default profile, and the token's own
    session if it has just one); a route that takes no session ignores ``session``.
    """
    started = time.perf_counter()
    outcome = "ok"
    args: dict[str, Any] = {}
    if principal is not None:
        system = system.acting_as(principal)
    bound = system  # the named profile and session, else the defaults (the token's session)
    try:
        args = parse_args(op.route.fields, query={}, body=params)
        authorize(system.principal, op.route, args, what=f"{lane} {op.name}")
        if op.route.scope != "none":  # its profile (and session) fields win over the headers
            profile = args.pop(PROFILE.name, None) or profile
            session = (args.pop(SESSION.name, None) or session
                       if op.route.scope == "session" else None)
            bound = system.bind(profile, session)
        return await run_handler(bound, op.route, args, path=op.route.path)
    except BaseException as exc:
        outcome = "cancelled"
        error = redacted(system, domain_error(exc, what=op.route.path))  # re-raises cancel
        outcome = error.code
        raise error from None
    finally:
        audit(system, who=who or system.principal.name, method=lane, path=op.route.path,
              args=args, outcome=outcome, started=started,
              profile="-" if op.route.scope == "none" else bound.profile.name,
              session=bound.session_id or "-")
