"""Whether every route declared every fact (:mod:`browserd.http.facts`), and the table whole.

:func:`undeclared` names what one route left out or declared wrongly;
:func:`check_table` refuses a table with any such route, or with a name or a
CLI command that two routes share (:func:`browserd.http.routes.all_routes`
calls it, so the service does not start with an incomplete table).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..principals import AGENT_SCOPES, OWNER_SCOPE, PUBLIC_SCOPE
from .facts import BLOCKERS, GROUPS, NO_SCOPE, NO_TOOL, cli_command
from .schema import Route

__all__ = ["check_table", "offerable", "undeclared"]

_NAME_RE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")


def undeclared(route: Route) -> list[str]:
    """The facts ``route`` has not declared (empty: every one is there), and those it
    declared wrongly, each as ``fact: why``."""
    missing = []
    if not route.name:
        missing.append("name")
    elif not _NAME_RE.match(route.name):
        missing.append(f"name: {route.name!r} is not snake_case")
    if not route.group:
        missing.append("group")
    elif route.group not in (*GROUPS, NO_TOOL):
        missing.append(f"group: {route.group!r} is none of {', '.join(GROUPS)}, {NO_TOOL}")
    if route.hints is None:
        missing.append("hints")
    if not route.needs:
        missing.append("needs")
    elif route.needs not in (*AGENT_SCOPES, OWNER_SCOPE, PUBLIC_SCOPE, NO_SCOPE):
        missing.append(f"needs: {route.needs!r} is no scope")
    elif (route.needs == NO_SCOPE) == route.auth:
        missing.append(f"needs: {NO_SCOPE!r} is for the routes without the token alone")
    if route.answer is None:
        missing.append("answer")
    if route.blocked_by is None:
        missing.append("blocked_by")
    elif not route.blocked_by <= set(BLOCKERS):
        missing.append(f"blocked_by: only {', '.join(BLOCKERS)}")
    if route.cli is None:
        missing.append("cli")
    if route.group not in ("", NO_TOOL) and not offerable(route):
        missing.append(f"group: {route.path} cannot be a tool (say {NO_TOOL!r})")
    return missing


def offerable(route: Route) -> bool:
    """Whether ``route`` can be a ``/ws`` method and an MCP tool at all: it takes the
    token, answers JSON, has no path parameters and is not the person's."""
    return (route.auth and not route.raw_response and not route.path_params
            and route.needs != OWNER_SCOPE)


def check_table(routes: Iterable[Route]) -> None:
    """Raise ValueError naming every route that lacks a fact, and names (route names, CLI
    commands) that two routes share."""
    problems: list[str] = []
    names: dict[str, str] = {}
    commands: dict[str, str] = {}
    for route in routes:
        where = f"{'/'.join(route.methods)} {route.path}"
        problems += [f"{where}: {fact}" for fact in undeclared(route)]
        if route.name in names:
            problems.append(f"{where}: the name {route.name!r} is {names[route.name]}'s too")
        names[route.name] = where
        if route.cli is not None and route.cli.covered_by is None:
            command = cli_command(route.name, route.cli)
            if command in commands:
                problems.append(f"{where}: the command {command!r} is "
                                f"{commands[command]}'s too")
            commands[command] = where
    if problems:
        raise ValueError("the route table is incomplete:\n" + "\n".join(problems))
