"""The ``browserd`` command: ``serve`` runs the service; the rest are its clients.

Human-readable output by default, ``--json`` for scripts; a failure prints
the error's message (and hint) to stderr and exits non-zero.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from .cli_state import STATE_COMMANDS, add_state_commands
from .errors import BrowserdError
from .paths import Paths

__all__ = ["Command", "build_parser", "main"]

Command = Callable[[argparse.Namespace], Any]


def _client(args: argparse.Namespace) -> Any:
    from .client import Client
    from .config import load_settings

    overrides = {"control_url": args.control_url} if args.control_url else None
    paths = Paths.resolve()
    return Client.from_settings(load_settings(paths, overrides=overrides), paths)


def _serve(args: argparse.Namespace) -> int:
    from .service import serve

    overrides: dict[str, Any] = {
        "control_url": args.control_url, "cdp_port": args.cdp_port, "cdp_url": args.cdp_url,
        "profile": args.profile, "executable": args.executable,
        "headless": args.headless, "attach_only": args.attach_only or None,
        "auto_start": False if args.no_auto_start else None,
    }
    return serve(overrides, verbose=args.verbose)


def _mcp(args: argparse.Namespace) -> int:
    """``browserd mcp``: MCP on stdio, each tool call an HTTP request to the service."""
    from .mcp.stdio import run_stdio

    try:
        run_stdio(args.caps.split(","), _client(args))
    except ValueError as exc:
        print(f"browserd mcp: {exc}", file=sys.stderr)
        return 2
    return 0


def _token(args: argparse.Namespace) -> str:
    from .token import load_or_create_token, rotate_token

    path = Paths.resolve().token_file
    token = rotate_token(path) if args.rotate else load_or_create_token(path)
    if args.rotate:
        print("token rotated; restart browserd for it to take effect", file=sys.stderr)
    return token


def _service(args: argparse.Namespace) -> Any:
    from . import service_install

    if args.action == "install":
        result = service_install.install(args.kind, print_only=args.print,
                                         paths=Paths.resolve())
    else:
        result = service_install.uninstall(args.kind, print_only=args.print)
    if args.print:
        return result.text + "\n# commands:\n" + "\n".join(
            " ".join(c) for c in result.commands)
    return f"{args.action}ed {result.kind} service at {result.path}"


def _format_status(s: dict[str, Any]) -> str:
    lines = [f"state: {s['state']}" + (f" (pid {s['pid']})" if s.get("pid") else ""),
             f"browser: {s.get('version') or '-'}  {s.get('executablePath') or ''}",
             f"profile: {s['profile']} {s['color']}  {s.get('userDataDir') or ''}",
             f"control: {s['controlUrl']}  cdp: {s['cdpUrl']}  headless: {s['headless']}",
             f"restarts: {s['restarts']}  uptime: {s.get('uptimeS') or 0}s"]
    if s.get("lastError"):
        err = s["lastError"]
        lines.append(f"last error: {err.get('error')} [{err.get('code')}]")
        if err.get("stderr"):
            lines.append("stderr tail:\n  " + "\n  ".join(str(err["stderr"]).splitlines()[-10:]))
    return "\n".join(lines)


def _format_tabs(r: dict[str, Any]) -> str:
    if not r.get("running"):
        return "browser not running"
    if not r["tabs"]:
        return "no tabs"
    return "\n".join(
        f"{'*' if t['isActive'] else ' '} {t['targetId']}  {t['title'][:50]!r}  {t['url']}"
        + ("  [crashed]" if t.get("crashed") else "") for t in r["tabs"])


def _format_effects(effects: dict[str, Any]) -> list[str]:
    lines = []
    if effects.get("navigated"):
        lines.append(f"navigated: {effects['navigated']}")
    if effects.get("navigationPending"):
        lines.append(f"navigation pending: {effects['navigationPending']}")
    if effects.get("newTabs"):
        lines.append("new tabs: " + " ".join(map(str, effects["newTabs"])))
    dialog = effects.get("dialog")
    if isinstance(dialog, dict):
        lines.append(f"dialog open: {dialog.get('type')} {str(dialog.get('message'))[:200]!r}")
    return lines


def _format_action(r: dict[str, Any]) -> str:
    """click/type/press answers: ``ok`` (+ how), then one line per effect."""
    head = "ok"
    if r.get("method"):
        how = str(r["method"])
        if r.get("fallbackReason"):
            how += f": {r['fallbackReason']}"
        head += f" ({how})"
    return "\n".join([head, *_format_effects(r.get("effects") or {})])


def _format_dom_snapshot(r: dict[str, Any]) -> str:
    lines = []
    for n in r.get("nodes", []):
        extra = "".join(f" {k}={n[k]!r}" for k in ("role", "name", "text", "href", "value")
                        if n.get(k) not in (None, ""))
        lines.append(f"{'  ' * int(n.get('depth') or 0)}[{n.get('ref')}] {n.get('tag')}{extra}")
    if r.get("truncated"):
        lines.append("… (truncated)")
    return "\n".join(lines)


def _format_find(r: dict[str, Any]) -> str:
    """/find answers: one line per match (ref, role, name, text, context)."""
    lines = []
    for m in r.get("matches", []):
        line = f"[{m.get('ref')}] {m.get('role')}"
        if m.get("name"):
            line += f" \"{m['name']}\""
        if m.get("text"):
            line += f" text \"{m['text']}\""
        if m.get("context"):
            line += f"  (in {m['context']})"
        lines.append(line)
    shown = len(lines)
    lines.append(f"{r.get('count', shown)} match(es)" + (f", {shown} shown" if r.get("truncated")
                                                         else ""))
    return "\n".join(lines)


def _human(result: Any) -> str:
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        if "state" in result and "controlUrl" in result:
            return _format_status(result)
        if isinstance(result.get("tabs"), list) and "running" in result:
            return _format_tabs(result)
        if "snapshotId" in result:
            if result.get("format") == "domSnapshot":
                return _format_dom_snapshot(result)
            text = str(result.get("text", "")).rstrip("\n")
            if result.get("format") == "read":
                text = (f"{result.get('title', '')}\n{result.get('url', '')}"
                        f"  [{result.get('loadState', '')}]\n\n{text}")
            if result.get("loadState") == "loading":
                text += "\n… (the page was still loading)"
            if result.get("truncated"):
                text += f"\n… (truncated: {result.get('hint', '')})"
            return text
        if "matches" in result and "count" in result:
            return _format_find(result)
        if "path" in result and "mediaUrl" in result:
            return str(result["path"])
        if "result" in result and "url" in result:
            value = result["result"]
            return value if isinstance(value, str) else orjson.dumps(value).decode()
        if "effects" in result:
            return _format_action(result)
        if "isActive" in result and "targetId" in result:
            return _format_tabs({"running": True, "tabs": [result]})
        if "title" in result and "url" in result and "targetId" in result:
            status = f"  [{result['status']}]" if result.get("status") else ""
            return f"{result['targetId']}  {str(result['title'])[:50]!r}  {result['url']}{status}"
        if "stopped" in result:
            return "stopped" if result["stopped"] else "the browser was not running"
        if set(result) == {"ok", "targetId"}:
            return f"ok {result['targetId']}"
    return orjson.dumps(result, option=orjson.OPT_INDENT_2).decode()


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="print JSON")
    common.add_argument("--control-url", default=argparse.SUPPRESS,
                        help="where the service listens (default from settings)")
    parser = argparse.ArgumentParser(prog="browserd", description=__doc__, parents=[common])
    sub = parser.add_subparsers(dest="command", required=True)
    real_add = sub.add_parser

    def add_parser(name: str, **kw: Any) -> argparse.ArgumentParser:
        return real_add(name, parents=[common], **kw)

    sub.add_parser = add_parser  # type: ignore[method-assign]

    serve = sub.add_parser("serve", help="run the service in the foreground")
    serve.add_argument("--cdp-port", type=int)
    serve.add_argument("--cdp-url")
    serve.add_argument("--attach-only", action="store_true")
    serve.add_argument("--profile")
    serve.add_argument("--executable")
    serve.add_argument("--headless", action="store_true", default=None)
    serve.add_argument("--headed", dest="headless", action="store_false")
    serve.add_argument("--no-auto-start", action="store_true")
    serve.add_argument("-v", "--verbose", action="store_true")

    mcp = sub.add_parser("mcp", help="serve MCP on stdio (tools on the running service)")
    mcp.add_argument("--caps", default="core",
                     help="tool groups, comma-separated: core, page, files, state, network, "
                          "emulation, profiles, service, or all (default: core)")

    token = sub.add_parser("token", help="print the API token")
    token.add_argument("--rotate", action="store_true", help="replace it with a new one")

    svc = sub.add_parser("service", help="install as a LaunchAgent / systemd --user unit")
    svc.add_argument("action", choices=("install", "uninstall"))
    svc.add_argument("--print", action="store_true", help="show, do not write")
    svc.add_argument("--kind", choices=("launchd", "systemd"))

    sub.add_parser("status", help="service and browser status")
    start = sub.add_parser("start", help="launch the browser")
    start.add_argument("--headless", action="store_true", default=None)
    start.add_argument("--headed", dest="headless", action="store_false")
    sub.add_parser("stop", help="stop the browser")
    sub.add_parser("tabs", help="list tabs")
    p = sub.add_parser("open", help="open a URL in a new tab")
    p.add_argument("url")
    for name in ("focus", "close"):
        p = sub.add_parser(name, help=f"{name} a tab")
        p.add_argument("target_id")
    p = sub.add_parser("navigate", help="navigate the current tab")
    p.add_argument("url")
    p.add_argument("--target")
    p = sub.add_parser("snapshot", help="accessibility snapshot with refs")
    p.add_argument("--format", default="aria", choices=("aria", "read", "domSnapshot"))
    p.add_argument("--interactive", action="store_true", default=None)
    p.add_argument("--root", help="scope to a ref (e12) or a CSS selector")
    p.add_argument("--max-chars", type=int, help="cap the text (0: no limit)")
    p.add_argument("--line-chars", type=int, help="longest name / text line (0: whole)")
    p.add_argument("--nodes", action="store_true", default=None, help="also the refs as JSON")
    p.add_argument("--target")
    p = sub.add_parser("find", help="find elements by role, name or text; prints their refs")
    p.add_argument("text", nargs="?", help="part of the name or visible text")
    p.add_argument("--role")
    p.add_argument("--name", help="part of the accessible name")
    p.add_argument("--exact", action="store_true", default=None)
    p.add_argument("--limit", type=int)
    p.add_argument("--root", help="scope to a ref (e12) or a CSS selector")
    p.add_argument("--target")
    p = sub.add_parser("click", help="click an element by ref")
    p.add_argument("ref")
    p.add_argument("--target")
    p = sub.add_parser("type", help="type text into an element by ref")
    p.add_argument("ref")
    p.add_argument("text")
    p.add_argument("--submit", action="store_true", default=None)
    p.add_argument("--target")
    p = sub.add_parser("press", help="press a key")
    p.add_argument("key")
    p.add_argument("--target")
    p = sub.add_parser("screenshot", help="take a screenshot; prints its path")
    p.add_argument("--full-page", action="store_true", default=None)
    p.add_argument("--ref")
    p.add_argument("--target")
    p = sub.add_parser("pdf", help="print the tab to PDF; prints its path")
    p.add_argument("--target")
    p = sub.add_parser("eval", help="evaluate JavaScript in the current tab")
    p.add_argument("js")
    p.add_argument("--await", dest="await_", action="store_true", default=None)
    p.add_argument("--target")
    add_state_commands(sub)
    return parser


_CLIENT_COMMANDS: dict[str, Callable[[Any, argparse.Namespace], Any]] = {
    "status": lambda c, a: c.get("/status"),
    "start": lambda c, a: c.post("/start", headless=a.headless),
    "stop": lambda c, a: c.post("/stop"),
    "tabs": lambda c, a: c.get("/tabs"),
    "open": lambda c, a: c.post("/tabs/open", url=a.url),
    "focus": lambda c, a: c.post("/tabs/focus", targetId=a.target_id),
    "close": lambda c, a: c.post("/tabs/close", targetId=a.target_id),
    "navigate": lambda c, a: c.post("/navigate", url=a.url, targetId=a.target),
    "snapshot": lambda c, a: c.get("/snapshot", format=a.format, interactive=a.interactive,
                                   root=a.root, maxChars=a.max_chars, lineChars=a.line_chars,
                                   nodes=a.nodes, targetId=a.target),
    "find": lambda c, a: c.get("/find", text=a.text, role=a.role, name=a.name, exact=a.exact,
                               limit=a.limit, root=a.root, targetId=a.target),
    "click": lambda c, a: c.post("/click", ref=a.ref, targetId=a.target),
    "type": lambda c, a: c.post("/type", ref=a.ref, text=a.text, submit=a.submit,
                                targetId=a.target),
    "press": lambda c, a: c.post("/press", key=a.key, targetId=a.target),
    "screenshot": lambda c, a: c.post("/screenshot", fullPage=a.full_page, ref=a.ref,
                                      targetId=a.target),
    "pdf": lambda c, a: c.post("/pdf", targetId=a.target),
    "eval": lambda c, a: c.post("/eval", js=a.js, targetId=a.target, **{"await": a.await_}),
    **STATE_COMMANDS,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.json = getattr(args, "json", False)
    args.control_url = getattr(args, "control_url", None)
    try:
        if args.command == "serve":
            return _serve(args)
        if args.command == "mcp":
            return _mcp(args)
        if args.command == "token":
            result: Any = _token(args)
        elif args.command == "service":
            result = _service(args)
        else:
            result = _CLIENT_COMMANDS[args.command](_client(args), args)
    except BrowserdError as exc:
        if args.json:
            from .client import ClientError

            # The service's whole error body: its details (a stale ref's reason, …) too.
            body = ({**exc.body, **exc.to_dict()} if isinstance(exc, ClientError)
                    else exc.to_dict())
            print(orjson.dumps(body).decode(), file=sys.stderr)
        else:
            print(f"browserd: {exc.message}", file=sys.stderr)
            if exc.hint:
                print(f"  hint: {exc.hint}", file=sys.stderr)
        return 1
    if args.json:
        print(orjson.dumps(result).decode() if not isinstance(result, str)
              else orjson.dumps({"result": result}).decode())
    else:
        print(_human(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
