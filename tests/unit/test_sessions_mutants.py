"""Sessions' bookkeeping at its edges (trio's MockClock, a fake CDP peer, no browser).

Written for the mutants of ``SessionTable`` (``python -m supervision.mutants
--only sessions``): idle time, sessions being created counted against the
limit, sessions of an earlier browser freeing their places, closing.
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
from tests.fakecdp import context_peer, running_browser


async def test_sessions_being_created_count_against_the_limit(tmp_path: Path) -> None:
    peer = context_peer()
    # A new context's download behavior is answered only once the test lets it (a create
    # in flight); the default context's at once.
    peer.on("Browser.setDownloadBehavior",
            lambda p, s: None if p.get("browserContextId") else {})
    sessions = SessionTable(max_sessions=2)
    made: list[str] = []
    with trio.fail_after(5):
        async with running_browser(peer, downloads=DownloadStore(
                tmp_path / "dl", Retention(), max_bytes=100)) as browser:
            rt = browser.runtime
            async with trio.open_nursery() as nursery:
                async def create() -> None:
                    made.append((await sessions.create(rt, name=None, ttl_s=60)).session_id)

                nursery.start_soon(create)
                nursery.start_soon(create)
                await trio.testing.wait_all_tasks_blocked()
                assert len(sessions) == 0  # both still being made
                with pytest.raises(TooManySessions):
                    await sessions.create(rt, name=None, ttl_s=60)
                assert await peer.answer_late("Browser.setDownloadBehavior") == 2
            assert len(made) == 2 and len(sessions) == 2
            with pytest.raises(TooManySessions):
                await sessions.create(rt, name=None, ttl_s=60)
            assert await sessions.close(made[0], rt) is True
            peer.on("Browser.setDownloadBehavior", lambda p, s: {})
            await sessions.create(rt, name=None, ttl_s=60)  # a place is free again


async def test_sessions_of_an_earlier_browser_free_their_places() -> None:
    sessions = SessionTable(max_sessions=1)
    async with running_browser() as first, running_browser() as second:
        old = await sessions.create(first.runtime, name="old", ttl_s=60)
        new = await sessions.create(second.runtime, name="new", ttl_s=60)
        assert sessions.live(second.runtime) == [new]
        with pytest.raises(SessionNotFound):
            sessions.resolve(old.session_id, second.runtime)


async def test_idle_time_starts_at_zero_and_counts_virtual_seconds(
        autojump_clock: trio.testing.MockClock) -> None:
    sessions = SessionTable(max_sessions=4)
    async with running_browser() as browser:
        session = await sessions.create(browser.runtime, name=None, ttl_s=60)
        assert sessions.idle_s(session.session_id) == 0.0
        await trio.sleep(2.5)
        assert sessions.idle_s(session.session_id) == pytest.approx(2.5)
        assert session.to_json(idle_s=sessions.idle_s(session.session_id), tabs=3) == {
            "sessionId": session.session_id, "name": None, "ttlS": 60, "idleS": 2.5,
            "createdAt": session.created_at, "tabs": 3}
        sessions.touch(session.session_id)
        assert sessions.idle_s(session.session_id) == 0.0
        assert sessions.next_expiry() == pytest.approx(trio.current_time() + 60)
        assert sessions.expired(trio.current_time() + 59.9) == []
        assert sessions.expired(trio.current_time() + 60) == [session.session_id]
        sessions.touch("unknown")  # touching a session that is not there changes nothing
        assert len(sessions) == 1 and sessions.idle_s("unknown") == 0.0


async def test_closing_disposes_the_context_once() -> None:
    sessions = SessionTable(max_sessions=4)
    async with running_browser() as browser:
        rt = browser.runtime
        session = await sessions.create(rt, name=None, ttl_s=60)
        assert await sessions.close(session.session_id, rt) is True
        assert await sessions.close(session.session_id, rt) is False
        assert browser.disposed() == [session.context_id]
        other = await sessions.create(rt, name=None, ttl_s=60)
        assert await sessions.close(other.session_id, None) is True  # no browser: nothing sent
        assert browser.disposed() == [session.context_id]
        assert len(sessions) == 0
