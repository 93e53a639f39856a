"""Which fields of a JSON answer are the page's words: the ``untrusted`` list.

A host reading browserd's JSON can tell page-provided content (titles, URLs,
text, values, console lines, request data) from browserd's own fields: every
answer of a route below carries ``untrusted: [field, …]`` naming its fields
that hold page content (only those present). MCP answers mark the same
content with a nonce boundary instead (:mod:`browserd.mcp.render`). Answers
that are data formats to be saved and loaded back (``/state``, ``/cookies``,
``/storage``) stay in their format: their values are the page's by nature.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PAGE_FIELDS", "mark_untrusted"]

_ACTION = ("effects", "snapshot", "coveredBy")
#: Route path → the fields of its answer that hold page content.
PAGE_FIELDS: dict[str, tuple[str, ...]] = {
    "/snapshot": ("title", "url", "text", "diff", "nodes"),
    "/find": ("url", "matches"),
    "/query": ("matches", "elements"),
    "/dom": ("text", "html"),
    "/eval": ("url", "result"),
    "/console": ("messages",),
    "/tabs": ("tabs",),
    "/tabs/open": ("title", "url"),
    "/navigate": ("title", "url", "effects"),
    "/back": ("title", "url", "effects"), "/forward": ("title", "url", "effects"),
    "/reload": ("title", "url", "effects"),
    "/network": ("requests",),
    "/network/<id>": ("url", "requestHeaders", "responseHeaders", "postData", "body"),
    "/downloads": ("downloads",),
    **{path: _ACTION for path in ("/click", "/type", "/press", "/hover", "/select", "/drag",
                                  "/upload", "/mouse", "/keyboard", "/scroll", "/dialog",
                                  "/wait", "/act", "/login")},
}


def mark_untrusted(path: str, result: Any) -> Any:
    """``result`` with ``untrusted`` naming its page-content fields (when it has any)."""
    fields = PAGE_FIELDS.get(path)
    if not fields or not isinstance(result, dict):
        return result
    present = [f for f in fields if f in result]
    return {**result, "untrusted": present} if present else result
