"""``browserd mcp``: MCP over stdio, for hosts that start their servers as commands.

The browser lives in the running service, not in this process: every tool
call is one HTTP request to it through :class:`browserd.client.Client` (the
same settings and token file as the CLI; the listener proves it holds the
token before the token is sent). That keeps one browser and one set of tabs
however many hosts and agents use it, and this process stays a thin,
stateless translator that a host may start and kill at will. Calls run in
worker threads, so several can be in flight; a screenshot's bytes are
fetched from its ``mediaUrl``.

If the service is not running, tools answer a tool error (503 UNAVAILABLE
with the hint to start it); the MCP session itself stays up. Cancellation of
a call abandons its worker thread (the HTTP request finishes or times out on
its own). Nothing is written to stdout but MCP messages; logs go to stderr.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import trio
from mcp.server.stdio import stdio_server

from ..client import Client
from ..errors import BrowserdError
from ..http.catalog import Operation
from .tools import build_server, tool_operations

__all__ = ["HttpCaller", "run_stdio"]

REQUEST_TIMEOUT_S = 330.0
"""Above the longest deadline a route accepts (timeoutMs ≤ 300 s, plus grace)."""


class HttpCaller:
    """Tool calls as HTTP requests to a running browserd."""

    def __init__(self, client: Client) -> None:
        self._client = client

    async def call(self, op: Operation, args: dict[str, Any], *, request: Any = None) -> Any:
        path = op.route.path
        if op.http_method == "GET":
            query = {k: ",".join(map(str, v)) if isinstance(v, list) else v
                     for k, v in args.items()}
            return await trio.to_thread.run_sync(
                lambda: self._client.request("GET", path, query=query), abandon_on_cancel=True)
        return await trio.to_thread.run_sync(
            lambda: self._client.request(op.http_method, path, args, keep_nulls=True),
            abandon_on_cancel=True)

    async def image(self, result: dict[str, Any]) -> bytes | None:
        url = result.get("mediaUrl")
        if not isinstance(url, str) or not url.startswith("/media/"):
            return None
        try:
            data = await trio.to_thread.run_sync(lambda: self._client.request("GET", url),
                                                 abandon_on_cancel=True)
        except BrowserdError:
            return None
        return data if isinstance(data, bytes) else None


def run_stdio(caps: Iterable[str], client: Client) -> None:
    """Serve MCP on stdin/stdout until stdin closes. ValueError for unknown groups."""
    server = build_server(tool_operations(caps), HttpCaller(client))

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    trio.run(main)
