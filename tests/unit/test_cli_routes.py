"""The CLI's generated commands: every route is one, both sources agree, arguments parse."""

from __future__ import annotations

import re

import pytest

from browserd import __version__
from browserd.cli.main import HAND_WRITTEN, LOCAL_COMMANDS, build_parser
from browserd.cli.routes import commands_from_openapi, commands_from_routes
from browserd.cli.state import STATE_COMMANDS
from browserd.http.routes import all_routes
from browserd.http.routes.meta import api_document
from browserd.http.schema import openapi


def test_every_route_is_a_command() -> None:
    listed = commands_from_routes()
    assert len(listed) == len(all_routes())
    commands = [c for c in listed if c.covered_by is None]
    names = [c.name for c in commands]
    assert len(names) == len(set(names)), "two routes got one command name"
    assert not set(names) & set(LOCAL_COMMANDS)
    assert not set(names) & set(HAND_WRITTEN)
    all_names = set(names) | set(HAND_WRITTEN)
    for cmd in listed:
        # Each route is served by a command of its own or by the one it names (hand-written,
        # or another route's: `close` for DELETE /tabs/{targetId}).
        assert cmd.name in all_names, (cmd.path, cmd.method, cmd.name)
        assert cmd.covered_by in (None, cmd.name)
    for verb in ("back", "forward", "reload", "scroll", "wait", "hover", "select", "act",
                 "dialog", "console", "query", "dom", "snapshot", "screenshot", "media",
                 "find", "downloads", "download", "navigate", "eval", "pdf", "open", "close"):
        assert verb in names, verb
    for verb in ("cookies", "storage", "state", "emulate"):
        assert verb in STATE_COMMANDS
    for verb in ("upload", "drag", "mouse", "keyboard"):
        assert verb in HAND_WRITTEN


def test_a_command_is_what_each_operation_names() -> None:
    def op(name: str, **cli: object) -> dict[str, object]:
        return {"summary": name, "responses": {}, "x-browserd-name": name, "x-browserd-cli": cli}

    doc = {"paths": {
        "/things": {"get": op("things_get", command="things"), "post": op("things_set"),
                    "delete": op("things_delete", coveredBy="stuff")},
        "/both": {"get": op("both"), "post": op("both")},
        "/old": {"get": {"summary": "a service older than the extensions"}}}}
    got = {(c.name, c.method, c.covered_by) for c in commands_from_openapi(doc)}
    assert got == {("things", "GET", None), ("things-set", "POST", None),
                   ("stuff", "DELETE", "stuff"), ("both", "POST", None)}
    assert commands_from_openapi({"paths": {"/old": {"get": {"summary": "x"}}}}) == []


def test_the_service_table_and_the_local_table_give_the_same_commands() -> None:
    local = {(c.path, c.method): c for c in commands_from_routes()}
    served = {(c.path, c.method): c for c in commands_from_openapi(api_document(all_routes()))}
    assert set(served) == set(local)
    for name, cmd in local.items():
        other = served[name]
        assert (other.name, other.raw, other.cli) == (cmd.name, cmd.raw, cmd.cli), name
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
    assert values(parser, "select", "--ref", "e7", "--values", "red", "green") == {
        "ref": "e7", "values": ["red", "green"]}
    assert values(parser, "act", '[{"kind": "press", "key": "End"}]') == {
        "actions": [{"kind": "press", "key": "End"}]}
    assert values(parser, "start", "--headed") == {"headless": False}
    assert values(parser, "snapshot", "--interactive", "--no-interactive") == {
        "interactive": False}
    assert values(parser, "media", "shot.png") == {"name": "shot.png"}
    assert values(parser, "find", "--text", "contin", "--role", "button", "--limit", "3") == {
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
    from browserd.cli.main import build_parser

    with pytest.raises(SystemExit) as exited:
        build_parser(commands=()).parse_args(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"browserd {__version__}"


class FakeClient:
    """Records the requests a command sends; answers listings from ``listings``."""

    def __init__(self, listings: dict[str, object] | None = None) -> None:
        self.sent: list[tuple[str, str, object]] = []
        self.listings = listings or {}

    def get(self, path: str, **query: object) -> object:
        self.sent.append(("GET", path, query))
        return self.listings.get(path, {})

    def request(self, method: str, path: str, payload: object = None) -> object:
        self.sent.append((method, path, payload))
        return {"ok": True}

    def post(self, path: str, **payload: object) -> object:
        return self.request("POST", path, payload)


def sent(parser, *argv: str, client: FakeClient | None = None) -> tuple[str, str, object]:
    """The request ``browserd *argv`` sends (the last one, after any listing)."""
    from browserd.cli.main import HAND_WRITTEN
    from browserd.cli.routes import run_route_command

    client = client or FakeClient()
    args = parser.parse_args(argv)
    args.json = False
    if args.command in HAND_WRITTEN:
        HAND_WRITTEN[args.command](client, args)
    else:
        run_route_command(client, args.route_command, args)
    return client.sent[-1]


def test_select_takes_the_ref_then_the_values(parser) -> None:
    assert sent(parser, "select", "e5", "Green") == (
        "POST", "/select", {"ref": "e5", "values": ["Green"]})
    assert sent(parser, "select", "e5", "red", "blue")[2] == {"ref": "e5",
                                                             "values": ["red", "blue"]}
    # Another locator: every word is a value.
    assert sent(parser, "select", "Green", "--selector", "#colour")[2] == {
        "selector": "#colour", "values": ["Green"]}
    assert sent(parser, "select", "--ref", "e5", "--values", "Green")[2] == {
        "ref": "e5", "values": ["Green"]}
    assert sent(parser, "select", "e5", "--values", "Green")[2] == {
        "ref": "e5", "values": ["Green"]}


def test_upload_takes_an_optional_ref_then_files(parser) -> None:
    assert sent(parser, "upload", "e9", "/u/a.txt", "/u/b.txt") == (
        "POST", "/upload", {"files": ["/u/a.txt", "/u/b.txt"], "ref": "e9", "selector": None,
                            "targetId": None})
    assert sent(parser, "upload", "/u/a.txt")[2]["ref"] is None  # the page's open chooser
    assert sent(parser, "upload", "/u/a.txt", "--ref", "e3")[2]["ref"] == "e3"
    body = sent(parser, "upload", "e9", "--selector", "#f")[2]
    assert body["ref"] is None and body["files"] == ["e9"]  # --selector names the input


def test_find_takes_a_role_and_a_name(parser) -> None:
    from browserd.errors import BadRequest

    assert sent(parser, "find", "textbox")[2] == {"role": "textbox"}
    assert sent(parser, "find", "button", "Sign in")[2] == {"role": "button", "name": "Sign in"}
    assert sent(parser, "find", "Continue")[2] == {"text": "Continue"}  # not a role: text
    assert sent(parser, "find", "--text", "button")[2] == {"text": "button"}
    assert sent(parser, "find", "--role", "link", "--name", "Home")[2] == {"role": "link",
                                                                          "name": "Home"}
    assert sent(parser, "find", "link", "--name", "Home")[2] == {"role": "link", "name": "Home"}
    with pytest.raises(BadRequest, match="'Sign' is not an ARIA role"):
        sent(parser, "find", "Sign", "in")


def test_within_takes_a_ref_a_role_and_name_or_json(parser) -> None:
    click = ("click", "--role", "link", "--name", "Edit")
    assert values(parser, *click, "--within", "row Bob Smith")["within"] == {
        "role": "row", "name": "Bob Smith"}
    assert values(parser, *click, "--within", "e12")["within"] == {"ref": "e12"}
    assert values(parser, *click, "--within", "dialog")["within"] == {"role": "dialog"}
    assert values(parser, *click, "--within", '{"selector": "#cart"}')["within"] == {
        "selector": "#cart"}
    with pytest.raises(SystemExit):
        parser.parse_args([*click, "--within", "{not json"])


def test_global_options_go_before_or_after_the_command(parser) -> None:
    before = parser.parse_args(["--json", "--profile", "w", "tabs"])
    after = parser.parse_args(["tabs", "--json", "--profile", "w"])
    assert (before.json, before.profile) == (after.json, after.profile) == (True, "w")
    nested = parser.parse_args(["cookies", "list", "--json", "--session", "s1"])
    assert (nested.json, nested.session) == (True, "s1")
    assert parser.parse_args(["network", "show", "7", "--json"]).json is True
    # A sub-command's own option of that name wins: the token's profiles.
    made = parser.parse_args(["tokens", "create", "ci", "--profile", "work", "--json"])
    assert made.token_profiles == ["work"] and made.json is True
    assert parser.parse_args(["--target", "ABCD", "click", "e1"]).first_target == "ABCD"


def test_a_download_id_may_be_a_unique_prefix(parser) -> None:
    from browserd.errors import BadRequest, NotFound

    listing = {"/downloads": {"downloads": [{"id": "3f2a91c0-aa"}, {"id": "3f2a00d1-bb"},
                                            {"id": "77aa"}]}}
    client = FakeClient(listing)
    assert sent(parser, "download", "3F2A9", client=client)[1] == "/downloads/3f2a91c0-aa"
    assert sent(parser, "download", "77aa", client=client)[1] == "/downloads/77aa"
    with pytest.raises(BadRequest, match="ambiguous"):
        sent(parser, "download", "3f2a", client=client)
    with pytest.raises(BadRequest, match="too short"):
        sent(parser, "download", "3f", client=client)
    with pytest.raises(NotFound, match="no download '9999'"):
        sent(parser, "download", "9999", client=client)


def test_route_words_in_hints_become_commands() -> None:
    from browserd.cli.hints import CommandWords

    words = CommandWords(commands_from_routes())
    assert words.rewrite("list tabs with GET /tabs") == "list tabs with browserd tabs"
    assert words.rewrite("take a new snapshot (POST /snapshot) or use /find") == (
        "take a new snapshot (browserd snapshot) or use browserd find")
    assert words.rewrite("see GET /openapi.json") == "see browserd openapi"
    assert words.rewrite("wait with POST /wait {tabRequest}") == (
        "wait with browserd wait --tab-request")
    assert words.rewrite("DELETE /tabs/ABCD1234 closes it") == "browserd close closes it"
    assert words.rewrite("GET /cookies, POST /cookies") == "browserd cookies, browserd cookies"
    # Not a command's path, a URL, other slashes: as they are.
    for text in ("open /ui/login", "at http://127.0.0.1:9/tabs", "and/or", "a 1/2 chance"):
        assert words.rewrite(text) == text
    assert words.command_for("/tabs/open") == "open"  # a literal path beats /tabs/{targetId}
    assert words.command_for("/tabs/ABCD", "DELETE") == "close"


def test_the_top_level_help_is_grouped_by_task(parser) -> None:
    from browserd.cli.help import GROUPS

    text = parser.format_help()
    titles = [title for title, _ in GROUPS]
    positions = [text.index(f"\n{title}:\n") for title in titles]
    assert positions == sorted(positions), "the groups in their order"
    assert {"status", "find", "cookies", "tokens", "openapi"} <= set(parser.summaries)
    for name in parser.summaries:  # every command is listed, once
        assert len(re.findall(rf"^  {re.escape(name)}(?: |$)", text, re.M)) == 1, name
    for markup in ("``", ":mod:", ":func:", "GET /", "POST /"):
        assert markup not in text, markup
    assert "--target ID" in text and "browserd find button Continue" in text
    assert "index" not in re.findall(r"^  (\S+)", text, re.M)  # the same as status
