"""Every API route as a ``browserd`` subcommand, generated from the route table.

The table is read from the running service's ``/openapi.json`` (rendered
from the route table itself, so it is exactly what that service accepts;
one loopback request) or, when no service answers, from this installation's
:func:`browserd.http.routes.all_routes` (slower to import; needed only for
``--help`` without a service, or to report that none answers). Both carry
each route's own CLI facts (:class:`browserd.http.facts.Cli`: in the
document as the ``x-browserd-cli`` extension), so nothing here names a
route: the command is the route's name with ``-`` for ``_`` (``tabs_request``
→ ``tabs-request``) unless the route names another (``tabs_open`` →
``open``); a route another command covers (``cookies`` for the three
``/cookies`` routes, hand-written) has none of its own but is listed with
that command (:attr:`RouteCommand.covered_by`: route words in hints become
it); every field becomes an option (``timeoutMs`` → ``--timeout-ms``,
``targetId`` → ``--target``; booleans are ``--flag`` / ``--no-flag``;
arrays take several values; ``object`` fields and arrays of objects take
JSON, ``-`` reads it from stdin); the route's positionals are arguments
(``browserd click e12``), its words are placed by a function of
:data:`browserd.cli.args.PLACERS` (``browserd find button Continue``,
``browserd select e5 Green``), a path parameter it declares ``prefixed``
takes a unique prefix (``browserd download 3f2a``) and its negations add
flags (``start --headed``). A route added to the table is a command at once.

The request is the route's POST (JSON body) when it has one, else its GET
with the fields as query parameters; path parameters (``{name}``) are filled
from the arguments. A raw (non-JSON) answer, e.g. ``media``, is written to
``--out`` or to stdout as bytes.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

import attrs
import orjson

from ..errors import BadRequest, NotFound
from ..http.facts import Cli, Prefix, cli_command
from .args import PLACERS

__all__ = ["GLOBAL_FIELDS", "MIN_PREFIX", "FieldSpec", "RouteCommand", "add_route_commands",
           "commands_from_openapi", "commands_from_routes", "resolve_prefix",
           "run_route_command"]

GLOBAL_FIELDS = frozenset({"profile", "session"})
"""Route fields every command takes as a global option instead."""
MIN_PREFIX = 4
OPTION_NAMES = {"targetId": "target"}
"""Option names that differ from the field's kebab-case spelling."""
RESERVED = frozenset({"json", "control-url", "help", "out"})
"""Option names the CLI itself uses (a field of that name is given as ``--field-…``)."""


@attrs.frozen(kw_only=True)
class FieldSpec:
    """One field of a route as the CLI needs it (from a ``Field`` or an OpenAPI schema)."""

    name: str
    type: str
    required: bool = False
    enum: tuple[Any, ...] | None = None
    items: str | None = None
    description: str = ""


@attrs.frozen(kw_only=True)
class RouteCommand:
    """One route as the CLI sees it: its command (``name``; for a route another command
    covers, that command), the route it calls (``path`` in OpenAPI form) and its fields."""

    name: str
    path: str
    method: str
    summary: str
    fields: tuple[FieldSpec, ...]
    cli: Cli
    raw: bool

    @property
    def positional(self) -> tuple[str, ...]:
        return self.cli.positional

    @property
    def covered_by(self) -> str | None:
        """The command that covers this route (None: this route's own command)."""
        return self.cli.covered_by

    def dest(self, field_name: str) -> str:
        return "f_" + field_name


def _kebab(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", name).lower()


def _metavar(name: str) -> str:
    return _kebab(name).upper().replace("-", "_")


def _command(route_name: str, cli: Cli, path: str, method: str, summary: str,
             fields: tuple[FieldSpec, ...], raw: bool) -> RouteCommand:
    # profile and session are the global --profile/--session (sent as headers).
    fields = tuple(f for f in fields if f.name not in GLOBAL_FIELDS)
    return RouteCommand(name=cli_command(route_name, cli), path=path, method=method,
                        summary=summary, fields=fields, cli=cli, raw=raw)


def _method(methods: Sequence[str]) -> str:
    upper = [m.upper() for m in methods]
    return "POST" if "POST" in upper else upper[0]


def commands_from_routes() -> list[RouteCommand]:
    """Every route of this installation's own table (imports the server's modules)."""
    from ..http.routes import all_routes

    out = []
    for route in all_routes():
        assert route.cli is not None  # (the table refuses a route without it)
        path = re.sub(r"<(?:[^<>:]+:)?([^<>:]+)>", r"{\1}", route.path)
        fields = tuple(FieldSpec(name=f.name, type=f.type, required=f.required, enum=f.enum,
                                 items=f.items, description=f.description)
                       for f in route.fields)
        out.append(_command(route.name, route.cli, path, _method(route.methods),
                            route.summary, fields, route.raw_response))
    return out


def _spec(name: str, schema: dict[str, Any], required: bool) -> FieldSpec:
    kind = schema.get("type", "string")
    if isinstance(kind, list):  # ["string", "null"]: an optional JSON body field
        kind = next((k for k in kind if k != "null"), "string")
    enum = schema.get("enum")
    item = schema.get("items") or {}
    # Items of one of several shapes (``oneOf`` objects: the act steps) take JSON too.
    items = item.get("type") or next(
        (str(alt.get("type")) for alt in item.get("oneOf") or item.get("anyOf") or []
         if isinstance(alt, dict) and alt.get("type")), None)
    return FieldSpec(name=name, type=str(kind), required=required,
                     enum=tuple(v for v in enum if v is not None) if enum else None,
                     items=str(items) if items else None,
                     description=str(schema.get("description", "")))


def commands_from_openapi(doc: dict[str, Any]) -> list[RouteCommand]:
    """Every route of a service's ``/openapi.json`` (the same table, rendered).

    Each operation names its route (``x-browserd-name``) and its CLI facts
    (``x-browserd-cli``); the operations of one path that name one route are
    that route served under several methods (``GET``/``POST /snapshot``): one
    command, POST preferred. A document without the extensions (a service
    older than them) has no commands: the caller uses its own table.
    """
    out = []
    for path, item in (doc.get("paths") or {}).items():
        if not isinstance(item, dict):
            continue
        routes: dict[str, list[str]] = {}  # route name -> its methods, in document order
        for method, op in item.items():
            if isinstance(op, dict) and isinstance(op.get("x-browserd-name"), str) \
                    and isinstance(op.get("x-browserd-cli"), dict):
                routes.setdefault(op["x-browserd-name"], []).append(method)
        for route_name, methods in routes.items():
            method = _method(methods)
            op = item[method.lower()]
            fields = [_spec(p["name"], p.get("schema") or {}, bool(p.get("required")))
                      for p in op.get("parameters", [])]
            body = (((op.get("requestBody") or {}).get("content") or {})
                    .get("application/json") or {}).get("schema") or {}
            needed = set(body.get("required", []))
            fields += [_spec(name, schema, name in needed)
                       for name, schema in (body.get("properties") or {}).items()]
            answer = ((op.get("responses") or {}).get("200") or {}).get("content") or {}
            # Raw: a file in its own type (JSON among them, a HAR file, is a file too).
            out.append(_command(route_name, Cli.from_json(op["x-browserd-cli"]), path, method,
                                str(op.get("summary", "")), tuple(fields),
                                raw=set(answer) != {"application/json"}))
    return out


def _json_arg(text: str) -> Any:
    data = sys.stdin.read() if text == "-" else text
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None


_REF = re.compile(r"e\d+")


def _within_arg(text: str) -> Any:
    """A locator's container as a person types it: a ref (``e12``), a role and a name
    (``row Bob Smith``: the role, then the rest as a part of the name), a role alone, or
    the JSON object itself (``{"selector": "#cart"}``)."""
    given = text.strip()
    if given.startswith("{") or given == "-":
        return _json_arg(text)
    if _REF.fullmatch(given):
        return {"ref": given}
    role, _, name = given.partition(" ")
    if not role:
        raise argparse.ArgumentTypeError("give a ref (e12), a role and a name (row Bob) "
                                         "or a JSON object")
    return {"role": role, **({"name": name.strip()} if name.strip() else {})}


#: Object fields a person types in a shorter form than JSON.
_OBJECT_ARGS: dict[str, Callable[[str], Any]] = {"within": _within_arg}
_SCALARS: dict[str, Callable[[str], Any]] = {"string": str, "integer": int, "number": float}


def _add_field(parser: argparse.ArgumentParser, cmd: RouteCommand, field: FieldSpec) -> None:
    dest = cmd.dest(field.name)
    help_text = field.description or None
    if field.name in _OBJECT_ARGS and help_text:
        help_text += (" — here: a ref (e12), a role and a name (\"row Bob\") or the JSON "
                      "object")
    kind, items = field.type, field.items
    convert: Callable[[str], Any] = (
        _OBJECT_ARGS.get(field.name, _json_arg) if kind == "object"
        else _json_arg if kind == "array" and items == "object"
        else _SCALARS.get(items or "string", str) if kind == "array"
        else _SCALARS.get(kind, str))
    choices = list(field.enum) if field.enum else None
    spec = next((p for p in cmd.positional if p.rstrip("?*") == field.name), None)
    if spec is not None:
        nargs: Any = "?" if spec.endswith("?") else "*" if spec.endswith("*") else None
        if kind == "array" and items != "object" and nargs is None:
            nargs = "+"
        parser.add_argument(dest, metavar=_metavar(field.name), nargs=nargs,
                            type=convert, choices=choices, help=help_text,
                            default=None if nargs in ("?", "*") else argparse.SUPPRESS)
        return
    # A command whose words fill fields checks nothing here: the service does.
    required = field.required and cmd.cli.words is None
    option = OPTION_NAMES.get(field.name, _kebab(field.name))
    if option in RESERVED:
        option = "field-" + option
    flags = [f"--{option}"]
    metavar = None if choices or kind == "boolean" else _metavar(field.name)
    if field.name in OPTION_NAMES:
        flags.append(f"--{_kebab(field.name)}")
    if kind == "boolean":
        parser.add_argument(*flags, dest=dest, action=argparse.BooleanOptionalAction,
                            default=None, help=help_text)
    elif kind == "array" and items != "object":
        parser.add_argument(*flags, dest=dest, nargs="+", type=convert, default=None,
                            metavar=metavar, help=help_text, required=required)
    else:
        parser.add_argument(*flags, dest=dest, type=convert, choices=choices, default=None,
                            metavar=metavar, help=help_text, required=required)


def add_route_commands(sub: Any, commands: Sequence[RouteCommand], *,
                       taken: set[str]) -> None:
    """Add a subparser per command to ``sub`` (names in ``taken`` are left alone, and
    routes another command covers)."""
    for cmd in commands:
        if cmd.name in taken or cmd.covered_by is not None:
            continue
        parser = sub.add_parser(cmd.name, help=cmd.summary or f"{cmd.method} {cmd.path}",
                                description=f"{cmd.method} {cmd.path}: {cmd.summary}")
        parser.set_defaults(route_command=cmd)
        named = {p.rstrip("?*") for p in cmd.positional}
        by_name = {f.name: f for f in cmd.fields}
        if cmd.cli.words is not None:
            parser.add_argument("w_words", nargs="*", metavar=cmd.cli.words.metavar,
                                help=cmd.cli.words.help)
        for spec in cmd.positional:  # positional arguments in the order given
            _add_field(parser, cmd, by_name[spec.rstrip("?*")])
        for field in cmd.fields:
            if field.name not in named:
                _add_field(parser, cmd, field)
        for flag, field_name in cmd.cli.negations.items():
            parser.add_argument(f"--{flag}", dest=cmd.dest(field_name), action="store_false",
                                help=f"the same as --no-{_kebab(field_name)}")
        if cmd.raw:
            parser.add_argument("--out", help="write the answer to this file (default: stdout)")


def resolve_prefix(client: Any, prefix: Prefix, given: str) -> str:
    """The one id ``prefix``'s listing holds that is ``given`` or starts with it
    (case-insensitive, at least :data:`MIN_PREFIX` characters); NotFound for none,
    BadRequest for a short or ambiguous prefix."""
    key = prefix.key
    listing = client.get(prefix.listing)
    ids = [str(item.get("id")) for item in (listing.get(key) or [])
           if isinstance(item, dict)] if isinstance(listing, dict) else []
    if given in ids:
        return given
    what = key.rstrip("s")
    if len(given) < MIN_PREFIX:
        raise BadRequest(f"{what} id {given!r} is too short for a prefix",
                         hint=f"give the whole id or at least {MIN_PREFIX} characters "
                              f"(`browserd {key}` lists them)")
    found = [i for i in ids if i.lower().startswith(given.lower())]
    if not found:
        raise NotFound(f"no {what} {given!r}", hint=f"`browserd {key}` lists them")
    if len(found) > 1:
        raise BadRequest(f"{what} id prefix {given!r} is ambiguous: "
                         + ", ".join(found[:5]), hint="give more characters")
    return found[0]


def run_route_command(client: Any, cmd: RouteCommand, args: argparse.Namespace) -> Any:
    """Send ``cmd``'s request with the values in ``args``; the decoded answer.

    A raw answer is written to ``--out`` (the answer is then ``{"path": …}``)
    or to stdout (the answer is None: nothing more to print).
    """
    values = {f.name: getattr(args, cmd.dest(f.name), None) for f in cmd.fields}
    words = cmd.cli.words
    if words is not None and words.placer in PLACERS:
        values = PLACERS[words.placer]({**values, "words": getattr(args, "w_words", None)})
    path = cmd.path
    for name in re.findall(r"\{([^}]+)\}", cmd.path):
        value = values.pop(name, None)
        if not value:
            raise BadRequest(f"{name} is required", field=name)
        if cmd.cli.prefixed is not None:
            value = resolve_prefix(client, cmd.cli.prefixed, str(value))
        path = path.replace("{" + name + "}", quote(str(value), safe=""))
    values = {k: v for k, v in values.items() if v is not None}
    if cmd.method == "GET":
        result = client.get(path, **{k: (",".join(map(str, v)) if isinstance(v, list) else v)
                                     for k, v in values.items()})
    else:
        result = client.request(cmd.method, path, values if cmd.method != "DELETE" else None)
    if cmd.raw:
        if not isinstance(result, bytes):  # a JSON file (HAR): its bytes again
            result = orjson.dumps(result)
        out = getattr(args, "out", None)
        if out:
            with open(out, "wb") as fh:
                fh.write(result)
            return {"path": out, "bytes": len(result)}
        sys.stdout.buffer.write(result)
        sys.stdout.buffer.flush()
        return None
    return result
