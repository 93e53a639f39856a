"""A request's System: the profile's own supervisor, and the runtime its binding answers
(``profiles/binding.py``, ``System.bind``, ``System.require_runtime``); no browser.

The profiles' supervisors are real and never started; where a test needs a running
browser, the supervisor's own ``require_runtime`` is replaced by one answering a
stand-in runtime (what the bindings read of it: ``tabs.hiding``, ``scoped``).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import attrs
import pytest

from browserd.config import load_settings
from browserd.errors import SessionNotFound, Unavailable
from browserd.media import MediaStore
from browserd.paths import Paths
from browserd.principals import Principal
from browserd.profiles.manager import ProfileManager
from browserd.retention import Retention
from browserd.supervisor import BrowserSupervisor
from browserd.system import System
from browserd.tabrequests import TabRequestState
from browserd.uploads import UploadPolicy

SRC = Path(__file__).resolve().parents[2] / "src" / "browserd"


@attrs.frozen
class StandInTabs:
    hidden: frozenset[str] = frozenset()

    def hiding(self, gone: frozenset[str]) -> StandInTabs:
        return StandInTabs(hidden=self.hidden | gone)


@attrs.frozen
class StandInRuntime:
    name: str
    tabs: StandInTabs = StandInTabs()
    context: str | None = None

    def scoped(self, context_id: str) -> StandInRuntime:
        return attrs.evolve(self, context=context_id)


def running(monkeypatch: pytest.MonkeyPatch, supervisor: BrowserSupervisor,
            runtime: StandInRuntime) -> None:
    """``supervisor`` answers ``require_runtime`` with ``runtime`` from now on."""
    monkeypatch.setattr(supervisor, "require_runtime", lambda: runtime)


def service_system(tmp_path: Path) -> System:
    """The service-wide System of a config with a live profile falling back to clawd."""
    paths = Paths.resolve({"BROWSERD_HOME": str(tmp_path)})
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    (paths.config_dir / "config.toml").write_text(
        '[profiles.mine]\ndriver = "live"\nlive_fallback = "clawd"\n'
        '[profiles.plain]\ndriver = "live"\n')
    settings = load_settings(paths, environ={})
    profiles = ProfileManager(settings, paths, is_port_free=lambda p: True)
    profiles.load()
    default = profiles.get()
    return System(settings=settings, paths=paths, supervisor=default.supervisor,
                  media=MediaStore(tmp_path / "media", Retention()),
                  url_policy=profiles.url_policy, downloads=default.downloads,
                  uploads=UploadPolicy.from_settings(settings, paths), token="t" * 32,
                  profiles=profiles, profile=default)


def agent(**limits: Any) -> Principal:
    return Principal(kind="agent", name="agent-1", **limits)


def test_a_bound_system_holds_the_profiles_own_supervisor(tmp_path: Path) -> None:
    system = service_system(tmp_path)
    for profile, session, who in (("clawd", None, None), ("clawd", "S1", None),
                                  ("mine", None, None), ("mine", None, agent())):
        seen = system if who is None else system.acting_as(who)
        bound = seen.bind(profile, session)
        assert bound.supervisor is system.profiles.get(profile).supervisor
        assert type(bound.supervisor) is BrowserSupervisor
    # nothing runs: the supervisor's own 503, through every binding
    with pytest.raises(Unavailable):
        system.bind("clawd", None).require_runtime()


def test_a_session_binding_resolves_the_session_and_scopes_the_runtime(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    system = service_system(tmp_path)
    clawd = system.profiles.get("clawd")
    running(monkeypatch, clawd.supervisor, StandInRuntime("clawd"))
    bound = system.bind("clawd", "nope")
    with pytest.raises(SessionNotFound):
        bound.require_runtime()
    assert system.bind("clawd", None).require_runtime() == StandInRuntime("clawd")
    assert system.require_runtime() == StandInRuntime("clawd")  # the service-wide record


def test_a_live_profile_falls_back_while_its_browser_is_away(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    system = service_system(tmp_path)
    running(monkeypatch, system.profiles.get("clawd").supervisor, StandInRuntime("clawd"))
    assert system.bind("mine", None).require_runtime() == StandInRuntime("clawd")
    with pytest.raises(Unavailable):  # no fallback: its own 503
        system.bind("plain", None).require_runtime()
    running(monkeypatch, system.profiles.get("mine").supervisor, StandInRuntime("mine"))
    assert system.bind("mine", None).require_runtime() == StandInRuntime("mine")


def test_tabs_granted_to_other_tokens_are_hidden_from_an_agent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    system = service_system(tmp_path)
    running(monkeypatch, system.profiles.get("mine").supervisor, StandInRuntime("mine"))
    board = system.tab_requests
    for token, tab in (("agent-1", "MINE"), ("agent-2", "THEIRS")):
        asked = board.ask(profile="mine", token=token, reason="r", url=None)
        board.end(asked.request_id, TabRequestState.APPROVED, target_id=tab)
    as_agent = system.acting_as(agent()).bind("mine", None).require_runtime()
    assert as_agent.tabs.hidden == {"THEIRS"}
    assert system.bind("mine", None).require_runtime().tabs.hidden == frozenset()  # the person


def test_only_the_binding_asks_a_supervisor_for_its_runtime() -> None:
    """Outside ``supervisor/``, ``system.py`` and ``profiles/binding.py`` a runtime comes
    from ``System.require_runtime``: a supervisor's own would skip the session scope, the
    fallback and the hidden grants."""
    allowed = {"system.py", "profiles/binding.py"}
    wrong = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in allowed or rel.startswith("supervisor/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and node.attr == "require_runtime"
                    and "sup" in ast.unparse(node.value)):
                wrong.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    assert not wrong, wrong
