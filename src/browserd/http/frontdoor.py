"""The ASGI app behind the Guard: the lanes that are not Quart routes, then the app.

``GET /events`` (:mod:`.sse`), the ``/ws`` WebSocket (:mod:`.ws`) and, when
given, the ``/mcp`` endpoint are raw ASGI: long-lived streams that a request
framework would only slow down. Everything else (lifespan included) goes to
the Quart app. The Guard in front has checked every one of them the same way
(Host, Origin, the token). Opening ``/events`` or ``/ws`` leaves an audit line;
every ``/ws`` and MCP call leaves its own.

Errors raised by a lane propagate to the server unchanged; cancellation
passes through.
"""

from __future__ import annotations

import time
from typing import Any

from ..errors import BrowserdError
from ..principals import OWNER, principal_of, require
from ..system import System
from .dispatch import audit
from .guard import ASGIApp, Receive, Scope, Send
from .sse import send_json, serve_events
from .ws import WsLane

__all__ = ["FrontDoor"]


class FrontDoor:
    """Route ``/events``, ``/ws`` and ``/mcp`` to their lanes, the rest to ``app``."""

    def __init__(self, app: Any, system: System, *, mcp: ASGIApp | None = None) -> None:
        self._app: ASGIApp = app
        self._system = system
        self._ws = WsLane(system)
        self._mcp = mcp

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path")
        if scope["type"] == "http":
            if path == "/events":
                principal = principal_of(scope) or OWNER
                try:  # events carry page titles and URLs: a read
                    require(principal, "read", what="GET /events")
                except BrowserdError as exc:
                    await send_json(send, exc.status, exc.to_dict())
                    return
                audit(self._system, who=principal.name, method="GET",
                      path="/events", args={}, outcome="open", started=time.perf_counter())
                await serve_events(self._system.events, scope, receive, send)
                return
            if path == "/mcp" and self._mcp is not None:
                await self._mcp(scope, receive, send)
                return
        elif scope["type"] == "websocket" and path == "/ws":
            await self._ws(scope, receive, send)
            return
        await self._app(scope, receive, send)
