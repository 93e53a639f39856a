"""The ``browserd`` top-level help, grouped by task, and ``browserd openapi``.

:func:`grouped_help` lists every command under the task it serves
(:data:`GROUPS`: Service, Profiles and sessions, Tabs, Reading, Acting,
Files, State, Network, People and tokens); a command no group names (a
route added later, a new hand-written command) is listed under "Other", so
the help always shows every command. The one-line summaries are the
commands' own (a generated command's is its route's summary, its route
words rewritten as commands). ``browserd openapi`` prints the service's
OpenAPI document (``GET /openapi.json``), indented: it is a document, the
one answer that is JSON for people too.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable, Mapping
from typing import Any

import orjson

__all__ = ["DESCRIPTION", "EPILOG", "GROUPS", "OPENAPI_COMMANDS", "add_openapi_command",
           "grouped_help"]

DESCRIPTION = """\
browserd runs a browser for your AI agents and lets you (and them) drive it
from the shell. `browserd serve` runs the service; every other command talks
to the running service (one request each) and prints text for people:
add --json for scripts.

Global options go before or after the command:
  --json              print the answer as JSON (errors too, on stderr)
  --profile NAME      act on this profile (default: the default profile)
  --session ID        work inside this session (see only its tabs)
  --target ID         the tab (a unique prefix of its id works; default: the current tab)
  --control-url URL   where the service listens (default: from settings)
  --boundary on|off|auto
                      put page text between <<page:NONCE>> lines
                      (auto: when stdout is not a terminal)
"""

EPILOG = """\
Examples:
  browserd open https://example.com
  browserd snapshot --interactive
  browserd find button Continue       (a role, then a name; --text WORD searches text)
  browserd click e12
  browserd type e7 ada@example.com --submit
  browserd select e5 Green
  browserd upload e9 ~/.local/share/browserd/uploads/cv.pdf
  browserd download 3f2a --out report.csv  (a unique prefix of the id)

`browserd COMMAND --help` shows a command's options."""

GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Service", ("serve", "status", "start", "stop", "healthz", "service", "mcp", "extension",
                 "metrics", "openapi")),
    ("Profiles and sessions", ("profiles", "sessions")),
    ("Tabs", ("tabs", "open", "focus", "close", "release", "tabs-request", "tabs-requests")),
    ("Reading", ("snapshot", "find", "query", "dom", "console", "eval", "screenshot", "pdf")),
    ("Acting", ("navigate", "back", "forward", "reload", "click", "type", "press", "hover",
                "select", "scroll", "drag", "mouse", "keyboard", "dialog", "act", "wait",
                "login", "record", "replay", "records-delete", "records-shots")),
    ("Files", ("upload", "downloads", "download", "media")),
    ("State", ("cookies", "storage", "state", "emulate")),
    ("Network", ("network",)),
    ("People and tokens", ("token", "tokens", "secrets", "offer", "confirm", "handoff",
                           "handoff-delete", "ui")),
)
"""Task → its commands, in the order the help lists them."""
_INDENT = 20  # where the summaries start


def grouped_help(summaries: Mapping[str, str], width: int = 78) -> str:
    """The command list of the top-level help: one block per task of :data:`GROUPS`
    (only the commands in ``summaries``, name → one-line summary), then "Other"."""
    listed: set[str] = set()
    blocks = []
    groups = [*GROUPS, ("Other", tuple(sorted(summaries)))]
    for title, names in groups:
        lines = []
        for name in names:
            if name not in summaries or name in listed:
                continue
            listed.add(name)
            summary = " ".join(summaries[name].split())
            wrapped = textwrap.wrap(summary, width=width - _INDENT) or [""]
            lines.append(f"  {name:<{_INDENT - 2}}{wrapped[0]}" if len(name) < _INDENT - 2
                         else f"  {name}\n{' ' * _INDENT}{wrapped[0]}")
            lines += [" " * _INDENT + more for more in wrapped[1:]]
        if lines:
            blocks.append(f"{title}:\n" + "\n".join(lines))
    return "\n\n".join(blocks)


class GroupedHelpParser(argparse.ArgumentParser):
    """The top-level parser: its help is :data:`DESCRIPTION`, the commands by task, then
    :data:`EPILOG` (``summaries`` is filled as the commands are added)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.summaries: dict[str, str] = {}
        self.words: Callable[[str], str] = str

    def format_help(self) -> str:
        summaries = {name: self.words(text) for name, text in self.summaries.items()}
        return "\n".join([self.format_usage().rstrip(), "", DESCRIPTION,
                          grouped_help(summaries), "", EPILOG, ""])


def add_openapi_command(sub: Any) -> None:
    """Add ``openapi`` to the ``browserd`` subparsers ``sub``."""
    sub.add_parser("openapi", help="print the service's OpenAPI document (every route)")


def _openapi(client: Any, args: argparse.Namespace) -> Any:
    doc = client.get("/openapi.json")
    return doc if args.json else orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode()


OPENAPI_COMMANDS: dict[str, Any] = {"openapi": _openapi}
