"""The tab actor's commit feed and its own ref pruning, against the shared fake CDP peer.

What the real browser cannot show on demand: every Page event of the tab's
session becomes one numbered record in wire order, a reader that sees a record
already sees the tab's state after it (the feed's ordering guarantee), nothing
before a reader's mark reaches it, and refs and isolated worlds of a document
go when its frame navigates or detaches, with no walk to prune them. Also
``/navigate``'s wait and effects on the feed.
"""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

from browserd.tabs import page
from browserd.tabs.actor import TabActor
from browserd.tabs.effects import observing
from browserd.tabs.feed import CommitKind, CommitRecord
from browserd.tabs.state import LoadState, World
from browserd.tabs.tabview import TabView
from tests.fakecdp import FakeCdpPeer, running_tab, tab_peer

SID = "S-T1"  # the session tab_peer("T1") hands out


def navigated(frame_id: str, loader: str, url: str, *, parent: str | None = None,
              **extra: Any) -> dict[str, Any]:
    frame: dict[str, Any] = {"id": frame_id, "loaderId": loader, "url": url}
    if parent is not None:
        frame["parentId"] = parent
    return {"frame": {**frame, **extra.pop("frame", {})}, **extra}


async def read_feed(tab: TabActor, after: int, count: int
                    ) -> list[tuple[CommitRecord, TabView]]:
    """The next ``count`` records after ``after``, each with the tab's view at the moment
    the reader saw it."""
    seen: list[tuple[CommitRecord, TabView]] = []
    while len(seen) < count:
        record = await tab.wait_commit(after=after)
        seen.append((record, tab.view()))
        after = record.seq
    return seen


async def test_events_become_numbered_records_in_wire_order_and_the_tab_is_ahead() -> None:
    with trio.fail_after(10):
        peer = tab_peer(url="https://a.test/")
        async with running_tab(peer) as tab:
            mark = tab.view().commit_seq
            events: list[tuple[str, dict[str, Any]]] = [
                ("Page.frameRequestedNavigation", {"frameId": "T1", "url": "https://a.test/b",
                                                   "disposition": "currentTab"}),
                ("Page.frameRequestedNavigation", {"frameId": "T1", "url": "https://pop.test/",
                                                   "disposition": "newTab"}),  # not this tab's
                ("Page.lifecycleEvent", {"frameId": "T1", "loaderId": "L2", "name": "init"}),
                ("Page.frameNavigated", navigated("T1", "L2", "https://a.test/b")),
                ("Page.frameNavigated", navigated("F1", "LF1", "https://a.test/frame",
                                                  parent="T1")),
                ("Page.navigatedWithinDocument", {"frameId": "T1",
                                                  "url": "https://a.test/b#two"}),
                ("Page.frameStoppedLoading", {"frameId": "T1"}),
                ("Page.frameNavigated", navigated("T1", "L3", "chrome-error://chromewebdata/",
                                                  frame={"unreachableUrl": "https://down.test/"})),
                ("Page.frameNavigated", navigated("T1", "L2", "https://a.test/b",
                                                  type="BackForwardCacheRestore")),
                ("Page.frameDetached", {"frameId": "F1"}),
            ]
            async with trio.open_nursery() as nursery:
                got: list[list[tuple[CommitRecord, TabView]]] = []

                async def reader() -> None:
                    got.append(await read_feed(tab, mark, 8))

                nursery.start_soon(reader)
                for method, params in events:
                    await peer.emit(method, params, SID)
            seen = got[0]
            assert [r.seq for r, _ in seen] == list(range(mark + 1, mark + 9))
            assert [(r.kind, r.frame_id, r.main_frame) for r, _ in seen] == [
                (CommitKind.REQUESTED, "T1", True),
                (CommitKind.NEW_DOCUMENT, "T1", True),
                (CommitKind.NEW_DOCUMENT, "F1", False),
                (CommitKind.SAME_DOCUMENT, "T1", True),
                (CommitKind.STOPPED, "T1", True),
                (CommitKind.ERROR_PAGE, "T1", True),
                (CommitKind.RESTORED, "T1", True),
                (CommitKind.DETACHED, "F1", False)]
            # Whoever sees a record sees the tab's state after it (never before).
            (_, at_request), (commit, at_commit), *_ = seen
            assert at_request.commit_seq >= mark + 1
            assert commit.loader_id == "L2" and commit.url == "https://a.test/b"
            assert at_commit.commit_seq >= commit.seq and at_commit.navigations >= 1
            assert at_commit.loader_id in ("L2", "L3")  # this commit, or a later one
            same = seen[3][0]
            assert same.same_document and same.url == "https://a.test/b#two"
            assert same.loader_id == "L2"
            restored, at_restore = seen[6]
            assert restored.restored and at_restore.load_state is LoadState.LOAD
            # A later mark sees only what follows it.
            assert tab.commits_since(seen[-1][0].seq) == ()
            assert [r.kind for r in tab.commits_since(seen[5][0].seq)] == [
                CommitKind.RESTORED, CommitKind.DETACHED]


async def test_each_record_is_seen_with_the_state_it_describes() -> None:
    """A reader woken by record n finds the tab's URL and document of commit n (the
    actor publishes in the step that applies the event)."""
    with trio.fail_after(10):
        peer = tab_peer()
        async with running_tab(peer) as tab:
            mark = tab.view().commit_seq
            checked: list[bool] = []
            async with trio.open_nursery() as nursery:
                async def reader() -> None:
                    after = mark
                    for _ in range(20):
                        record = await tab.wait_commit(after=after)
                        view = tab.view()
                        checked.append(view.commit_seq == record.seq
                                       and view.loader_id == record.loader_id
                                       and view.url == record.url)
                        after = record.seq

                nursery.start_soon(reader)
                for n in range(20):
                    await peer.emit("Page.frameNavigated",
                                    navigated("T1", f"L{n + 2}", f"https://a.test/{n}"), SID)
                    await trio.testing.wait_all_tasks_blocked()
            assert checked == [True] * 20


def oopif_attached(session_id: str, target_id: str) -> dict[str, Any]:
    return {"sessionId": session_id, "waitingForDebugger": False,
            "targetInfo": {"type": "iframe", "targetId": target_id}}


async def settled(tab: TabActor) -> None:
    """Until the peer's events so far reached the tab (all of it runs in this process)."""
    del tab
    await trio.testing.wait_all_tasks_blocked()


async def test_refs_and_worlds_go_with_their_frame_the_actor_prunes_them_itself() -> None:
    with trio.fail_after(10):
        peer = tab_peer(loader_id="L1")
        async with running_tab(peer) as tab:
            await peer.emit("Page.frameNavigated", navigated("F1", "LF1", "https://a.test/f1",
                                                             parent="T1"), SID)
            await peer.emit("Page.frameNavigated", navigated("F2", "LF2", "https://a.test/f2",
                                                             parent="T1"), SID)
            await peer.emit("Target.attachedToTarget", oopif_attached("S-O", "O1"), SID)
            await trio.testing.wait_all_tasks_blocked()
            assert tab.frame_loader("F2") == "LF2" and dict(tab.child_sessions) == {"O1": "S-O"}
            # What the ref engine records during walks (in the work slot).
            refs = tab.refs
            for ref, frame, loader, session in (("e1", "T1", "L1", None),
                                                ("e2", "F1", "LF1", None),
                                                ("e3", "F2", "LF2", None),
                                                ("e4", "O1", "LO", "S-O")):
                refs.record([{"ref": ref, "role": "button"}], frame_id=frame, loader_id=loader,
                            session_id=session)
                refs.set_world((session, frame), World(loader_id=loader, context_id=len(ref)))
            assert len(refs) == 4

            # A child frame navigates: its refs and world go, nobody else's.
            await peer.emit("Page.frameNavigated", navigated("F1", "LF1b", "https://a.test/g",
                                                             parent="T1"), SID)
            await settled(tab)
            assert refs.get("e2") is None and refs.gone_reason("e2") == "navigated"
            assert refs.world((None, "F1")) is None
            assert all(refs.get(r) is not None for r in ("e1", "e3", "e4"))
            # A child frame is detached.
            await peer.emit("Page.frameDetached", {"frameId": "F2"}, SID)
            await settled(tab)
            assert refs.gone_reason("e3") == "navigated" and refs.world((None, "F2")) is None
            # An out-of-process frame's session ends.
            await peer.emit("Target.detachedFromTarget", {"sessionId": "S-O"}, SID)
            await settled(tab)
            assert refs.gone_reason("e4") == "navigated" and refs.world(("S-O", "O1")) is None
            assert [r.kind for r in tab.commits_since(0)][-1] is CommitKind.DETACHED
            assert refs.get("e1") is not None and refs.world((None, "T1")) is not None
            # The main frame navigates: its document's refs go too.
            await peer.emit("Page.frameNavigated", navigated("T1", "L2", "https://a.test/n"),
                            SID)
            await settled(tab)
            assert refs.get("e1") is None and refs.gone_reason("e1") == "navigated"
            assert refs.world((None, "T1")) is None and len(refs) == 0
            # A walk that finished after its document went records nothing alive.
            refs.record([{"ref": "e5"}], frame_id="T1", loader_id="L1", session_id=None)
            assert refs.get("e5") is None and refs.gone_reason("e5") == "navigated"


async def test_an_observer_reports_only_what_follows_its_mark() -> None:
    with trio.fail_after(10):
        peer = tab_peer()
        async with running_tab(peer) as tab:
            await peer.emit("Page.frameNavigated", navigated("T1", "L2", "https://a.test/x"),
                            SID)
            await settled(tab)
            with observing(tab) as observer:
                assert observer.effects() == {}  # the commit before it is not its own
                await peer.emit("Page.frameStartedNavigating",
                                {"frameId": "T1", "url": "https://a.test/y"}, SID)
                await settled(tab)
                assert observer.effects() == {"navigationPending": "https://a.test/y"}
                await peer.emit("Page.frameStoppedLoading", {"frameId": "T1"}, SID)
                await settled(tab)
                assert observer.uncommitted and observer.effects() == {}


def navigating_peer(reply: dict[str, Any]) -> FakeCdpPeer:
    peer = tab_peer()
    peer.on("Page.navigate", lambda p, s: reply)
    return peer


async def sent_navigate(peer: FakeCdpPeer) -> None:
    while not peer.sent("Page.navigate"):
        await trio.testing.wait_all_tasks_blocked()
        await trio.sleep(0.01)


async def test_navigate_waits_on_the_feed_for_its_document_and_answers_effects() -> None:
    with trio.fail_after(10):
        peer = navigating_peer({"frameId": "T1", "loaderId": "L2"})
        async with running_tab(peer) as tab:
            got: list[dict[str, Any]] = []
            async with trio.open_nursery() as nursery:
                async def go() -> None:
                    got.append(await page.navigate(tab, "https://a.test/next",
                                                   wait_until="load", timeout_s=5))

                nursery.start_soon(go)
                await sent_navigate(peer)
                # Another document commits and loads first (not the navigation's), then its own.
                await peer.emit("Page.frameNavigated", navigated("T1", "LX", "https://a.test/x"),
                                SID)
                await peer.emit("Page.lifecycleEvent",
                                {"frameId": "T1", "loaderId": "LX", "name": "load"}, SID)
                await trio.testing.wait_all_tasks_blocked()
                assert got == []
                await peer.emit("Page.frameNavigated",
                                navigated("T1", "L2", "https://a.test/next"), SID)
                await trio.testing.wait_all_tasks_blocked()
                assert got == []  # committed, not loaded
                await peer.emit("Page.lifecycleEvent",
                                {"frameId": "T1", "loaderId": "L2", "name": "load"}, SID)
            answer = got[0]
            assert answer["loadState"] == "load" and answer["url"] == "https://a.test/next"
            assert answer["effects"] == {"navigated": "https://a.test/next"}


async def test_a_navigation_that_became_a_download_answers_it_in_effects() -> None:
    with trio.fail_after(10):
        peer = navigating_peer({"frameId": "T1", "loaderId": "LD",
                                "errorText": "net::ERR_ABORTED", "isDownload": True})
        async with running_tab(peer) as tab:
            got: list[dict[str, Any]] = []
            async with trio.open_nursery() as nursery:
                async def go() -> None:
                    got.append(await page.navigate(tab, "https://a.test/report.csv",
                                                   timeout_s=5))

                nursery.start_soon(go)
                await sent_navigate(peer)
                await peer.emit("Page.downloadWillBegin", {
                    "frameId": "T1", "guid": "g-1", "url": "https://a.test/report.csv",
                    "suggestedFilename": "report.csv"}, SID)
            answer = got[0]
            assert answer["url"] == "https://a.test/"  # the page it stayed on
            assert answer["effects"] == {"downloads": [{
                "id": "g-1", "url": "https://a.test/report.csv",
                "suggestedFilename": "report.csv"}]}
