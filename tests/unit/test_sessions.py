"""Sessions' bookkeeping and idle reaper under trio's MockClock (no browser)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
import trio
import trio.testing

from browserd.errors import SessionNotFound, TooManySessions
from browserd.profiles.sessions import SessionTable
from browserd.supervisor.runtime import BrowserRuntime


class FakeConnection:
    """Answers the three commands a session sends; records them."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.contexts = 0

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.sent.append((method, params or {}))
        if method == "Target.createBrowserContext":
            self.contexts += 1
            return {"browserContextId": f"CTX{self.contexts}"}
        return {}

    def disposed(self) -> list[str]:
        return [p["browserContextId"] for m, p in self.sent
                if m == "Target.disposeBrowserContext"]


class FakeRegistry:
    def __init__(self) -> None:
        self.scopes: dict[str, str | None] = {}

    def add_scope(self, context: str, label: str | None = None) -> None:
        self.scopes[context] = label

    def remove_scope(self, context: str) -> None:
        pass


class FakeFollower:
    """The connection's download follower: records the contexts it was asked to confine."""

    def __init__(self) -> None:
        self.confined: list[str] = []

    async def confine_context(self, context_id: str) -> None:
        self.confined.append(context_id)


def runtime(*, follower: bool = True) -> BrowserRuntime:
    """A stand-in runtime: ``connection``, ``registry`` and ``downloads`` are what sessions use."""
    class Runtime:
        def __init__(self) -> None:
            self.connection = FakeConnection()
            self.registry = FakeRegistry()
            self.downloads = FakeFollower() if follower else None
            self.navguard: Any = None  # no egress containment here (see test_egress.py)

    return cast(BrowserRuntime, Runtime())


def table(tmp_path: Path, max_sessions: int = 16) -> SessionTable:
    return SessionTable(max_sessions=max_sessions)


async def test_a_session_is_a_labelled_scope_whose_downloads_are_confined(
        tmp_path: Path) -> None:
    rt = runtime()
    sessions = table(tmp_path)
    session = await sessions.create(rt, name="a", ttl_s=60)
    # its context is a tab scope labelled with the session's id (download records name it)
    assert cast(FakeRegistry, rt.registry).scopes == {session.context_id: session.session_id}
    # the follower set the profile's download behavior on it before it was handed out
    assert cast(FakeFollower, rt.downloads).confined == [session.context_id]
    assert sessions.resolve(session.session_id, rt) is session


async def test_without_a_follower_a_sessions_downloads_are_denied(tmp_path: Path) -> None:
    rt = runtime(follower=False)
    session = await table(tmp_path).create(rt, name=None, ttl_s=60)
    behaviour = dict(cast(FakeConnection, rt.connection).sent)["Browser.setDownloadBehavior"]
    assert behaviour == {"behavior": "deny", "browserContextId": session.context_id}


async def test_idle_sessions_close_after_their_ttl_and_use_postpones_it(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    rt = runtime()
    sessions = table(tmp_path)
    conn = cast(FakeConnection, rt.connection)
    async with trio.open_nursery() as nursery:
        await nursery.start(sessions.run_reaper, lambda: rt)
        short = await sessions.create(rt, name=None, ttl_s=10)
        used = await sessions.create(rt, name=None, ttl_s=10)
        start = trio.current_time()
        await trio.sleep(6)
        sessions.touch(used.session_id)  # a request named it at t=6
        await trio.sleep(5)  # t=11: short is past its TTL, used is not
        assert conn.disposed() == [short.context_id]
        with pytest.raises(SessionNotFound):
            sessions.resolve(short.session_id, rt)
        await trio.sleep(4.5)  # t=15.5: used has been idle 9.5 s
        assert sessions.resolve(used.session_id, rt) is used  # touches it again
        await trio.sleep(1)  # t=16.5: past the TTL from the touch at t=6, not from t=15.5
        assert conn.disposed() == [short.context_id]
        assert sessions.idle_s(used.session_id) == pytest.approx(1.0)
        await trio.sleep(9.5)
        assert conn.disposed() == [short.context_id, used.context_id]
        assert len(sessions) == 0
        assert trio.current_time() - start == pytest.approx(26.0)
        nursery.cancel_scope.cancel()


async def test_a_session_used_only_through_requests_is_never_reaped(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    rt = runtime()
    sessions = table(tmp_path)
    conn = cast(FakeConnection, rt.connection)
    async with trio.open_nursery() as nursery:
        await nursery.start(sessions.run_reaper, lambda: rt)
        busy = await sessions.create(rt, name=None, ttl_s=10)
        for _ in range(10):  # a request naming it every 9 s, for 90 s
            await trio.sleep(9)
            assert sessions.resolve(busy.session_id, rt) is busy
        assert conn.disposed() == [] and len(sessions) == 1
        await trio.sleep(10.5)  # then nothing: reaped at its TTL after the last request
        assert conn.disposed() == [busy.context_id]
        nursery.cancel_scope.cancel()


async def test_the_reaper_sleeps_while_there_are_no_sessions(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    sessions = table(tmp_path)
    assert sessions.next_expiry() == float("inf")
    async with trio.open_nursery() as nursery:
        await nursery.start(sessions.run_reaper, lambda: None)
        await trio.sleep(3600)
        rt = runtime()
        made = await sessions.create(rt, name=None, ttl_s=30)
        assert sessions.next_expiry() == pytest.approx(trio.current_time() + 30)
        await trio.sleep(31)
        # the runtime is gone (lambda: None): the session is forgotten, nothing is sent
        with pytest.raises(SessionNotFound):
            sessions.resolve(made.session_id, rt)
        nursery.cancel_scope.cancel()


async def test_max_sessions_counts_sessions_being_created(tmp_path: Path) -> None:
    rt = runtime()
    sessions = table(tmp_path, max_sessions=2)
    await sessions.create(rt, name=None, ttl_s=60)
    await sessions.create(rt, name=None, ttl_s=60)
    with pytest.raises(TooManySessions) as info:
        await sessions.create(rt, name=None, ttl_s=60)
    assert info.value.status == 429


async def test_sessions_of_an_earlier_browser_are_gone(tmp_path: Path) -> None:
    first, second = runtime(), runtime()
    sessions = table(tmp_path)
    old = await sessions.create(first, name=None, ttl_s=60)
    with pytest.raises(SessionNotFound):
        sessions.resolve(old.session_id, second)
    assert sessions.live(second) == []
    assert await sessions.close(old.session_id, second) is False


async def test_a_failed_create_disposes_the_context_it_made(tmp_path: Path) -> None:
    rt = runtime()
    conn = cast(FakeConnection, rt.connection)

    async def failing(context_id: str) -> None:
        from browserd.errors import CdpError
        raise CdpError("nope")

    cast(Any, rt.downloads).confine_context = failing  # the download behavior is refused
    sessions = table(tmp_path)
    with pytest.raises(Exception, match="nope"):
        await sessions.create(rt, name=None, ttl_s=60)
    assert conn.disposed() == ["CTX1"] and len(sessions) == 0
