"""The gateway's rules and target view at their edges (no browser).

Written for the mutants of ``gateway/rules.py``, ``gateway/allowlist.py`` and
``gateway/targets.py`` (``python -m supervision.mutants --only
gateway-rules,gateway-allowlist,gateway-targets``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from browserd.gateway.allowlist import not_allowed
from browserd.gateway.rules import Limits, defer_first_navigation, refusal
from browserd.gateway.targets import TargetView
from browserd.uploads import MAX_UPLOAD_FILES, UploadPolicy
from browserd.urlpolicy import UrlPolicy

POLICY = UrlPolicy(blocked_ports=frozenset({18791}))


def judge(method: str, params: dict[str, Any], limits: Limits | None = None
          ) -> tuple[str | None, dict[str, Any]]:
    params = dict(params)
    limits = limits or Limits(policy=POLICY, downloads_dir=Path("/srv/dl"))
    return refusal(method, params, limits=limits, sessions={"S"}), params


def test_the_lifetime_methods_point_to_browserds_api() -> None:
    for method in ("Browser.close", "Browser.crash", "Browser.crashGpuProcess"):
        assert "browserd owns the browser's lifetime" in str(not_allowed(method))
    other = str(not_allowed("SystemInfo.getInfo"))
    assert "allowlist" in other and "lifetime" not in other
    assert not_allowed("Page.navigate") is None


def test_at_most_max_upload_files_are_handed_to_a_page(tmp_path: Path) -> None:
    root = tmp_path / "up"
    root.mkdir()
    (root / "f.txt").write_text("x")
    limits = Limits(policy=POLICY, downloads_dir=Path("/srv/dl"),
                    uploads=UploadPolicy(roots=(root,), private=()).resolve)
    problem, params = judge("DOM.setFileInputFiles", {"files": ["f.txt"] * MAX_UPLOAD_FILES},
                            limits)
    assert problem is None and params["files"] == [str(root / "f.txt")] * MAX_UPLOAD_FILES
    problem, _ = judge("DOM.setFileInputFiles", {"files": ["f.txt"] * (MAX_UPLOAD_FILES + 1)},
                       limits)
    assert problem is not None and f"at most {MAX_UPLOAD_FILES} files" in problem


def test_only_the_two_file_methods_have_their_files_judged() -> None:
    params = {"functionDeclaration": "x", "data": {"files": ["/etc/passwd"]}}
    problem, after = judge("Runtime.callFunctionOn", params)
    assert problem is None and after == params  # not a file hand-over: untouched


def test_a_url_that_is_not_a_string_is_refused() -> None:
    for method in ("Page.navigate", "Target.createTarget"):
        problem, _ = judge(method, {"url": 5, "browserContextId": "C"})
        assert problem == "Invalid parameters: url must be a string"
    problem, params = judge("Page.navigate", {"url": "https://a.test/x"})
    assert problem is None and params["url"] == "https://a.test/x"


def test_a_new_targets_first_navigation_is_deferred() -> None:
    params: dict[str, Any] = {"url": "https://a.test/"}
    assert defer_first_navigation("Target.createTarget", params) == "https://a.test/"
    assert params == {"url": "about:blank"}
    for url in ("", "about:blank", None):
        params = {"url": url}
        assert defer_first_navigation("Target.createTarget", params) is None
        assert params == {"url": url}
    params = {"url": "https://a.test/"}
    assert defer_first_navigation("Page.navigate", params) is None
    assert params == {"url": "https://a.test/"}


def info(target: str, kind: str = "page", context: str = "CTX-A") -> dict[str, Any]:
    return {"targetId": target, "type": kind, "url": "https://a.test/",
            "browserContextId": context}


def test_a_browser_session_attach_is_the_clients_own() -> None:
    view = TargetView(frozenset({"CTX-A"}))
    verdict = view.event("Target.attachedToTarget", {
        "sessionId": "S-B", "targetInfo": {"targetId": "B", "type": "browser", "url": ""}})
    assert (verdict.forward, verdict.detach) == (True, None)
    verdict = view.event("Target.attachedToTarget", {
        "sessionId": 7, "targetInfo": {"targetId": "U", "type": "other", "url": ""}})
    assert (verdict.forward, verdict.detach) == (False, None)  # no session id to detach


def test_judge_answers_true_or_false() -> None:
    view = TargetView(frozenset({"CTX-A"}))
    assert view.judge(info("P")) is True
    assert view.judge(info("Q", context="CTX-B")) is False


def test_a_destroyed_target_is_forgotten_and_a_crashed_one_is_not() -> None:
    view = TargetView(None)
    assert view.judge(info("P"))
    assert view.event("Target.targetCrashed", {"targetId": "P"}).forward is True
    assert view.event("Target.targetDestroyed", {"targetId": "P"}).forward is True
    # Destroyed: the client heard it went; it hears nothing more of it.
    assert view.event("Target.targetDestroyed", {"targetId": "P"}).forward is False
    assert view.event("Target.targetCrashed", {"targetId": "P"}).forward is False


def test_targets_the_client_made_or_asked_about_are_shown() -> None:
    view = TargetView(frozenset({"CTX-A"}))
    assert view.result("Target.createTarget", {"targetId": "NEW"}) == {"targetId": "NEW"}
    assert view.event("Target.targetDestroyed", {"targetId": "NEW"}).forward is True
    view.result("Target.getTargetInfo", {"targetInfo": {"targetId": "ASKED", "type": "page"}})
    assert view.event("Target.targetDestroyed", {"targetId": "ASKED"}).forward is True
    # Malformed results are left as they are, and show nothing.
    for result in ({"targetInfo": {"type": "page"}}, {"targetInfo": None},
                   {"targetInfo": {"targetId": 5}}, {}):
        assert view.result("Target.getTargetInfo", dict(result)) == result
    assert view.event("Target.targetDestroyed", {"targetId": "5"}).forward is False
    # Other results show nothing either.
    view.result("Target.attachToTarget", {"targetId": "OTHER"})
    assert view.event("Target.targetDestroyed", {"targetId": "OTHER"}).forward is False
