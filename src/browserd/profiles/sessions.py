"""Sessions: isolated agents inside one profile, each its own browser context.

``POST /sessions`` makes a browser context (``Target.createBrowserContext``:
its own cookies, storage and tabs) and registers it as a tab scope, so a
request naming the session sees only that context's tabs. A session ends
when it is deleted, when it has been idle (no request named it) for its
``ttl_s``, or when the browser it lives in ends: a restarted browser has
none of the old contexts, so its sessions are gone (``SESSION_NOT_FOUND``) —
unless the restart was a crash whose tabs are restored
(:mod:`browserd.supervisor.restore`): then the table is *held* from the
crash on (:meth:`SessionTable.hold`: nothing is pruned) and each session is
*carried* into the new browser before any request can reach it
(:meth:`SessionTable.carry`: the same ``sessionId``, a new context with its
download behavior set; its cookies and storage start empty) until the
restore ends the hold (:meth:`SessionTable.release`).
A session's context downloads into the profile's downloads directory, as the
default context does (set before the session is handed out); the download
records name the session. A session made with ``allowed_origins`` has its
own egress policy (:mod:`browserd.egress`), registered with the
navigation guard for its context before the session is handed out (and
again when it is carried over); it can only narrow the profile's policy.

:class:`SessionTable` is one profile's sessions. Its bookkeeping is plain
code over ``trio.current_time()`` (unit-tested with trio's MockClock);
:meth:`SessionTable.run_reaper` is the one task that closes idle sessions.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import trio

from ..cdp import CdpConnection
from ..egress import EgressPolicy
from ..errors import BadRequest, BrowserdError, SessionNotFound, TooManySessions
from ..supervisor.runtime import BrowserRuntime

__all__ = ["CDP_DEADLINE_S", "Session", "SessionTable"]

log = logging.getLogger(__name__)

#: Deadline of each CDP call a session makes (create, download behaviour, dispose).
CDP_DEADLINE_S = 10.0


@attrs.frozen(kw_only=True)
class Session:
    """One session: its id, its browser context and the browser run it lives in.

    ``connection`` is that run's (each start of the browser has its own): a
    session lives in the runtime whose connection it names.
    """

    session_id: str
    name: str | None
    context_id: str
    ttl_s: float
    created_at: float  # wall clock, for display
    connection: CdpConnection = attrs.field(repr=False, eq=False)
    egress: EgressPolicy | None = None  # its own allowed origins (None: the profile's)

    def to_json(self, *, idle_s: float, tabs: int) -> dict[str, Any]:
        out: dict[str, Any] = {
            "sessionId": self.session_id, "name": self.name, "ttlS": self.ttl_s,
            "createdAt": self.created_at, "idleS": round(idle_s, 3), "tabs": tabs}
        if self.egress is not None:
            out["allowedOrigins"] = self.egress.to_json()
        return out


class SessionTable:
    """The sessions of one profile. Only its own methods change it."""

    def __init__(self, *, max_sessions: int) -> None:
        self.max_sessions = max_sessions
        self._sessions: dict[str, Session] = {}
        self._last_used: dict[str, float] = {}  # trio time of the last request
        self._creating = 0
        self._held = False  # a crashed browser's sessions wait to be carried over
        self._changed = trio.Event()

    # -- plain bookkeeping ----------------------------------------------------------

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._sessions

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    def _forget(self, session_id: str) -> Session | None:
        self._last_used.pop(session_id, None)
        session = self._sessions.pop(session_id, None)
        if session is not None:
            self._notify()
        return session

    def prune(self, runtime: BrowserRuntime | None) -> None:
        """Forget every session that does not live in ``runtime`` (the browser restarted).

        Not while held (:meth:`hold`): those sessions wait for :meth:`carry`.
        """
        if self._held:
            return
        for session_id, session in list(self._sessions.items()):
            if runtime is None or session.connection is not runtime.connection:
                log.info("session %s ended with its browser", session_id)
                self._forget(session_id)

    def live(self, runtime: BrowserRuntime | None) -> list[Session]:
        self.prune(runtime)
        return list(self._sessions.values())

    def idle_s(self, session_id: str) -> float:
        return max(0.0, trio.current_time() - self._last_used.get(session_id, trio.current_time()))

    def touch(self, session_id: str) -> None:
        """A request used the session: its idle time starts again."""
        if session_id in self._sessions:
            self._last_used[session_id] = trio.current_time()
            self._notify()

    def resolve(self, session_id: str, runtime: BrowserRuntime) -> Session:
        """The live session ``session_id`` of ``runtime`` (touched); SessionNotFound if none."""
        self.prune(runtime)
        session = self._sessions.get(session_id)
        if session is None:
            raise SessionNotFound(f"no session {session_id!r}")
        self.touch(session_id)
        return session

    def next_expiry(self) -> float:
        """The trio time at which the next session turns idle (inf when none)."""
        return min((self._last_used[s] + self._sessions[s].ttl_s for s in self._sessions
                    if s in self._last_used), default=float("inf"))

    def expired(self, now: float) -> list[str]:
        return [s for s in self._sessions
                if s in self._last_used and now >= self._last_used[s] + self._sessions[s].ttl_s]

    # -- changes in the browser ------------------------------------------------------

    async def create(self, runtime: BrowserRuntime, *, name: str | None,
                     ttl_s: float, allowed_origins: Sequence[str] | None = None) -> Session:
        """Make a session: a new browser context in ``runtime``, registered as a scope.

        ``allowed_origins``: its egress policy (see :func:`session_egress`).
        Raises BadRequest for a list that is invalid or would widen the
        profile's, TooManySessions at ``max_sessions`` (sessions being created
        count), or the CDP error; a context made before a failure is
        disposed again. Cancellation while creating disposes it too.
        """
        egress = session_egress(runtime, allowed_origins)
        self.prune(runtime)
        if len(self._sessions) + self._creating >= self.max_sessions:
            raise TooManySessions(f"this profile already has {self.max_sessions} sessions")
        self._creating += 1
        try:
            session_id = "s" + secrets.token_hex(8)
            context_id = await _new_context(runtime, session_id, egress)
            session = Session(session_id=session_id, name=name, context_id=context_id,
                              ttl_s=ttl_s, created_at=time.time(),
                              connection=runtime.connection,
                              egress=egress)
            self._sessions[session_id] = session
            self._last_used[session_id] = trio.current_time()
            self._notify()
            log.info("session %s created (context %s)", session_id, context_id)
            return session
        finally:
            self._creating -= 1

    def hold(self) -> None:
        """Keep every session until :meth:`carry` or :meth:`release` (its browser crashed
        and its tabs will be restored). Never blocks, never raises."""
        self._held = True

    def release(self) -> None:
        """End a hold: the restore is over (the carried sessions live on in the new
        browser) or abandoned (stopped, failed); from now on sessions of an earlier
        browser are pruned as usual."""
        self._held = False

    async def carry(self, runtime: BrowserRuntime) -> dict[str, str]:
        """Give each session a new browser context in ``runtime``; old context → new.

        The same ``sessionId`` (and name, TTL, idle time) in a new context,
        registered as its scope with the profile's download behavior, as
        :meth:`create` makes one. A session whose context cannot be made
        (the browser refuses, or each CDP call's ``CDP_DEADLINE_S`` passes)
        is forgotten and logged, never raised. The hold stays until
        :meth:`release` (the restorer's, once the browser is about to be
        served), so a request meanwhile (no runtime yet) prunes nothing;
        cancelled, the sessions not carried by then are pruned after the release.
        """
        moved: dict[str, str] = {}
        for session_id, session in list(self._sessions.items()):
            if session.connection is runtime.connection:
                continue
            try:
                context_id = await _new_context(runtime, session_id, session.egress)
            except (BrowserdError, trio.TooSlowError) as exc:
                log.warning("session %s could not be carried over: %s", session_id, exc)
                self._forget(session_id)
                continue
            self._sessions[session_id] = attrs.evolve(
                session, context_id=context_id, connection=runtime.connection)
            moved[session.context_id] = context_id
            self._notify()
            log.info("session %s carried over (context %s -> %s)", session_id,
                     session.context_id, context_id)
        return moved

    async def close(self, session_id: str, runtime: BrowserRuntime | None) -> bool:
        """End a session: dispose its context (which closes its tabs). False if unknown.

        Bounded (10 s); a failed dispose is logged, the session is gone anyway.
        """
        session = self._forget(session_id)
        if session is None:
            return False
        if runtime is not None and session.connection is runtime.connection:
            await _dispose(runtime, session.context_id)
        log.info("session %s closed", session_id)
        return True

    async def run_reaper(self, runtime: Callable[[], BrowserRuntime | None], *,
                         task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Close sessions idle past their TTL, until cancelled.

        Sleeps until the next expiry or a change (a new session, a request
        that touched one). A failure to close is logged; the loop goes on.
        """
        task_status.started()
        while True:
            with trio.move_on_at(self.next_expiry()):
                await self._changed.wait()
            for session_id in self.expired(trio.current_time()):
                log.info("session %s idle past its ttl; closing it", session_id)
                try:
                    await self.close(session_id, runtime())
                except BrowserdError as exc:
                    log.warning("closing idle session %s: %s", session_id, exc.message)


def session_egress(runtime: BrowserRuntime, allowed_origins: Sequence[str] | None
                   ) -> EgressPolicy | None:
    """A session's egress policy: ``allowed_origins``, within the profile's if it has one.

    None when ``allowed_origins`` is None. Raises BadRequest (field
    ``allowedOrigins``) for an invalid list, one that would widen the
    profile's policy, or a browser without the navigation guard (the user's
    own browser: nothing would enforce it).
    """
    if allowed_origins is None:
        return None
    guard = runtime.navguard
    if guard is None:
        raise BadRequest("this profile's browser has no page guards (the user's own "
                         "browser): allowedOrigins cannot be enforced there",
                         field="allowedOrigins")
    profile = guard.egress.default
    try:
        return (profile.narrowed(allowed_origins) if profile is not None
                else EgressPolicy.parse(allowed_origins))
    except ValueError as exc:
        raise BadRequest(f"allowedOrigins: {exc}", field="allowedOrigins") from None


async def _new_context(runtime: BrowserRuntime, session_id: str,
                       egress: EgressPolicy | None = None) -> str:
    """A new browser context, the scope of ``session_id``, its downloads confined and
    its egress policy (if any) registered with the guard before any page of it exists.

    Each CDP call is bounded by ``CDP_DEADLINE_S`` (trio.TooSlowError); raises
    the CDP error. A context made before a failure (or a cancellation) is
    disposed again.
    """
    context_id: str | None = None
    try:
        with trio.fail_after(CDP_DEADLINE_S):
            result = await runtime.connection.send("Target.createBrowserContext",
                                                   {"disposeOnDetach": False})
            context_id = str(result["browserContextId"])
            if egress is not None:
                if runtime.navguard is None:  # fail closed: nothing would enforce it
                    raise BadRequest("no page guards to contain the session's egress")
                runtime.navguard.egress.set_context(context_id, egress)
            runtime.add_scope(context_id, session_id)
            await _confine_downloads(runtime, context_id)
        return context_id
    except BaseException:
        if context_id is not None:
            await _dispose(runtime, context_id)
        raise


async def _confine_downloads(runtime: BrowserRuntime, context_id: str) -> None:
    """Give a new context the profile's download behavior before any page of it exists.

    Its downloads go where the default context's do (the profile's downloads
    directory, followed by the connection's download follower); without a
    follower they are denied. Raises BrowserdError when the browser refuses.
    """
    if runtime.downloads is not None:
        await runtime.downloads.confine_context(context_id)
    else:
        await runtime.connection.send("Browser.setDownloadBehavior",
                                      {"behavior": "deny", "browserContextId": context_id})


async def _dispose(runtime: BrowserRuntime, context_id: str) -> None:
    """Dispose a browser context (shielded, bounded); errors are logged, not raised."""
    with trio.CancelScope(shield=True), trio.move_on_after(CDP_DEADLINE_S):
        try:
            await runtime.connection.send("Target.disposeBrowserContext",
                                          {"browserContextId": context_id})
        except BrowserdError as exc:
            log.info("disposing browser context %s: %s", context_id, exc.message)
    runtime.remove_scope(context_id)
    if runtime.navguard is not None:
        runtime.navguard.egress.drop_context(context_id)
