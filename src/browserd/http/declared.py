"""Whether every route declared every fact (:mod:`browserd.http.facts`), and the table whole.

:func:`undeclared` names what one route left out or declared wrongly — a
fact that applies to some routes only is required of those: ``confirm`` of
every route an agent may call that can change a web page (:func:`may_change_pages`),
``untrusted`` of every JSON route that reaches web pages, ``render`` of every
MCP tool;
:func:`check_table` refuses a table with any such route, or with a name or a
CLI command that two routes share (:func:`browserd.http.routes.all_routes`
calls it, so the service does not start with an incomplete table).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..confirm import KINDS
from ..principals import AGENT_SCOPES, OWNER_SCOPE, PUBLIC_SCOPE
from .facts import (
    BLOCKERS,
    GROUPS,
    NO_SCOPE,
    NO_TOOL,
    HeldAs,
    HeldByAction,
    HeldDownload,
    HeldSteps,
    cli_command,
)
from .schema import Route

__all__ = ["check_table", "may_change_pages", "offerable", "reaches_pages", "undeclared"]

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
    return missing + _undeclared_answer_facts(route)


def _undeclared_answer_facts(route: Route) -> list[str]:
    """What ``route`` left out or declared wrongly of ``confirm``, ``untrusted`` and
    ``render`` (each required where it applies)."""
    missing = []
    if route.confirm is None:
        if may_change_pages(route):
            missing.append("confirm (NOT_HELD when no rule can hold it)")
    else:
        missing += [f"confirm: {why}" for why in _confirm_problems(route)]
    if route.untrusted is None and reaches_pages(route) and not route.raw_response:
        missing.append("untrusted (() when its answer holds nothing of the page)")
    if route.render is None and route.group not in ("", NO_TOOL):
        missing.append("render")
    return missing


def _confirm_problems(route: Route) -> list[str]:
    confirm, fields = route.confirm, {f.name for f in route.fields} | set(route.path_params)
    if isinstance(confirm, HeldAs):
        return [] if confirm.kind in KINDS else [f"{confirm.kind!r} is no rule kind"]
    if isinstance(confirm, HeldByAction):
        return _by_action_problems(confirm, "action" in fields)
    if isinstance(confirm, HeldSteps):
        problems = [] if "actions" in fields else ["steps without an actions field"]
        for by in confirm.raw.values():
            problems += _by_action_problems(by, True)
        return problems
    if isinstance(confirm, HeldDownload):
        return [] if confirm.field in fields else [f"no field {confirm.field!r}"]
    return []


def _by_action_problems(by: HeldByAction, has_action: bool) -> list[str]:
    problems = [] if has_action else ["by action without an action field"]
    return problems + [f"{kind!r} is no rule kind" for kind in by.kinds.values()
                       if kind not in KINDS]


def reaches_pages(route: Route) -> bool:
    """Whether ``route`` reaches web pages (its hints say open-world)."""
    return route.hints is not None and route.hints.open_world


def may_change_pages(route: Route) -> bool:
    """Whether an agent's call of ``route`` may change a web page or what the browser holds
    of it: it reaches pages, is not read-only and is not the person's alone."""
    return (reaches_pages(route) and route.hints is not None and not route.hints.read_only
            and route.auth and route.needs != OWNER_SCOPE)


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
