"""One shared fake CDP peer: a scripted browser for unit tests (no Chromium).

:class:`FakeCdpPeer` answers commands from a table of handlers (by method)
and can push events at any time (:meth:`FakeCdpPeer.emit`). It speaks CDP's
JSON messages; :func:`connected` runs a real :class:`CdpConnection` against
it. The transport is isolated in :func:`connected` (today: an in-memory
websocket through ``open_cdp_over``), so a transport change touches one
function. :func:`tab_peer` scripts the commands a TabActor sends while it
attaches and enables its domains; :func:`running_tab` runs a real TabActor
against a peer. :func:`context_peer` scripts a browser that makes browser
contexts; :func:`running_browser` runs a real :class:`BrowserRuntime` (its
connection, tab registry and, if asked, download follower) against a peer,
and :func:`running_follower` a download follower alone.

It is the suite's one fake CDP seam: ``tests/unit/test_suite_shape.py``
fails when a test module defines a fake connection of its own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import attrs
import orjson
import trio
import trio.testing
import trio_websocket

from browserd.cdp.connection import MAX_MESSAGE_SIZE, CdpConnection, open_cdp_over
from browserd.config import Settings
from browserd.downloads import DownloadFollower, DownloadStore
from browserd.supervisor.runtime import BrowserRuntime
from browserd.tabs.actor import TabActor
from browserd.tabs.capture_gate import CaptureGate
from browserd.tabs.pagejs import page_function
from browserd.tabs.registry import TabRegistry, open_tab_registry

Params = dict[str, Any]
#: A handler gets (params, sessionId) and returns a result dict, a
#: :class:`Refuse` (a CDP error reply), or None (never answer).
Handler = Callable[[Params, str | None], "Params | Refuse | None"]


class Refuse:
    """A CDP error reply (``{"error": {"code", "message"}}``)."""

    def __init__(self, message: str, code: int = -32000) -> None:
        self.message = message
        self.code = code


class FakeCdpPeer:
    """A scripted CDP browser: handlers by method, events on demand, a log of commands."""

    def __init__(self, handlers: dict[str, Handler] | None = None,
                 default: Handler | None = None) -> None:
        self.handlers: dict[str, Handler] = dict(handlers or {})
        self.default: Handler = default if default is not None else (lambda p, s: {})
        self.received: list[Params] = []
        self._unanswered: list[Params] = []  # commands whose handler answered None
        self._ws: trio_websocket.WebSocketConnection | None = None
        self._ready = trio.Event()

    def on(self, method: str, handler: Handler) -> None:
        self.handlers[method] = handler

    def sent(self, method: str) -> list[Params]:
        """The params of every ``method`` command received so far."""
        return [m.get("params", {}) for m in self.received if m.get("method") == method]

    async def emit(self, method: str, params: Params | None = None,
                   session_id: str | None = None) -> None:
        """Push one event to the client."""
        message: Params = {"method": method, "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        await self._send(message)

    async def deliver(self, method: str, params: Params | None = None,
                      session_id: str | None = None) -> None:
        """Push one event, then wait until every task is blocked: the client handled it.

        Everything runs in this process over memory streams, so once all tasks
        are blocked the event went through the connection to its subscriber,
        and what that started ran as far as it could (a worker thread, like a
        store's file removal, is not waited for).
        """
        await self.emit(method, params, session_id)
        await trio.testing.wait_all_tasks_blocked()

    async def answer_late(self, method: str, result: Params | None = None) -> int:
        """Answer (with ``result``) every ``method`` command its handler left unanswered.

        For a reply the browser gives late: the handler returns None (no
        answer), the test holds the client there, then lets the answer go.
        Returns how many commands were answered.
        """
        late = [m for m in self._unanswered if m.get("method") == method]
        self._unanswered = [m for m in self._unanswered if m.get("method") != method]
        for message in late:
            out: Params = {"id": message["id"], "result": result or {}}
            if "sessionId" in message:
                out["sessionId"] = message["sessionId"]
            await self._send(out)
        return len(late)

    async def _send(self, message: Params) -> None:
        await self._ready.wait()
        assert self._ws is not None
        await self._ws.send_message(orjson.dumps(message).decode())

    async def _serve(self, ws: trio_websocket.WebSocketConnection) -> None:
        self._ws = ws
        self._ready.set()
        try:
            while True:
                message = orjson.loads(await ws.get_message())
                self.received.append(message)
                handler = self.handlers.get(message.get("method", ""), self.default)
                reply = handler(message.get("params", {}), message.get("sessionId"))
                if reply is None:
                    self._unanswered.append(message)
                    continue
                out: Params = {"id": message["id"]}
                if isinstance(reply, Refuse):
                    out["error"] = {"code": reply.code, "message": reply.message}
                else:
                    out["result"] = reply
                if "sessionId" in message:
                    out["sessionId"] = message["sessionId"]
                await ws.send_message(orjson.dumps(out).decode())
        except trio_websocket.ConnectionClosed:
            pass

    async def close(self) -> None:
        """Close the connection from the browser's side (the browser went away)."""
        if self._ws is not None:
            await self._ws.aclose()


@asynccontextmanager
async def connected(peer: FakeCdpPeer) -> AsyncIterator[CdpConnection]:
    """A real CdpConnection talking to ``peer`` (the one transport seam of the fake)."""
    client_stream, server_stream = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:

        async def serve() -> None:
            request = await trio_websocket.wrap_server_stream(nursery, server_stream)
            await peer._serve(await request.accept())

        nursery.start_soon(serve)
        client_ws = await trio_websocket.wrap_client_stream(
            nursery, client_stream, "fake", "/devtools/browser/fake",
            max_message_size=MAX_MESSAGE_SIZE)
        async with open_cdp_over(client_ws) as conn:
            await peer._ready.wait()
            yield conn
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def running_tab(peer: FakeCdpPeer, target_id: str = "T1",
                      **actor: Any) -> AsyncIterator[TabActor]:
    """A :class:`TabActor` for ``target_id`` (``actor``: its keyword options) running against
    ``peer`` until the block ends, its domains enabled."""
    async with connected(peer) as conn, trio.open_nursery() as nursery:
        tab: TabActor = await nursery.start(TabActor(conn, target_id, **actor).run)
        await tab.wait_enabled()
        yield tab
        tab.close()


#: The expression a tab asks its document's readyState with (browserd's page function).
READY_STATE = page_function("readyState").call()


def tab_peer(target_id: str = "T1", *, loader_id: str = "L1", url: str = "https://a.test/",
             ready_state: str = "complete") -> FakeCdpPeer:
    """A peer scripted for one page target: attach, enables, frame tree, readyState."""
    session_id = f"S-{target_id}"

    def evaluate(params: Params, sid: str | None) -> Params:
        if params.get("expression") == READY_STATE:
            return {"result": {"type": "string", "value": ready_state}}
        return {"result": {"type": "number", "value": 0}}

    return FakeCdpPeer({
        "Target.attachToTarget": lambda p, s: {"sessionId": session_id},
        "Page.getFrameTree": lambda p, s: {"frameTree": {"frame": {
            "id": target_id, "loaderId": loader_id, "url": url}}},
        "Runtime.evaluate": evaluate,
    })


def context_peer(*, refuse: int = 0) -> FakeCdpPeer:
    """A peer scripted as a browser that makes browser contexts: ``CTX1``, ``CTX2``, …

    The first ``refuse`` ``Target.createBrowserContext`` are refused; every
    other command is answered ``{}``, but ``Target.attachToTarget``, never
    answered (a page announced to the registry stays unattached).
    """
    made = [0]
    left = [refuse]

    def create(params: Params, sid: str | None) -> Params | Refuse:
        if left[0]:
            left[0] -= 1
            return Refuse("no more contexts")
        made[0] += 1
        return {"browserContextId": f"CTX{made[0]}"}

    return FakeCdpPeer({"Target.createBrowserContext": create,
                        "Target.attachToTarget": lambda p, s: None})


@attrs.frozen(kw_only=True)
class FakeBrowser:
    """One browser running on a peer (:func:`running_browser`): its runtime, and the test's
    own handle on that runtime's tab registry."""

    peer: FakeCdpPeer
    runtime: BrowserRuntime
    registry: TabRegistry

    def disposed(self) -> list[str]:
        """The browser contexts disposed so far, in order."""
        return [p["browserContextId"] for p in self.peer.sent("Target.disposeBrowserContext")]

    def download_behaviors(self) -> list[Params]:
        """Every ``Browser.setDownloadBehavior`` sent, in order."""
        return self.peer.sent("Browser.setDownloadBehavior")

    async def scope_label(self, context: str) -> str | None:
        """The label (a session's id) the registry gives a page of browser context ``context``.

        A page of that context is announced (``Target.targetCreated``) and
        its label read; None when the context is no scope of its own.
        """
        target_id = f"PAGE-OF-{context}"
        await self.peer.deliver("Target.targetCreated", {"targetInfo": {
            "targetId": target_id, "type": "page", "url": "about:blank", "title": "",
            "browserContextId": context}})
        return self.registry.session_of(target_id)


@asynccontextmanager
async def running_browser(peer: FakeCdpPeer | None = None, *,
                          downloads: DownloadStore | None = None,
                          navguard: Any = None) -> AsyncIterator[FakeBrowser]:
    """A :class:`BrowserRuntime` running against ``peer`` (default: :func:`context_peer`).

    Its connection and tab registry are real (not headless: no spare tab);
    with ``downloads`` a real :class:`DownloadFollower` of that store runs
    on the connection, else the runtime has none. ``navguard`` stands in
    for the page guard (what the code under test reads of it). All of it
    ends with the block. On trio's autojumping MockClock run it without
    ``downloads``: the follower prunes its store in a worker thread, which
    the clock does not wait for (it would jump to the test's deadline).
    """
    peer = peer if peer is not None else context_peer()
    async with connected(peer) as conn, open_tab_registry(
            conn, settings=Settings(), headless=False) as registry, \
            trio.open_nursery() as nursery:
        follower: DownloadFollower | None = None
        if downloads is not None:
            follower = await nursery.start(DownloadFollower(conn, downloads).run)
        runtime = BrowserRuntime(connection=conn, registry=registry, process=None,
                                 version="Fake/1", user_agent="fake", started_at=0.0,
                                 captures=CaptureGate.with_capacity(1), downloads=follower,
                                 navguard=navguard)
        yield FakeBrowser(peer=peer, runtime=runtime, registry=registry)
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def running_follower(peer: FakeCdpPeer, store: DownloadStore,
                           **options: Any) -> AsyncIterator[DownloadFollower]:
    """A :class:`DownloadFollower` of ``store`` (``options``: its keyword options) following
    ``peer``'s download events until the block ends."""
    async with connected(peer) as conn, trio.open_nursery() as nursery:
        follower: DownloadFollower = await nursery.start(
            DownloadFollower(conn, store, **options).run)
        yield follower
        nursery.cancel_scope.cancel()
