"""RelayTransport: a browser endpoint emulated over the extension relay.

browserd's :class:`~browserd.cdp.CdpConnection` speaks CDP to a browser
endpoint. With ``driver = "extension"`` there is none: the browserd
extension in the user's browser attaches ``chrome.debugger`` to the tabs the
user pinned and relays commands and events. This transport implements
:class:`~browserd.cdp.transport.Transport` (whole CDP messages in, whole
messages out) and answers the browser-level commands itself, so the
connection, the tab registry and the tab actors run over it unchanged.
The relay messages are described in docs/extension.md.

What each browser-level command does here (no ``sessionId``):

- ``Browser.getVersion``: answered from the extension's hello (user agent).
- ``Target.setDiscoverTargets``: accepted; with ``discover`` every pinned
  tab is announced (``Target.targetCreated``), later pins as they come.
- ``Target.getTargets`` / ``Target.getTargetInfo``: the pinned tabs only —
  never the rest of the user's browser.
- ``Target.attachToTarget {flatten: true}`` (pinned tabs only): a new
  synthetic session id mapped to the tab; ``Target.attachedToTarget`` is
  announced first, like Chromium does. Non-flat sessions are refused.
- ``Target.detachFromTarget``: the session is forgotten; the pin (the
  user's consent) and the tab stay.
- ``Target.createTarget``: the extension opens the tab (in the profile's
  tab group), attaches to it and pins it; ``browserContextId`` is refused.
- ``Target.closeTarget``: only tabs the agent created; the user's own tabs
  answer a CDP error (unpin them instead).
- ``Target.activateTarget``: the extension brings the tab to the front.
- Everything else is a CDP error (-32601 "… is not available over the
  extension relay"): browser-level ``Target.setAutoAttach`` (so the
  navigation guard cannot run here: start the profile without it),
  ``Browser.setDownloadBehavior`` (no download follower either),
  ``Target.createBrowserContext`` (no sessions with their own context),
  ``Storage.getCookies``/``setCookies``/``clearCookies`` (the browser's whole
  cookie jar is not what the user shared: ``/cookies`` and ``/state`` answer
  CDP_ERROR), ``Browser.setPermission`` (``/emulate`` geolocation grants),
  ``Target.attachToBrowserTarget`` (no CDP gateway onto the user's browser),
  ``Browser.close`` (the user's browser is never closed).

Commands on a session go to the extension as ``send`` and their answer
comes back as the reply. Child sessions (OOPIFs, workers: the tab actor's
session-level ``Target.setAutoAttach``) keep Chromium's own session ids,
learnt from the tab's ``Target.attachedToTarget`` events.

When the user unpins a tab, closes the debugging bar or closes the tab
(``unpinned`` / ``detached``), browserd sees ``Target.detachedFromTarget``
for each of its sessions and ``Target.targetDestroyed``; calls in flight on
the tab fail with a CDP error. The page itself stays open.

Bounds: messages for browserd wait in a bounded queue (the connection's
reader never stalls; overflowing it ends the transport with BrowserGone);
a message to the extension is written within :data:`SEND_DEADLINE_S` or the
transport ends; an answer the extension never sends is forgotten after
:data:`FORGET_AFTER_S` (the caller's own deadline has long expired).

Lifetime: one transport per extension connection. When the connection ends
:meth:`extension_gone` makes :meth:`receive` raise BrowserGone once the
queued messages are read; :meth:`aclose` (browserd is done) closes the
channel to the extension, whose connection then ends: the extension drops
every pin. Nothing is re-pinned silently on a new connection.
"""

from __future__ import annotations

import itertools
import logging
import secrets
from collections.abc import Callable
from typing import Any

import attrs
import orjson
import trio

from ..errors import BrowserGone
from .records import PendingRequest, PinnedTarget

__all__ = ["FORGET_AFTER_S", "INBOX_LIMIT", "SEND_DEADLINE_S", "RelayTransport"]

log = logging.getLogger(__name__)

SEND_DEADLINE_S = 5.0
FORGET_AFTER_S = 120.0
INBOX_LIMIT = 20_000
_NOT_AVAILABLE = -32601
_SERVER_ERROR = -32000
_INVALID_PARAMS = -32602


class RelayTransport:
    """CDP transport over one extension connection (module docstring).

    ``to_extension`` receives the relay messages (dicts) for the extension;
    whoever owns the connection writes them out and feeds the extension's
    messages to :meth:`deliver`. ``on_change`` is called (synchronously,
    must not block) whenever the set of pinned tabs changes.
    """

    def __init__(self, *, profile: str, to_extension: trio.MemorySendChannel[dict[str, Any]],
                 user_agent: str = "", on_change: Callable[[], None] | None = None) -> None:
        self.profile = profile
        self.description = f"extension relay ({profile})"
        self.user_agent = user_agent
        self.on_change = on_change
        self._to_extension = to_extension
        self._inbox_send, self._inbox = trio.open_memory_channel[bytes](INBOX_LIMIT)
        self._send_lock = trio.Lock()
        self._pinned: dict[int, PinnedTarget] = {}
        self._tab_of_session: dict[str, int] = {}  # browserd's synthetic session -> tab
        self._tab_of_child: dict[str, int] = {}  # Chromium's child session -> tab
        self._pending: dict[int, PendingRequest] = {}
        self._request_ids = itertools.count(1)
        self._discovering = False
        self._gone_reason = "the extension disconnected"
        self._closed = False

    # -- queries ---------------------------------------------------------------

    def pinned_targets(self) -> list[PinnedTarget]:
        """The tabs browserd may drive, in the order they were pinned."""
        return list(self._pinned.values())

    @property
    def is_closed(self) -> bool:
        return self._closed

    # -- Transport -------------------------------------------------------------

    async def send(self, data: bytes) -> None:
        """Take one CDP command from browserd: answer it here or relay it.

        Raises BrowserGone when the transport is closed or the extension's
        channel is gone or full for :data:`SEND_DEADLINE_S`. A command that
        is not a JSON object with an ``id`` and a ``method`` is dropped
        (logged): browserd never writes one.
        """
        if self._closed:
            raise BrowserGone(self._gone_reason)
        try:
            message = orjson.loads(data)
            call_id, method = message["id"], message["method"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            log.warning("relay %s: dropped a command that is not CDP", self.profile)
            return
        params = message.get("params") or {}
        session_id = message.get("sessionId")
        if session_id is None:
            await self._browser_command(call_id, method, params)
            return
        tab_id = self._tab_of_session.get(session_id)
        child = None
        if tab_id is None:
            tab_id, child = self._tab_of_child.get(session_id), session_id
        if tab_id is None or tab_id not in self._pinned:
            self._reply_error(call_id, session_id, _SERVER_ERROR,
                              f"Session with given id not found: {session_id}")
            return
        request: dict[str, Any] = {"type": "send", "tabId": tab_id, "method": method,
                                   "params": params}
        if child is not None:
            request["sessionId"] = child
        await self._request(request, PendingRequest(
            kind="send", cdp_id=call_id, session_id=session_id, tab_id=tab_id,
            sent_at=trio.current_time()))

    async def receive(self) -> bytes:
        """The next CDP message for browserd; BrowserGone once the extension is gone."""
        try:
            return await self._inbox.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise BrowserGone(self._gone_reason) from None

    async def aclose(self) -> None:
        """browserd is done: close both directions (idempotent, never raises).

        The extension's connection ends when its writer sees the closed
        channel; the extension then detaches from every pinned tab.
        """
        self._closed = True
        self._gone_reason = "the extension relay was closed by browserd"
        self._to_extension.close()
        self._inbox_send.close()

    async def release(self, target_id: str) -> bool:
        """Stop driving a shared tab (the agent released it): the page stays open.

        browserd sees the tab go at once (as for an unpin); the extension is
        told ``release`` and detaches, clearing its badge. False when the tab
        is not shared. Raises BrowserGone if the extension's channel is gone
        or full for :data:`SEND_DEADLINE_S` (shielded: a cancelled caller
        still sends it).
        """
        pinned = self._pinned_by_target(target_id)
        if pinned is None:
            return False
        self._unpin(pinned.tab_id, "released by the agent")
        with trio.CancelScope(shield=True, deadline=trio.current_time() + SEND_DEADLINE_S):
            try:
                await self._to_extension.send({"type": "release", "tabId": pinned.tab_id})
                return True
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                raise BrowserGone(self._gone_reason) from None
        raise BrowserGone(f"the extension did not take a message within {SEND_DEADLINE_S} s")

    # -- the extension's side --------------------------------------------------

    def extension_gone(self, reason: str = "the extension disconnected") -> None:
        """The extension's connection ended: browserd reads what is queued, then BrowserGone."""
        self._closed = True
        self._gone_reason = reason
        self._inbox_send.close()
        self._to_extension.close()
        if self._pinned:
            self._pinned.clear()
            self._changed()

    def deliver(self, message: dict[str, Any]) -> None:
        """Take one message from the extension (quick, never blocks).

        Unknown or malformed messages are logged by type and dropped.
        """
        kind = message.get("type")
        try:
            if kind in ("result", "error"):
                self._on_answer(message)
            elif kind == "event":
                self._on_event(int(message["tabId"]), message.get("sessionId"),
                               str(message["method"]), message.get("params") or {})
            elif kind == "pinned":
                self._pin(int(message["tabId"]), message.get("targetInfo") or {},
                          agent_created=False)
            elif kind in ("unpinned", "detached"):
                self._unpin(int(message["tabId"]), str(message.get("reason") or kind))
            elif kind == "tabUpdated":
                self._on_tab_updated(int(message["tabId"]), message.get("targetInfo") or {})
            else:
                log.info("relay %s: ignored a %r message", self.profile, kind)
        except (KeyError, TypeError, ValueError) as exc:
            log.info("relay %s: dropped a malformed %r message (%s)", self.profile, kind,
                     type(exc).__name__)

    # -- browser-level emulation -----------------------------------------------

    async def _browser_command(self, call_id: int, method: str, params: dict[str, Any]) -> None:
        if method == "Browser.getVersion":
            self._reply(call_id, None, {"protocolVersion": "1.3",
                                        "product": "Chrome (browserd extension relay)",
                                        "revision": "", "userAgent": self.user_agent,
                                        "jsVersion": ""})
        elif method == "Target.setDiscoverTargets":
            discover = bool(params.get("discover"))
            if discover and not self._discovering:
                for pinned in self._pinned.values():
                    self._emit("Target.targetCreated", {"targetInfo": pinned.target_info()})
            self._discovering = discover
            self._reply(call_id, None, {})
        elif method == "Target.getTargets":
            self._reply(call_id, None, {"targetInfos": [p.target_info()
                                                        for p in self._pinned.values()]})
        elif method == "Target.getTargetInfo":
            found = self._pinned_by_target(params.get("targetId"))
            if found is None:
                self._no_target(call_id, params)
            else:
                self._reply(call_id, None, {"targetInfo": found.target_info()})
        elif method == "Target.attachToTarget":
            self._attach(call_id, params)
        elif method == "Target.detachFromTarget":
            self._detach(call_id, params)
        elif method == "Target.createTarget":
            if params.get("browserContextId") is not None:
                self._reply_error(call_id, None, _NOT_AVAILABLE, "browser contexts are not "
                                  "available over the extension relay")
                return
            await self._request({"type": "create", "url": str(params.get("url") or
                                                               "about:blank"),
                                 "background": bool(params.get("background"))},
                                PendingRequest(kind="create", cdp_id=call_id, session_id=None,
                                               tab_id=None, sent_at=trio.current_time()))
        elif method in ("Target.closeTarget", "Target.activateTarget"):
            await self._tab_command(call_id, method, params)
        else:
            self._reply_error(call_id, None, _NOT_AVAILABLE,
                              f"'{method}' is not available over the extension relay")

    async def _tab_command(self, call_id: int, method: str, params: dict[str, Any]) -> None:
        pinned = self._pinned_by_target(params.get("targetId"))
        if pinned is None:
            self._no_target(call_id, params)
            return
        if method == "Target.closeTarget" and not pinned.agent_created:
            self._reply_error(call_id, None, _SERVER_ERROR,
                              "browserd closes only the tabs it opened; this tab is the "
                              "user's (release or unpin it instead)")
            return
        kind = "close" if method == "Target.closeTarget" else "activate"
        await self._request({"type": kind, "tabId": pinned.tab_id},
                            PendingRequest(kind=kind, cdp_id=call_id, session_id=None,
                                           tab_id=pinned.tab_id,
                                           sent_at=trio.current_time()))

    def _attach(self, call_id: int, params: dict[str, Any]) -> None:
        pinned = self._pinned_by_target(params.get("targetId"))
        if pinned is None:
            self._no_target(call_id, params)
            return
        if params.get("flatten") is not True:
            self._reply_error(call_id, None, _NOT_AVAILABLE,
                              "only flat sessions (flatten: true) are available over the "
                              "extension relay")
            return
        session_id = f"relay-{pinned.tab_id}-{secrets.token_hex(6)}"
        self._tab_of_session[session_id] = pinned.tab_id
        self._emit("Target.attachedToTarget", {"sessionId": session_id,
                                               "targetInfo": pinned.target_info(),
                                               "waitingForDebugger": False})
        self._reply(call_id, None, {"sessionId": session_id})

    def _detach(self, call_id: int, params: dict[str, Any]) -> None:
        session_id = params.get("sessionId")
        tab_id = self._tab_of_session.pop(session_id, None) if isinstance(session_id,
                                                                         str) else None
        if tab_id is None:
            self._reply_error(call_id, None, _SERVER_ERROR, "No session with given id")
            return
        pinned = self._pinned.get(tab_id)
        self._emit("Target.detachedFromTarget", {
            "sessionId": session_id, "targetId": pinned.target_id if pinned else ""})
        self._reply(call_id, None, {})

    def _pinned_by_target(self, target_id: object) -> PinnedTarget | None:
        for pinned in self._pinned.values():
            if pinned.target_id == target_id:
                return pinned
        return None

    def _no_target(self, call_id: int, params: dict[str, Any]) -> None:
        self._reply_error(call_id, None, _INVALID_PARAMS, "No target with given id found "
                          "(browserd sees only the tabs the user pinned and the tabs it opened)")

    # -- the extension's messages ------------------------------------------------

    def _on_answer(self, message: dict[str, Any]) -> None:
        pending = self._pending.pop(int(message["id"]), None)
        if pending is None:
            return  # its caller gave up long ago (FORGET_AFTER_S)
        if message.get("type") == "error":
            code = message.get("code")
            self._reply_error(pending.cdp_id, pending.session_id,
                              code if isinstance(code, int) else _SERVER_ERROR,
                              str(message.get("message") or "the extension refused"))
            return
        result = message.get("result")
        result = result if isinstance(result, dict) else {}
        if pending.kind == "send":
            self._reply(pending.cdp_id, pending.session_id, result)
        elif pending.kind == "create":
            pinned = self._pin(int(result["tabId"]), result.get("targetInfo") or {},
                               agent_created=True)
            self._reply(pending.cdp_id, None, {"targetId": pinned.target_id})
        elif pending.kind == "close":
            if pending.tab_id is not None:
                self._unpin(pending.tab_id, "closed by browserd")
            self._reply(pending.cdp_id, None, {"success": True})
        else:
            self._reply(pending.cdp_id, None, {})

    def _on_event(self, tab_id: int, child: object, method: str,
                  params: dict[str, Any]) -> None:
        if tab_id not in self._pinned:
            return
        if method == "Target.attachedToTarget" and isinstance(params.get("sessionId"), str):
            self._tab_of_child[params["sessionId"]] = tab_id
        elif method == "Target.detachedFromTarget" and isinstance(params.get("sessionId"), str):
            self._tab_of_child.pop(params["sessionId"], None)
        if isinstance(child, str) and child:
            self._emit(method, params, child)
            return
        for session_id, owner in list(self._tab_of_session.items()):
            if owner == tab_id:
                self._emit(method, params, session_id)

    def _on_tab_updated(self, tab_id: int, info: dict[str, Any]) -> None:
        known = self._pinned.get(tab_id)
        if known is None:
            return
        pinned = attrs.evolve(known, title=str(info.get("title", known.title)),
                              url=str(info.get("url", known.url)))
        self._pinned[tab_id] = pinned
        if self._discovering:
            self._emit("Target.targetInfoChanged", {"targetInfo": pinned.target_info()})

    def _pin(self, tab_id: int, info: dict[str, Any], *, agent_created: bool) -> PinnedTarget:
        known = self._pinned.get(tab_id)
        if known is not None:
            return known
        pinned = PinnedTarget(target_id=str(info.get("targetId") or f"tab-{tab_id}"),
                              tab_id=tab_id, title=str(info.get("title", "")),
                              url=str(info.get("url", "")), agent_created=agent_created)
        self._pinned[tab_id] = pinned
        if self._discovering:
            self._emit("Target.targetCreated", {"targetInfo": pinned.target_info()})
        self._changed()
        return pinned

    def _unpin(self, tab_id: int, reason: str) -> None:
        pinned = self._pinned.pop(tab_id, None)
        if pinned is None:
            return
        for session_id, owner in list(self._tab_of_session.items()):
            if owner == tab_id:
                del self._tab_of_session[session_id]
                self._emit("Target.detachedFromTarget", {"sessionId": session_id,
                                                         "targetId": pinned.target_id})
        for child, owner in list(self._tab_of_child.items()):
            if owner == tab_id:
                del self._tab_of_child[child]
        for request_id, pending in list(self._pending.items()):
            if pending.tab_id == tab_id:
                del self._pending[request_id]
                if pending.kind == "close":  # the tab went: that is what was asked
                    self._reply(pending.cdp_id, None, {"success": True})
                    continue
                self._reply_error(pending.cdp_id, pending.session_id, _SERVER_ERROR,
                                  f"the tab is no longer shared ({reason})")
        if self._discovering:
            self._emit("Target.targetDestroyed", {"targetId": pinned.target_id})
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            try:
                self.on_change()
            except Exception:
                log.exception("relay %s: on_change failed", self.profile)

    # -- writing ---------------------------------------------------------------

    async def _request(self, request: dict[str, Any], pending: PendingRequest) -> None:
        """Send ``request`` to the extension, its answer to become ``pending``'s reply."""
        self._forget_stale()
        request_id = next(self._request_ids)
        self._pending[request_id] = pending
        try:
            async with self._send_lock:
                with trio.CancelScope(shield=True,
                                      deadline=trio.current_time() + SEND_DEADLINE_S):
                    try:
                        await self._to_extension.send({**request, "id": request_id})
                        return
                    except (trio.ClosedResourceError, trio.BrokenResourceError):
                        raise BrowserGone(self._gone_reason) from None
            raise BrowserGone(f"the extension did not take a message within "
                              f"{SEND_DEADLINE_S} s")
        except BaseException:
            self._pending.pop(request_id, None)
            raise

    def _forget_stale(self) -> None:
        cutoff = trio.current_time() - FORGET_AFTER_S
        for request_id, pending in list(self._pending.items()):
            if pending.sent_at >= cutoff:
                break  # insertion order is sending order
            del self._pending[request_id]

    def _reply(self, call_id: int, session_id: str | None, result: dict[str, Any]) -> None:
        message: dict[str, Any] = {"id": call_id, "result": result}
        if session_id is not None:
            message["sessionId"] = session_id
        self._push(message)

    def _reply_error(self, call_id: int, session_id: str | None, code: int,
                     text: str) -> None:
        message: dict[str, Any] = {"id": call_id, "error": {"code": code, "message": text}}
        if session_id is not None:
            message["sessionId"] = session_id
        self._push(message)

    def _emit(self, method: str, params: dict[str, Any], session_id: str | None = None) -> None:
        message: dict[str, Any] = {"method": method, "params": params}
        if session_id is not None:
            message["sessionId"] = session_id
        self._push(message)

    def _push(self, message: dict[str, Any]) -> None:
        try:
            self._inbox_send.send_nowait(orjson.dumps(message))
        except trio.WouldBlock:
            log.warning("relay %s: browserd fell %d messages behind; ending the relay",
                        self.profile, INBOX_LIMIT)
            self._gone_reason = "browserd fell behind the extension relay"
            self._closed = True
            self._inbox_send.close()
            self._to_extension.close()
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass  # closed: browserd is not reading any more
