"""What tab restore keeps across a crash, without a browser: the ledger of old ids
(trio's MockClock: restored or lost, the TTL, scopes, chains of restores, the bound),
the commit log the plan is taken from (the last commit, form posts, frames and other
contexts told apart), and the sessions held over the gap and carried into the new
browser (a fake peer's connection)."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing

from browserd.cdp import CdpEvent
from browserd.downloads import DownloadStore
from browserd.errors import SessionNotFound, TabLost, TabRestored
from browserd.profiles.sessions import SessionTable
from browserd.retention import Retention
from browserd.tabs.commits import CommitLog
from browserd.tabs.restored import LEDGER_MAX, RestoreLedger
from tests.fakecdp import context_peer, running_browser
from tests.unit._restore_fixtures import CRASH, attach, commit, feed, info

# -- the ledger ------------------------------------------------------------------------------


async def test_an_old_id_answers_restored_then_unknown_after_the_ttl(
        autojump_clock: trio.testing.MockClock) -> None:
    ledger = RestoreLedger(ttl_s=600)
    ledger.restored("OLDAAAA1", "NEW1", url="https://a.test/x", scope=None, crash=CRASH)
    with pytest.raises(TabRestored) as raised:
        ledger.check("OLDAAAA1", None)
    error = raised.value
    assert (error.status, error.code) == (409, "TAB_RESTORED")
    assert error.details == {"oldTargetId": "OLDAAAA1", "targetId": "NEW1",
                             "url": "https://a.test/x", "crash": CRASH}
    assert "snapshot" in error.hint
    with pytest.raises(TabRestored):
        ledger.check("olda", None)  # a unique prefix, as the registry takes them
    ledger.check("OLD", None)  # too short for a prefix: unknown
    await trio.sleep(599.9)
    with pytest.raises(TabRestored):
        ledger.check("OLDAAAA1", None)
    await trio.sleep(0.1)  # exactly the TTL: gone
    ledger.check("OLDAAAA1", None)
    assert len(ledger) == 0 and ledger.restored_from("NEW1", None) is None


async def test_a_lost_tab_answers_410_with_its_url_and_reason(
        autojump_clock: trio.testing.MockClock) -> None:
    ledger = RestoreLedger(ttl_s=10)
    ledger.lost("OLD2", url="https://a.test/done", reason="post", scope=None, crash=CRASH)
    with pytest.raises(TabLost) as raised:
        ledger.check("OLD2", None)
    assert (raised.value.status, raised.value.code) == (410, "TAB_LOST")
    assert raised.value.details == {"url": "https://a.test/done", "reason": "post",
                                    "crash": CRASH}
    assert ledger.restored_from("OLD2", None) is None  # a lost tab has no new id
    await trio.sleep(10)
    ledger.check("OLD2", None)


async def test_an_old_id_is_told_only_in_its_own_scope(
        autojump_clock: trio.testing.MockClock) -> None:
    ledger = RestoreLedger(ttl_s=60)
    ledger.restored("OLDA", "NEWA", url="https://a.test/", scope="CTX-A", crash=CRASH)
    ledger.lost("OLDB", url="https://b.test/", reason="blocked", scope="CTX-B", crash=CRASH)
    with pytest.raises(TabRestored):
        ledger.check("OLDA", "CTX-A")
    for scope in ("CTX-B", None):
        ledger.check("OLDA", scope)  # another session's (or no session's): just unknown
        assert ledger.restored_from("NEWA", scope) is None
    with pytest.raises(TabLost):
        ledger.check("OLDB", "CTX-B")
    ledger.check("OLDB", "CTX-A")
    assert ledger.restored_from("NEWA", "CTX-A") == "OLDA"


async def test_a_second_restore_moves_the_records_and_follows_the_chain(
        autojump_clock: trio.testing.MockClock) -> None:
    ledger = RestoreLedger(ttl_s=100)
    ledger.restored("X", "Y", url="https://a.test/", scope="C1", crash=CRASH)
    ledger.restored("P", "Q", url="https://p.test/", scope="C1", crash=CRASH)
    ledger.restored("R", "S", url="https://r.test/", scope="C1", crash=CRASH)
    await trio.sleep(60)
    ledger.rescope({"C1": "C2"})  # the session's new context in the next browser
    with pytest.raises(TabRestored):
        ledger.check("R", "C2")  # (S was closed before the second crash: not in its plan)
    ledger.check("R", "C1")
    second = {**CRASH, "at": 2.0}
    ledger.restored("Y", "Z", url="https://a.test/", scope="C2", crash=second)
    ledger.lost("Q", url="https://p.test/", reason="failed", scope="C2", crash=second)
    with pytest.raises(TabRestored) as raised:
        ledger.check("X", "C2")  # the first id points at the newest tab
    assert raised.value.details["targetId"] == "Z" and raised.value.details["crash"] == second
    with pytest.raises(TabLost):
        ledger.check("P", "C2")  # restored once, lost the second time: lost
    ledger.check("X", "C1")  # the old context is gone
    assert ledger.restored_from("Z", "C2") == "Y"  # the newest old id
    await trio.sleep(50)  # 110 s after the first crash, 50 after the second
    with pytest.raises(TabRestored):
        ledger.check("X", "C2")


async def test_the_ledger_is_bounded_and_cleared_by_a_stop(
        autojump_clock: trio.testing.MockClock) -> None:
    ledger = RestoreLedger(ttl_s=100)
    for n in range(LEDGER_MAX + 5):
        ledger.restored(f"O{n}", f"N{n}", url="https://a.test/", scope=None, crash=CRASH)
    assert len(ledger) == LEDGER_MAX
    ledger.check("O0", None)  # the oldest went first
    with pytest.raises(TabRestored):
        ledger.check(f"O{LEDGER_MAX + 4}", None)
    ledger.clear()
    assert len(ledger) == 0


async def test_restored_tabs_are_listed_with_restored_from(
        autojump_clock: trio.testing.MockClock) -> None:
    ledger = RestoreLedger(ttl_s=10)
    ledger.restored("OLD", "NEW", url="https://a.test/", scope=None, crash=CRASH)
    infos = ledger.annotate([info("NEW"), info("OTHER")], None)
    assert infos[0].to_json()["restoredFrom"] == "OLD"
    assert infos[0].to_json()["url"] == "https://a.test/"
    assert "restoredFrom" not in infos[1].to_json()


# -- the commit log --------------------------------------------------------------------------


def paused(commits: CommitLog, session: str, target: str, method: str, url: str) -> None:
    feed(commits, "Fetch.requestPaused", {"requestId": "r", "frameId": target,
                                          "resourceType": "Document",
                                          "request": {"url": url, "method": method}}, session)


def test_the_commit_log_keeps_the_last_commit_and_marks_form_posts() -> None:
    commits = CommitLog()
    attach(commits, "T1", "ACTOR")  # the tab actor's session
    attach(commits, "T1", "GUARD")  # the navigation guard's
    commit(commits, "ACTOR", "https://a.test/form", "L1")
    assert commits.commit_of("T1") is not None
    assert (commits.commit_of("T1").url, commits.commit_of("T1").post) == (  # type: ignore[union-attr]
        "https://a.test/form", False)
    paused(commits, "GUARD", "T1", "POST", "https://a.test/submit")
    commit(commits, "ACTOR", "https://a.test/submit", "L2")
    first = commits.commit_of("T1")
    assert first is not None and first.post and first.url == "https://a.test/submit"
    # the same commit reported on another session (a gateway client's) changes nothing
    attach(commits, "T1", "CLIENT")
    commit(commits, "CLIENT", "https://a.test/submit", "L2")
    assert commits.commit_of("T1") == first
    # a same-document change keeps the document's POST mark; a frame's commit is not the page's
    feed(commits, "Page.navigatedWithinDocument", {"frameId": "T1",
                                                   "url": "https://a.test/submit#top"}, "ACTOR")
    commit(commits, "ACTOR", "https://ads.test/", "L9", parent="T1")
    now = commits.commit_of("T1")
    assert now is not None and (now.url, now.post) == ("https://a.test/submit#top", True)
    # POST answered by a redirect: the last hop is a GET, the result is not marked
    paused(commits, "GUARD", "T1", "POST", "https://a.test/submit")
    paused(commits, "GUARD", "T1", "GET", "https://a.test/done")
    commit(commits, "ACTOR", "https://a.test/done", "L3", urlFragment="#ok")
    done = commits.commit_of("T1")
    assert done is not None and (done.url, done.post) == ("https://a.test/done#ok", False)
    # an error page is the URL that failed
    commit(commits, "ACTOR", "chrome-error://chromewebdata/", "L4",
           unreachableUrl="https://down.test/")
    assert commits.commit_of("T1").url == "https://down.test/"  # type: ignore[union-attr]
    assert commits.targets() == ["T1"]
    feed(commits, "Target.targetDestroyed", {"targetId": "T1"})
    assert commits.commit_of("T1") is None and commits.targets() == []


def test_only_main_frame_document_requests_of_known_pages_count() -> None:
    commits = CommitLog()
    attach(commits, "T1", "S1")
    feed(commits, "Fetch.requestPaused", {"frameId": "SUBFRAME", "resourceType": "Document",
                                          "request": {"method": "POST"}}, "S1")
    feed(commits, "Fetch.requestPaused", {"frameId": "T1", "resourceType": "XHR",
                                          "request": {"method": "POST"}}, "S1")
    commit(commits, "S1", "https://a.test/", "L1")
    assert commits.commit_of("T1").post is False  # type: ignore[union-attr]
    commit(commits, "UNKNOWN", "https://b.test/", "L2")  # a session of no known page
    assert commits.commit_of("T1").url == "https://a.test/"  # type: ignore[union-attr]
    # a malformed event never breaks the reader
    assert commits.deliver(CdpEvent(method="Page.frameNavigated", params={"frame": 3},
                                    session_id="S1"))
    assert not commits.wants(CdpEvent(method="Page.loadEventFired", params={},
                                      session_id="S1"))


def test_pages_of_another_context_than_the_default_are_told_apart() -> None:
    commits = CommitLog()
    attach(commits, "T1", "S1", context="DEF")
    attach(commits, "T2", "S2", context="GATEWAY")
    assert commits.in_default_context("T2")  # the default's id is not known yet: every one
    commits.default_context = "DEF"
    assert commits.in_default_context("T1") and not commits.in_default_context("T2")
    assert commits.in_default_context("T3")  # never seen: not known to be another's


# -- the sessions carried over ---------------------------------------------------------------


def download_store(tmp_path: Path) -> DownloadStore:
    return DownloadStore(tmp_path / "dl", Retention(), max_bytes=100)


async def test_held_sessions_survive_the_gap_and_are_carried_into_the_new_browser(
        tmp_path: Path) -> None:
    sessions = SessionTable(max_sessions=4)
    async with running_browser(downloads=download_store(tmp_path)) as old, running_browser(
            context_peer(refuse=1), downloads=download_store(tmp_path)) as new:
        a = await sessions.create(old.runtime, name="a", ttl_s=60)
        b = await sessions.create(old.runtime, name="b", ttl_s=60)
        sessions.hold()  # the browser crashed
        assert [s.session_id for s in sessions.live(None)] == [a.session_id, b.session_id]
        moved = await sessions.carry(new.runtime)  # the first context is refused: a is not
        assert list(moved) == [b.context_id]
        carried = sessions.resolve(b.session_id, new.runtime)
        assert (carried.session_id, carried.name, carried.ttl_s) == (b.session_id, "b", 60)
        assert carried.context_id == moved[b.context_id] != b.context_id
        assert await new.scope_label(carried.context_id) == b.session_id
        assert [d.get("browserContextId") for d in new.download_behaviors()] == [
            None, carried.context_id]  # the follower confined it (and the default context)
        with pytest.raises(SessionNotFound):
            sessions.resolve(a.session_id, new.runtime)
        assert len(sessions.live(None)) == 1  # held until the restore is over
        sessions.release()
        assert [s.session_id for s in sessions.live(new.runtime)] == [b.session_id]
        assert sessions.live(old.runtime) == []  # an earlier browser's sessions pruned again


async def test_a_released_hold_ends_the_sessions_as_before() -> None:
    sessions = SessionTable(max_sessions=4)
    async with running_browser() as old:
        await sessions.create(old.runtime, name=None, ttl_s=60)
        sessions.hold()
        assert len(sessions.live(None)) == 1
        sessions.release()  # stopped instead of restarted
        assert sessions.live(None) == []
