"""The shape of the package: public surface pinned, no import circle, imports point down.

Like httpx's ``test_exported_members``: what a package exports is a decision,
so it is written down here and a change to it shows up in review.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import browserd

SRC = Path(browserd.__file__).parent
#: Beside the package, the drills and the benchmarks (Python files only) are held to
#: the same line limit and the same "no import circle" rule.
TOOLS = {name: Path(__file__).resolve().parents[2] / name for name in ("supervision", "bench")}
#: ``__main__`` runs the CLI when imported.
NO_ALL_YET = {"browserd.__main__"}
#: Python modules and every JavaScript file under src/ (the page-side code) alike.
MAX_LINES = 500  # split a module by concern before it grows past this


def modules_of(package: str) -> list[str]:
    """``package`` (browserd, or one of :data:`TOOLS`) and every module under it."""
    path = SRC if package == "browserd" else TOOLS[package]
    names = [package]
    for info in pkgutil.walk_packages([str(path)], prefix=f"{package}."):
        names.append(info.name)
    return sorted(names)


def all_modules() -> list[str]:
    return modules_of("browserd")


def tool_modules() -> list[str]:
    return [name for package in sorted(TOOLS) for name in modules_of(package)]


def module_path(name: str) -> Path:
    top, *parts = name.split(".")
    base = (SRC if top == "browserd" else TOOLS[top]).joinpath(*parts)
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
    "browserd.supervisor.child": ["ChildSpec", "Outcome", "RestartDecision", "RestartTracker",
                                  "RestartType", "run_child"],
    "browserd.supervisor.serve": ["VERSION_DEADLINE_S", "open_runtime"],
    "browserd.relay": ["PairedExtension", "PairingCode", "PairingStore", "PinnedTarget",
                       "RelayHub", "RelayTransport", "extension_subtree", "group_colour"],
    "browserd.supervisor.state": ["SupervisorState", "SupervisorStatistics"],
    "browserd.supervisor.budgets": ["BROWSER_STOP_S", "HTTP_DRAIN_S", "SERVICE_STOP_S",
                                    "SUPERVISOR_STOP_S"],
    "browserd.supervisor.guards": ["PageGuards", "open_page_guards"],
    "browserd.downloads": ["CancelReason", "DownloadFollower", "DownloadRecord", "DownloadState",
                           "DownloadStatistics", "DownloadStore", "download_url",
                           "remove_downloads", "wait_next_download"],
    "browserd.tabs.navguard": ["ANSWER_DEADLINE_S", "BLOCKS_KEPT", "CHAINS_KEPT",
                               "SETUP_DEADLINE_S", "BlockRecord", "NavGuard",
                               "navigation_verdict"],
    "browserd.retention": ["RetainedFile", "Retention", "apply_retention"],
    "browserd.redact": ["PARSED_CHARS", "SHOWN_CHARS", "RedactingFilter", "loggable_url",
                        "redact_urls"],
    "browserd.tabs.state": ["CONSOLE_BUFFER", "NO_EMULATION", "ConsoleEntry", "ConsoleLog",
                            "DocumentAlive", "Emulation", "Geolocation", "LoadState",
                            "NetworkConditions", "RefMap", "RefRecord", "Viewport", "World",
                            "WorldKey"],
    "browserd.tabs.emulation": ["COLOR_SCHEMES", "REDUCED_MOTION", "apply", "change",
                                "sync_geolocation_permission", "updated"],
    "browserd.tabs.locator": ["ElementTarget"],
    "browserd.tabs.refs": ["Scope", "Walk", "run_walker", "walk_scope", "walk_tree",
                           "walker_error"],
    "browserd.tabs.snapshots": ["ARIA_MAX_CHARS", "FORMATS", "READ_TEXT_CHARS",
                                "READ_TOTAL_CHARS", "find", "take_snapshot"],
    "browserd.tabs.settle": ["DEFAULT_SETTLE_MS", "QUIET_MS", "WAIT_UNTIL", "YOUNG_MS",
                             "after_settling", "settle_after_input", "settle_document",
                             "settle_read"],
    "browserd.tabs.navwait": ["WAIT_UNTIL", "Arrival", "Probe", "first_main_commit",
                              "load_state_now", "wait_load_state", "wait_navigation"],
    "browserd.tabs.feed": ["COMMITS", "FEED_KEPT", "CommitFeed", "CommitKind", "CommitRecord"],
    "browserd.tabs.history": ["go_back", "go_forward", "reload"],
    "browserd.tabs.actions": [
        "ACTION_KINDS", "KEY_ACTIONS", "LOAD_STATES", "MODIFIER_BITS", "MOUSE_ACTIONS", "Action",
        "AnswerDialog", "Click", "Drag", "ElementTarget", "FindElements", "Hover", "KeyInput",
        "MouseInput", "Navigate", "Press", "Progress", "Select", "Step", "TypeText", "Upload",
        "Wait", "act", "click", "click_upload", "drag", "drop_files", "glob_regex",
        "handle_dialog", "hover", "key_spec", "keyboard", "locate", "modifier_mask", "mouse",
        "parse_chord", "perform", "press", "select", "type_text", "upload",
        "wait"],
    "browserd.http.routes": ["all_routes", "consent_routes", "download_routes", "emulation_routes",
                             "input_routes", "meta_routes",
                             "media_routes", "navigation_routes", "network_routes", "ops_routes",
                             "page_routes", "profile_routes", "service_routes", "state_routes",
                             "secret_routes", "tab_routes", "token_routes", "confirmation_routes",
                             "record_routes"],
    "browserd.tabs.actions.kinds": ["ACTION_KINDS", "ACTION_SPECS", "COORDINATE_LIMIT",
                                    "PERSON_WAITS", "READ_KINDS", "RECORDINGS", "ActionSpec",
                                    "BuildContext", "PerformContext", "Recording"],
    "browserd.uploads": ["MAX_UPLOAD_FILES", "UploadFile", "UploadPolicy"],
    "browserd.tabs.inputstate": ["BUTTON_BITS", "FileChooser", "InputState"],
    "browserd.tabs.scope": ["TabScope"],
    "browserd.tabs.origins": ["ORIGINS_SEEN_MAX", "RecentOrigins", "origin_of"],
    "browserd.profiles.manager": ["GatewayRunner", "ProfileManager", "download_store_for",
                                  "settings_for"],
    "browserd.profiles.sessions": ["CDP_DEADLINE_S", "Session", "SessionTable"],
    "browserd.profiles.binding": ["RuntimeOf", "grants_hidden", "live_with_fallback",
                                  "session_bound"],
    "browserd.handoff": ["ENDED_KEPT", "REASON_MAX_CHARS", "Handoff", "HandoffBoard",
                         "HandoffEnd", "HandoffOutcome", "wait_handoff_end"],
    "browserd.metrics": ["CONTENT_TYPE", "LANES", "LATENCY_BUCKETS_S", "OTHER", "Lane", "Metrics",
                         "ServiceGauges", "code_label", "known_codes"],
    "browserd.ui": ["AuditTail", "LiveViews", "OpsUi", "ThumbnailCache", "UiSessions"],
    "browserd.http.tabwork": ["blocked_now", "check_tab", "on_tab"],
    "browserd.cli.routes": ["GLOBAL_FIELDS", "MIN_PREFIX", "FieldSpec", "RouteCommand",
                            "add_route_commands", "commands_from_openapi",
                            "commands_from_routes", "resolve_prefix", "run_route_command"],
    "browserd.cdp": ["CdpConnection", "CdpEvent", "CdpSession", "JsonDict", "PipeTransport",
                     "Sink", "Subscription", "Transport", "WebSocketTransport",
                     "open_cdp_connection", "open_cdp_over"],
    "browserd.tabs.children": ["AUTO_ATTACH", "SETUP_DEADLINE_S", "ChildTargets"],
    "browserd.tabs.netlog": ["HEADERS_CAP", "NETWORK_BUFFER", "NETWORK_ENABLE", "NETWORK_EVENTS",
                             "NETWORK_QUIET", "POST_DATA_CAP", "RESOURCE_TYPES", "URL_CAP",
                             "NetworkControls", "NetworkEntry", "NetworkLog", "blocked_params"],
    "browserd.tabs.network": ["MAX_HEADERS", "REFUSED_HEADERS", "check_headers",
                              "ensure_enabled", "export_har", "request_detail", "set_blocked",
                              "set_extra_headers"],
    "browserd.tabs.har": ["HarBody", "body_for_har", "build_har"],
    "browserd.cli.network": ["NETWORK_COMMANDS", "add_network_commands", "format_network"],
    "browserd.events": ["RING_SIZE", "SUBSCRIBER_BUFFER", "Event", "EventHub", "EventSink",
                        "EventType", "HubStatistics", "Subscription", "parse_types",
                        "sse_comment", "sse_event", "sse_retry"],
    "browserd.http.catalog": ["GROUPS", "Operation", "catalog", "lookup", "select"],
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
                   "AnswerDialog", "Upload", "Drag", "MouseInput", "KeyInput", "FindElements"):
        assert getattr(actions, record) is getattr(records, record)
        assert getattr(records, record).kind in actions.ACTION_KINDS


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


#: Where the JavaScript files are looked for (the checkout's src/, not an installed copy).
SOURCE_TREE = Path(__file__).resolve().parents[2] / "src"


def javascript_files() -> list[str]:
    """Every ``.js`` file under ``src/``, relative to it (``browserd/snapshot/walker.js``)."""
    return sorted(path.relative_to(SOURCE_TREE).as_posix()
                  for path in SOURCE_TREE.rglob("*.js"))


@pytest.mark.parametrize("name", all_modules() + tool_modules() + javascript_files())
def test_no_source_file_is_over_500_lines(name: str) -> None:
    path = SOURCE_TREE / name if name.endswith(".js") else module_path(name)
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{name} has {lines} lines: split it"


def modules_naming(text: str) -> set[str]:
    """Modules whose source contains ``text`` (a quoted CDP method name)."""
    return {name for name in all_modules()
            if text in module_path(name).read_text(encoding="utf-8")}


def test_fetch_and_held_targets_have_one_owner() -> None:
    """A second ``Fetch.enable`` on a session replaces the first one's patterns: on page
    sessions ``Fetch`` is the navigation guard's (the scratch page is a target of its own;
    network blocking uses the Network domain). Every held target is released by one
    helper, ``CdpSession.run_if_waiting``."""
    assert modules_naming('"Fetch.enable"') == {"browserd.tabs.navguard",
                                                "browserd.state.scratch"}
    assert modules_naming('"Runtime.runIfWaitingForDebugger"') == {"browserd.cdp.connection"}
    assert modules_naming("waitForDebuggerOnStart\": True") == {"browserd.tabs.navguard",
                                                              "browserd.tabs.children"}


# -- the route table ---------------------------------------------------------------


def test_every_route_declares_every_fact() -> None:
    """A route states its name, group, hints, scope, answer, blockers and CLI command
    where it is declared; a table where one is missing is refused with what is missing."""
    import attrs

    from browserd.http.declared import check_table, undeclared
    from browserd.http.routes import all_routes

    routes = all_routes()  # (checks the whole table itself)
    assert routes and not [r.path for r in routes if undeclared(r)]
    bare = attrs.evolve(routes[0], name="", group="", hints=None, needs="", answer=None,
                        blocked_by=None, cli=None)
    assert [fact.split(":")[0] for fact in undeclared(bare)] == [
        "name", "group", "hints", "needs", "answer", "blocked_by", "cli"]
    with pytest.raises(ValueError, match="blocked_by"):
        check_table([*routes, attrs.evolve(routes[-1], name="another", blocked_by=None)])
    with pytest.raises(ValueError, match="the name 'tabs' is"):
        check_table([*routes, attrs.evolve(routes[-1], name="tabs")])


def test_a_fact_that_applies_to_a_route_is_declared_and_declared_rightly() -> None:
    """How a confirm rule holds a call (every agent route that may change a page), its
    answer's page fields (every JSON route that reaches pages) and how an agent reads it
    (every tool) are declared where they apply; a wrong one is refused with why."""
    import attrs

    from browserd.http.declared import undeclared
    from browserd.http.facts import NOT_HELD, HeldAs, HeldByAction, HeldDownload, HeldSteps
    from browserd.http.routes import all_routes

    routes = {route.name: route for route in all_routes()}

    def problems(name: str, **facts: Any) -> list[str]:
        return undeclared(attrs.evolve(routes[name], **facts))

    assert problems("click", confirm=None) == ["confirm (NOT_HELD when no rule can hold it)"]
    assert problems("cookies_set", confirm=None)[0].startswith("confirm")
    assert problems("snapshot", confirm=None) == []  # a read: nothing to hold
    assert problems("tabs_offer", confirm=None) == []  # the person's own
    assert problems("click", confirm=HeldAs(kind="hover")) == [
        "confirm: 'hover' is no rule kind"]
    assert problems("click", confirm=HeldSteps(raw={})) == [
        "confirm: steps without an actions field"]
    assert problems("click", confirm=HeldByAction(kinds={"down": "click"})) == [
        "confirm: by action without an action field"]
    assert problems("mouse", confirm=HeldByAction(kinds={"down": "poke"})) == [
        "confirm: 'poke' is no rule kind"]
    assert problems("download", confirm=HeldDownload(field="name")) == [
        "confirm: no field 'name'"]
    assert problems("click", confirm=NOT_HELD) == []
    assert problems("snapshot", untrusted=None)[0].startswith("untrusted")
    assert problems("cookies_get", untrusted=None)[0].startswith("untrusted")
    assert problems("tokens_get", untrusted=None) == []  # browserd's own
    assert problems("media", untrusted=None) == []  # a raw answer
    assert problems("status", render=None) == ["render"]
    assert problems("media", render=None) == []  # no tool


def test_no_route_handler_decides_what_blocks_its_tab_work() -> None:
    """``on_tab`` takes what blocks a route from the route's declaration (``blocked_by``),
    never from arguments a handler passes."""
    allowed = {"deadline_s", "allow_crashed", "refuse_new_dialog"}
    wrong = []
    for name in all_modules():
        if not name.startswith("browserd.http"):
            continue
        tree = ast.parse(module_path(name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "on_tab":
                extra = {k.arg for k in node.keywords} - allowed
                if extra:
                    wrong.append(f"{name}:{node.lineno} passes {sorted(extra)}")
    assert not wrong, "\n".join(wrong)
