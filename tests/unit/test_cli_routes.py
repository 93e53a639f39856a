"""The CLI's generated commands: every route is one, both sources agree, arguments parse."""

from __future__ import annotations

import pytest

from browserd import __version__
from browserd.cli import HAND_WRITTEN, LOCAL_COMMANDS, build_parser
from browserd.cli_routes import SKIP, commands_from_openapi, commands_from_routes
from browserd.cli_state import STATE_COMMANDS
from browserd.http.routes import all_routes
from browserd.http.schema import openapi


def test_every_route_is_a_command() -> None:
    commands = commands_from_routes()
    names = [c.name for c in commands]
    assert len(names) == len(set(names)), "two routes got one command name"
    assert not set(names) & set(LOCAL_COMMANDS)
    assert not set(names) & set(HAND_WRITTEN)
    all_names = set(names) | set(HAND_WRITTEN)
    covered = {(c.path, c.method) for c in commands}
    for route in all_routes():
        path = route.path.replace("<", "{").replace(">", "}")
        for method in route.methods:
            # Each method of a route is served by a generated command (one per route,
            # POST preferred) or by the command SKIP names (hand-written or `close`).
            by_route = any((path, m) in covered for m in route.methods)
            assert by_route or SKIP.get((path, method)) in all_names, (route.path, method)
    for verb in ("back", "forward", "reload", "scroll", "wait", "hover", "select", "act",
                 "dialog", "console", "query", "dom", "snapshot", "screenshot", "media",
                 "find", "downloads", "download", "navigate", "eval", "pdf", "open", "close"):
        assert verb in names, verb
    for verb in ("cookies", "storage", "state", "emulate"):
        assert verb in STATE_COMMANDS
    for verb in ("upload", "drag", "mouse", "keyboard"):
        assert verb in HAND_WRITTEN


def test_a_path_with_a_route_per_method_gets_a_command_per_route() -> None:
    from browserd.cli_routes import FieldSpec, RouteCommand, _unique

    def cmd(method: str) -> RouteCommand:
        return RouteCommand(name="things", path="/things", method=method, summary=method,
                            fields=(FieldSpec(name="x", type="string"),), positional=(),
                            raw=False)

    assert [c.name for c in _unique([cmd("GET"), cmd("POST"), cmd("DELETE")])] == [
        "things", "things-post", "things-delete"]
    doc = {"paths": {"/things": {
        "get": {"summary": "list", "responses": {}},
        "post": {"summary": "add", "responses": {}},
        "delete": {"summary": "remove", "responses": {}}},
        "/both": {"get": {"summary": "read"}, "post": {"summary": "read"}}}}
    got = {(c.name, c.method) for c in commands_from_openapi(doc)}
    assert got == {("things", "GET"), ("things-post", "POST"), ("things-delete", "DELETE"),
                   ("both", "POST")}


def test_the_service_table_and_the_local_table_give_the_same_commands() -> None:
    local = {c.name: c for c in commands_from_routes()}
    served = {c.name: c for c in commands_from_openapi(openapi(all_routes(),
                                                               version=__version__))}
    assert set(served) == set(local)
    for name, cmd in local.items():
        other = served[name]
        assert (other.path, other.method, other.raw) == (cmd.path, cmd.method, cmd.raw), name
        mine = {f.name: (f.type, f.required, f.enum, f.items) for f in cmd.fields}
        theirs = {f.name: (f.type, f.required, f.enum, f.items) for f in other.fields}
        assert theirs == mine, name


@pytest.fixture(scope="module")
def parser():
    return build_parser()


def values(parser, *argv: str) -> dict[str, object]:
    args = parser.parse_args(argv)
    return {k[2:]: v for k, v in vars(args).items() if k.startswith("f_") and v is not None}


def test_arguments_parse_into_fields(parser) -> None:
    assert values(parser, "type", "hello", "--selector", "#q") == {"text": "hello",
                                                                   "selector": "#q"}
    assert values(parser, "type", "e4", "hello", "--submit") == {"ref": "e4", "text": "hello",
                                                                 "submit": True}
    assert values(parser, "click", "e2", "--target", "ABCD") == {"ref": "e2",
                                                                 "targetId": "ABCD"}
    assert values(parser, "scroll", "--dy", "-200") == {"dy": -200.0}
    assert values(parser, "scroll", "--to", "bottom", "--selector", "#box") == {
        "to": "bottom", "selector": "#box"}
    assert values(parser, "back", "--wait-until", "commit", "--timeout-ms", "900") == {
        "waitUntil": "commit", "timeoutMs": 900}
    assert values(parser, "reload", "--ignore-cache") == {"ignoreCache": True}
    assert values(parser, "select", "e7", "--values", "red", "green") == {
        "ref": "e7", "values": ["red", "green"]}
    assert values(parser, "act", '[{"kind": "press", "key": "End"}]') == {
        "actions": [{"kind": "press", "key": "End"}]}
    assert values(parser, "start", "--headed") == {"headless": False}
    assert values(parser, "snapshot", "--interactive", "--no-interactive") == {
        "interactive": False}
    assert values(parser, "media", "shot.png") == {"name": "shot.png"}
    assert values(parser, "find", "contin", "--role", "button", "--limit", "3") == {
        "text": "contin", "role": "button", "limit": 3}
    assert values(parser, "download", "abc123", "--out", "x") == {"id": "abc123"}
    assert values(parser, "downloads", "--target", "ABCD") == {"targetId": "ABCD"}
    assert parser.parse_args(["cookies", "set", "n", "v", "--domain", "a.test"]).value == "v"
    with pytest.raises(SystemExit):
        parser.parse_args(["scroll", "--to", "left"])  # not one of the route's choices
    with pytest.raises(SystemExit):
        parser.parse_args(["act", "not json"])


def test_the_served_openapi_builds_a_parser_with_global_profile_and_session() -> None:
    # The service's /openapi.json lists profile/session on every browser route; they are
    # the global --profile/--session options, never a second (conflicting) option.
    from browserd.http.app import with_scope_fields

    doc = openapi([with_scope_fields(r) for r in all_routes()], version=__version__)
    commands = commands_from_openapi(doc)
    assert all(f.name not in ("profile", "session") for c in commands for f in c.fields)
    args = build_parser(commands).parse_args(["--profile", "work", "tabs", "--session", "s1"])
    assert (args.profile, args.session) == ("work", "s1")


def test_version_is_printed_and_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    from browserd import __version__
    from browserd.cli import build_parser

    with pytest.raises(SystemExit) as exited:
        build_parser(commands=()).parse_args(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"browserd {__version__}"
