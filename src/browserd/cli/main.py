"""The ``browserd`` command: ``serve`` runs the service; the rest are its clients.

(The help people see is :mod:`browserd.cli.help`'s, grouped by task; this
docstring is for developers.)

``serve``, ``token`` and ``service`` are local; ``cookies``, ``storage``,
``state`` and ``emulate`` are written by hand (:mod:`browserd.cli.state`:
one command for a route's several methods, files, friendlier arguments);
every other subcommand is one API route, generated from the route table
(:mod:`browserd.cli.routes`), so the CLI covers the whole API. Human-readable output by default
(:mod:`browserd.cli.format`), with the page's text between ``<<page:NONCE>>``
lines when stdout is not a terminal (``--boundary on|off`` to choose);
``--json`` for scripts; a failure prints the
error's message (and hint, its route words as commands: :mod:`browserd.cli.hints`)
to stderr and exits 1. A reader that goes away
(``browserd snapshot | head -1``) ends the command quietly with status 0.

The global options (``--json``, ``--boundary``, ``--control-url``,
``--profile``, ``--session``) are accepted before or after the command, at
any depth (``browserd cookies list --json``) unless the command has an option
of that name itself (``tokens create --profile``); ``--target`` before the
command goes to the command's own ``--target``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import sys
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from .. import __version__
from ..errors import BrowserdError
from ..http.facts import GROUPS
from ..paths import Paths
from .confirm import CONFIRM_COMMANDS, add_confirm_commands
from .extension import EXTENSION_COMMANDS, add_extension_commands
from .help import OPENAPI_COMMANDS, GroupedHelpParser, add_openapi_command
from .hints import lazy_words
from .input import GESTURE_COMMANDS, add_gesture_commands
from .network import NETWORK_COMMANDS, add_network_commands
from .offer import OFFER_COMMANDS, add_offer_commands
from .profiles import PROFILE_COMMANDS, add_profile_commands
from .record import RECORD_COMMANDS, add_record_commands
from .routes import (
    RouteCommand,
    add_route_commands,
    commands_from_openapi,
    commands_from_routes,
    run_route_command,
)
from .secrets import SECRET_COMMANDS, add_secret_commands
from .state import STATE_COMMANDS, add_state_commands
from .tokens import TOKEN_COMMANDS, add_token_commands
from .ui import UI_COMMANDS, add_ui_command

__all__ = ["HAND_WRITTEN", "LOCAL_COMMANDS", "Command", "build_parser", "main"]

Command = Callable[[argparse.Namespace], Any]
LOCAL_COMMANDS = ("serve", "token", "service", "mcp", "extension")
HAND_WRITTEN: dict[str, Any] = {**STATE_COMMANDS, **GESTURE_COMMANDS, **NETWORK_COMMANDS,
                                 **PROFILE_COMMANDS, **UI_COMMANDS, **OFFER_COMMANDS,
                                 **TOKEN_COMMANDS, **SECRET_COMMANDS, **CONFIRM_COMMANDS,
                                 **OPENAPI_COMMANDS, **RECORD_COMMANDS}
"""Commands written by hand (:mod:`browserd.cli.state`, :mod:`browserd.cli.input`,
:mod:`browserd.cli.network`, :mod:`browserd.cli.profiles`, :mod:`browserd.cli.ui`,
:mod:`browserd.cli.offer`, :mod:`browserd.cli.tokens`, :mod:`browserd.cli.secrets`,
:mod:`browserd.cli.confirm`, :mod:`browserd.cli.help` for ``openapi`` …)."""
"""Subcommands that run here; all others call the API (their parsers need the route table)."""


def _client(control_url: str | None) -> Any:
    from ..client import Client
    from ..config import load_settings

    overrides = {"control_url": control_url} if control_url else None
    paths = Paths.resolve()
    return Client.from_settings(load_settings(paths, overrides=overrides), paths)


def _serve(args: argparse.Namespace) -> int:
    from ..service import serve

    overrides: dict[str, Any] = {
        "control_url": args.control_url, "cdp_port": args.cdp_port, "cdp_url": args.cdp_url,
        "profile": args.profile, "executable": args.executable,  # the default profile's name
        "headless": args.headless, "attach_only": args.attach_only or None,
        "auto_start": False if args.no_auto_start else None,
    }
    return serve(overrides, verbose=args.verbose)


def _mcp(args: argparse.Namespace) -> int:
    """``browserd mcp``: MCP on stdio, each tool call an HTTP request to the service."""
    from ..mcp.stdio import run_stdio

    client = _client(args.control_url)
    client.profile, client.session = args.profile, args.session
    isolated: dict[str, Any] | None = None
    if args.isolated:
        # A child token bound to a session of its own; both end with this process.
        try:
            isolated = client.post("/tokens", name=f"mcp-{os.getpid()}-{secrets.token_hex(3)}",
                                   newSession=True)
        except BrowserdError as exc:
            print(f"browserd mcp --isolated: {exc.message}", file=sys.stderr)
            return 1
        parent, client = client, client.with_token(isolated["token"])
        client.session = None
    try:
        run_stdio(args.caps.split(","), client)
    except ValueError as exc:
        print(f"browserd mcp: {exc}", file=sys.stderr)
        return 2
    finally:
        if isolated is not None:
            for method, path in (("DELETE", f"/sessions/{isolated['sessions'][0]}"),
                                 ("DELETE", f"/tokens/{isolated['name']}")):
                with contextlib.suppress(BrowserdError):
                    parent.request(method, path)
    return 0


def _token(args: argparse.Namespace) -> str | None:
    from ..token import load_or_create_token, rotate_token

    paths = Paths.resolve()
    path = paths.token_file
    token = rotate_token(path) if args.rotate else load_or_create_token(path)
    if args.rotate:
        print("token rotated; restart browserd for it to take effect", file=sys.stderr)
    if not args.remote:
        return token
    # {controlUrl, token, fingerprint} for a client elsewhere (docs/operations.md).
    from ..config import is_loopback_host, load_settings
    from ..tls import remote_credentials

    overrides = {"control_url": args.control_url} if args.control_url else None
    settings = load_settings(paths, overrides=overrides)
    print(orjson.dumps(remote_credentials(settings, paths, token)).decode())
    if is_loopback_host(settings.control_host):
        print(f"note: {settings.control_url} is loopback: reachable from this host only "
              "(or through a tunnel)", file=sys.stderr)
    return None


def _service(args: argparse.Namespace) -> Any:
    from .. import service_install

    if args.action == "install":
        result = service_install.install(args.kind, print_only=args.print,
                                         paths=Paths.resolve())
    else:
        result = service_install.uninstall(args.kind, print_only=args.print)
    if args.print:
        return result.text + "\n# commands:\n" + "\n".join(
            " ".join(c) for c in result.commands)
    return f"{args.action}ed {result.kind} service at {result.path}"


_VALUED_GLOBALS = ("--boundary", "--control-url", "--profile", "--session", "--target")
"""The global options that take a value (the word after them is not the command)."""


def _add_common(parser: argparse.ArgumentParser) -> None:
    """The global options on ``parser``, each left out where ``parser`` has an option of
    that name already (``tokens create --profile``: the token's profiles)."""
    options: tuple[tuple[str, dict[str, Any]], ...] = (
        ("--json", {"action": "store_true", "help": "print JSON"}),
        ("--boundary", {"choices": ("auto", "on", "off"),
                        "help": "mark page text with <<page:NONCE>> lines: on, off, or auto "
                                "(default: on when stdout is not a terminal)"}),
        ("--control-url", {"help": "where the service listens (default from settings)"}),
        ("--profile", {"help": "the profile to act on (serve: the default profile's name)"}),
        ("--session", {"help": "a sessionId: see only that session's tabs"}),
    )
    for flag, kw in options:
        try:
            parser.add_argument(flag, default=argparse.SUPPRESS, **kw)
        except argparse.ArgumentError:
            pass  # the command's own option of that name wins


def _nested_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every parser of a sub-command below ``parser`` (``cookies set``, ``tokens create``…)."""
    found = []
    for action in parser._actions:  # argparse keeps its sub-command table here
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found += [child, *_nested_parsers(child)]
    return found


def build_parser(commands: Sequence[RouteCommand] | None = None) -> argparse.ArgumentParser:
    """The parser: the local commands plus ``commands`` (None: this installation's routes)."""
    common = argparse.ArgumentParser(add_help=False)
    _add_common(common)
    parser = GroupedHelpParser(prog="browserd", parents=[common],
                               usage="browserd [OPTIONS] COMMAND [ARGUMENTS]")
    parser.add_argument("--version", action="version", version=f"browserd {__version__}")
    parser.add_argument("--target", dest="first_target", default=argparse.SUPPRESS,
                        help="the tab, for a command that takes --target")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                prog="browserd", parser_class=argparse.ArgumentParser)
    real_add = sub.add_parser

    def add_parser(name: str, **kw: Any) -> argparse.ArgumentParser:
        parser.summaries[name] = str(kw.get("help") or "")
        return real_add(name, parents=[common], **kw)

    sub.add_parser = add_parser  # type: ignore[method-assign]

    serve = sub.add_parser("serve", help="run the service in the foreground")
    serve.add_argument("--cdp-port", type=int)
    serve.add_argument("--cdp-url")
    serve.add_argument("--attach-only", action="store_true")
    serve.add_argument("--executable")
    serve.add_argument("--headless", action="store_true", default=None)
    serve.add_argument("--headed", dest="headless", action="store_false")
    serve.add_argument("--no-auto-start", action="store_true")
    serve.add_argument("-v", "--verbose", action="store_true")

    mcp = sub.add_parser("mcp", help="serve MCP on stdio (tools on the running service)")
    mcp.add_argument("--isolated", action="store_true",
                     help="a child token and a session of its own, both ended on exit")
    mcp.add_argument("--caps", default="core",
                     help=f"tool groups, comma-separated: {', '.join(GROUPS)}, or all "
                          "(default: core)")

    token = sub.add_parser("token", help="print the API token")
    token.add_argument("--rotate", action="store_true", help="replace it with a new one")
    token.add_argument("--remote", action="store_true",
                       help="print JSON {controlUrl, token, fingerprint} for a remote client")

    svc = sub.add_parser("service", help="install as a LaunchAgent / systemd --user unit")
    svc.add_argument("action", choices=("install", "uninstall"))
    svc.add_argument("--print", action="store_true", help="show, do not write")
    svc.add_argument("--kind", choices=("launchd", "systemd"))

    if commands is None:
        commands = commands_from_routes()
    add_state_commands(sub)
    add_gesture_commands(sub)
    add_network_commands(sub, common)
    add_profile_commands(sub)
    add_offer_commands(sub)
    add_ui_command(sub)
    add_token_commands(sub)
    add_secret_commands(sub)
    add_confirm_commands(sub)
    add_record_commands(sub)
    add_extension_commands(sub)
    add_openapi_command(sub)
    add_route_commands(sub, commands, taken=set(LOCAL_COMMANDS) | set(HAND_WRITTEN))
    for top in sub.choices.values():
        for nested in _nested_parsers(top):
            _add_common(nested)
    parser.words = lazy_words(lambda: commands or commands_from_routes())
    return parser


def _command_word(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (skipping the global options), or None."""
    skip = False
    for token in argv:
        if skip:
            skip = False
        elif token in _VALUED_GLOBALS:
            skip = True
        elif not token.startswith("-"):
            return token
    return None


def _remote_commands(argv: Sequence[str]) -> tuple[Any, Sequence[RouteCommand]]:
    """A verified client and the commands of the service it reaches.

    The commands come from the service's ``/openapi.json`` (one loopback
    request; the client is verified and reused for the command itself).
    When no service answers, from this installation's route table, and no
    client: running the command then reports why.
    """
    globals_only = argparse.ArgumentParser(add_help=False)
    globals_only.add_argument("--control-url")
    known, _ = globals_only.parse_known_args(argv)
    try:
        client = _client(known.control_url)
        doc = client.get("/openapi.json")
        if isinstance(doc, dict):
            return client, commands_from_openapi(doc) or commands_from_routes()
    except BrowserdError:
        pass
    return None, commands_from_routes()


def _give_target(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--target`` given before the command: the command's own ``--target``
    (a usage error, exit 2, for a command that takes none)."""
    target = getattr(args, "first_target", None)
    if target is None:
        return
    route_command = getattr(args, "route_command", None)
    if route_command is not None and hasattr(args, route_command.dest("targetId")):
        dest = route_command.dest("targetId")
    elif hasattr(args, "target"):
        dest = "target"
    else:
        parser.error(f"`browserd {args.command}` takes no --target")
    if getattr(args, dest) is None:
        setattr(args, dest, target)


def _commands_of(client: Any) -> Sequence[RouteCommand]:
    """The generated commands, for rewriting route words (the service's when it answers)."""
    if client is not None:
        with contextlib.suppress(BrowserdError):
            doc = client.get("/openapi.json")
            if isinstance(doc, dict):
                return commands_from_openapi(doc) or commands_from_routes()
    return commands_from_routes()


def _run(argv: Sequence[str]) -> int:
    client = None
    commands: Sequence[RouteCommand] = ()
    word = _command_word(argv)
    if word in (*LOCAL_COMMANDS, *HAND_WRITTEN):
        parser = build_parser(commands=())
    else:
        client, commands = _remote_commands(argv)
        # Only the named command's parser is built (a parser per route costs ~1 ms);
        # every command when none is named or the name is wrong (help, "invalid choice").
        parser = build_parser([c for c in commands if c.name == word] or commands)
    args = parser.parse_args(argv)
    args.json = getattr(args, "json", False)
    args.control_url = getattr(args, "control_url", None)
    args.profile = getattr(args, "profile", None)
    args.session = getattr(args, "session", None)
    args.boundary = getattr(args, "boundary", "auto")
    _give_target(parser, args)
    words = lazy_words(lambda: commands or _commands_of(client))
    try:
        if args.command == "serve":
            return _serve(args)
        if args.command == "mcp":
            return _mcp(args)
        if args.command == "token":
            result: Any = _token(args)
        elif args.command == "service":
            result = _service(args)
        elif args.command in EXTENSION_COMMANDS:  # local: files only (browserd.cli.extension)
            result = EXTENSION_COMMANDS[args.command](None, args)
        else:
            if client is None:
                client = _client(args.control_url)
            client.profile, client.session = args.profile, args.session
            if args.command in HAND_WRITTEN:
                result = HAND_WRITTEN[args.command](client, args)
            else:
                result = run_route_command(client, args.route_command, args)
    except BrowserdError as exc:
        if args.json:
            from ..client import ClientError

            # The service's whole error body: its details (a stale ref's reason, …) too.
            body = ({**exc.body, **exc.to_dict()} if isinstance(exc, ClientError)
                    else exc.to_dict())
            print(orjson.dumps(body).decode(), file=sys.stderr)
        else:
            print(f"browserd: {exc.message}", file=sys.stderr)
            if exc.hint:
                print(f"  hint: {words(exc.hint)}", file=sys.stderr)
        return 1
    if result is None:
        return 0  # a raw answer already written to stdout
    if args.json:
        print(orjson.dumps(result).decode() if not isinstance(result, str)
              else orjson.dumps({"result": result}).decode())
    else:
        from ..answer_text import new_nonce
        from .format import human

        marked = args.boundary == "on" or (args.boundary == "auto" and not sys.stdout.isatty())
        print(human(result, new_nonce() if marked else None, words))
    sys.stdout.flush()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``browserd`` command; its exit status."""
    try:
        return _run(sys.argv[1:] if argv is None else argv)
    except BrokenPipeError:
        # The reader went away (`browserd snapshot | head -1`): nothing left to say.
        # Point stdout at /dev/null so the interpreter's final flush cannot fail too.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
