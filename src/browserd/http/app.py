"""The HTTP façade: thin routes over the System's handles.

``create_app(system)`` builds a quart-trio app from the route table
(:mod:`browserd.http.routes`); :func:`wrap` puts the security Guard in front
of it. Domain errors become ``{"error", "code", "hint"}`` here; what a
handler's exception means (a deadline that expires inside it is 504 TIMEOUT)
is decided in :mod:`browserd.http.dispatch`, shared with the /ws and MCP lanes.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import orjson
from quart import Response, request
from quart_trio import QuartTrio

from .. import jsontext as decoding
from ..config import is_loopback_host
from ..errors import BadRequest, BrowserdError, MethodNotAllowed, NotFound
from ..principals import OWNER, Principal, principal_of
from ..system import System
from ..ui.gate import UiGate
from .dispatch import audit, audit_field, authorize, domain_error, redacted, run_handler
from .fields import PROFILE, PROFILE_HEADER, SESSION, SESSION_HEADER, with_scope_fields
from .guard import ASGIApp, Guard
from .routes import all_routes
from .routes.ui import register_ui
from .schema import Route, check_value, parse_args

__all__ = ["CLIENT_GONE_STATUS", "audit_field", "bind_request", "create_app", "error_response",
           "json_response", "request_principal", "with_scope_fields", "wrap"]

log = logging.getLogger(__name__)

CLIENT_GONE_STATUS = 499
"""The status counted in ``/metrics`` for a request whose client went away first."""


def json_response(data: Any, status: int = 200) -> Response:
    return Response(decoding.dumps(data, option=orjson.OPT_NON_STR_KEYS), status=status,
                    mimetype="application/json")


def error_response(exc: BrowserdError) -> Response:
    return json_response(exc.to_dict(), exc.status)


def create_app(system: System) -> QuartTrio:
    """The quart-trio app for ``system`` (no guard; see :func:`wrap`)."""
    app = QuartTrio("browserd")
    app.config["MAX_CONTENT_LENGTH"] = 1024 * 1024
    app.config["PROVIDE_AUTOMATIC_OPTIONS"] = False
    for route in all_routes():
        _register(app, system, with_scope_fields(route))
    register_ui(app, system)

    @app.errorhandler(404)
    async def not_found(_: Any) -> Response:
        return error_response(NotFound(f"no route {request.method} {request.path}",
                                       hint="see GET /openapi.json"))

    @app.errorhandler(405)
    async def not_allowed(_: Any) -> Response:
        return error_response(MethodNotAllowed(
            f"{request.method} is not allowed on {request.path}",
            hint="routes that change anything are POST (or DELETE) only"))

    @app.errorhandler(413)
    async def too_large(_: Any) -> Response:
        from ..errors import BodyTooLarge

        return error_response(BodyTooLarge("the request body is too large"))

    return app


def bind_request(system: System, route: Route, args: dict[str, Any]) -> System:
    """The System this request works on: its profile and session taken out of ``args``.

    The ``profile``/``session`` fields win over the X-Browserd-Profile and
    X-Browserd-Session headers (routes that take no session ignore that
    header). Raises ProfileNotFound, BadRequest.
    """
    if route.scope == "none":
        return system
    profile = args.pop("profile", None)
    if profile is None:
        profile = request.headers.get(PROFILE_HEADER) or None
        if profile is not None:
            profile = check_value(PROFILE, profile)
    session = args.pop("session", None)
    if route.scope == "session" and session is None:
        session = request.headers.get(SESSION_HEADER) or None
        if session is not None:
            session = check_value(SESSION, session)
    return system.bind(profile, session if route.scope == "session" else None)


def request_principal(scope: Any) -> Principal:
    """Who the Guard found this request to be (the person for an unguarded test app)."""
    return principal_of(scope) or OWNER


def _register(app: QuartTrio, service: System, route: Route) -> None:
    async def view(**path_args: str) -> Response:
        principal = request_principal(request.scope)
        system = service.acting_as(principal)
        who = principal.name if route.auth else "-"
        started = time.perf_counter()
        outcome = "ok"
        asked: Any = None
        status = 200
        args: dict[str, Any] = {}
        bound: System | None = None  # set once the request's profile and session are known
        try:
            body: Any = None
            if request.method != "GET":
                raw = await request.get_data()
                if raw:
                    try:
                        body = orjson.loads(raw)
                    except orjson.JSONDecodeError as exc:
                        raise BadRequest(f"the body is not valid JSON: {exc}") from None
            if path_args:
                if body is not None and not isinstance(body, dict):
                    raise BadRequest("the JSON body must be an object")
                body = {**(body or {}), **path_args}
            args = parse_args(route.fields, query=_single_valued(request.args), body=body)
            if route.auth:
                authorize(principal, route, args, what=f"{request.method} {route.path}")
            asked = args.get("profile")
            bound = bind_request(system, route, args)
            result = await run_handler(bound, route, args, path=request.path)
            if route.raw_response:
                response: Response = result
                status = response.status_code
                return response
            return json_response(result)
        except BaseException as exc:
            outcome, status = "cancelled", CLIENT_GONE_STATUS
            error = redacted(system, domain_error(exc, what=f"{request.method} {request.path}"))
            outcome, status = error.code, error.status
            return error_response(error)
        finally:
            system.metrics.observe_request(route.path, request.method, status,
                                           time.perf_counter() - started, code=outcome,
                                           name=route.name)
            if route.tag != "meta":
                audit(system, who=who, method=request.method, path=request.path, args=args,
                      outcome=outcome, started=started,
                      profile="-" if route.scope == "none" else (
                          bound.profile.name if bound is not None
                          else str(asked or request.headers.get(PROFILE_HEADER) or "-")),
                      session=(bound.session_id or "-") if bound is not None else "-")

    app.add_url_rule(route.path, endpoint=route.endpoint + "_" + "_".join(route.methods),
                     view_func=view, methods=list(route.methods))


def _single_valued(query: Any) -> dict[str, str]:
    """The query string as one value per field; a repeated field is a 400.

    (Taking the first of several values would let ``?format=html&format=evil``
    pass validation with a value the client did not mean as the only one.)
    """
    out: dict[str, str] = {}
    for key in query:
        values = query.getlist(key)
        if len(values) > 1:
            raise BadRequest(f"field {key!r} is given more than once", field=key,
                             hint="give each field once; lists are comma-separated")
        out[key] = values[0]
    return out


def wrap(app: QuartTrio | ASGIApp, system: System, token: str) -> Guard:
    """The app behind the one security Guard (auth, Host, Origin, body rules)."""
    asgi: Any = app
    settings = system.settings
    extra: list[str] = []
    if settings.allow_remote_control and not is_loopback_host(settings.control_host):
        host = settings.control_host
        extra.append(f"[{host}]:{settings.control_port}" if ":" in host
                     else f"{host}:{settings.control_port}")
    return Guard(asgi, token=token, control_port=settings.control_port, extra_hosts=extra,
                 session_gate=UiGate(system.ui.sessions), owner_token=system.owner_token,
                 tokens=system.tokens)
