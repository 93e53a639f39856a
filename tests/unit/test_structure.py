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
    "browserd.tabs.state": ["CONSOLE_BUFFER", "ConsoleEntry", "ConsoleLog", "LoadState",
                            "RefMap", "RefRecord", "World", "WorldKey"],
    "browserd.tabs.locator": ["ElementTarget"],
    "browserd.tabs.actions": [
        "ACTION_KINDS", "LOAD_STATES", "MODIFIER_BITS", "Action", "AnswerDialog", "Click",
        "ElementTarget", "Hover", "Navigate", "Observer", "Press", "Progress", "Select", "Step",
        "TypeText", "Wait", "act", "click", "glob_regex", "handle_dialog", "hover", "key_spec",
        "locate", "modifier_mask", "observing", "parse_chord", "perform", "press", "select",
        "type_text", "wait"],
    "browserd.http.routes": ["all_routes", "input_routes", "media_routes", "page_routes",
                             "profile_routes", "service_routes", "tab_routes"],
    "browserd.http.tabwork": ["on_tab"],
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
#: (service/http -> supervisor -> cdp, tabs, browser -> errors).
_ABOVE_LEAVES = {"gateway", "supervisor", "http", "media", "service", "system", "cli"}
FORBIDDEN = {
    "errors": _ABOVE_LEAVES | {"browser", "cdp", "tabs", "snapshot", "config"},
    "cdp": _ABOVE_LEAVES | {"browser", "tabs", "snapshot"},
    "browser": _ABOVE_LEAVES | {"tabs", "snapshot"},  # process runs CDP over its pipe
    "snapshot": _ABOVE_LEAVES | {"browser", "cdp", "tabs"},
    "media": (_ABOVE_LEAVES - {"media"}) | {"browser", "cdp", "tabs", "snapshot"},
    "tabs": _ABOVE_LEAVES | {"browser"},
    "supervisor": _ABOVE_LEAVES - {"supervisor"},
    "http": {"gateway", "service", "cli"},
    "gateway": {"service", "cli"},
    "profiles": {"http", "gateway", "service", "system", "cli"},
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
    assert not any(m.startswith("browserd.tabs") for m in imports_of("browserd.tabs.state"))
    assert imports_of("browserd.tabs.actor") & {
        m for m in all_modules() if m.startswith("browserd.tabs")} <= {
        "browserd.tabs.remote", "browserd.tabs.state"}


@pytest.mark.parametrize("name", all_modules())
def test_no_source_file_is_over_about_500_lines(name: str) -> None:
    lines = module_path(name).read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{name} has {lines} lines: split it by concern"
