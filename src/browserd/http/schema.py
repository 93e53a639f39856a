"""Route definitions: one table that both validates requests and describes them.

Each :class:`Route` lists its :class:`Field` s; :func:`parse_args` validates a
request's query/JSON against them (400 naming the field at fault), and
:func:`openapi` renders the same table as an OpenAPI 3.1 document, so the
spec cannot drift from what the app accepts. A route also declares its other
facts (:mod:`browserd.http.facts`): its name, MCP group and hints, the scope
it needs, its :class:`Answer` (the JSON Schema of its 200 body, or a raw
body's media types; every error status answers :data:`ERROR_SCHEMA`, the body
of :meth:`browserd.errors.BrowserdError.to_dict`), what blocks it and its CLI
command; the document carries them as ``x-browserd-*`` extensions of each
operation, so a client (the CLI) needs no table of its own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs

from ..errors import BadRequest
from .facts import Cli, Hints

__all__ = ["ERROR_SCHEMA", "UNSET", "Answer", "Field", "Handler", "Route", "check_value",
           "kinds_schema", "openapi", "parse_args"]

Handler = Callable[..., Awaitable[Any]]


class _Unset:
    """The value of an absent :attr:`Field.nullable` field (a singleton)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()
_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str, "integer": int, "number": (int, float), "boolean": bool,
    "array": list, "object": dict,
}


@attrs.frozen(kw_only=True)
class Field:
    name: str
    type: str  # "string" | "integer" | "number" | "boolean" | "array" | "object"
    required: bool = False
    default: Any = None
    enum: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = None
    items: str | None = None  # item type for arrays
    #: The JSON Schema of an array's items, when ``items`` says too little (the
    #: request schema only: :func:`check_value` checks ``items``). Not hashed (a dict).
    item_schema: dict[str, Any] | None = attrs.field(default=None, hash=False)
    description: str = ""
    #: An explicit JSON ``null`` is kept (as None) and absence reads as UNSET,
    #: so a handler can tell "clear this" from "leave it as it is".
    nullable: bool = False

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.enum is not None:
            out["enum"] = list(self.enum)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.max_length is not None:
            out["maxLength"] = self.max_length
        if self.item_schema is not None:
            out["items"] = self.item_schema
        elif self.items:
            out["items"] = {"type": self.items}
        if self.description:
            out["description"] = self.description
        if self.default is not None:
            out["default"] = self.default
        return out


@attrs.frozen(kw_only=True)
class Answer:
    """What a route answers with 200 (and whether it may answer 202 instead).

    ``schema``: the JSON Schema of a JSON answer (usually a ``$ref`` to a
    component); ``media_types``: a raw answer's content types (its ``schema``
    then describes an ``application/json`` one among them, if any); ``held``:
    a ``confirm`` rule can hold the call (202 CONFIRMATION_REQUIRED).
    """

    schema: dict[str, Any] = attrs.field(factory=dict, hash=False)
    media_types: tuple[str, ...] = ("application/json",)
    description: str = "OK"
    held: bool = False


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

    @property
    def endpoint(self) -> str:
        return self.path.strip("/").replace("/", "_").replace("<", "").replace(">", "") or "root"

    def more_needs(self, args: Mapping[str, Any]) -> tuple[str, ...]:
        """The scopes this call needs beyond :attr:`needs` (:attr:`extra_needs`)."""
        return () if self.extra_needs is None else self.extra_needs(args)


def _coerce_text(name: str, kind: str, raw: str) -> Any:
    """Convert one piece of query text to ``kind``, or raise BadRequest naming ``name``."""
    if kind == "boolean":
        low = raw.lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise BadRequest(f"field {name!r} must be a boolean", field=name)
    if kind in ("integer", "number"):
        try:
            return int(raw) if kind == "integer" else float(raw)
        except ValueError:
            raise BadRequest(f"field {name!r} must be a {kind}", field=name) from None
    return raw


def _coerce_query(field: Field, raw: str) -> Any:
    """Query strings are text: convert to the field's type (arrays: comma-separated)."""
    if field.type == "array":
        parts = [part for part in raw.split(",") if part]
        if field.items in ("boolean", "integer", "number"):
            return [_coerce_text(field.name, field.items, part) for part in parts]
        return parts
    return _coerce_text(field.name, field.type, raw)


def parse_args(
    fields: tuple[Field, ...], *, query: Mapping[str, str], body: Any
) -> dict[str, Any]:
    """Validate query args and a JSON body (body wins) against ``fields``.

    Unknown fields are refused (a typo should not silently do something
    else). Raises BadRequest naming the field.
    """
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise BadRequest("the JSON body must be an object")
    known = {f.name: f for f in fields}
    unknown = (set(body) | set(query)) - set(known)
    if unknown:
        raise BadRequest(
            f"unknown field(s): {', '.join(sorted(unknown))}",
            field=sorted(unknown)[0],
            hint="accepted: " + (", ".join(sorted(known)) or "no fields"),
        )
    out: dict[str, Any] = {}
    for field in fields:
        if field.name in body:
            value = body[field.name]
            if value is None and field.nullable:
                out[field.name] = None
                continue
        elif field.name in query:
            value = _coerce_query(field, query[field.name])
        elif field.required:
            raise BadRequest(f"field {field.name!r} is required", field=field.name)
        else:
            out[field.name] = UNSET if field.nullable else field.default
            continue
        out[field.name] = check_value(field, value)
    return out


def check_value(field: Field, value: Any) -> Any:
    value_any: Any = value
    expected = _TYPES[field.type]
    if value is None and not field.required:
        return field.default
    if isinstance(value, bool) and field.type in ("integer", "number"):
        raise BadRequest(f"field {field.name!r} must be a {field.type}", field=field.name)
    if field.type == "number" and isinstance(value, int):
        value = float(value)
    if not isinstance(value, expected):
        raise BadRequest(f"field {field.name!r} must be a {field.type}", field=field.name)
    if isinstance(value, float) and not math.isfinite(value):
        # NaN would pass every minimum/maximum comparison below.
        raise BadRequest(f"field {field.name!r} must be a finite number", field=field.name)
    if field.enum is not None and value not in field.enum:
        raise BadRequest(
            f"field {field.name!r} must be one of {', '.join(map(str, field.enum))}",
            field=field.name,
        )
    value = value_any
    if field.minimum is not None and value < field.minimum:
        raise BadRequest(f"field {field.name!r} must be ≥ {field.minimum}", field=field.name)
    if field.maximum is not None and value > field.maximum:
        raise BadRequest(f"field {field.name!r} must be ≤ {field.maximum}", field=field.name)
    if field.max_length is not None and len(value) > field.max_length:
        raise BadRequest(
            f"field {field.name!r} is longer than {field.max_length}", field=field.name
        )
    if field.items and isinstance(value, list):
        item_type = _TYPES[field.items]
        if not all((isinstance(v, item_type) and not isinstance(v, bool)) or
                   (field.items == "boolean" and isinstance(v, bool)) for v in value):
            raise BadRequest(f"field {field.name!r} must be a list of {field.items}s",
                             field=field.name)
    return value


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
_ERROR_CODES = ("400", "401", "403", "404", "405", "409", "410", "413", "415", "421", "422",
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
        if answer.held:
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
