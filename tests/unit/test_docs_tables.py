"""The route tables of docs/api.md and docs/mcp.md are generated from the route table."""

from __future__ import annotations

from pathlib import Path

import pytest

from browserd.http import doctables
from browserd.http.doctables import (
    confirm_label,
    hints_label,
    refreshed,
    routes_table,
    tools_table,
)
from browserd.http.facts import ACTS, LOCAL_READS, READS, SETS, Hints
from browserd.http.routes import all_routes

DOCS = Path(__file__).parents[2] / "docs"


@pytest.mark.parametrize(("name", "marker"), list(doctables.TABLES))
def test_the_committed_tables_are_current(name: str, marker: str) -> None:
    text = (DOCS / name).read_text(encoding="utf-8")
    render = doctables.TABLES[(name, marker)]
    assert refreshed(text, marker, render(all_routes())) == text, (
        f"docs/{name}'s {marker} table is stale: python -m browserd.http.doctables --write")


def test_every_route_is_a_row_and_every_tool_is_in_its_group() -> None:
    routes = all_routes()
    rows = routes_table(routes).splitlines()[2:]
    assert len(rows) == len(routes)
    assert ("| `tabs_open` | `POST /tabs/open` | `act` | `core` | adds | handoff | `navigate` "
            "| `title`, `url` |") in rows
    assert "| `tabs_delete` | `DELETE /tabs/{targetId}` | `act` | - | acts | handoff | - | - |" \
        in rows
    assert ("| `act` | `POST /act` | `act` | `page` | acts | dialog, handoff "
            "| each step but `find`, `hover`, `wait` | `steps`, `snapshot` |") in rows
    tools = tools_table(routes).splitlines()[2:-1]
    assert len(tools) == len([r for r in routes if r.group != "none"])
    assert tools[0].startswith("| `core` |")
    assert "| `state` | `cookies_delete` | sets | - |" in tools


def test_how_a_rule_holds_a_call_reads_as_words() -> None:
    by_name = {route.name: route.confirm for route in all_routes()}
    assert confirm_label(by_name["back"]) == "`navigate`"
    assert confirm_label(by_name["keyboard"]) == "down: `press`; insertText: `type`"
    assert confirm_label(by_name["mouse"]) == "down, click: `click`"
    assert (confirm_label(by_name["download"]), confirm_label(by_name["hover"]),
            confirm_label(by_name["snapshot"])) == ("its file", "-", "-")


def test_hints_read_as_words() -> None:
    assert hints_label(READS) == "reads" and hints_label(LOCAL_READS) == "reads, local"
    assert hints_label(ACTS) == "acts" and hints_label(SETS) == "sets"
    odd = Hints(read_only=True, destructive=True, idempotent=False, open_world=False)
    assert hints_label(odd) == "read-only, destructive"


def test_only_the_marked_part_is_rewritten(tmp_path: Path) -> None:
    text = "before\n<!-- t:start -->\nold\n<!-- t:end -->\nafter\n"
    assert refreshed(text, "t", "new") == "before\n<!-- t:start -->\nnew\n<!-- t:end -->\nafter\n"
    with pytest.raises(ValueError, match="markers"):
        refreshed("no markers", "t", "new")
    for name, marker in doctables.TABLES:
        (tmp_path / name).write_text(f"# {name}\n<!-- {marker}:start -->\n"
                                     f"<!-- {marker}:end -->\n", encoding="utf-8")
    assert doctables.main(["--docs", str(tmp_path)]) == 1  # stale: checked, not written
    assert doctables.main(["--docs", str(tmp_path), "--write"]) == 0
    assert doctables.main(["--docs", str(tmp_path)]) == 0
    assert "`tabs_open`" in (tmp_path / "mcp.md").read_text(encoding="utf-8")
