"""``/mcp``: MCP over streamable HTTP on the control port, in-process.

The endpoint sits behind the same Guard as every route (Host, Origin, the
token). Tool calls run the route handlers in this process
(:func:`browserd.http.dispatch.call_operation`: the same validation, deadlines,
errors and audit line as HTTP), in the profile and session the request's
``X-Browserd-Profile`` / ``X-Browserd-Session`` headers name (else the default
profile and the token's own session, for a token bound to one); each call is
counted in ``/metrics`` (lane ``mcp``, by its route and code). Sessions are
stateless and answers are plain JSON (no server-to-client requests are
needed), so nothing is kept between requests. ``?caps=core,state`` picks
the tool groups (default ``core``); each distinct set gets its own MCP
session manager, started on first use in the endpoint's nursery (at most
:data:`MAX_CAPS_SETS`).

The MCP SDK (pydantic, starlette, …: seconds of imports on a busy machine) is
imported on the first ``/mcp`` request, in a worker thread, so that neither
the service's start nor its event loop pays for it.

Errors: 400 JSON for unknown groups or too many distinct sets. Cancellation
(client gone) cancels the call like a closed HTTP request; leaving
:func:`open_mcp_endpoint` stops every manager.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

import trio

from ..errors import BadRequest, BrowserdError, NotFound, Unauthorized
from ..http.catalog import Operation, catalog, select
from ..http.dispatch import call_operation, header_binding
from ..http.guard import Receive, Scope, Send
from ..http.sse import send_json
from ..principals import principal_of
from ..system import System

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

__all__ = ["DEFAULT_CAPS", "MAX_CAPS_SETS", "InProcessCaller", "McpEndpoint", "open_mcp_endpoint"]

DEFAULT_CAPS = ("core",)
MAX_CAPS_SETS = 16


class InProcessCaller:
    """Tool calls on this service's own handlers (no HTTP hop)."""

    def __init__(self, system: System) -> None:
        self._system = system

    async def call(self, op: Operation, args: dict[str, Any], *, request: Any = None) -> Any:
        """The call as the principal the Guard found for ``request`` (the HTTP
        request of ``/mcp``); without one it is refused, never run as the service."""
        scope = getattr(request, "scope", None)
        principal = principal_of(scope)
        if principal is None:
            raise Unauthorized("this MCP call carries no authenticated request")
        profile, session = header_binding(scope)
        return await call_operation(self._system, op, args, lane="MCP", principal=principal,
                                    profile=profile, session=session)

    def observe(self, op: Operation | None, code: str, seconds: float) -> None:
        """Count one finished tool call in ``/metrics`` by its route's name (an unknown
        tool: route ``other``)."""
        route, method = (op.name, op.http_method) if op is not None else ("other", "MCP")
        self._system.metrics.observe_call("mcp", route, method, code, seconds)

    async def image(self, result: dict[str, Any]) -> bytes | None:
        name = str(result.get("mediaUrl", "")).rpartition("/")[2]
        try:
            found = self._system.media.resolve(name)
            return await trio.to_thread.run_sync(found.path.read_bytes)
        except (NotFound, OSError):
            return None  # pruned meanwhile: the text still names the mediaUrl


class McpEndpoint:
    """The ``/mcp`` ASGI endpoint (module docstring); made by :func:`open_mcp_endpoint`."""

    def __init__(self, system: System, nursery: trio.Nursery) -> None:
        self._caller = InProcessCaller(system)
        self._nursery = nursery
        self._managers: dict[frozenset[str], StreamableHTTPSessionManager] = {}
        self._starting: dict[frozenset[str], trio.Event] = {}

    async def _manager(self, caps: frozenset[str]) -> StreamableHTTPSessionManager:
        while caps not in self._managers:
            if caps in self._starting:
                await self._starting[caps].wait()
                continue
            if len(self._managers) + len(self._starting) >= MAX_CAPS_SETS:
                raise BadRequest(f"at most {MAX_CAPS_SETS} distinct caps sets per service",
                                 field="caps")
            started = self._starting[caps] = trio.Event()
            try:
                tools, managers = await trio.to_thread.run_sync(_load_sdk)
                server = tools.build_server(tools.tool_operations(caps), self._caller,
                                            observe=self._caller.observe)
                manager = managers.StreamableHTTPSessionManager(
                    app=server, stateless=True, json_response=True)
                await self._nursery.start(_run_manager, manager)
                self._managers[caps] = manager
            finally:
                del self._starting[caps]
                started.set()
        return self._managers[caps]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            caps = _caps(scope)
            select(catalog(), caps)  # unknown groups: 400 before any session
            manager = await self._manager(caps)
        except ValueError as exc:
            error = BadRequest(str(exc), field="caps")
            await send_json(send, error.status, error.to_dict())
            return
        except BrowserdError as exc:
            await send_json(send, exc.status, exc.to_dict())
            return
        await manager.handle_request(scope, receive, send)


def _load_sdk() -> tuple[Any, Any]:
    """(browserd.mcp.tools, the SDK's session manager module), imported (worker thread)."""
    return (importlib.import_module("browserd.mcp.tools"),
            importlib.import_module("mcp.server.streamable_http_manager"))


def _caps(scope: Scope) -> frozenset[str]:
    raw = bytes(scope.get("query_string", b"")).decode("latin-1")
    values = [v for k, v in parse_qsl(raw) if k == "caps"]
    if len(values) > 1:
        raise ValueError("caps is given more than once")
    return frozenset(p.strip() for p in (values[0] if values else ",".join(DEFAULT_CAPS))
                     .split(",") if p.strip())


async def _run_manager(manager: StreamableHTTPSessionManager, *,
                       task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
    async with manager.run():
        task_status.started()
        await trio.sleep_forever()


@asynccontextmanager
async def open_mcp_endpoint(system: System) -> AsyncIterator[McpEndpoint]:
    """The ``/mcp`` endpoint of ``system``; its managers stop when the block ends."""
    async with trio.open_nursery() as nursery:
        try:
            yield McpEndpoint(system, nursery)
        finally:
            nursery.cancel_scope.cancel()
