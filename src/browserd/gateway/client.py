"""One CDP gateway client: its own sessions, its own ids, browserd's rules.

A client of the gateway never touches browserd's own CDP sessions. It gets a
*root session* of its own on browserd's connection to the browser:

- the browser endpoint: ``Target.attachToBrowserTarget`` (a browser session
  with its own ``setDiscoverTargets`` / ``setAutoAttach`` state);
- a page endpoint: ``Target.attachToTarget {flatten: true}`` on that tab.

Client messages without ``sessionId`` go to the root session; events of the
root session go back without ``sessionId``. Sessions the client attaches
(``Target.attachedToTarget`` on a session it owns, or the reply to its
``Target.attachToTarget``) are its own too; a command naming any other
session is refused with a CDP error, as Chromium refuses an unknown one.
The client's ids are kept per command: browserd's connection assigns its
own ids and the reply goes back under the client's id, in wire order with
the events around it (the reader queues it the moment it arrives).

Rules on the way through (:mod:`.rules`, :mod:`.allowlist`): only allowlisted
methods pass, on whichever of its sessions the client sends them; sessions
are flat only; URLs pass the URL policy; file paths pass browserd's upload
check; browser contexts must be in the client's reach; downloads may only
be denied or kept in browserd's downloads directory. The client sees only
the targets of its scope (:mod:`.targets`): results and events about other
targets are filtered out, a session auto-attached to one is detached again
without the client ever getting it, and a command naming one by
``targetId`` gets Chromium's "No target with given id found" (browserd asks
the browser for that target's info first, bounded by
:data:`LOOKUP_DEADLINE_S`).

browserd's own work around some commands (a new context's downloads, a new
page's first navigation, the download behavior restored after a session
that set one went) is in :mod:`.confine`. Pages browserd's navigation guard
holds paused at their start (``waitForDebuggerOnStart`` on browserd's own
session) are resumed by the guard alone, in bounded time, whatever the
client does; the client's own auto-attach pauses them on its session only,
and the guard never touches a client's sessions (:mod:`browserd.tabs.navguard`).

Every forwarded command has a deadline (:data:`COMMAND_DEADLINE_S`); at most
:data:`MAX_IN_FLIGHT` are in flight per client (reading from the client waits
beyond that). Events reach the client through a bounded queue; a client that
falls :data:`OUTBOX_LIMIT` messages behind is disconnected (code 1013),
never silently skipped.

Each command is counted for ``/metrics`` as it ends (:mod:`.metering`).

Cancellation/disconnect: :meth:`GatewayClient.run` returns when either side
goes; its sessions are then detached (shielded, ≤ :data:`DETACH_BUDGET_S`).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import orjson
import trio

from ..cdp import CdpConnection, CdpEvent, Subscription
from ..cdp.connection import PendingReply
from ..downloads import DownloadFollower
from ..errors import BrowserdError, CdpError, Denied, NotFound, Timeout
from ..tabs.navguard import NavGuard
from ..urlpolicy import UrlPolicy
from .confine import confine_context, navigate_guarded, restore_downloads
from .metering import CommandMeter, Observe, now
from .rules import DOWNLOAD_METHODS, Limits, Resolve, defer_first_navigation, refusal
from .targets import NO_TARGET, NO_TARGET_CODE, TARGET_ID_METHODS, TargetView, is_browser

log = logging.getLogger(__name__)

COMMAND_DEADLINE_S = 120.0
MAX_IN_FLIGHT = 256
OUTBOX_LIMIT = 20_000
DETACH_BUDGET_S = 2.0
ATTACH_DEADLINE_S = 10.0
#: Bound on asking the browser for the info of a target a client's command names.
LOOKUP_DEADLINE_S = 10.0

#: Commands whose reply names a session the client now owns.
_ATTACH_METHODS = frozenset({"Target.attachToTarget", "Target.attachToBrowserTarget"})

# CDP's own error codes (JSON-RPC): Chromium answers these for the same faults.
INVALID_REQUEST = -32600
SERVER_ERROR = -32000
SESSION_NOT_FOUND = -32001

_client_numbers = itertools.count(1)

Send = Callable[[str], Awaitable[None]]
Receive = Callable[[], Awaitable[str | bytes | None]]


@attrs.define(eq=False)
class _Reply:
    """One client command awaiting its answer, which is sent exactly once."""

    call_id: int
    method: str
    session: str | None
    sent: bool = False
    started: float = attrs.field(factory=now)


class ClientGone(Exception):
    """The gateway client disconnected or fell too far behind."""


class _Tap(Subscription):
    """Routes, in wire order and without blocking, the events of the client's sessions."""

    def __init__(self, client: GatewayClient) -> None:
        super().__init__(f"gateway-client-{client.number}", None, 1)
        self._client = client

    def wants(self, event: CdpEvent) -> bool:
        return event.session_id is not None and event.session_id in self._client.sessions

    def deliver(self, event: CdpEvent) -> bool:
        return self._client._on_event(event)

    def close(self) -> None:
        super().close()
        self._client._outbox_send.close()


class GatewayClient:
    """Forwarding state of one connected gateway client (see the module docstring).

    ``contexts``: the browser contexts the client may reach (None: any; see
    :class:`~.targets.Reach`). ``uploads``: browserd's upload check for the
    paths a client hands to a page (None: none may be). ``browser_root``:
    the root session is a browser session (the browser endpoint), not a page's.
    """

    def __init__(self, connection: CdpConnection, policy: UrlPolicy, *, root: str,
                 describe: str, downloads_dir: Path, downloads_enabled: bool = True,
                 downloads: DownloadFollower | None = None,
                 navguard: NavGuard | None = None, contexts: frozenset[str] | None = None,
                 uploads: Resolve | None = None, browser_root: bool = True,
                 observe: Observe | None = None) -> None:
        self.number = next(_client_numbers)
        self.meter = CommandMeter(observe)
        self.connection = connection
        self.limits = Limits(policy=policy, downloads_dir=downloads_dir,
                             downloads_enabled=downloads_enabled, uploads=uploads)
        self.downloads = downloads
        self.navguard = navguard
        self.view = TargetView(contexts)
        #: Sessions on which the client set a download behavior (Chromium resets it
        #: when they detach); a change wakes the restorer.
        self._download_sessions: set[str] = set()
        self._restore_wanted = trio.Event()
        self.root = root
        self.describe = describe
        self.sessions: set[str] = {root}
        #: The client's sessions on the browser target (not a page's).
        self.browser_sessions: set[str] = {root} if browser_root else set()
        #: IO stream handles the client was handed (Page.printToPDF, Tracing).
        self.streams: set[str] = set()
        self.overflowed = False
        self.forwarded = 0
        self.refused = 0
        self.withheld = 0
        self._refused_methods: set[str] = set()
        self._outbox_send, self._outbox_recv = trio.open_memory_channel[bytes](OUTBOX_LIMIT)
        # Sessions the browser attached for the client to targets out of its scope:
        # (session, the client's session it came on), to be detached again.
        self._strays_send, self._strays_recv = trio.open_memory_channel[
            tuple[str, str | None]](OUTBOX_LIMIT)
        self._in_flight = trio.Semaphore(MAX_IN_FLIGHT)
        self._tap = _Tap(self)

    @property
    def who(self) -> str:
        return f"gateway client {self.number}"

    # -- the browser side ------------------------------------------------------

    def _on_event(self, event: CdpEvent) -> bool:
        """Runs in the connection's reader: judge, track sessions, queue the event."""
        params = event.params
        method = event.method
        child = params.get("sessionId")
        if method == "Target.detachedFromTarget" and child not in self.sessions:
            return True  # a session that never was the client's (out of its scope)
        verdict = self.view.event(method, params)
        if verdict.detach is not None:
            self._detach_stray(verdict.detach, event.session_id)
        if not verdict.forward:
            self.withheld += 1
            return True
        if method == "Target.attachedToTarget" and isinstance(child, str):
            self.sessions.add(child)
            if is_browser(params.get("targetInfo")):
                self.browser_sessions.add(child)
        elif method == "Tracing.tracingComplete" and isinstance(params.get("stream"), str):
            self.streams.add(params["stream"])
        message: dict[str, Any] = {"method": method, "params": params}
        if event.session_id != self.root:
            message["sessionId"] = event.session_id
        queued = self._queue(orjson.dumps(message))
        if method == "Target.detachedFromTarget" and isinstance(child, str):
            self.sessions.discard(child)
            self.browser_sessions.discard(child)
            if child in self._download_sessions:
                self._download_sessions.discard(child)
                self._restore_wanted.set()
        return queued

    def _detach_stray(self, session: str, via: str | None) -> None:
        try:
            self._strays_send.send_nowait((session, via))
        except (trio.WouldBlock, trio.ClosedResourceError):
            log.warning("%s: could not detach a session out of its scope", self.who)

    async def _detach_strays(self) -> None:
        """Detach, one by one, the sessions auto-attached to targets out of the client's scope.

        (A target paused by ``waitForDebuggerOnStart`` runs once detached.) Each
        detach is bounded by DETACH_BUDGET_S; errors (the target went) are quiet.
        """
        async for session, via in self._strays_recv:
            with trio.move_on_after(DETACH_BUDGET_S):
                try:
                    await self.connection.send("Target.detachFromTarget",
                                               {"sessionId": session}, session_id=via)
                except BrowserdError:
                    pass

    def _queue(self, data: bytes) -> bool:
        try:
            self._outbox_send.send_nowait(data)
            return True
        except trio.WouldBlock:
            self.overflowed = True
            self._outbox_send.close()
            return False
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            return False

    # -- the client side -------------------------------------------------------

    async def run(self, receive: Receive, send: Send) -> None:
        """Forward until the client or the browser connection goes; then detach.

        ``receive`` returns the client's next message or None when it has
        gone; ``send`` writes one text message to it. Returns normally in
        both cases; the caller closes the client's socket afterwards.
        """
        self.connection.add_tap(self._tap)
        log.info("%s connected (%s)", self.who, self.describe)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._pump_out, send, nursery.cancel_scope)
                nursery.start_soon(self._watch_browser, nursery.cancel_scope)
                nursery.start_soon(self._restorer)
                nursery.start_soon(self._detach_strays)
                await self._read_client(receive, nursery)
                nursery.cancel_scope.cancel()
        finally:
            self.connection.unsubscribe(self._tap)
            self._strays_send.close()
            set_downloads = bool(self._download_sessions) or self._restore_wanted.is_set()
            await self.detach_all()
            if set_downloads:
                with trio.CancelScope(shield=True):
                    await restore_downloads(self.downloads, self.who)
            log.info("%s gone (%d commands forwarded, %d refused, %d events withheld%s)",
                     self.who, self.forwarded, self.refused, self.withheld,
                     ", fell behind" if self.overflowed else "")

    async def _restorer(self) -> None:
        """Set browserd's download behavior again each time a session that set one went."""
        while True:
            await self._restore_wanted.wait()
            self._restore_wanted = trio.Event()
            await restore_downloads(self.downloads, self.who)
            log.info("%s: a session that set a download behavior went; "
                     "browserd's is set again", self.who)

    async def _watch_browser(self, scope: trio.CancelScope) -> None:
        await self.connection.wait_closed()
        scope.cancel()

    async def _pump_out(self, send: Send, scope: trio.CancelScope) -> None:
        try:
            async for data in self._outbox_recv:
                await send(data.decode())
        except ClientGone:
            pass
        scope.cancel()  # outbox closed: overflow, or the browser connection ended

    async def _read_client(self, receive: Receive, nursery: trio.Nursery) -> None:
        while True:
            raw = await receive()
            if raw is None:
                return
            await self._in_flight.acquire()
            try:
                handled = await self._handle(raw, nursery)
            except BaseException:
                self._in_flight.release()
                raise
            if not handled:
                self._in_flight.release()

    async def _handle(self, raw: str | bytes, nursery: trio.Nursery) -> bool:
        """Check and forward one client message. True when a reply task took it over."""
        try:
            message = orjson.loads(raw)
        except orjson.JSONDecodeError:
            message = None
        self.meter.begin(message)
        call_id = message.get("id") if isinstance(message, dict) else None
        if not isinstance(call_id, int) or isinstance(call_id, bool):
            self._refuse(None, INVALID_REQUEST, "Message must have an integer 'id'")
            return False
        assert isinstance(message, dict)
        method, params = message.get("method"), message.get("params", {})
        session = message.get("sessionId")
        if not isinstance(method, str) or not isinstance(params, dict) or (
            session is not None and not isinstance(session, str)
        ):
            self._refuse(call_id, INVALID_REQUEST,
                         "Message must have a string 'method' and object 'params'", session)
            return False
        if session is not None and session not in self.sessions:
            self._refuse(call_id, SESSION_NOT_FOUND, "Session with given id not found.", session)
            return False
        problem = refusal(method, params, limits=self.limits, sessions=self.sessions,
                          reach=self.view.reach,
                          on_browser=(session or self.root) in self.browser_sessions,
                          streams=self.streams)
        code, outcome = SERVER_ERROR, Denied.code
        if problem is None and method in TARGET_ID_METHODS and isinstance(
                params.get("targetId"), str):
            try:
                if not await self._target_in_scope(params["targetId"]):
                    problem, code, outcome = NO_TARGET, NO_TARGET_CODE, NotFound.code
            except BrowserdError as exc:
                problem, outcome = f"browserd: {exc.message}", exc.code
        log.debug("%s: %s%s", self.who, method, " (refused)" if problem else "")
        if problem is not None and method not in self._refused_methods:
            self._refused_methods.add(method)  # once per method: a client may retry in a loop
            log.info("%s: refused %s", self.who, method[:80])  # never the params (paths, URLs)
        if problem is not None:
            self._refuse(call_id, code, problem, session, outcome=outcome)
            return False
        if method in DOWNLOAD_METHODS:
            self._download_sessions.add(session or self.root)
        elif method == "IO.close":
            self.streams.discard(params["handle"])
        deferred_url = (defer_first_navigation(method, params)
                        if self.navguard is not None else None)
        reply = _Reply(call_id=call_id, method=method, session=session)
        # A plain command's answer is queued by the reader the moment it arrives, in
        # wire order with the events (Playwright drops a context whose frame it does
        # not know yet); one browserd finishes first is answered by its task.
        in_order = deferred_url is None and method != "Target.createBrowserContext"
        try:
            pending = await self.connection.post(
                method, params, session_id=session or self.root,
                on_reply=(lambda call: self._answer(reply, call.result, call.error))
                if in_order else None)
        except BrowserdError as exc:
            self._refuse(call_id, SERVER_ERROR, f"browserd: {exc.message}", session, exc.code)
            return False
        self.forwarded += 1
        nursery.start_soon(self._reply, reply, pending, deferred_url)
        return True

    async def _target_in_scope(self, target_id: str) -> bool:
        """Whether ``target_id`` names a target of the client's scope (asks the browser).

        False for a target the browser does not know. Raises BrowserGone, or
        Timeout after LOOKUP_DEADLINE_S.
        """
        with trio.move_on_after(LOOKUP_DEADLINE_S):
            try:
                result = await self.connection.send("Target.getTargetInfo",
                                                    {"targetId": target_id})
            except CdpError:
                return False
            return self.view.judge(result.get("targetInfo"))
        raise Timeout(f"the browser did not describe the target within "
                      f"{LOOKUP_DEADLINE_S:.0f} s")

    def _refuse(self, call_id: int | None, code: int, text: str,
                session: str | None = None, outcome: str = "BAD_REQUEST") -> None:
        self.refused += 1
        self.meter.refused(outcome)
        message: dict[str, Any] = {"id": call_id, "error": {"code": code, "message": text}}
        if session is not None:
            message["sessionId"] = session
        self._queue(orjson.dumps(message))

    def _answer(self, reply: _Reply, result: dict[str, Any] | None,
                error: BaseException | None) -> None:
        """Queue the client's answer to one command, once; never blocks or raises.

        Runs in the connection's reader (a plain command's reply) or in the
        command's task (after browserd's own work, or at the deadline).
        """
        if reply.sent:
            return
        reply.sent = True
        self.meter.answered(reply.method, result, error, reply.started)
        message: dict[str, Any] = {"id": reply.call_id}
        if error is None and result is not None:
            message["result"] = result = self.view.result(reply.method, result)
            child = result.get("sessionId")
            if reply.method in _ATTACH_METHODS and isinstance(child, str):
                self.sessions.add(child)
                if reply.method == "Target.attachToBrowserTarget":
                    self.browser_sessions.add(child)
            stream = result.get("stream")
            if reply.method == "Page.printToPDF" and isinstance(stream, str):
                self.streams.add(stream)
        elif isinstance(error, CdpError):
            message["error"] = {
                "code": error.cdp_code if error.cdp_code is not None else SERVER_ERROR,
                "message": error.message.removeprefix(f"{reply.method}: ")}
        else:
            text = error.message if isinstance(error, BrowserdError) else "no reply"
            message["error"] = {"code": SERVER_ERROR, "message": f"browserd: {text}"}
        if reply.session is not None:
            message["sessionId"] = reply.session
        self._queue(orjson.dumps(message))

    async def _reply(self, reply: _Reply, pending: PendingReply,
                     deferred_url: str | None) -> None:
        """Wait (bounded) for one command; answer it unless the reader already has."""
        try:
            with trio.move_on_after(COMMAND_DEADLINE_S) as scope:
                try:
                    result = await pending.result()
                    if reply.method == "Target.createBrowserContext":
                        await confine_context(self.connection, self.downloads, result,
                                              self.who)
                    if deferred_url is not None:
                        assert self.navguard is not None
                        await navigate_guarded(self.connection, self.navguard, result,
                                               deferred_url, self.who)
                except BrowserdError as exc:
                    self._answer(reply, None, exc)
                else:
                    self._answer(reply, result, None)
            if scope.cancelled_caught:
                self._answer(reply, None, Timeout(
                    f"no reply within {COMMAND_DEADLINE_S:.0f} s"))
        finally:
            self._in_flight.release()
            if not reply.sent:  # the client went first
                self.meter.count(reply.method, "cancelled", reply.started)

    async def detach_all(self) -> None:
        """Detach every session the client had (children first). Shielded, bounded, quiet."""
        children = [s for s in self.sessions if s != self.root]
        self.sessions.clear()
        with trio.CancelScope(shield=True) as scope:
            scope.deadline = trio.current_time() + DETACH_BUDGET_S
            replies = []
            # Children through the root session that attached them; the root
            # itself on browserd's connection (which also ends any child left).
            detaches = [(child, self.root) for child in children] + [(self.root, None)]
            for session, via in detaches:
                try:
                    replies.append(await self.connection.post(
                        "Target.detachFromTarget", {"sessionId": session}, session_id=via))
                except BrowserdError:
                    return
            for reply in replies:
                try:
                    await reply.result()
                except BrowserdError:
                    pass


async def attach_root(connection: CdpConnection, target_id: str | None) -> str:
    """A new root session for a client: the browser (``target_id`` None) or one page.

    Raises CdpError / BrowserGone, or Timeout after ATTACH_DEADLINE_S.
    """
    with trio.move_on_after(ATTACH_DEADLINE_S):
        if target_id is None:
            result = await connection.send("Target.attachToBrowserTarget")
        else:
            result = await connection.send(
                "Target.attachToTarget", {"targetId": target_id, "flatten": True})
        return str(result["sessionId"])
    raise Timeout(f"the browser did not attach a session within {ATTACH_DEADLINE_S:.0f} s")


__all__ = ["ClientGone", "GatewayClient", "attach_root"]
