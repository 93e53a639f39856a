"""The gateway's command rules and target scope, as plain functions (no browser).

The allowlist (S16/S17/S18's methods and the rest refused), flat sessions
only, file paths through browserd's upload check, downloads confined (and
denied with downloads_enabled = false), browser contexts in reach, streams
of the client's own, and which TargetInfos a client may see.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from browserd.gateway.allowlist import ALLOWED, allowed
from browserd.gateway.rules import Limits, refusal
from browserd.gateway.targets import Reach, TargetView, in_scope
from browserd.uploads import UploadPolicy
from browserd.urlpolicy import UrlPolicy

DOWNLOADS = Path("/srv/browserd/downloads/clawd")
POLICY = UrlPolicy(blocked_ports=frozenset({18791, 18792}))
ANY = Reach(None)


def judge(method: str, params: dict[str, Any] | None = None, *, limits: Limits | None = None,
          reach: Reach = ANY, on_browser: bool = True,
          streams: frozenset[str] = frozenset()) -> tuple[str | None, dict[str, Any]]:
    params = dict(params or {})
    problem = refusal(method, params, limits=limits or Limits(policy=POLICY,
                                                              downloads_dir=DOWNLOADS),
                      sessions={"ROOT", "CHILD"}, reach=reach, on_browser=on_browser,
                      streams=streams)
    return problem, params


# -- the allowlist ------------------------------------------------------------------------

#: The methods the clients browserd serves send (the brief's measured union), spot-checked.
CLIENT_METHODS = (
    "Accessibility.getFullAXTree", "Browser.getVersion", "DOM.setFileInputFiles",
    "DOMSnapshot.captureSnapshot", "Emulation.setDeviceMetricsOverride", "Fetch.fulfillRequest",
    "IO.read", "Input.dispatchDragEvent", "Input.dispatchMouseEvent", "Network.getResponseBody",
    "Page.addScriptToEvaluateOnNewDocument", "Page.printToPDF", "Page.setDownloadBehavior",
    "Runtime.runIfWaitingForDebugger", "Storage.getStorageKey", "Target.attachToBrowserTarget",
    "Target.setAutoAttach", "Tracing.start", "WebMCP.enable", "Profiler.takePreciseCoverage",
)


@pytest.mark.parametrize("method", CLIENT_METHODS)
def test_what_the_clients_send_is_allowed(method: str) -> None:
    assert allowed(method)


@pytest.mark.parametrize("method", [
    "Browser.close", "Browser.crash", "Browser.crashGpuProcess", "Target.exposeDevToolsProtocol",
    "Target.sendMessageToTarget", "Target.setRemoteLocations", "SystemInfo.getInfo",
    "Page.handleFileChooser", "Network.getAllCookies", "Network.setCookie",
    "Storage.getUsageAndQuota",
    "Browser.setPermission", "Browser.executeBrowserCommand", "Page.setBypassCSP",
    "Runtime.evaluateX", "Runtime", "Runtime.", ".evaluate", "",
    "Tracing.requestMemoryDump", "Emulation.setScriptExecutionDisabled", "IO.resolveBlob",
])
def test_everything_else_is_refused_in_chromiums_error_style(method: str) -> None:
    problem, _ = judge(method)
    assert problem is not None
    assert problem.startswith(f"{method} is not allowed through browserd's CDP gateway")


def test_the_allowlist_holds_only_real_domain_method_names() -> None:
    for domain, methods in ALLOWED.items():
        assert domain[0].isupper() and methods, domain
        assert all(m[0].islower() and "." not in m for m in methods), domain
    assert sum(len(m) for m in ALLOWED.values()) > 120  # the brief's union, not a subset


# -- flat sessions only -------------------------------------------------------------------


@pytest.mark.parametrize(("method", "params", "refused"), [
    ("Target.attachToTarget", {"targetId": "T"}, True),  # CDP's default is flatten: false
    ("Target.attachToTarget", {"targetId": "T", "flatten": False}, True),
    ("Target.attachToTarget", {"targetId": "T", "flatten": "true"}, True),
    ("Target.attachToTarget", {"targetId": "T", "flatten": True}, False),
    ("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True}, True),
    ("Target.setAutoAttach", {"autoAttach": True, "flatten": False}, True),
    ("Target.setAutoAttach", {"autoAttach": True, "flatten": True}, False),
    ("Target.setAutoAttach", {"autoAttach": False, "waitForDebuggerOnStart": False}, False),
    ("Target.detachFromTarget", {"sessionId": "NOT-MINE"}, True),
    ("Target.detachFromTarget", {"sessionId": "CHILD"}, False),
])
def test_sessions_are_flat_and_the_clients_own(method: str, params: dict[str, Any],
                                               refused: bool) -> None:
    problem, _ = judge(method, params)
    assert (problem is not None) is refused, problem
    if refused and method != "Target.detachFromTarget":
        assert "flatten: true" in str(problem)


# -- downloads ----------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["Browser.setDownloadBehavior", "Page.setDownloadBehavior"])
def test_downloads_stay_in_browserds_directory_or_are_denied(method: str) -> None:
    problem, params = judge(method, {"behavior": "allow", "downloadPath": "/tmp/anywhere"})
    assert problem is None
    assert params == {"behavior": "allowAndName", "downloadPath": str(DOWNLOADS)}
    assert judge(method, {"behavior": "default"})[0] is not None  # ~/Downloads
    off = Limits(policy=POLICY, downloads_dir=DOWNLOADS, downloads_enabled=False)
    for behavior in ("allow", "allowAndName", "deny"):
        problem, params = judge(method, {"behavior": behavior, "downloadPath": "/tmp/x",
                                         "eventsEnabled": True}, limits=off)
        assert problem is None
        assert params == {"behavior": "deny", "eventsEnabled": True}


# -- host files ---------------------------------------------------------------------------


@pytest.fixture
def uploads(tmp_path: Path) -> tuple[Limits, Path]:
    root = tmp_path / "uploads"
    root.mkdir()
    (root / "ok.txt").write_text("fine")
    config = tmp_path / "config"
    config.mkdir()
    (config / "token").write_text("secret")
    os.symlink(config / "token", root / "token-link")
    os.symlink("/etc/hostname", root / "host-link")
    policy = UploadPolicy(roots=(root,), private=(config,))
    return Limits(policy=POLICY, downloads_dir=DOWNLOADS, uploads=policy.resolve), root


def test_set_file_input_files_takes_only_files_under_the_upload_roots(
    uploads: tuple[Limits, Path], tmp_path: Path,
) -> None:
    limits, root = uploads
    problem, params = judge("DOM.setFileInputFiles", {"files": ["ok.txt", str(root / "ok.txt")],
                                                      "nodeId": 3}, limits=limits)
    assert problem is None
    assert params == {"files": [str(root / "ok.txt")] * 2, "nodeId": 3}  # resolved
    outside = ["/etc/shadow", str(tmp_path / "config" / "token"), "../config/token",
               str(root / "token-link"), str(root / "host-link"),
               str(tmp_path / "profiles" / "clawd" / "Default" / "Cookies")]
    for path in outside:
        problem, params = judge("DOM.setFileInputFiles",
                                {"files": [str(root / "ok.txt"), path]}, limits=limits)
        assert problem is not None and "UPLOAD_BLOCKED" in problem, (path, problem)
        assert problem.startswith("DOM.setFileInputFiles: file refused by browserd")
        assert repr(path) in problem and "secret" not in problem
        assert str(tmp_path / "config") not in problem.replace(path, "")  # nothing but its own
    for bad in ({"files": "/etc/shadow"}, {"files": [1]}, {"files": [""]}, {}):
        assert judge("DOM.setFileInputFiles", bad, limits=limits)[0] is not None, bad
    # No upload policy: no host file at all.
    assert judge("DOM.setFileInputFiles", {"files": [str(root / "ok.txt")]})[0] is not None


def test_drag_data_files_pass_the_same_check(uploads: tuple[Limits, Path]) -> None:
    limits, root = uploads
    drag: dict[str, Any] = {"type": "drop", "x": 1, "y": 1, "data": {
        "items": [], "dragOperationsMask": 1, "files": ["/etc/passwd"]}}
    problem, _ = judge("Input.dispatchDragEvent", drag, limits=limits)
    assert problem is not None and "UPLOAD_BLOCKED" in problem
    drag["data"]["files"] = ["ok.txt"]
    problem, params = judge("Input.dispatchDragEvent", drag, limits=limits)
    assert problem is None and params["data"]["files"] == [str(root / "ok.txt")]
    text_only = {"type": "drop", "x": 1, "y": 1, "data": {"items": [{
        "mimeType": "text/plain", "data": "hi"}], "dragOperationsMask": 1}}
    assert judge("Input.dispatchDragEvent", text_only)[0] is None


# -- contexts, browser-wide methods, streams, URLs ----------------------------------------

BOUND = Reach(frozenset({"CTX-A"}), own=frozenset({"CTX-OWN"}))


@pytest.mark.parametrize(("method", "params", "on_browser", "refused"), [
    ("Target.createTarget", {"url": "about:blank"}, True, True),  # the default context
    ("Target.createTarget", {"url": "about:blank", "browserContextId": "CTX-A"}, True, False),
    ("Target.createTarget", {"url": "about:blank", "browserContextId": "CTX-OWN"}, True, False),
    ("Target.createTarget", {"url": "about:blank", "browserContextId": "CTX-B"}, True, True),
    ("Storage.getCookies", {}, True, True),
    ("Storage.getCookies", {}, False, False),  # a page session: its own page's context
    ("Storage.getCookies", {"browserContextId": "unknown"}, False, True),
    ("Storage.setCookies", {"cookies": [], "browserContextId": "CTX-B"}, True, True),
    ("Storage.clearCookies", {"browserContextId": "CTX-A"}, True, False),
    ("Browser.grantPermissions", {"permissions": ["geolocation"]}, True, True),
    ("Browser.resetPermissions", {"browserContextId": "CTX-OWN"}, True, False),
    ("Browser.setDownloadBehavior", {"behavior": "deny"}, True, True),
    ("Browser.setDownloadBehavior", {"behavior": "deny", "browserContextId": "CTX-A"}, True,
     False),
    ("Target.disposeBrowserContext", {"browserContextId": "CTX-A"}, True, True),  # not its own
    ("Target.disposeBrowserContext", {"browserContextId": "CTX-OWN"}, True, False),
    ("Target.createBrowserContext", {"originsWithUniversalNetworkAccess": ["https://a.test"]},
     True, True),
    ("Target.createBrowserContext", {"disposeOnDetach": True}, True, False),
    ("Fetch.enable", {}, True, True),  # would intercept every context's requests
    ("Fetch.enable", {}, False, False),
    ("Tracing.start", {}, True, True),
])
def test_a_session_bound_client_reaches_its_contexts_only(
    method: str, params: dict[str, Any], on_browser: bool, refused: bool,
) -> None:
    problem, _ = judge(method, params, reach=BOUND, on_browser=on_browser)
    assert (problem is not None) is refused, problem


def test_an_unbound_client_reaches_any_context_but_disposes_its_own_only() -> None:
    for method, params in (("Target.createTarget", {"url": "about:blank"}),
                           ("Storage.getCookies", {}), ("Fetch.enable", {}),
                           ("Storage.getCookies", {"browserContextId": "CTX-B"})):
        assert judge(method, params)[0] is None, method
    assert judge("Target.disposeBrowserContext", {"browserContextId": "CTX-B"})[0] is not None


def test_streams_are_the_clients_own_and_urls_pass_the_policy() -> None:
    assert judge("IO.read", {"handle": "7"})[0] is not None
    assert judge("IO.close", {"handle": "7"}, streams=frozenset({"7"}))[0] is None
    for method in ("Page.navigate", "Target.createTarget", "Fetch.continueRequest"):
        problem, _ = judge(method, {"url": "file:///etc/hostname", "requestId": "1"})
        assert problem is not None and "URL_BLOCKED" in problem, method
    assert judge("Fetch.continueRequest", {"requestId": "1"})[0] is None


# -- which targets a client sees ----------------------------------------------------------


def info(target: str, kind: str = "page", url: str = "https://a.test/",
         context: str | None = "CTX-A") -> dict[str, Any]:
    out = {"targetId": target, "type": kind, "url": url, "title": "", "attached": False}
    if context is not None:
        out["browserContextId"] = context
    return out


@pytest.mark.parametrize(("target", "bound_sees", "unbound_sees"), [
    (info("P"), True, True),
    (info("F", "iframe"), True, True),
    (info("W", "worker"), True, True),
    (info("SW", "service_worker", context="CTX-OWN"), True, True),
    (info("SH", "shared_worker"), True, True),
    (info("T", "tab"), True, True),
    (info("B", context="CTX-B"), False, True),
    (info("D", context=None), False, True),
    (info("U", "browser_ui", "chrome://omnibox-popup.top-chrome/"), False, False),
    (info("U2", "page", "chrome://omnibox-popup.top-chrome/"), False, False),
    (info("TU", "tab", "chrome://newtab/"), False, False),
    (info("X", "page", "chrome-extension://abc/popup.html"), False, False),
    (info("XS", "service_worker", "chrome-extension://abc/bg.js"), False, False),
    (info("DT", "page", "devtools://devtools/bundled/inspector.html"), False, False),
    (info("O", "other", "about:blank"), False, False),
    (info("WV", "webview"), False, False),
    (info("BR", "browser", ""), False, False),
    ({"targetId": "N"}, False, False),
    ("not a dict", False, False),
])
def test_targets_in_scope(target: Any, bound_sees: bool, unbound_sees: bool) -> None:
    assert in_scope(target, BOUND) is bound_sees
    assert in_scope(target, Reach(None)) is unbound_sees


def test_target_view_filters_results_and_events() -> None:
    view = TargetView(frozenset({"CTX-A"}))
    infos = [info("P"), info("B", context="CTX-B"),
             info("U", "browser_ui", "chrome://omnibox-popup.top-chrome/")]
    seen = view.result("Target.getTargets", {"targetInfos": infos})
    assert [i["targetId"] for i in seen["targetInfos"]] == ["P"]
    contexts = view.result("Target.getBrowserContexts",
                           {"browserContextIds": ["CTX-A", "CTX-B"]})
    assert contexts == {"browserContextIds": ["CTX-A"]}
    view.result("Target.createBrowserContext", {"browserContextId": "CTX-NEW"})
    assert view.reach.sees("CTX-NEW") and not view.reach.sees("CTX-B")
    assert view.event("Target.targetCreated", {"targetInfo": info("B", context="CTX-B")}) \
        .forward is False
    assert view.event("Target.targetDestroyed", {"targetId": "B"}).forward is False
    assert view.event("Target.targetCreated", {"targetInfo": info("N", context="CTX-NEW")}) \
        .forward is True
    assert view.event("Target.targetDestroyed", {"targetId": "N"}).forward is True
    stray = view.event("Target.attachedToTarget", {"sessionId": "S-U", "targetInfo": infos[2]})
    assert (stray.forward, stray.detach) == (False, "S-U")
    mine = view.event("Target.attachedToTarget", {"sessionId": "S-P", "targetInfo": infos[0]})
    assert (mine.forward, mine.detach) == (True, None)
    assert view.event("Target.receivedMessageFromTarget", {"message": "{}"}).forward is False
    assert view.event("Page.frameNavigated", {}).forward is True


def test_every_judged_method_is_allowed() -> None:
    from browserd.gateway.allowlist import JUDGED

    for domain, methods in JUDGED.items():
        assert methods <= ALLOWED[domain], domain
