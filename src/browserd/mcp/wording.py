"""What the MCP tools say about themselves: descriptions in tool terms, and annotations.

The route table describes routes for HTTP clients (``a ref from GET
/snapshot``, ``409 AMBIGUOUS``); an agent that only has the tools reads
tool words instead: other tools by their names, errors by their codes. A
route declares its own tool words where the HTTP ones will not do
(:attr:`~browserd.http.schema.Route.tool_text`,
:attr:`~browserd.http.schema.Route.tool_fields`); everything else is the
route's summary and field descriptions with the HTTP phrases of
:data:`_REWORDED` (which are no route's own) put in tool terms.
:func:`tool_description` and :func:`field_description` are what :mod:`.tools`
puts in ``tools/list``; :func:`tool_hints` gives the MCP hints the route
declares. A unit test checks that every property of every tool has a
description and that none uses HTTP words. Plain data and code: no I/O.
"""

from __future__ import annotations

import re

import attrs

from ..http.catalog import Operation

__all__ = ["ToolHints", "field_description", "tool_description", "tool_hints"]

#: The route summaries' and field texts' HTTP phrases, in tool terms (applied in order).
_REWORDED = (
    ("an element ref from GET /snapshot", "an element's ref from the snapshot tool (e12)"),
    ("a ref from GET /snapshot", "an element's ref from the snapshot tool (e12)"),
    ("without it: 409 AMBIGUOUS", "without it: an AMBIGUOUS error"),
    (" (/wait only)", ""),
    ("a tab's targetId (from GET /tabs)", "a tab's targetId (from the tabs tool)"),
    ("the profile to act on (GET /profiles); default: the default profile",
     "the profile to act on (profiles_get lists them); default: the connection's "
     "(X-Browserd-Profile header), else the default profile"),
    ("a sessionId from POST /sessions: only that session's tabs are seen (also as the "
     "X-Browserd-Session header); default: no session",
     "a sessionId (sessions_set makes one): only that session's tabs are seen; default: the "
     "connection's (X-Browserd-Session header), else the token's own session, else none"),
)


def _reword(text: str) -> str:
    for http, tool in _REWORDED:
        text = text.replace(http, tool)
    return text


def tool_description(op: Operation) -> str:
    """The tool's description: the route's tool text, else its summary in tool terms."""
    return op.route.tool_text or _reword(op.description)


def field_description(op: Operation, name: str, given: str | None) -> str | None:
    """Property ``name``'s description: the route's tool words for it, else the field's
    own (in tool terms); None when there is none at all."""
    own = op.route.tool_fields.get(name)
    if own is not None:
        return own
    return _reword(given) if given else None


@attrs.frozen(kw_only=True)
class ToolHints:
    """The MCP tool annotations of one tool (what a host may show or ask about)."""

    title: str
    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool


def tool_hints(op: Operation) -> ToolHints:
    """The hints ``op``'s route declares, and a title: its description's first phrase."""
    hints = op.route.hints
    assert hints is not None  # (the route table refuses a route without them)
    return ToolHints(
        title=re.split(r";|:| \(", op.route.tool_text or op.description, maxsplit=1)[0],
        read_only=hints.read_only, destructive=hints.destructive,
        idempotent=hints.idempotent, open_world=hints.open_world)
