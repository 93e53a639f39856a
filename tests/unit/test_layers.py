"""Imports point down the tree: no import circle, the layers checked transitively, the
finer rules between neighbours, no module reaching another's private names."""

from __future__ import annotations

import ast
from collections.abc import Callable

import pytest

from ._modules import TOOLS, all_modules, module_path, modules_of

# -- imports -------------------------------------------------------------------


def imports_of(name: str) -> set[str]:
    """The modules of its own package (browserd, supervision, bench) that ``name`` imports.

    Anywhere in it: lazy imports and those under ``TYPE_CHECKING`` included.
    """
    path = module_path(name)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    top = name.split(".")[0]
    known = set(modules_of(top))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == top)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != top:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in known else target)
    return {m for m in found if m in known and m != name}


def test_the_import_graph_sees_relative_and_lazy_imports() -> None:
    assert "browserd.tabs.registry" in imports_of("browserd.supervisor.serve")
    assert "browserd.service" in imports_of("browserd.cli.main")  # imported inside a function
    assert "browserd.tabs.actor" in imports_of("browserd.tabs.actions.element")
    assert "supervision.drill" in imports_of("supervision.neighbour")
    assert "supervision.drills" in imports_of("supervision")  # a package's own __init__


@pytest.mark.parametrize("package", ["browserd", *sorted(TOOLS)])
def test_there_is_no_import_circle(package: str) -> None:
    graph = {name: imports_of(name) for name in modules_of(package)}
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
#: (service/http -> profiles -> supervisor -> downloads -> cdp, tabs, browser -> errors; beside the
#: supervisor, http -> state -> cdp, tabs: ``state`` is the browser's stored state, cookies
#: and storage). ``downloads`` sits between the supervisor (which starts its follower per
#: connection) and tabs (its wait watches a tab); ``retention`` is a leaf shared by the
#: media and download stores; ``events`` is a leaf every publisher imports (supervisor,
#: tabs, downloads); ``mcp`` sits beside ``http`` (it builds on its catalog). ``uploads``
#: (the upload-roots policy) is a leaf used by http: the tabs only ever see paths it
#: already checked.
_CLI = {"cli"}  # the command line: the package browserd.cli
_ABOVE_LEAVES = {"gateway", "state", "supervisor", "http", "media", "service", "system",
                 "downloads", "profiles", "handoff", "tabrequests", "metrics", "ui", "mcp",
                 "relay",
                 "principals", "vault", "confirm"} | _CLI
#: The ops page (``ui``) and handoffs sit above the supervisor and tabs, below the System
#: that holds them and the HTTP routes that use them; ``metrics`` is a leaf.
_OPS_ABOVE = {"http", "service", "system", "gateway"} | _CLI
FORBIDDEN = {
    "errors": _ABOVE_LEAVES | {"browser", "cdp", "tabs", "snapshot", "config"},
    "retention": _ABOVE_LEAVES | {"browser", "cdp", "tabs", "snapshot", "config"},
    "cdp": _ABOVE_LEAVES | {"browser", "tabs", "snapshot"},
    "browser": _ABOVE_LEAVES | {"tabs", "snapshot"},  # process runs CDP over its pipe
    "snapshot": _ABOVE_LEAVES | {"browser", "cdp", "tabs"},
    "media": (_ABOVE_LEAVES - {"media"}) | {"browser", "cdp", "tabs", "snapshot"},
    "tabs": _ABOVE_LEAVES | {"browser", "uploads"},
    "uploads": _ABOVE_LEAVES | {"browser", "cdp", "tabs", "snapshot"},
    "downloads": (_ABOVE_LEAVES - {"downloads"}) | {"browser", "snapshot"},
    "state": (_ABOVE_LEAVES - {"state"}) | {"browser"},
    "supervisor": _ABOVE_LEAVES - {"supervisor", "downloads"},
    "profiles": {"http", "gateway", "service", "system"} | _CLI,
    "http": {"gateway", "service", "mcp"} | _CLI,
    "mcp": {"gateway", "service"} | _CLI,
    "gateway": {"service"} | _CLI,
    "metrics": (_ABOVE_LEAVES - {"metrics"}) | {"browser", "cdp", "tabs", "snapshot"},
    "handoff": _OPS_ABOVE | {"ui", "metrics"},
    # Tab requests (the person's answers to agents): plain state beside the handoffs.
    "tabrequests": _OPS_ABOVE | {"ui", "metrics", "handoff", "profiles", "supervisor"},
    "ui": _OPS_ABOVE | {"handoff", "metrics"},
    "events": _ABOVE_LEAVES | {"browser", "cdp", "tabs", "snapshot", "config"},
    # The extension relay: below the profiles and the service that start it, beside http
    # (its door wraps the guarded app and borrows the guard's ASGI types).
    "relay": {"gateway", "service", "system", "profiles", "mcp", "ui", "handoff"} | _CLI,
    # Who is asking (tokens, scopes): a leaf above the errors, below every way in.
    "principals": _ABOVE_LEAVES - {"principals"} | {"browser", "cdp", "tabs", "snapshot"},
    # The vault (secrets and their redaction): above the leaves and tabs' origin rule only.
    "vault": _ABOVE_LEAVES - {"vault"} | {"browser", "cdp", "snapshot"},
    # The confirm rules (read by config) and the board of held actions: a leaf.
    "confirm": (_ABOVE_LEAVES - {"confirm"}) | {"browser", "cdp", "tabs", "snapshot", "config"},
    "privatefile": _ABOVE_LEAVES | {"browser", "cdp", "tabs", "snapshot", "config"},
}


def test_neighbours_keep_their_finer_rules() -> None:
    """Direct imports only: the rules inside and beside a layer (:data:`FORBIDDEN`)."""
    wrong = sorted(
        f"{name} imports {target}"
        for name in all_modules()
        for target in imports_of(name)
        if area(target) in FORBIDDEN.get(area(name), set())
    )
    assert not wrong, "\n".join(wrong)


#: The layers of ``browserd``, lowest first (docs/architecture.md, "Layers"). A module
#: belongs to the layer of the longest name below that matches it (``relay.door`` is a
#: front door, the rest of ``relay`` sits with the supervisor); every module must have
#: one. A module may import its own layer and those below, never one above, through
#: any chain (importing ``a.b.c`` runs ``a.b``'s ``__init__`` too, so that counts).
LAYERS: tuple[tuple[str, frozenset[str]], ...] = tuple(
    (layer, frozenset(names)) for layer, names in (
        ("leaves", {"", "errors", "groups", "paths", "jsontext", "redact", "textmatch",
                    "retention", "events", "privatefile", "token", "confirm", "metrics",
                    "media", "tabrequests", "answer_text", "records", "argfields"}),
        ("cdp", {"cdp"}),
        ("browser", {"browser"}),
        # Settings records: they name browsers (live discovery) and CDP types (egress).
        ("settings", {"config", "profilespec", "egress", "urlpolicy", "uploads", "tls",
                      "client"}),
        # The action kinds' specs write their recorded calls as Playwright
        # (records.playwright), and the replay and the scripts read the specs.
        ("tabs", {"tabs", "snapshot", "downloads", "state", "handoff", "vault",
                  "records.scripts", "records.trace", "records.playwright", "records.replay",
                  "records.video"}),
        ("supervisor", {"supervisor", "relay"}),
        ("profiles", {"profiles", "principals", "ui"}),
        # The System holds every profile and board; the recorder reads it.
        ("system", {"system", "records.recorder"}),
        ("front doors", {"http", "gateway", "mcp", "relay.door"}),
        ("cli", {"cli", "service_install", "service_units"}),
        ("service", {"service"}),
        # ``browserd serve`` runs the service: the command line is the very top.
        ("entry", {"cli.main", "__main__"}),
    )
)


def layer_of(name: str) -> int:
    """The index in :data:`LAYERS` of module ``name`` (KeyError: it has no layer)."""
    key = name.partition(".")[2]
    best: tuple[int, int] | None = None  # (length of the match, layer)
    for index, (_, names) in enumerate(LAYERS):
        for prefix in names:
            matches = key == prefix or (prefix and key.startswith(prefix + "."))
            if matches and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    if best is None:
        raise KeyError(f"{name} has no layer in LAYERS")
    return best[1]


def runtime_graph(modules: list[str]) -> dict[str, set[str]]:
    """:func:`imports_of` each module, plus the packages whose ``__init__`` that runs."""
    graph: dict[str, set[str]] = {}
    for name in modules:
        found = imports_of(name)
        parents = {target.rsplit(".", n)[0] for target in found
                   for n in range(1, target.count(".") + 1)}
        graph[name] = (found | parents) & set(modules) - {name}
    return graph


def upward_chains(graph: dict[str, set[str]], layer: Callable[[str], int]) -> list[list[str]]:
    """For each module, a shortest chain of imports to a module of a higher layer."""
    found = []
    for start in sorted(graph):
        came_from: dict[str, str | None] = {start: None}
        queue = [start]
        for node in queue:  # breadth first: the shortest chain
            if layer(node) > layer(start):
                chain = [node]
                while (before := came_from[chain[-1]]) is not None:
                    chain.append(before)
                found.append(chain[::-1])
                break
            for child in sorted(graph[node]):
                if child not in came_from:
                    came_from[child] = node
                    queue.append(child)
    return found


def test_the_layer_check_sees_a_leak_through_a_chain() -> None:
    graph = {"low": {"mid"}, "mid": {"high"}, "high": set()}
    rank = {"low": 0, "mid": 0, "high": 1}.__getitem__
    assert upward_chains(graph, rank) == [["low", "mid", "high"], ["mid", "high"]]
    assert "browserd.relay" in runtime_graph(all_modules())["browserd.relay.hub"]
    assert LAYERS[layer_of("browserd.relay.door")][0] == "front doors"
    assert LAYERS[layer_of("browserd.relay.hub")][0] == "supervisor"
    assert LAYERS[layer_of("browserd")][0] == "leaves"


def test_imports_point_down_the_tree() -> None:
    """No module reaches a higher layer through any chain of imports."""
    modules = all_modules()
    unplaced = []
    for name in modules:
        try:
            layer_of(name)
        except KeyError:
            unplaced.append(name)
    assert not unplaced, f"give these a layer in LAYERS: {unplaced}"
    wrong = [
        f"{LAYERS[layer_of(chain[0])][0]} {chain[0]} reaches "
        f"{LAYERS[layer_of(chain[-1])][0]} {chain[-1]}: " + " -> ".join(chain)
        for chain in upward_chains(runtime_graph(modules), layer_of)
    ]
    assert not wrong, "\n".join(wrong)


def test_inside_tabs_the_actor_and_its_state_are_leaves() -> None:
    in_tabs = {m for m in all_modules() if m.startswith("browserd.tabs")}
    # (the snapshot history it keeps for diffs is plain code, itself a leaf)
    assert imports_of("browserd.tabs.state") & in_tabs <= {"browserd.tabs.diffs"}
    assert not imports_of("browserd.tabs.diffs") & in_tabs
    assert not imports_of("browserd.tabs.netlog") & in_tabs
    assert imports_of("browserd.tabs.children") & in_tabs <= {"browserd.tabs.netlog"}
    # The actor holds the connection's navigation guard, itself a leaf of tabs.
    assert not imports_of("browserd.tabs.navguard") & in_tabs
    # The actor holds the tab's input state (file chooser, held keys), also a leaf.
    assert not imports_of("browserd.tabs.inputstate") & in_tabs
    # The actor's own helpers (its frames and feed, views, session plumbing, work slot).
    helpers = {"browserd.tabs.feed", "browserd.tabs.frames", "browserd.tabs.tabview",
               "browserd.tabs.tabrun", "browserd.tabs.workslot", "browserd.tabs.tabevents"}
    # What is in flight (tabs.inflight): plain bookkeeping the actor feeds, a leaf.
    assert not imports_of("browserd.tabs.inflight") & in_tabs
    leaves = {"browserd.tabs.inflight", "browserd.tabs.inputstate", "browserd.tabs.remote",
              "browserd.tabs.state",
              "browserd.tabs.navguard", "browserd.tabs.netlog", "browserd.tabs.children",
              "browserd.tabs.tabinfo", "browserd.tabs.diffs", "browserd.tabs.pagejs"}
    assert imports_of("browserd.tabs.actor") & in_tabs <= leaves | helpers
    for helper in helpers:
        assert imports_of(helper) & in_tabs <= leaves | helpers, helper


def test_the_actions_build_on_the_rest_of_tabs_never_the_other_way_round() -> None:
    """``tabs/actions/`` builds on ``tabs/page``, ``tabs/history`` and the effects
    Observer (``tabs/effects``); no other module of ``tabs/`` reaches it, through any
    chain of imports (a back edge once ran ``page`` → ``actions.effects``)."""
    actions = "browserd.tabs.actions"
    modules = all_modules()

    def rank(name: str) -> int:
        return 1 if name == actions or name.startswith(actions + ".") else 0

    wrong = [" -> ".join(chain) for chain in upward_chains(runtime_graph(modules), rank)
             if chain[0].startswith("browserd.tabs.")]
    assert not wrong, "\n".join(wrong)
    # The check sees such an edge.
    leak = {"browserd.tabs.page": {"browserd.tabs.actions.effects"},
            "browserd.tabs.actions.effects": set()}
    assert upward_chains(leak, rank) == [["browserd.tabs.page",
                                          "browserd.tabs.actions.effects"]]


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
