"""MCP for browserd: the route table as MCP tools, on stdio and on ``/mcp``.

:mod:`.tools` builds the MCP server from :mod:`browserd.http.catalog` on a
caller; :mod:`.render` turns answers into what an agent reads; :mod:`.endpoint`
is ``/mcp`` (streamable HTTP, in-process); :mod:`.stdio` is ``browserd mcp``
(stdio, HTTP to the running service).
"""

from __future__ import annotations

from .endpoint import McpEndpoint, open_mcp_endpoint

# (The SDK-based modules, .tools and .stdio, are imported where used: importing
# the MCP SDK takes seconds, which `browserd serve` must not pay at start.)
__all__ = ["McpEndpoint", "open_mcp_endpoint"]
