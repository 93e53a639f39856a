"""Tab restore after a crash, without a browser: the plan and its reasons, the restore
itself on fakes (a registry of fake tabs), the scope's answers for an old id, and the
supervisor's wiring (a fake peer's connection). What the restore keeps (the ledger,
the commit log, the sessions carried over): test_restore_bookkeeping.py."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from browserd.config import Settings
from browserd.errors import TabLost, TabNotFound, TabRestored
from browserd.events import EventType
from browserd.paths import Paths
from browserd.supervisor import BrowserSupervisor
from browserd.supervisor.crash import CrashAccount
from browserd.supervisor.restore import (
    COMMIT_WAIT_S,
    RestorePlan,
    TabMemo,
    TabRestorer,
    lost_reason,
    take_plan,
)
from browserd.supervisor.runtime import BrowserRuntime
from browserd.tabs.actor import TabInfo
from browserd.tabs.capture_gate import CaptureGate
from browserd.tabs.commits import CommitLog
from browserd.tabs.feed import CommitFeed, CommitKind, CommitRecord
from browserd.tabs.restored import RestoreLedger
from browserd.tabs.scope import TabScope
from browserd.tabs.state import LoadState
from browserd.tabs.tabview import TabView
from browserd.urlpolicy import UrlPolicy
from tests.fakecdp import FakeCdpPeer, connected
from tests.unit._restore_fixtures import CRASH, attach, commit, info

# -- the plan and its reasons ----------------------------------------------------------------


def memo(url: str, *, post: bool = False, scope: str | None = None, target: str = "T",
         active: bool = False) -> TabMemo:
    return TabMemo(target_id=target, url=url, scope=scope, post=post, active=active)


def test_what_cannot_be_reopened_and_why() -> None:
    policy = UrlPolicy(allow=(), blocked_ports=frozenset({18791}))
    assert lost_reason(memo("https://a.test/"), policy) is None
    assert lost_reason(memo("about:blank"), policy) is None
    assert lost_reason(memo(""), policy) is None
    assert lost_reason(memo("https://a.test/", post=True), policy) == "post"
    for local in ("about:srcdoc", "data:text/html,<p>hi", "chrome://version/",
                  "blob:https://a.test/1"):
        assert lost_reason(memo(local), policy) == "local", local
    assert lost_reason(memo("http://127.0.0.1:18791/status"), policy) == "blocked"
    assert lost_reason(memo("file:///etc/hosts"), policy) == "blocked"
    files = UrlPolicy(allow=("file:",), blocked_ports=frozenset())
    assert lost_reason(memo("file:///etc/hosts"), files) is None


class FakeTab:
    """A tab whose navigation commits at once (or, ``hang``, never)."""

    def __init__(self, target_id: str, url: str = "about:blank", *, hang: bool = False) -> None:
        self.target_id, self.url, self.hang = target_id, url, hang
        self.sent: list[tuple[str, dict[str, Any] | None]] = []
        self.feed = CommitFeed()
        self.in_work = False

    def view(self) -> TabView:
        return TabView(target_id=self.target_id, url=self.url, title="",
                       load_state=LoadState.LOAD, main_frame_id=self.target_id,
                       loader_id=None, navigations=0, commit_seq=self.feed.seq, dialog=None,
                       crashed=False, closed=False, broken=None, last_focused_at=None)

    def halted(self) -> None:
        return None

    def commits_since(self, seq: int) -> tuple[CommitRecord, ...]:
        return self.feed.since(seq)

    @asynccontextmanager
    async def work(self) -> AsyncIterator[FakeTab]:
        self.in_work = True
        try:
            yield self
        finally:
            self.in_work = False

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        assert self.in_work, "a navigation outside the work slot"
        self.sent.append((method, params))
        return {"loaderId": "L1"}

    async def wait_changed(self) -> None:
        if not self.hang and not self.feed.seq:  # the actor saw the commit
            self.feed.publish(CommitKind.NEW_DOCUMENT, frame_id=self.target_id,
                              main_frame=True, url=self.url, loader_id="L1")
        await trio.sleep(0 if not self.hang else 3600)


class FakeRegistry:
    """The registry calls the restore and the scope make, over a dict of fake tabs."""

    consent_scoped = False

    def __init__(self, tabs: Mapping[str | None, list[str]] | None = None, *,
                 active: Mapping[str | None, str] | None = None, fail_opens: int = 0,
                 hang: bool = False) -> None:
        self.tabs: dict[str, tuple[str | None, FakeTab]] = {
            t: (scope, FakeTab(t, f"https://actor.test/{t}"))
            for scope, ids in (tabs or {}).items() for t in ids}
        self.active = dict(active or {})
        self.opened: list[tuple[str | None, str]] = []
        self.focused: list[str] = []
        self.fail_opens, self.hang = fail_opens, hang
        self._ids = itertools.count(1)

    def scope_of(self, target_id: str) -> str | None:
        return self.tabs[target_id][0] if target_id in self.tabs else None

    def target_ids(self, scope: str | None = None) -> list[str]:
        return [t for t, (s, _) in self.tabs.items() if s == scope]

    def active_id(self, scope: str | None = None) -> str | None:
        return self.active.get(scope)

    def get(self, target_id: str, scope: str | None = None) -> FakeTab:
        if target_id not in self.tabs or self.tabs[target_id][0] != scope:
            raise TabNotFound(f"no tab {target_id!r}")
        return self.tabs[target_id][1]

    async def resolve(self, target_id: str | None, *, use: bool = True,
                      scope: str | None = None) -> FakeTab:
        assert target_id is not None
        return self.get(target_id, scope)

    def infos(self, scope: str | None = None) -> list[TabInfo]:
        return [info(t) for t in self.target_ids(scope)]

    async def open(self, url: str = "about:blank", *, scope: str | None = None) -> FakeTab:
        assert url == "about:blank"  # opened blank, navigated through the guard after
        if self.fail_opens:
            self.fail_opens -= 1
            from browserd.errors import CdpError
            raise CdpError("Target.createTarget: refused")
        tab = FakeTab(f"N{next(self._ids)}", hang=self.hang)
        self.tabs[tab.target_id] = (scope, tab)
        self.opened.append((scope, tab.target_id))
        return tab

    async def focus(self, tab: FakeTab) -> None:
        self.focused.append(tab.target_id)

    def tab_count(self) -> int:
        return len(self.tabs)


def crash_account() -> CrashAccount:
    return CrashAccount(at=1.0, reason="killed", signal=9, stderr_tail="boom", tabs_affected=3)


def test_the_plan_takes_every_listed_tab_of_every_scope_at_its_commit() -> None:
    registry = FakeRegistry({None: ["D1", "D2", "GW"], "CA": ["A1", "A2"]},
                            active={None: "D2", "CA": "A1"})
    commits = CommitLog()
    for n, target in enumerate(["D1", "A1", "D2", "A2", "GW"]):
        attach(commits, target, f"S{n}", context="GWCTX" if target == "GW" else "DEF")
    commits.default_context = "DEF"
    commit(commits, "S0", "https://a.test/1", "L1")
    commit(commits, "S1", "https://a.test/a1", "L1")
    plan = take_plan(fake_runtime(registry), commits, crash_account())
    assert [(m.target_id, m.scope, m.url, m.active) for m in plan.tabs] == [
        ("D1", None, "https://a.test/1", False),
        ("D2", None, "https://actor.test/D2", True),  # no commit seen: the actor's URL
        ("A1", "CA", "https://a.test/a1", True),
        ("A2", "CA", "https://actor.test/A2", False),
    ]  # GW was in a context a gateway client made: not browserd's to reopen
    assert plan.crash == crash_account().to_json()


# -- the restore on fakes --------------------------------------------------------------------


class Carrier:
    """The sessions as the restorer sees them: records hold/carry/release."""

    def __init__(self, moved: Mapping[str, str]) -> None:
        self.moved, self.calls = dict(moved), list[str]()

    def hold(self) -> None:
        self.calls.append("hold")

    def release(self) -> None:
        self.calls.append("release")

    async def carry(self, runtime: BrowserRuntime) -> Mapping[str, str]:
        self.calls.append("carry")
        return self.moved


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[EventType, str | None, dict[str, Any]]] = []

    def publish(self, event_type: EventType, *, target_id: str | None = None,
                **data: Any) -> None:
        self.events.append((event_type, target_id, data))


def fake_runtime(registry: FakeRegistry, *, restored: RestoreLedger | None = None
                 ) -> BrowserRuntime:
    return BrowserRuntime(connection=None, registry=registry,  # type: ignore[arg-type]
                          process=None, version="", user_agent="", started_at=0.0,
                          captures=CaptureGate.with_capacity(1), restored=restored)


def restorer(carrier: Carrier | None = None, events: Recorder | None = None,
             **settings: Any) -> TabRestorer:
    return TabRestorer(Settings(**settings), url_policy=UrlPolicy(blocked_ports=frozenset()),
                       sessions=carrier, events=events)  # type: ignore[arg-type]


async def test_the_restore_carries_sessions_then_reopens_each_tab_in_its_scope(
        autojump_clock: trio.testing.MockClock) -> None:
    carrier, events = Carrier({"CA": "CA2", "CB": "CB2"}), Recorder()
    tabs = restorer(carrier, events)
    tabs_plan = (
        memo("https://a.test/1", target="D1"),
        memo("https://a.test/a1", target="A1", scope="CA", active=True),
        memo("https://a.test/a2", target="A2", scope="CA"),
        memo("https://a.test/post", target="A3", scope="CA", post=True),
        memo("https://b.test/b1", target="B1", scope="CB"),
        memo("https://c.test/", target="C1", scope="GONE"),  # its session was deleted
        memo("about:blank", target="D2"),
    )
    tabs.plan = RestorePlan(crash=CRASH, tabs=tabs_plan)
    registry = FakeRegistry()
    await tabs.restore(fake_runtime(registry))
    assert tabs.plan is None and carrier.calls == ["carry", "release"]
    new: dict[str, tuple[str | None, str, list[Any]]] = {}  # old -> (scope, new id, sent)
    for memo_ in tabs_plan:
        record = tabs.ledger.find(memo_.target_id, None if memo_.scope is None
                                  else {"CA": "CA2", "CB": "CB2"}.get(memo_.scope, memo_.scope))
        assert record is not None, memo_
        if record.target_id is not None:
            scope, tab = registry.tabs[record.target_id]
            new[memo_.target_id] = (scope, record.target_id, tab.sent)
    # in order within each scope (their scopes side by side)
    for scope, olds in ((None, ["D1", "D2"]), ("CA2", ["A1", "A2"]), ("CB2", ["B1"])):
        assert [t for s, t in registry.opened if s == scope] == [new[o][1] for o in olds]
        assert all(new[o][0] == scope for o in olds)
    assert len(registry.opened) == 5
    assert new["A1"][2] == [("Page.navigate", {"url": "https://a.test/a1"})]
    assert new["D2"][2] == []  # about:blank: nothing to load
    assert registry.focused == [new["A1"][1]]  # the session's active tab is in front again
    ledger = tabs.ledger
    with pytest.raises(TabRestored) as raised:
        ledger.check("A2", "CA2")
    assert raised.value.details["targetId"] == new["A2"][1]
    with pytest.raises(TabLost) as lost:
        ledger.check("A3", "CA2")
    assert lost.value.details["reason"] == "post"
    ledger.check("C1", "CA2")
    gone = ledger.find("C1", "GONE")  # (its session's old context: never asked again)
    assert gone is not None and gone.reason == "session"
    restored = {d["oldTargetId"]: (t, d["url"]) for e, t, d in events.events
                if e == EventType.TAB_RESTORED}
    assert restored == {old: (new[old][1], m.url) for m in tabs_plan
                        if (old := m.target_id) in new}
    assert len(restored) == 5
    assert sorted((t, d["reason"]) for e, t, d in events.events if e == EventType.TAB_LOST) == [
        ("A3", "post"), ("C1", "session")]


async def test_a_failed_reopen_is_lost_and_a_slow_page_does_not_hold_the_restore(
        autojump_clock: trio.testing.MockClock) -> None:
    tabs = restorer()
    tabs.plan = RestorePlan(crash=CRASH, tabs=(memo("https://a.test/1", target="D1"),
                                               memo("https://a.test/2", target="D2")))
    registry = FakeRegistry(fail_opens=1, hang=True)  # the first open fails; pages never commit
    start = trio.current_time()
    await tabs.restore(fake_runtime(registry))
    assert trio.current_time() - start == pytest.approx(COMMIT_WAIT_S)
    with pytest.raises(TabLost) as lost:
        tabs.ledger.check("D1", None)
    assert lost.value.details["reason"] == "failed"
    with pytest.raises(TabRestored):
        tabs.ledger.check("D2", None)


async def test_without_a_plan_nothing_is_reopened_and_abandon_drops_it(
        autojump_clock: trio.testing.MockClock) -> None:
    carrier = Carrier({})
    tabs = restorer(carrier)
    registry = FakeRegistry()
    await tabs.restore(fake_runtime(registry))
    assert registry.opened == [] and carrier.calls == []
    tabs.ledger.restored("OLD", "NEW", url="https://a.test/", scope=None, crash=CRASH)
    tabs.plan = RestorePlan(crash=CRASH, tabs=(memo("https://a.test/"),))
    tabs.abandon()
    assert tabs.plan is None and carrier.calls == ["release"] and len(tabs.ledger) == 0


def test_only_a_launched_browser_that_sees_every_page_is_planned() -> None:
    registry = FakeRegistry({None: ["D1"]})

    class Process:
        pid = 1

    served = attrs_evolve(fake_runtime(registry), process=Process(), commits=CommitLog())
    carrier = Carrier({})
    tabs = restorer(carrier)
    tabs.crashed(served, None)  # a stop, not a crash
    tabs.crashed(attrs_evolve(served, process=None), crash_account())  # attached
    assert tabs.plan is None and carrier.calls == []
    registry.consent_scoped = True  # the person's own browser (live)
    tabs.crashed(served, crash_account())
    assert tabs.plan is None
    registry.consent_scoped = False
    off = restorer(carrier, restore_tabs=False)
    off.crashed(served, crash_account())
    assert off.plan is None and carrier.calls == []
    tabs.crashed(served, crash_account())
    assert tabs.plan is not None and [m.target_id for m in tabs.plan.tabs] == ["D1"]
    assert carrier.calls == ["hold"]


def attrs_evolve(runtime: BrowserRuntime, **changes: Any) -> BrowserRuntime:
    import attrs
    return attrs.evolve(runtime, **changes)


# -- the scope's answers ---------------------------------------------------------------------


async def test_every_lookup_of_an_old_id_answers_in_its_own_scope_only(
        autojump_clock: trio.testing.MockClock) -> None:
    registry = FakeRegistry({"CA": ["NEW1"], "CB": ["NB"]})
    ledger = RestoreLedger(ttl_s=60)
    ledger.restored("OLD1", "NEW1", url="https://a.test/", scope="CA", crash=CRASH)
    ledger.lost("OLD2", url="https://a.test/post", reason="post", scope="CA", crash=CRASH)
    runtime = fake_runtime(registry, restored=ledger)
    a, b = runtime.scoped("CA").tabs, runtime.scoped("CB").tabs
    with pytest.raises(TabRestored):
        a.get("OLD1")
    with pytest.raises(TabRestored):
        await a.resolve("OLD1")
    with pytest.raises(TabLost):
        await a.resolve("OLD2")
    with pytest.raises(TabRestored):
        a.hiding(frozenset({"X"})).get("OLD1")  # a hiding view keeps the ledger
    for other in (b, runtime.tabs):
        with pytest.raises(TabNotFound):
            other.get("OLD1")
        with pytest.raises(TabNotFound):
            await other.resolve("OLD2")
    with pytest.raises(TabNotFound):
        a.get("NOPE")
    assert [i.to_json().get("restoredFrom") for i in a.infos()] == ["OLD1"]
    assert [i.to_json().get("restoredFrom") for i in b.infos()] == [None]
    await trio.sleep(60)
    with pytest.raises(TabNotFound):
        a.get("OLD1")
    assert "restoredFrom" not in a.infos()[0].to_json()
    plain = TabScope(registry, "CA")  # type: ignore[arg-type]  # (a gateway's view: no ledger)
    with pytest.raises(TabNotFound):
        plain.get("OLD1")


# -- the supervisor's wiring -----------------------------------------------------------------


class FakeProcess:
    """What the crash account reads of a launched browser's process."""

    def __init__(self, pid: int) -> None:
        self.pid, self.own_exit = pid, None

    def stderr_text(self, lines: int = 20) -> str:
        return "fake: died"

    def mark_unresponsive(self) -> None:
        pass


class Launches:
    """A subtree serving one fake browser per attempt; ``kill()`` ends the current one."""

    def __init__(self) -> None:
        self.count = 0
        self.registries: list[FakeRegistry] = []
        self.peer: FakeCdpPeer | None = None
        self.process: FakeProcess | None = None

    async def __call__(self, sup: BrowserSupervisor) -> None:
        self.count += 1
        registry = FakeRegistry({None: ["D1"], "CTX": ["A1"]} if self.count == 1 else None)
        self.registries.append(registry)
        self.peer, self.process = FakeCdpPeer(), FakeProcess(1000 + self.count)
        async with connected(self.peer) as conn:
            commits = CommitLog.tapping(conn)
            for n, target in enumerate(registry.tabs):
                attach(commits, target, f"S{n}")
                commit(commits, f"S{n}", f"https://a.test/{target}", "L1")
            await sup.serve_runtime(BrowserRuntime(
                connection=conn, registry=registry,  # type: ignore[arg-type]
                process=self.process,  # type: ignore[arg-type]
                version="Fake/1", user_agent="fake", started_at=0.0,
                captures=CaptureGate.with_capacity(1), commits=commits,
                restored=sup.restorer.ledger))

    async def kill(self) -> None:
        assert self.peer is not None and self.process is not None
        self.process.own_exit = -9
        await self.peer.close()


async def running_again(sup: BrowserSupervisor, launches: Launches, count: int) -> None:
    while launches.count < count or sup.state != "running":
        await trio.sleep(0.01)


async def test_a_crash_restores_the_tabs_before_running_and_a_stop_forgets_them(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    launches, carrier = Launches(), Carrier({"CTX": "CTX2"})
    sup = BrowserSupervisor(Settings(), Paths.resolve({"BROWSERD_HOME": str(tmp_path)}),
                            rng=lambda: 0.5, subtree=launches,
                            sessions=carrier)  # type: ignore[arg-type]
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await sup.start()
        await launches.kill()
        await running_again(sup, launches, 2)
        # tabs reopened (in the carried session's new context) before it was running
        opened = dict(launches.registries[1].opened)  # scope -> new id
        assert set(opened) == {None, "CTX2"} and len(launches.registries[1].opened) == 2
        assert carrier.calls == ["hold", "carry", "release"]
        runtime = sup.require_runtime()
        with pytest.raises(TabRestored) as raised:
            runtime.tabs.get("D1")
        assert raised.value.details["targetId"] == opened[None]
        assert raised.value.details["crash"]["signal"] == 9
        assert raised.value.details["crash"] == sup.statistics().last_crash
        with pytest.raises(TabRestored):
            await runtime.scoped("CTX2").tabs.resolve("A1")
        # a planned restart: nothing restored, the old ids are just unknown
        await sup.stop()
        assert "release" in carrier.calls and len(sup.restorer.ledger) == 0
        await sup.start()
        assert launches.count == 3 and launches.registries[2].opened == []
        with pytest.raises(TabNotFound):
            sup.require_runtime().tabs.get("D1")
        nursery.cancel_scope.cancel()
