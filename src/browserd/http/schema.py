"""Route definitions: one table that both validates requests and describes them.

Each :class:`Route` lists its :class:`Field` s; :func:`parse_args` validates a
request's query/JSON against them (400 naming the field at fault; both are
:mod:`browserd.argfields`', which the action kinds share), and
:func:`openapi` renders the same table as an OpenAPI 3.1 document, so the
spec cannot drift from what the app accepts. A route also declares its other
facts (:mod:`browserd.http.facts`): its name, MCP group and hints, the scope
it needs, its :class:`Answer` (the JSON Schema of its 200 body, or a raw
body's media types; every error status answers :data:`ERROR_SCHEMA`, the body
of :meth:`browserd.errors.BrowserdError.to_dict`), what blocks it, its CLI
command, how a ``confirm`` rule can hold it (those it can hold also answer
202), which fields of its answer are the page's and how an agent reads it;
the document carries them as ``x-browserd-*`` extensions of each operation,
so a client (the CLI) needs no table of its own.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs

from ..argfields import UNSET, Field, check_value, parse_args
from .facts import Cli, Confirm, Hints, Render, confirm_json, held, marked_untrusted

__all__ = ["ERROR_SCHEMA", "UNSET", "Answer", "Field", "Handler", "Route", "check_value",
           "kinds_schema", "openapi", "parse_args"]

Handler = Callable[..., Awaitable[Any]]


@attrs.frozen(kw_only=True)
class Answer:
    """What a route answers with 200.

    ``schema``: the JSON Schema of a JSON answer (usually a ``$ref`` to a
    component); ``media_types``: a raw answer's content types (its ``schema``
    then describes an ``application/json`` one among them, if any).
    """

    schema: dict[str, Any] = attrs.field(factory=dict, hash=False)
    media_types: tuple[str, ...] = ("application/json",)
    description: str = "OK"


@attrs.frozen(kw_only=True)
class Route:
    """One route of the API and every fact about it (:mod:`browserd.http.facts`; the
    facts default to "not declared", which :func:`browserd.http.facts.check_table`
    refuses for the route table)."""

    path: str
    methods: tuple[str, ...]
    handler: Handler
    fields: tuple[Field, ...] = ()
    summary: str = ""
    tag: str = "browser"
    auth: bool = True
    raw_response: bool = False  # handler returns a Response, not JSON
    path_params: tuple[str, ...] = ()
    #: What a request of this route is bound to (:meth:`browserd.system.System.bind`):
    #: "session" — a profile and maybe a session (every browser route); "profile" —
    #: a profile only; "none" — the service as a whole.
    scope: str = "session"
    #: The one name of the route: its ``/ws`` method, its MCP tool, its ``/metrics``
    #: label, its CLI command unless :attr:`cli` names another (snake_case: ``tabs_open``).
    name: str = ""
    #: Its MCP tool group (:data:`browserd.http.facts.GROUPS`), or ``none``: no tool.
    group: str = ""
    #: What a call may do (the MCP annotations).
    hints: Hints | None = None
    #: The token scope a call of this route needs (:mod:`browserd.principals.scopes`):
    #: an agent scope (``read``, ``act`` …), ``owner`` (the person's alone), ``any``
    #: (every principal; the handler decides) or ``none`` (no token at all).
    needs: str = ""
    #: Scopes a call needs beyond :attr:`needs` because of what its arguments carry
    #: (typing a vault secret needs ``secrets``); None: none.
    extra_needs: Callable[[Mapping[str, Any]], tuple[str, ...]] | None = None
    #: What the route answers (``/openapi.json``'s 200). Not hashed.
    answer: Answer | None = attrs.field(default=None, hash=False)
    #: What refuses the route's work on a tab: ``dialog`` (409 DIALOG_OPEN), ``handoff``
    #: (409 HANDOFF_ACTIVE); enforced for every lane (:func:`browserd.http.tabwork.on_tab`).
    blocked_by: frozenset[str] | None = None
    #: Its ``browserd`` command.
    cli: Cli | None = None
    #: The MCP tool's description where the summary speaks HTTP or says too little.
    tool_text: str = ""
    #: MCP property descriptions in tool terms, where the field's own words are HTTP's
    #: or missing (field name → text). Not hashed.
    tool_fields: Mapping[str, str] = attrs.field(factory=dict, hash=False)
    #: How a ``confirm`` rule can hold a call (:data:`browserd.http.facts.Confirm`; every
    #: route an agent may call that can change a web page declares it, ``NOT_HELD`` too).
    confirm: Confirm | None = None
    #: The fields of its JSON answer that hold page content (titles, URLs, text, values,
    #: request data): every answer names those it has as ``untrusted`` (every JSON route
    #: that reaches web pages declares them, ``()`` too).
    untrusted: tuple[str, ...] | None = None
    #: How an agent reads its answer (every MCP tool declares it).
    render: Render | None = None

    @property
    def endpoint(self) -> str:
        return self.path.strip("/").replace("/", "_").replace("<", "").replace(">", "") or "root"

    def more_needs(self, args: Mapping[str, Any]) -> tuple[str, ...]:
        """The scopes this call needs beyond :attr:`needs` (:attr:`extra_needs`)."""
        return () if self.extra_needs is None else self.extra_needs(args)

    def mark_untrusted(self, result: Any) -> Any:
        """``result`` with ``untrusted`` naming those of its fields that :attr:`untrusted`
        declares page content (as it is when it has none)."""
        return marked_untrusted(self.untrusted, result)


#: The body of every error answer (:meth:`browserd.errors.BrowserdError.to_dict`): the
#: message, the stable code, maybe a hint, and the error's own details beside them.
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error", "code"],
    "properties": {
        "error": {"type": "string", "description": "what went wrong, for a person"},
        "code": {"type": "string", "description": "the stable code (BAD_REQUEST, TIMEOUT, …)"},
        "hint": {"type": "string", "description": "what to do next (absent: nothing to add)"},
        "field": {"type": "string", "description": "400: the field at fault"},
        "index": {"type": "integer", "description": "/act validation: the action at fault"},
        "waitedMs": {"type": "number"},
        "uncertain": {"type": "boolean",
                      "description": "a timed-out input had reached the page"},
        "terminated": {"type": "boolean",
                       "description": "a hung page script was stopped to recover the tab"},
    },
    "additionalProperties": True,
}
_ERROR_CODES = ("400", "401", "403", "404", "405", "409", "410", "413", "415", "421", "422", "424",
                "429", "500", "502", "503", "504", "507")
_ERROR_REF = {"$ref": "#/components/schemas/Error"}


# Quart's ``<name>`` / ``<converter:name>`` → OpenAPI's ``{name}``.
_PATH_PARAM_RE = re.compile(r"<(?:[^<>:]+:)?([^<>:]+)>")


def _query_param(field: Field) -> dict[str, Any]:
    param: dict[str, Any] = {"name": field.name, "in": "query", "required": field.required,
                             "schema": field.schema()}
    if field.type == "array":
        # parse_args reads one comma-separated value (?a=x,y), not ?a=x&a=y.
        param |= {"style": "form", "explode": False}
    return param


def _body_property(field: Field) -> dict[str, Any]:
    """A JSON body property; an optional one may also be null (parse_args reads it as unset)."""
    out = field.schema()
    if not field.required:
        out["type"] = [field.type, "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    return out


def kinds_schema(kinds: Mapping[str, tuple[Field, ...]]) -> dict[str, Any]:
    """The JSON Schema of one ``{kind, ...that kind's fields}`` object (an ``/act`` action)."""
    return {"oneOf": [{
        "type": "object", "title": kind,
        "properties": {"kind": {"const": kind}, **{f.name: _body_property(f) for f in fields}},
        "required": ["kind", *(f.name for f in fields if f.required)],
        "additionalProperties": False,
    } for kind, fields in kinds.items()]}


def _responses(route: Route) -> dict[str, Any]:
    answer = route.answer
    if answer is None:
        content: dict[str, Any] = ({"*/*": {"schema": {}}} if route.raw_response
                                   else {"application/json": {"schema": {"type": "object"}}})
        out: dict[str, Any] = {"200": {"description": "OK", "content": content}}
    else:
        out = {"200": {"description": answer.description, "content": {
            media: {"schema": answer.schema if media == "application/json" else {}}
            for media in answer.media_types}}}
    if held(route.confirm):
        out["202"] = {"description": "CONFIRMATION_REQUIRED: held for the person "
                                     "(POST /wait {confirmation} runs it once approved)",
                      "content": {"application/json": {"schema": _ERROR_REF}}}
    for code in _ERROR_CODES:
        out[code] = {"description": "error", "content": {"application/json": {
            "schema": _ERROR_REF}}}
    return out


def _extensions(route: Route) -> dict[str, Any]:
    """The route's own facts as ``x-browserd-*`` extensions of its operations."""
    out: dict[str, Any] = {"x-browserd-name": route.name, "x-browserd-group": route.group,
                           "x-browserd-scope": route.needs}
    if route.hints is not None:
        out["x-browserd-hints"] = route.hints.to_json()
    if route.blocked_by is not None:
        out["x-browserd-blocked-by"] = sorted(route.blocked_by)
    if route.cli is not None:
        out["x-browserd-cli"] = route.cli.to_json()
    confirm = confirm_json(route.confirm)
    if confirm is not None:
        out["x-browserd-confirm"] = confirm
    if route.untrusted:
        out["x-browserd-untrusted"] = list(route.untrusted)
    if route.render is not None:
        out["x-browserd-render"] = route.render.value
    return {key: value for key, value in out.items() if value != ""}


def openapi(routes: list[Route], *, version: str,
            schemas: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The OpenAPI 3.1 document for ``routes``; ``schemas``: the components their
    answers refer to (``Error`` is always there)."""
    paths: dict[str, Any] = {}
    for route in routes:
        oa_path = _PATH_PARAM_RE.sub(r"{\1}", route.path)
        item = paths.setdefault(oa_path, {})
        for method in route.methods:
            op: dict[str, Any] = {
                "operationId": f"{method.lower()}_{route.endpoint}",
                "summary": route.summary,
                "tags": [route.tag],
                "responses": _responses(route),
            }
            if not route.auth:
                op["security"] = []
            op.update(_extensions(route))
            params = [{"name": name, "in": "path", "required": True,
                       "schema": {"type": "string", "minLength": 1}} for name in route.path_params]
            fields = [f for f in route.fields if f.name not in route.path_params]
            if method == "GET":
                params += [_query_param(f) for f in fields if f.type not in ("object",)]
            elif fields:
                op["requestBody"] = {
                    "required": any(f.required for f in fields),
                    "content": {"application/json": {"schema": {
                        "type": "object",
                        "properties": {f.name: _body_property(f) for f in fields},
                        "required": [f.name for f in fields if f.required],
                        "additionalProperties": False,
                    }}},
                }
            if params:
                op["parameters"] = params
            item[method.lower()] = op
    return {
        "openapi": "3.1.0",
        "info": {"title": "browserd", "version": version},
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
                       "schemas": {"Error": ERROR_SCHEMA, **(schemas or {})}},
        "security": [{"bearer": []}],
        "paths": paths,
    }
