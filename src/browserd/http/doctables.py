"""The route tables of the documents, generated from the route table itself.

``docs/api.md`` holds every route (name, method and path, scope, MCP group,
hints, what blocks it, how a ``confirm`` rule holds it, which fields of its
answer are the page's) and ``docs/mcp.md`` every MCP tool by group with its
hints, each between two marker comments (``<!-- routes:start -->`` …
``<!-- routes:end -->``, ``<!-- tools:start -->`` … ``<!-- tools:end -->``).
``python -m browserd.http.doctables --write`` rewrites them in place (in a
checkout: ``docs/`` beside ``src/``, or ``--docs DIR``); without ``--write`` it
exits 1 when one is stale. ``tests/unit/test_docs_tables.py`` fails when the
committed documents are stale.

Plain code but for :func:`main` (reads and writes the two files).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from .facts import (
    ACTS,
    ADDS,
    GROUPS,
    NO_TOOL,
    READS,
    SETS,
    Confirm,
    HeldAs,
    HeldByAction,
    HeldDownload,
    HeldSteps,
    Hints,
)
from .routes import all_routes
from .schema import Route

__all__ = ["DOCS", "TABLES", "confirm_label", "hints_label", "main", "refreshed",
           "routes_table", "tools_table"]

#: The documents' folder in a checkout (``src/browserd/http/`` → ``docs/``).
DOCS = Path(__file__).resolve().parents[3] / "docs"
_LABELS = {READS: "reads", ADDS: "adds", ACTS: "acts", SETS: "sets"}


def hints_label(hints: Hints) -> str:
    """``reads``, ``adds``, ``acts`` or ``sets`` (``, local`` for a route that acts on
    browserd itself, not on web pages); the hints' own words for any other mix."""
    label = _LABELS.get(Hints(read_only=hints.read_only, destructive=hints.destructive,
                              idempotent=hints.idempotent, open_world=True))
    if label is None:
        return hints.words()
    return label if hints.open_world else f"{label}, local"


def _by_action(by: HeldByAction) -> str:
    kinds: dict[str, list[str]] = {}
    for action, kind in by.kinds.items():
        kinds.setdefault(kind, []).append(action)
    return "; ".join(f"{', '.join(actions)}: `{kind}`" for kind, actions in kinds.items())


def confirm_label(confirm: Confirm | None) -> str:
    """How a ``confirm`` rule holds a call, in the table's words: its kind (`` `click` ``),
    raw input's kinds by action (``down, click: `click` ``), ``each step`` (a batch, as
    its kinds; ``but `find` ``: the reads no rule holds), ``its file`` (a download), ``-``
    (never)."""
    if isinstance(confirm, HeldAs):
        return f"`{confirm.kind}`"
    if isinstance(confirm, HeldByAction):
        return _by_action(confirm)
    if isinstance(confirm, HeldSteps):
        return "each step" + (f" but {', '.join(f'`{k}`' for k in sorted(confirm.unheld))}"
                              if confirm.unheld else "")
    if isinstance(confirm, HeldDownload):
        return "its file"
    return "-"


def _page_fields(route: Route) -> str:
    return ", ".join(f"`{field}`" for field in route.untrusted or ()) or "-"


def _blockers(route: Route) -> str:
    return ", ".join(sorted(route.blocked_by or ())) or "-"


def _route_path(route: Route) -> str:
    path = re.sub(r"<(?:[^<>:]+:)?([^<>:]+)>", r"{\1}", route.path)
    return f"{' '.join(route.methods)} {path}"


def routes_table(routes: Sequence[Route] | None = None) -> str:
    """Every route as one Markdown table row, in table order."""
    rows = ["| name | route | scope | group | hints | blocked by | confirm | page fields |",
            "|---|---|---|---|---|---|---|---|"]
    for route in all_routes() if routes is None else routes:
        assert route.hints is not None
        group = "-" if route.group == NO_TOOL else f"`{route.group}`"
        rows.append(f"| `{route.name}` | `{_route_path(route)}` | `{route.needs}` | {group} | "
                    f"{hints_label(route.hints)} | {_blockers(route)} | "
                    f"{confirm_label(route.confirm)} | {_page_fields(route)} |")
    return "\n".join(rows)


def tools_table(routes: Sequence[Route] | None = None) -> str:
    """The MCP tools by group (``--caps``), each with its hints, as a Markdown table."""
    table = all_routes() if routes is None else routes
    rows = ["| group | tool | hints | blocked by |", "|---|---|---|---|"]
    for group in GROUPS:
        for route in table:
            if route.group == group:
                assert route.hints is not None
                rows.append(f"| `{group}` | `{route.name}` | {hints_label(route.hints)} | "
                            f"{_blockers(route)} |")
    rows.append("| `all` | every tool | | |")
    return "\n".join(rows)


#: (document, marker) → its table.
TABLES = {("api.md", "routes"): routes_table, ("mcp.md", "tools"): tools_table}


def refreshed(text: str, marker: str, table: str) -> str:
    """``text`` with what stands between ``marker``'s comments replaced by ``table``;
    ValueError when the markers are not there."""
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    head, found, rest = text.partition(start)
    _, found_end, tail = rest.partition(end)
    if not found or not found_end:
        raise ValueError(f"no {start} … {end} markers")
    return f"{head}{start}\n{table}\n{end}{tail}"


def main(argv: Sequence[str] | None = None) -> int:
    """Check (exit 1 when stale) or ``--write`` the tables of the documents."""
    parser = argparse.ArgumentParser(prog="python -m browserd.http.doctables")
    parser.add_argument("--write", action="store_true", help="rewrite stale tables")
    parser.add_argument("--docs", type=Path, default=DOCS, help="the documents' folder")
    args = parser.parse_args(argv)
    routes = all_routes()
    stale = []
    for (name, marker), render in TABLES.items():
        path = args.docs / name
        text = path.read_text(encoding="utf-8")
        new = refreshed(text, marker, render(routes))
        if new != text:
            stale.append(name)
            if args.write:
                path.write_text(new, encoding="utf-8")
    verb = "rewrote" if args.write else "stale"
    for name in stale:
        print(f"{verb}: {args.docs / name}", file=sys.stderr)
    return 1 if stale and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
