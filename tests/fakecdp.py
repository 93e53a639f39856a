"""One shared fake CDP peer: a scripted browser for unit tests (no Chromium).

:class:`FakeCdpPeer` answers commands from a table of handlers (by method)
and can push events at any time (:meth:`FakeCdpPeer.emit`). It speaks CDP's
JSON messages; :func:`connected` runs a real :class:`CdpConnection` against
it. The transport is isolated in :func:`connected` (today: an in-memory
websocket through ``open_cdp_over``), so a transport change touches one
function. :func:`tab_peer` scripts the commands a TabActor sends while it
attaches and enables its domains; :func:`running_tab` runs a real TabActor
against a peer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import orjson
import trio
import trio.testing
import trio_websocket

from browserd.cdp.connection import MAX_MESSAGE_SIZE, CdpConnection, open_cdp_over
from browserd.tabs.actor import TabActor

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


def tab_peer(target_id: str = "T1", *, loader_id: str = "L1", url: str = "https://a.test/",
             ready_state: str = "complete") -> FakeCdpPeer:
    """A peer scripted for one page target: attach, enables, frame tree, readyState."""
    session_id = f"S-{target_id}"

    def evaluate(params: Params, sid: str | None) -> Params:
        if params.get("expression") == "document.readyState":
            return {"result": {"type": "string", "value": ready_state}}
        return {"result": {"type": "number", "value": 0}}

    return FakeCdpPeer({
        "Target.attachToTarget": lambda p, s: {"sessionId": session_id},
        "Page.getFrameTree": lambda p, s: {"frameTree": {"frame": {
            "id": target_id, "loaderId": loader_id, "url": url}}},
        "Runtime.evaluate": evaluate,
    })
