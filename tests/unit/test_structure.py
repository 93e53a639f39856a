"""The shape of the package: public surface pinned, no import circle, imports point down.

Like httpx's ``test_exported_members``: what a package exports is a decision,
so it is written down here and a change to it shows up in review.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import browserd

SRC = Path(browserd.__file__).parent
#: ``__main__`` runs the CLI when imported.
NO_ALL_YET = {"browserd.__main__"}
MAX_LINES = 520  # "~500": split a module by concern before it grows past this


def all_modules() -> list[str]:
    names = ["browserd"]
    for info in pkgutil.walk_packages([str(SRC)], prefix="browserd."):
        names.append(info.name)
    return sorted(names)


def module_path(name: str) -> Path:
    parts = name.split(".")[1:]
    base = SRC.joinpath(*parts)
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


@pytest.mark.parametrize("name", all_modules())
def test_every_module_imports_and_declares_what_it_exports(name: str) -> None:
    if name in NO_ALL_YET:
        return  # (importing __main__ would run the CLI)
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what it does not define: {missing}"


PINNED = {
    "browserd.supervisor": ["BrowserSupervisor"],
    "browserd.supervisor.runtime": ["BrowserRuntime"],
    "browserd.supervisor.policy": ["REFUSALS", "RestartHistory", "RestartPolicy"],
    "browserd.supervisor.state": ["SupervisorState"],
    "browserd.supervisor.budgets": ["BROWSER_STOP_S", "HTTP_DRAIN_S", "SERVICE_STOP_S",
                                    "SUPERVISOR_STOP_S"],
    "browserd.supervisor.guards": ["PageGuards", "open_page_guards"],
    "browserd.downloads": ["CancelReason", "DownloadFollower", "DownloadRecord", "DownloadState",
                           "DownloadStatistics", "DownloadStore", "download_url",
                           "wait_next_download"],
    "browserd.tabs.navguard": ["ANSWER_DEADLINE_S", "BLOCKS_KEPT", "CHAINS_KEPT",
                               "SETUP_DEADLINE_S", "BlockRecord", "NavGuard",
                               "navigation_verdict"],
    "browserd.retention": ["RetainedFile", "Retention", "apply_retention"],
    "browserd.redact": ["PARSED_CHARS", "SHOWN_CHARS", "RedactingFilter", "loggable_url",
                        "redact_urls"],
    "browserd.tabs.state": ["CONSOLE_BUFFER", "NO_EMULATION", "ConsoleEntry", "ConsoleLog",
                            "Emulation", "Geolocation", "LoadState", "NetworkConditions",
                            "RefMap", "RefRecord", "Viewport", "World", "WorldKey"],
    "browserd.tabs.emulation": ["COLOR_SCHEMES", "REDUCED_MOTION", "apply", "change",
                                "sync_geolocation_permission", "updated"],
    "browserd.tabs.locator": ["ElementTarget"],
    "browserd.tabs.refs": ["Scope", "Walk", "run_walker", "walk_scope", "walk_tree",
                           "walker_error"],
    "browserd.tabs.snapshots": ["ARIA_MAX_CHARS", "FORMATS", "READ_TEXT_CHARS",
                                "READ_TOTAL_CHARS", "find", "take_snapshot"],
    "browserd.tabs.settle": ["DEFAULT_SETTLE_MS", "WAIT_UNTIL", "after_settling",
                             "settle_after_input", "settle_document", "wait_load_state"],
    "browserd.tabs.actions": [
        "ACTION_KINDS", "LOAD_STATES", "MODIFIER_BITS", "Action", "AnswerDialog", "Click",
        "ElementTarget", "Hover", "Navigate", "Observer", "Press", "Progress", "Select", "Step",
        "TypeText", "Wait", "act", "click", "glob_regex", "handle_dialog", "hover", "key_spec",
        "locate", "modifier_mask", "observing", "parse_chord", "perform", "press", "select",
        "type_text", "wait"],
    "browserd.http.routes": ["all_routes", "download_routes", "emulation_routes", "input_routes",
                             "media_routes", "page_routes", "service_routes", "state_routes",
                             "tab_routes"],
    "browserd.http.tabwork": ["on_tab"],
    "browserd.events": ["RING_SIZE", "SUBSCRIBER_BUFFER", "Event", "EventHub", "EventSink",
                        "EventType", "HubStatistics", "Subscription", "parse_types",
                        "sse_comment", "sse_event", "sse_retry"],
    "browserd.http.catalog": ["CORE", "GROUPS", "Operation", "catalog", "select"],
    "browserd.mcp": ["McpEndpoint", "open_mcp_endpoint"],
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_public_surface_is_pinned(name: str) -> None:
    module = importlib.import_module(name)
    assert sorted(module.__all__) == sorted(PINNED[name])


def test_action_records_are_what_the_actions_package_exports() -> None:
    from browserd.tabs import actions
    from browserd.tabs.actions import records

    for record in ("Click", "Hover", "TypeText", "Press", "Select", "Wait", "Navigate",
                   "AnswerDialog"):
        assert getattr(actions, record) is getattr(records, record)
        assert getattr(records, record).kind in actions.ACTION_KINDS


# -- imports -------------------------------------------------------------------


def imports_of(name: str) -> set[str]:
    """The browserd modules ``name`` imports (anywhere in it, lazy imports included)."""
    path = module_path(name)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    known = set(all_modules())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("browserd"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("browserd"):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in known else target)
    return {m for m in found if m in known and m != name}


def test_the_import_graph_sees_relative_and_lazy_imports() -> None:
    assert "browserd.tabs.registry" in imports_of("browserd.supervisor.supervisor")
    assert "browserd.service" in imports_of("browserd.cli")  # imported inside a function
    assert "browserd.tabs.actor" in imports_of("browserd.tabs.actions.element")


def test_there_is_no_import_circle() -> None:
    graph = {name: imports_of(name) for name in all_modules()}
    visiting: list[str] = []
    done: set[str] = set()

    def visit(node: str) -> None:
        if node in done:
            return
        assert node not in visiting, "import circle: " + " -> ".join(
            [*visiting[visiting.index(node):], node])
        visiting.append(node)
        for child in sorted(graph[node]):
            visit(child)
        visiting.pop()
        done.add(node)

    for name in graph:
        visit(name)


def area(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


#: What each part of the tree must never import: imports point down
#: (service/http -> supervisor -> downloads -> cdp, tabs, browser -> errors; beside the
#: supervisor, http -> state -> cdp, tabs: ``state`` is the browser's stored state, cookies
#: and storage). ``downloads`` sits between the supervisor (which starts its follower per
#: connection) and tabs (its wait watches a tab); ``retention`` is a leaf shared by the
#: media and download stores; ``events`` is a leaf every publisher imports (supervisor,
#: tabs, downloads); ``mcp`` sits beside ``http`` (it builds on its catalog).
_ABOVE_LEAVES = {"gateway", "state", "supervisor", "http", "media", "service", "system", "cli",
                 "cli_state", "downloads", "mcp"}
FORBIDDEN = {
    "errors": _ABOVE_LEAVES | {"browser", "cdp", "tabs", "snapshot", "config"},
    "retention": _ABOVE_LEAVES | {"browser", "cdp", "tabs", "snapshot", "config"},
    "cdp": _ABOVE_LEAVES | {"browser", "tabs", "snapshot"},
    "browser": _ABOVE_LEAVES | {"tabs", "snapshot"},  # process runs CDP over its pipe
    "snapshot": _ABOVE_LEAVES | {"browser", "cdp", "tabs"},
    "media": (_ABOVE_LEAVES - {"media"}) | {"browser", "cdp", "tabs", "snapshot"},
    "tabs": _ABOVE_LEAVES | {"browser"},
    "downloads": (_ABOVE_LEAVES - {"downloads"}) | {"browser", "snapshot"},
    "state": (_ABOVE_LEAVES - {"state"}) | {"browser"},
    "supervisor": _ABOVE_LEAVES - {"supervisor", "downloads"},
    "events": _ABOVE_LEAVES | {"browser", "cdp", "tabs", "snapshot", "config"},
    "http": {"gateway", "service", "cli", "cli_state", "mcp"},
    "mcp": {"gateway", "service", "cli", "cli_state"},
    "gateway": {"service", "cli", "cli_state"},
}


def test_imports_point_down_the_tree() -> None:
    wrong = sorted(
        f"{name} imports {target}"
        for name in all_modules()
        for target in imports_of(name)
        if area(target) in FORBIDDEN.get(area(name), set())
    )
    assert not wrong, "\n".join(wrong)


def test_inside_tabs_the_actor_and_its_state_are_leaves() -> None:
    in_tabs = {m for m in all_modules() if m.startswith("browserd.tabs")}
    assert not imports_of("browserd.tabs.state") & in_tabs
    # The actor holds the connection's navigation guard, itself a leaf of tabs.
    assert not imports_of("browserd.tabs.navguard") & in_tabs
    assert imports_of("browserd.tabs.actor") & in_tabs <= {
        "browserd.tabs.remote", "browserd.tabs.state", "browserd.tabs.navguard"}


def test_the_ref_engine_does_not_import_what_is_built_on_it() -> None:
    above = {"browserd.tabs.snapshots", "browserd.tabs.settle", "browserd.tabs.query",
             "browserd.tabs.capture"}
    for engine in ("browserd.tabs.worlds", "browserd.tabs.refs", "browserd.tabs.resolve"):
        assert not imports_of(engine) & above, engine


def private_imports_of(name: str) -> list[str]:
    """Names starting with ``_`` (dunders aside) that ``name`` imports from browserd modules."""
    tree = ast.parse(module_path(name).read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if not node.level and not (node.module or "").startswith("browserd"):
            continue
        found += [f"{node.module or '.'}.{a.name}" for a in node.names
                  if a.name.startswith("_") and not a.name.startswith("__")]
    return found


def test_no_module_imports_another_modules_private_names() -> None:
    wrong = {name: found for name in all_modules() if (found := private_imports_of(name))}
    assert not wrong, wrong


@pytest.mark.parametrize("name", all_modules())
def test_no_source_file_is_over_about_500_lines(name: str) -> None:
    lines = module_path(name).read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{name} has {lines} lines: split it by concern"
