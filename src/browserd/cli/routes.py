"""Every API route as a ``browserd`` subcommand, generated from the route table.

The table is read from the running service's ``/openapi.json`` (rendered
from the route table itself, so it is exactly what that service accepts;
one loopback request) or, when no service answers, from this installation's
:func:`browserd.http.routes.all_routes` (slower to import; needed only for
``--help`` without a service, or to report that none answers). Each route
becomes one subcommand: its name is the path (``/back`` → ``back``,
``/tabs/open`` → ``tabs-open``) unless :data:`NAMES` gives a shorter one
(a path served by several routes, one per method, gets ``-post`` /
``-delete`` … on the later ones); routes a hand-written command covers
(:data:`SKIP`, e.g. ``cookies`` for ``/cookies`` GET, POST and DELETE) are
left out;
every field becomes an option (``timeoutMs`` → ``--timeout-ms``,
``targetId`` → ``--target``; booleans are ``--flag`` / ``--no-flag``;
arrays take several values; ``object`` fields and arrays of objects take
JSON, ``-`` reads it from stdin); :data:`POSITIONAL` lets a command take its
main fields as arguments (``browserd click e12``), and :data:`WORDS` lets
:mod:`browserd.cli.args` place a command's words (``browserd find button
Continue``, ``browserd select e5 Green``). A path parameter in
:data:`PREFIXED` takes a unique prefix (``browserd download 3f2a``). A route
added to the table is a command at once; a name or positional arguments for
it are one line here.

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
from .args import ADJUSTERS

__all__ = ["GLOBAL_FIELDS", "MIN_PREFIX", "NAMES", "NEGATIONS", "POSITIONAL", "PREFIXED", "SKIP",
           "WORDS", "FieldSpec", "RouteCommand", "add_route_commands", "commands_from_openapi",
           "commands_from_routes", "resolve_prefix", "run_route_command"]

NAMES: dict[str, str] = {
    "/tabs/open": "open", "/tabs/focus": "focus", "/tabs/close": "close",
    "/tabs/release": "release",
    "/media/{name}": "media", "/openapi.json": "openapi", "/downloads/{id}": "download",
    "/records/{id}": "records-delete",  # (its GET is `record show`)
}
"""Command names that differ from the path."""
_HAND_WRITTEN = {"cookies": ("/cookies", ("GET", "POST", "DELETE")),
                 "storage": ("/storage", ("GET", "POST", "DELETE")),
                 "state": ("/state", ("GET", "POST")),
                 "emulate": ("/emulate", ("GET", "POST", "DELETE")),
                 "upload": ("/upload", ("POST",)), "drag": ("/drag", ("POST",)),
                 "mouse": ("/mouse", ("POST",)), "keyboard": ("/keyboard", ("POST",))}
_PROFILES = {"/profiles": ("GET", "POST"), "/profiles/{name}": ("DELETE",),
             "/sessions": ("GET", "POST"), "/sessions/{sessionId}": ("DELETE",)}
_NETWORK = {"/network": ("GET", "POST"), "/network/{id}": ("GET",),
            "/network/block": ("POST",), "/network/headers": ("POST",), "/network/har": ("POST",)}
SKIP: dict[tuple[str, str], str] = {
    ("/", "GET"): "status", ("/openapi.json", "GET"): "openapi",
    ("/tabs/{targetId}", "DELETE"): "close",
    ("/tabs/offerable", "GET"): "offer", ("/tabs/offer", "POST"): "offer",
    ("/tabs/requests", "GET"): "offer", ("/tabs/requests/{requestId}", "POST"): "offer",
    ("/ui-codes", "POST"): "ui",
    ("/tokens", "GET"): "tokens", ("/tokens", "POST"): "tokens",
    ("/tokens/{name}", "DELETE"): "tokens",
    ("/secrets", "GET"): "secrets", ("/secrets/{name}", "PUT"): "secrets",
    ("/secrets/{name}", "DELETE"): "secrets",
    ("/confirmations", "GET"): "confirm", ("/confirmations/{id}", "POST"): "confirm",
    ("/record/start", "POST"): "record", ("/record/stop", "POST"): "record",
    ("/records", "GET"): "record", ("/records/{id}", "GET"): "record",
    ("/records/{id}/video", "GET"): "record",
    ("/records/{id}/replay", "POST"): "replay",
    **{(path, method): name for name, (path, methods) in _HAND_WRITTEN.items()
       for method in methods},
    **{(path, method): "network" for path, methods in _NETWORK.items() for method in methods},
    **{(path, method): path.split("/")[1] for path, methods in _PROFILES.items()
       for method in methods},
}
"""Routes that another command already covers: (path, method) → that command
(``close``, ``status`` for ``GET /`` (the same answer), or one of the hand-written
commands of :mod:`browserd.cli.state`, :mod:`browserd.cli.input`,
:mod:`browserd.cli.network`, :mod:`browserd.cli.profiles`, :mod:`browserd.cli.offer`
(the person's side of tab requests) …): each task has one command."""
GLOBAL_FIELDS = frozenset({"profile", "session"})
"""Route fields every command takes as a global option instead."""
POSITIONAL: dict[str, tuple[str, ...]] = {
    "open": ("url",), "focus": ("targetId",), "close": ("targetId",),
    "release": ("targetId",),
    "navigate": ("url",), "eval": ("js",), "click": ("ref?",), "hover": ("ref?",),
    "type": ("ref?", "text"), "press": ("key",),
    "query": ("selector",), "media": ("name",), "act": ("actions",),
    "download": ("id",),
}
"""Fields a command takes as positional arguments (``?`` optional, ``*`` zero or more)."""
WORDS: dict[str, tuple[str, str]] = {
    "find": ("ROLE NAME", "a known ARIA role, then a name; or one word of text "
                          "(part of a name or of an element's own text)"),
    "select": ("REF VALUE", "the <select>'s ref, then the values or labels to choose "
                            "(with --selector/--text/--role/--name: values only)"),
}
"""Commands whose positional words a function of :data:`browserd.cli.args.ADJUSTERS`
places into fields (command → metavar, help)."""
PREFIXED: dict[str, tuple[str, str]] = {"/downloads/{id}": ("/downloads", "downloads")}
"""Path parameters that take a unique prefix (≥ 4 characters), resolved by listing
(path → the listing's path and its list key), as the service does for ``targetId``."""
MIN_PREFIX = 4
NEGATIONS: dict[str, dict[str, str]] = {"start": {"headed": "headless"}}
"""Extra ``--flag`` options that set a boolean field to false (``start --headed``)."""
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
    """One generated subcommand: the route it calls (``path`` in OpenAPI form) and its fields."""

    name: str
    path: str
    method: str
    summary: str
    fields: tuple[FieldSpec, ...]
    positional: tuple[str, ...]
    raw: bool

    def dest(self, field_name: str) -> str:
        return "f_" + field_name


def _kebab(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", name).lower()


def _metavar(name: str) -> str:
    return _kebab(name).upper().replace("-", "_")


def _command(path: str, method: str, summary: str, fields: tuple[FieldSpec, ...],
             raw: bool) -> RouteCommand | None:
    if (path, method) in SKIP:
        return None
    name = NAMES.get(path) or re.sub(r"/?\{[^}]+\}", "", path).strip("/").replace("/", "-")
    # profile and session are the global --profile/--session (sent as headers).
    fields = tuple(f for f in fields if f.name not in GLOBAL_FIELDS)
    return RouteCommand(name=name or "index", path=path, method=method, summary=summary,
                        fields=fields, positional=POSITIONAL.get(name, ()), raw=raw)


def _method(methods: Sequence[str]) -> str:
    upper = [m.upper() for m in methods]
    return "POST" if "POST" in upper else upper[0]


def _unique(commands: list[RouteCommand]) -> list[RouteCommand]:
    """Give each command its own name: a later route of an already named path gets
    ``-<method>`` (``/x`` GET → ``x``, ``/x`` DELETE → ``x-delete``)."""
    seen: set[str] = set()
    out = []
    for cmd in commands:
        if cmd.name in seen:
            name = f"{cmd.name}-{cmd.method.lower()}"
            cmd = attrs.evolve(cmd, name=name, positional=POSITIONAL.get(name, ()))
        seen.add(cmd.name)
        out.append(cmd)
    return out


def commands_from_routes() -> list[RouteCommand]:
    """The commands of this installation's own route table (imports the server's modules)."""
    from ..http.routes import all_routes

    out = []
    for route in all_routes():
        path = re.sub(r"<(?:[^<>:]+:)?([^<>:]+)>", r"{\1}", route.path)
        fields = tuple(FieldSpec(name=f.name, type=f.type, required=f.required, enum=f.enum,
                                 items=f.items, description=f.description)
                       for f in route.fields)
        methods = [m for m in route.methods if (path, m.upper()) not in SKIP]
        if not methods:
            continue
        cmd = _command(path, _method(methods), route.summary, fields, route.raw_response)
        if cmd is not None:
            out.append(cmd)
    return _unique(out)


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
    """The commands of a service's ``/openapi.json`` (the same table, rendered).

    The operations of one path that share a summary are one route served
    under several methods (``GET``/``POST /snapshot``): one command, POST
    preferred; operations with their own summary are routes of their own.
    """
    out = []
    for path, item in (doc.get("paths") or {}).items():
        if not isinstance(item, dict) or not item:
            continue
        routes: dict[str, list[str]] = {}  # summary -> its methods, in document order
        for method, op in item.items():
            if isinstance(op, dict) and (path, method.upper()) not in SKIP:
                routes.setdefault(str(op.get("summary", "")), []).append(method)
        for summary, methods in routes.items():
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
            cmd = _command(path, method, summary, tuple(fields),
                           raw=set(answer) != {"application/json"})
            if cmd is not None:
                out.append(cmd)
    return _unique(out)


def _json_arg(text: str) -> Any:
    data = sys.stdin.read() if text == "-" else text
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None


_SCALARS: dict[str, Callable[[str], Any]] = {"string": str, "integer": int, "number": float}


def _add_field(parser: argparse.ArgumentParser, cmd: RouteCommand, field: FieldSpec) -> None:
    dest = cmd.dest(field.name)
    help_text = field.description or None
    kind, items = field.type, field.items
    convert: Callable[[str], Any] = (
        _json_arg if kind == "object" or (kind == "array" and items == "object")
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
    # A command whose words fill fields (WORDS) checks nothing here: the service does.
    required = field.required and cmd.name not in WORDS
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
    """Add a subparser per command to ``sub`` (names in ``taken`` are left alone)."""
    for cmd in commands:
        if cmd.name in taken:
            continue
        parser = sub.add_parser(cmd.name, help=cmd.summary or f"{cmd.method} {cmd.path}",
                                description=f"{cmd.method} {cmd.path}: {cmd.summary}")
        parser.set_defaults(route_command=cmd)
        named = {p.rstrip("?*") for p in cmd.positional}
        by_name = {f.name: f for f in cmd.fields}
        if cmd.name in WORDS:
            metavar, words_help = WORDS[cmd.name]
            parser.add_argument("w_words", nargs="*", metavar=metavar, help=words_help)
        for spec in cmd.positional:  # positional arguments in the order given
            _add_field(parser, cmd, by_name[spec.rstrip("?*")])
        for field in cmd.fields:
            if field.name not in named:
                _add_field(parser, cmd, field)
        for flag, field_name in NEGATIONS.get(cmd.name, {}).items():
            parser.add_argument(f"--{flag}", dest=cmd.dest(field_name), action="store_false",
                                help=f"the same as --no-{_kebab(field_name)}")
        if cmd.raw:
            parser.add_argument("--out", help="write the answer to this file (default: stdout)")


def resolve_prefix(client: Any, path: str, given: str) -> str:
    """The one listed id that is ``given`` or starts with it (case-insensitive, at least
    :data:`MIN_PREFIX` characters), listed by the service; NotFound for none,
    BadRequest for a short or ambiguous prefix."""
    listing_path, key = PREFIXED[path]
    listing = client.get(listing_path)
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
    if cmd.name in WORDS and cmd.name in ADJUSTERS:
        values = ADJUSTERS[cmd.name]({**values, "words": getattr(args, "w_words", None)})
    path = cmd.path
    for name in re.findall(r"\{([^}]+)\}", cmd.path):
        value = values.pop(name, None)
        if not value:
            raise BadRequest(f"{name} is required", field=name)
        if cmd.path in PREFIXED:
            value = resolve_prefix(client, cmd.path, str(value))
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
