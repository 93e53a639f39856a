"""The service's route words in CLI terms: ``GET /tabs`` → ``browserd tabs``.

The service's hints and summaries speak HTTP ("list tabs with GET /tabs",
"see GET /openapi.json", "wait with POST /wait {tabRequest}"). For a person
at a shell, :class:`CommandWords` rewrites each route mention into the
command that calls it, using the CLI's own naming: each route's command, or
the command that covers it (:class:`browserd.cli.routes.RouteCommand`). A body
``{field}`` (or ``{field: value}``) after a route becomes the option
(``--tab-request``). A path no command calls (``/ui/login``), URLs and
other slashes are left as they are. Pure; never raises.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import attrs

from .routes import OPTION_NAMES, RouteCommand

__all__ = ["CommandWords", "lazy_words"]

_MENTION = re.compile(
    r"(?<![\w/:.\-])(?:(?P<method>GET|POST|PUT|DELETE|PATCH) )?"
    r"(?P<path>/(?:[A-Za-z0-9_.{}<>-]+(?:/[A-Za-z0-9_.{}<>-]+)*)?)"
    r"(?P<body> \{(?P<field>[A-Za-z]+)(?:: [^{}]*)?\})?")


def _kebab(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", name).lower()


def _pattern(path: str) -> re.Pattern[str]:
    """A path template (``/tabs/{targetId}``) as a regex of the concrete paths it names;
    a template in a hint (``{id}``, ``<id>``) matches it too."""
    parts = re.split(r"(\{[^}]+\})", path)
    body = "".join(r"(?:[^/\s]+)" if p.startswith("{") else re.escape(p) for p in parts)
    return re.compile(f"^{body}$")


@attrs.frozen
class _Entry:
    method: str
    pattern: re.Pattern[str]
    command: str
    templated: int  # how many {parameters}: a literal path wins over a template


class CommandWords:
    """Route mentions → ``browserd`` commands, for one set of generated commands."""

    def __init__(self, commands: Sequence[RouteCommand]) -> None:
        self._entries = [_Entry(c.method, _pattern(c.path), c.name, c.path.count("{"))
                         for c in commands]

    def command_for(self, path: str, method: str | None = None) -> str | None:
        """The command that calls ``path`` (with ``method`` if one does; else any method's),
        or None when no command does."""
        path = path.split("?", 1)[0]
        path = re.sub(r"<(?:[^<>:]+:)?([^<>:]+)>", r"{\1}", path)
        matching = sorted((e for e in self._entries if e.pattern.match(path)),
                          key=lambda e: e.templated)
        exact = [e for e in matching if e.method == method]
        chosen = (exact or matching)[:1]
        return chosen[0].command if chosen else None

    def rewrite(self, text: str) -> str:
        """``text`` with each route mention that a command calls written as that command."""

        def replace(match: re.Match[str]) -> str:
            path, method = match["path"], match["method"]
            if path == "/" and method is None:
                return match[0]
            command = self.command_for(path, method)
            if command is None:
                return match[0]
            words = f"browserd {command}"
            if match["field"]:
                field = match["field"]
                words += f" --{OPTION_NAMES.get(field, _kebab(field))}"
            return words

        return _MENTION.sub(replace, text)


def lazy_words(load: Callable[[], Sequence[RouteCommand]]) -> Callable[[str], str]:
    """:meth:`CommandWords.rewrite` over the commands ``load`` returns, loaded at the
    first text that mentions a path (most texts do not: they cost nothing)."""
    made: list[CommandWords] = []

    def rewrite(text: str) -> str:
        if "/" not in text:
            return text
        if not made:
            made.append(CommandWords(load()))
        return made[0].rewrite(text)

    return rewrite
