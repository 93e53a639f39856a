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

from .. import __version__
from .. import jsontext as decoding
from ..config import is_loopback_host
from ..errors import BadRequest, BrowserdError, MethodNotAllowed, NotFound
from ..system import System
from ..token import token_id
from .dispatch import audit, audit_field, domain_error, run_handler
from .guard import ASGIApp, Guard
from .routes import all_routes
from .schema import Route, openapi, parse_args

__all__ = ["audit_field", "create_app", "error_response", "json_response", "wrap"]

log = logging.getLogger(__name__)


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
    routes = all_routes()
    spec = openapi(routes, version=__version__)

    async def openapi_handler(system: System, args: dict[str, Any]) -> dict[str, Any]:
        return spec

    routes.append(Route(path="/openapi.json", methods=("GET",), handler=openapi_handler,
                        summary="This API's OpenAPI document", tag="meta"))
    for route in routes:
        _register(app, system, route)

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


def _register(app: QuartTrio, system: System, route: Route) -> None:
    who = token_id(system.token) if route.auth else "-"

    async def view(**path_args: str) -> Response:
        started = time.perf_counter()
        outcome = "ok"
        args: dict[str, Any] = {}
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
            result = await run_handler(system, route, args, path=request.path)
            if route.raw_response:
                response: Response = result
                return response
            return json_response(result)
        except BaseException as exc:
            outcome = "cancelled"
            error = domain_error(exc, what=f"{request.method} {request.path}")
            outcome = error.code
            return error_response(error)
        finally:
            if route.tag != "meta":
                audit(system, who=who, method=request.method, path=request.path, args=args,
                      outcome=outcome, started=started)

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
    return Guard(asgi, token=token, control_port=settings.control_port, extra_hosts=extra)
