"""What the MCP tools say about themselves: descriptions in tool terms, and annotations.

The route table describes routes for HTTP clients (``a ref from GET
/snapshot``, ``409 AMBIGUOUS``); an agent that only has the tools reads
these words instead: other tools by their tool names, errors by their codes,
and a description for every property (:data:`FIELD_TEXT` fills the ones the
routes leave bare). :func:`tool_description` and :func:`field_description`
are what :mod:`.tools` puts in ``tools/list``; :func:`tool_hints` gives the
MCP hints. A unit test checks that every property of every tool has a
description and that none uses HTTP words. Plain data and code: no I/O.
"""

from __future__ import annotations

import re

import attrs

from ..http.catalog import Operation

__all__ = ["FIELD_TEXT", "TOOL_TEXT", "ToolHints", "field_description",
           "tool_description", "tool_hints"]

#: The route summaries' and field texts' HTTP phrases, in tool terms (applied in order).
_REWORDED = (
    ("an element ref from GET /snapshot", "an element's ref from the snapshot tool (e12)"),
    ("a ref from GET /snapshot", "an element's ref from the snapshot tool (e12)"),
    ("without it: 409 AMBIGUOUS", "without it: an AMBIGUOUS error"),
    (" (/wait only)", ""),
    ("the profile to act on (GET /profiles); default: the default profile",
     "the profile to act on (profiles_get lists them); default: the connection's "
     "(X-Browserd-Profile header), else the default profile"),
    ("a sessionId from POST /sessions: only that session's tabs are seen (also as the "
     "X-Browserd-Session header); default: no session",
     "a sessionId (sessions_set makes one): only that session's tabs are seen; default: the "
     "connection's (X-Browserd-Session header), else the token's own session, else none"),
)

#: Tool descriptions that replace the route's summary (where it speaks HTTP or says too little).
TOOL_TEXT = {
    "snapshot": "Read the page as compact text: one element per line with a ref like [e12] "
                "to act on (click, type, select, upload …); format read: the article text",
    "find": "Find elements by role, accessible name or visible text; answers their refs",
    "tabs_request": "Ask the person for one of their tabs (live and extension profiles); "
                    "wait for the answer with the wait tool's tabRequest",
    "handoff_set": "Hand a tab to the person (for a login, a CAPTCHA …); agent input on it "
                   "fails with HANDOFF_ACTIVE until they are done (wait with handoff: true)",
    "screenshot": "Screenshot the viewport, the whole page or one element: answers the image "
                  "(up to 1 MiB) and its mediaUrl",
    "profiles_set": "Create a profile (persisted; its browser starts with the start tool)",
    "upload": "Set the files of a file input (ref or selector), or, with files only, answer "
              "the file chooser an earlier action opened (effects: fileChooser)",
}

#: Descriptions of properties the routes leave bare: ``tool.field``, or ``field`` for any tool.
FIELD_TEXT = {
    "url": "the URL to open (http, https, or another scheme the URL policy allows)",
    "targetId": "a tab's targetId (from the tabs tool) or a unique prefix (≥ 4 chars)",
    "tabs_open.newTab": "false: open it in the current tab instead of a new one",
    "navigate.waitUntil": "how far the new document must load before the answer (none: "
                          "do not wait)",
    "eval.js": "a JavaScript expression, evaluated in the page",
    "eval.await": "if the value is a promise, wait for it and answer what it resolves to",
    "snapshot.format": "aria: elements with refs (default); read: the main text; "
                       "domSnapshot: layout boxes as JSON",
    "find.limit": "at most this many matches",
    "query.selector": "a CSS selector",
    "query.limit": "at most this many elements",
    "dom.format": "html: the markup; text: the visible text",
    "dom.selector": "a CSS selector (default: the whole document)",
    "dom.maxChars": "cut the answer at this many characters",
    "button": "the mouse button",
    "clickCount": "1: click, 2: double-click, 3: triple-click",
    "wait.loadState": "until the document has got this far",
    "dialog.accept": "true: OK / accept; false: Cancel / dismiss",
    "dialog.promptText": "the text to enter into a prompt() before accepting it",
    "mouse.action": "move, press (down), release (up), click, or turn the wheel",
    "keyboard.action": "press a key (down), release it (up), or insert text as typed",
    "screenshot.format": "png, or jpeg (smaller; see quality)",
    "kind": "local: localStorage; session: sessionStorage",
    "storage_delete.keys": "the keys to remove (default: every key)",
    "network.resourceType": "only requests of this type",
    "start.headless": "run the browser without a window (default: the profile's setting)",
    "profiles_set.driver": "launch: browserd starts Chromium; cdp: attach to one at a CDP "
                           "URL; live: the person's running browser; extension: through "
                           "browserd's browser extension",
    "profiles_set.headless": "run its browser without a window",
    "sessions_set.name": "a name for the session (shown in listings)",
}

#: Tools that only add: new state, nothing existing is changed or removed.
_ADDITIVE = frozenset({"tabs_open", "tabs_request", "handoff_set", "profiles_set",
                       "sessions_set", "tokens_set", "start", "pdf"})
#: Tools that repeated with the same arguments leave things as the first call did.
_IDEMPOTENT = frozenset({"navigate", "select", "upload", "handoff_delete",
                         "emulate_set", "emulate_delete", "cookies_delete", "storage_delete",
                         "network_block", "network_headers", "tabs_focus"})
#: Groups whose tools act on browserd itself, not on the web.
_CLOSED_WORLD_GROUPS = frozenset({"service", "profiles"})


def _reword(text: str) -> str:
    for http, tool in _REWORDED:
        text = text.replace(http, tool)
    return text


def tool_description(op: Operation) -> str:
    """The tool's description: :data:`TOOL_TEXT`'s, else the route's summary in tool terms."""
    return TOOL_TEXT.get(op.tool_name) or _reword(op.description)


def field_description(op: Operation, name: str, given: str | None) -> str | None:
    """Property ``name``'s description: :data:`FIELD_TEXT`'s for the tool, else the route's
    (in tool terms), else the generic one; None when there is none at all."""
    own = FIELD_TEXT.get(f"{op.tool_name}.{name}")
    if own is not None:
        return own
    if given:
        return _reword(given)
    return FIELD_TEXT.get(name)


@attrs.frozen(kw_only=True)
class ToolHints:
    """The MCP tool annotations of one tool (what a host may show or ask about)."""

    title: str
    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool


def tool_hints(op: Operation) -> ToolHints:
    """The hints of ``op``: read-only for a route that answers GET; destructive unless it
    only reads or adds (a click can do anything a page's button does); open-world for
    tools that reach web pages."""
    read_only = op.http_method == "GET" or "GET" in op.route.methods
    return ToolHints(
        title=re.split(r";|:| \(", TOOL_TEXT.get(op.tool_name) or op.description, maxsplit=1)[0],
        read_only=read_only,
        destructive=not read_only and op.tool_name not in _ADDITIVE,
        idempotent=read_only or op.tool_name in _IDEMPOTENT,
        open_world=op.group not in _CLOSED_WORLD_GROUPS)
