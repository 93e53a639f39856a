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

Rules on the way through (:mod:`.rules`): URLs pass the URL policy, commands
that would end the browser or hand CDP to a page are refused, session
parameters must name the client's own sessions, and downloads may only be
denied or kept in browserd's downloads directory.

Downloads stay confined around the client too. A browser context the
client creates (``Target.createBrowserContext``) gets browserd's download
behavior *before* the reply reaches the client, so no page of it can
download first (if that fails, the context is disposed and the client gets
an error). Chromium resets a context's behavior to ``~/Downloads`` when the
session that set it detaches, so after a session on which the client set a
behavior goes (a page closed, the client disconnected) browserd sets its
own again on every context it knows
(:meth:`~browserd.downloads.DownloadFollower.restore`).

Pages browserd's navigation guard holds paused at their start
(``waitForDebuggerOnStart`` on browserd's own session) are resumed by the
guard alone, in bounded time, whatever the client does; the client's own
auto-attach pauses them on its session only, and the guard never touches a
client's sessions (:mod:`browserd.tabs.navguard`). Chromium does not hold
the first navigation of ``Target.createTarget {url}`` for a debugger, so
that request (and its redirects) would leave unjudged: the gateway creates
the page blank instead, waits (bounded) until the guard holds it and then
has the guard navigate it to ``url`` before the reply goes back (the client
sees the same reply; the page is loading ``url``). A page that cannot be
guarded in time is closed and the client gets an error.

Every forwarded command has a deadline (:data:`COMMAND_DEADLINE_S`); at most
:data:`MAX_IN_FLIGHT` are in flight per client (reading from the client waits
beyond that). Events reach the client through a bounded queue; a client that
falls :data:`OUTBOX_LIMIT` messages behind is disconnected (code 1013),
never silently skipped.

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
from ..errors import BrowserdError, CdpError, Timeout
from ..tabs.navguard import NavGuard
from ..urlpolicy import UrlPolicy
from .rules import DOWNLOAD_METHODS, defer_first_navigation, refusal

log = logging.getLogger(__name__)

COMMAND_DEADLINE_S = 120.0
MAX_IN_FLIGHT = 256
OUTBOX_LIMIT = 20_000
DETACH_BUDGET_S = 2.0
ATTACH_DEADLINE_S = 10.0
#: Bound on setting browserd's download behavior again after a client's session went.
RESTORE_BUDGET_S = 5.0
#: Bound on waiting for the navigation guard to hold a page the client created.
GUARD_WAIT_S = 10.0

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
    """Forwarding state of one connected gateway client (see the module docstring)."""

    def __init__(self, connection: CdpConnection, policy: UrlPolicy, *, root: str,
                 describe: str, downloads_dir: Path, downloads_enabled: bool = True,
                 downloads: DownloadFollower | None = None,
                 navguard: NavGuard | None = None) -> None:
        self.number = next(_client_numbers)
        self.connection = connection
        self.policy = policy
        self.downloads_dir = downloads_dir
        self.downloads_enabled = downloads_enabled
        self.downloads = downloads
        self.navguard = navguard
        #: Sessions on which the client set a download behavior (Chromium resets it
        #: when they detach); a change wakes the restorer.
        self._download_sessions: set[str] = set()
        self._restore_wanted = trio.Event()
        self.root = root
        self.describe = describe
        self.sessions: set[str] = {root}
        self.overflowed = False
        self.forwarded = 0
        self.refused = 0
        self._outbox_send, self._outbox_recv = trio.open_memory_channel[bytes](OUTBOX_LIMIT)
        self._in_flight = trio.Semaphore(MAX_IN_FLIGHT)
        self._tap = _Tap(self)

    # -- the browser side ------------------------------------------------------

    def _on_event(self, event: CdpEvent) -> bool:
        """Runs in the connection's reader: track child sessions, queue the event."""
        params = event.params
        child = params.get("sessionId")
        if event.method == "Target.attachedToTarget" and isinstance(child, str):
            self.sessions.add(child)
        message: dict[str, Any] = {"method": event.method, "params": params}
        if event.session_id != self.root:
            message["sessionId"] = event.session_id
        queued = self._queue(orjson.dumps(message))
        if event.method == "Target.detachedFromTarget" and isinstance(child, str):
            self.sessions.discard(child)
            if child in self._download_sessions:
                self._download_sessions.discard(child)
                self._restore_wanted.set()
        return queued

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
        log.info("gateway client %d connected (%s)", self.number, self.describe)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._pump_out, send, nursery.cancel_scope)
                nursery.start_soon(self._watch_browser, nursery.cancel_scope)
                nursery.start_soon(self._restorer)
                await self._read_client(receive, nursery)
                nursery.cancel_scope.cancel()
        finally:
            self.connection.unsubscribe(self._tap)
            set_downloads = bool(self._download_sessions) or self._restore_wanted.is_set()
            await self.detach_all()
            if set_downloads:
                with trio.CancelScope(shield=True):
                    await self._restore_downloads()
            log.info("gateway client %d gone (%d commands forwarded, %d refused%s)",
                     self.number, self.forwarded, self.refused,
                     ", fell behind" if self.overflowed else "")

    async def _restorer(self) -> None:
        """Set browserd's download behavior again each time a session that set one went."""
        while True:
            await self._restore_wanted.wait()
            self._restore_wanted = trio.Event()
            await self._restore_downloads()
            log.info("gateway client %d: a session that set a download behavior went; "
                     "browserd's is set again", self.number)

    async def _restore_downloads(self) -> None:
        if self.downloads is None:
            return
        with trio.move_on_after(RESTORE_BUDGET_S) as scope:
            await self.downloads.restore()
        if scope.cancelled_caught:
            log.warning("gateway client %d: restoring the download behavior took over %.0f s",
                        self.number, RESTORE_BUDGET_S)

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
        problem = refusal(method, params, sessions=self.sessions, policy=self.policy,
                          downloads_dir=self.downloads_dir,
                          downloads_enabled=self.downloads_enabled)
        if problem is None and method in DOWNLOAD_METHODS:
            self._download_sessions.add(session or self.root)
        deferred_url = (defer_first_navigation(method, params)
                        if problem is None and self.navguard is not None else None)
        log.debug("gateway client %d: %s%s", self.number, method,
                  " (refused)" if problem else "")
        if problem is not None:
            self._refuse(call_id, SERVER_ERROR, problem, session)
            return False
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
            self._refuse(call_id, SERVER_ERROR, f"browserd: {exc.message}", session)
            return False
        self.forwarded += 1
        nursery.start_soon(self._reply, reply, pending, deferred_url)
        return True

    def _refuse(self, call_id: int | None, code: int, text: str,
                session: str | None = None) -> None:
        self.refused += 1
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
        message: dict[str, Any] = {"id": reply.call_id}
        if error is None and result is not None:
            message["result"] = result
            child = result.get("sessionId")
            if reply.method in _ATTACH_METHODS and isinstance(child, str):
                self.sessions.add(child)
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
                        await self._confine_context(result)
                    if deferred_url is not None:
                        await self._navigate_guarded(result, deferred_url)
                except BrowserdError as exc:
                    self._answer(reply, None, exc)
                else:
                    self._answer(reply, result, None)
            if scope.cancelled_caught:
                self._answer(reply, None, Timeout(
                    f"no reply within {COMMAND_DEADLINE_S:.0f} s"))
        finally:
            self._in_flight.release()

    async def _navigate_guarded(self, result: dict[str, Any], url: str) -> None:
        """Load ``url`` in the blank page just created, once the guard holds it.

        Raises BrowserdError (and closes the page, bounded) when the guard
        does not hold it within :data:`GUARD_WAIT_S`.
        """
        target_id = result.get("targetId")
        assert self.navguard is not None
        if not isinstance(target_id, str):
            return
        guarded = False
        with trio.move_on_after(GUARD_WAIT_S):
            guarded = await self.navguard.wait_guarded(target_id)
        if guarded:
            try:
                await self.navguard.start_navigation(target_id, url)
                return
            except BrowserdError as exc:
                log.info("gateway client %d: the new page went away (%s)", self.number,
                         exc.message)
        with trio.move_on_after(DETACH_BUDGET_S):
            try:
                await self.connection.send("Target.closeTarget", {"targetId": target_id})
            except BrowserdError:
                pass
        raise BrowserdError("the new page could not be put under browserd's URL policy in "
                            "time; it was closed")

    async def _confine_context(self, result: dict[str, Any]) -> None:
        """Give a context the client just created browserd's download behavior, first.

        Runs before the reply is queued, so the client cannot make a page in
        it before. If the behavior cannot be set the context is disposed
        (bounded) and BrowserdError raised: the client gets an error, never
        a context whose downloads would land in ``~/Downloads``.
        """
        context = result.get("browserContextId")
        if self.downloads is None or not isinstance(context, str):
            return
        try:
            await self.downloads.confine_context(context)
        except BrowserdError as exc:
            log.warning("gateway client %d: could not confine a new context's downloads (%s); "
                        "disposing it", self.number, exc.message)
            with trio.move_on_after(DETACH_BUDGET_S):
                try:
                    await self.connection.send("Target.disposeBrowserContext",
                                               {"browserContextId": context})
                except BrowserdError:
                    pass
            raise BrowserdError("the new context's downloads could not be kept in "
                                "browserd's downloads directory; it was disposed") from exc

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
