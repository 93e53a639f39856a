"""Sessions' bookkeeping and idle reaper under trio's MockClock (a fake CDP peer, no browser).

Each test runs a real runtime (connection, tab registry, download follower) on
``tests/fakecdp.py``'s peer, which makes the browser contexts. The tests on
the autojumping clock run no download follower: its store's file work runs in
a worker thread, which the clock does not wait for.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing

from browserd.downloads import DownloadStore
from browserd.errors import SessionNotFound, TooManySessions
from browserd.profiles.sessions import SessionTable
from browserd.retention import Retention
from tests.fakecdp import Refuse, context_peer, running_browser


def store(tmp_path: Path) -> DownloadStore:
    """The profile's download store (its follower confines each session's context)."""
    return DownloadStore(tmp_path / "dl", Retention(), max_bytes=100)


def table(tmp_path: Path, max_sessions: int = 16) -> SessionTable:
    return SessionTable(max_sessions=max_sessions)


async def test_a_session_is_a_labelled_scope_whose_downloads_are_confined(
        tmp_path: Path) -> None:
    async with running_browser(downloads=store(tmp_path)) as browser:
        rt = browser.runtime
        sessions = table(tmp_path)
        session = await sessions.create(rt, name="a", ttl_s=60)
        # its context is a tab scope labelled with the session's id (download records name it)
        assert await browser.scope_label(session.context_id) == session.session_id
        assert rt.scope_of(f"PAGE-OF-{session.context_id}") == session.context_id
        # the follower set the profile's download behavior on it before it was handed out
        assert [b.get("browserContextId") for b in browser.download_behaviors()] == [
            None, session.context_id]
        assert browser.download_behaviors()[-1]["behavior"] == "allowAndName"
        assert sessions.resolve(session.session_id, rt) is session


async def test_without_a_follower_a_sessions_downloads_are_denied(tmp_path: Path) -> None:
    async with running_browser() as browser:
        session = await table(tmp_path).create(browser.runtime, name=None, ttl_s=60)
        assert browser.download_behaviors() == [
            {"behavior": "deny", "browserContextId": session.context_id}]


async def test_idle_sessions_close_after_their_ttl_and_use_postpones_it(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    sessions = table(tmp_path)
    async with running_browser() as browser, \
            trio.open_nursery() as nursery:
        rt = browser.runtime
        await nursery.start(sessions.run_reaper, lambda: rt)
        short = await sessions.create(rt, name=None, ttl_s=10)
        used = await sessions.create(rt, name=None, ttl_s=10)
        start = trio.current_time()
        await trio.sleep(6)
        sessions.touch(used.session_id)  # a request named it at t=6
        await trio.sleep(5)  # t=11: short is past its TTL, used is not
        assert browser.disposed() == [short.context_id]
        with pytest.raises(SessionNotFound):
            sessions.resolve(short.session_id, rt)
        await trio.sleep(4.5)  # t=15.5: used has been idle 9.5 s
        assert sessions.resolve(used.session_id, rt) is used  # touches it again
        await trio.sleep(1)  # t=16.5: past the TTL from the touch at t=6, not from t=15.5
        assert browser.disposed() == [short.context_id]
        assert sessions.idle_s(used.session_id) == pytest.approx(1.0)
        await trio.sleep(9.5)
        assert browser.disposed() == [short.context_id, used.context_id]
        assert len(sessions) == 0
        assert trio.current_time() - start == pytest.approx(26.0)
        nursery.cancel_scope.cancel()


async def test_a_session_used_only_through_requests_is_never_reaped(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    sessions = table(tmp_path)
    async with running_browser() as browser, \
            trio.open_nursery() as nursery:
        rt = browser.runtime
        await nursery.start(sessions.run_reaper, lambda: rt)
        busy = await sessions.create(rt, name=None, ttl_s=10)
        for _ in range(10):  # a request naming it every 9 s, for 90 s
            await trio.sleep(9)
            assert sessions.resolve(busy.session_id, rt) is busy
        assert browser.disposed() == [] and len(sessions) == 1
        await trio.sleep(10.5)  # then nothing: reaped at its TTL after the last request
        assert browser.disposed() == [busy.context_id]
        nursery.cancel_scope.cancel()


async def test_the_reaper_sleeps_while_there_are_no_sessions(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    sessions = table(tmp_path)
    assert sessions.next_expiry() == float("inf")
    async with running_browser() as browser, \
            trio.open_nursery() as nursery:
        await nursery.start(sessions.run_reaper, lambda: None)
        await trio.sleep(3600)
        rt = browser.runtime
        made = await sessions.create(rt, name=None, ttl_s=30)
        assert sessions.next_expiry() == pytest.approx(trio.current_time() + 30)
        await trio.sleep(31)
        # the runtime is gone (lambda: None): the session is forgotten, nothing is sent
        with pytest.raises(SessionNotFound):
            sessions.resolve(made.session_id, rt)
        assert browser.disposed() == []
        nursery.cancel_scope.cancel()


async def test_max_sessions_counts_sessions_being_created(tmp_path: Path) -> None:
    sessions = table(tmp_path, max_sessions=2)
    async with running_browser(downloads=store(tmp_path)) as browser:
        rt = browser.runtime
        await sessions.create(rt, name=None, ttl_s=60)
        await sessions.create(rt, name=None, ttl_s=60)
        with pytest.raises(TooManySessions) as info:
            await sessions.create(rt, name=None, ttl_s=60)
    assert info.value.status == 429


async def test_sessions_of_an_earlier_browser_are_gone(tmp_path: Path) -> None:
    sessions = table(tmp_path)
    async with running_browser() as first, running_browser() as second:
        old = await sessions.create(first.runtime, name=None, ttl_s=60)
        with pytest.raises(SessionNotFound):
            sessions.resolve(old.session_id, second.runtime)
        assert sessions.live(second.runtime) == []
        assert await sessions.close(old.session_id, second.runtime) is False
        assert first.disposed() == second.disposed() == []


async def test_a_failed_create_disposes_the_context_it_made(tmp_path: Path) -> None:
    peer = context_peer()
    # the download behavior of the new context is refused (the default context's is not)
    peer.on("Browser.setDownloadBehavior",
            lambda p, s: Refuse("nope") if p.get("browserContextId") else {})
    sessions = table(tmp_path)
    async with running_browser(peer, downloads=store(tmp_path)) as browser:
        with pytest.raises(Exception, match="nope"):
            await sessions.create(browser.runtime, name=None, ttl_s=60)
        assert browser.disposed() == ["CTX1"] and len(sessions) == 0
