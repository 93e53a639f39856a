"""The shape of the package: public surface pinned, files of a readable size, one owner
for what must have one, every route declaring every fact (the imports: test_layers.py).

Like httpx's ``test_exported_members``: what a package exports is a decision,
so it is written down here and a change to it shows up in review.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any

import pytest

from ._modules import all_modules, module_path, tool_modules

#: ``__main__`` runs the CLI when imported.
NO_ALL_YET = {"browserd.__main__"}
#: Python modules, every JavaScript file under src/ (the page-side code) and the tests
#: alike.
MAX_LINES = 500  # split a module by concern before it grows past this


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


#: Where the JavaScript files are looked for (the checkout's src/, not an installed copy).
SOURCE_TREE = Path(__file__).resolve().parents[2] / "src"
#: The suite itself (its JavaScript packages under tests/js are npm's, not ours).
TEST_TREE = Path(__file__).resolve().parents[1]


def javascript_files() -> list[str]:
    """Every ``.js`` file under ``src/``, relative to it (``browserd/snapshot/walker.js``)."""
    return sorted(path.relative_to(SOURCE_TREE).as_posix()
                  for path in SOURCE_TREE.rglob("*.js"))


def suite_files() -> list[str]:
    """Every Python file of the suite, relative to the checkout (``tests/unit/test_x.py``)."""
    return sorted(path.relative_to(TEST_TREE.parent).as_posix()
                  for path in TEST_TREE.rglob("*.py") if "node_modules" not in path.parts)


def path_of(name: str) -> Path:
    """The file a name of :func:`test_no_source_file_is_over_500_lines` stands for."""
    if name.startswith("tests/"):
        return TEST_TREE.parent / name
    return SOURCE_TREE / name if name.endswith(".js") else module_path(name)


@pytest.mark.parametrize("name", all_modules() + tool_modules() + javascript_files()
                         + suite_files())
def test_no_source_file_is_over_500_lines(name: str) -> None:
    lines = path_of(name).read_text(encoding="utf-8").count("\n")
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
