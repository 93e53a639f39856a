"""Read-only page inspection: /query, /dom and /console.

``query`` and ``dom`` run in the tab's ``browserd`` isolated world (see
:mod:`browserd.tabs.worlds`), so page scripts that patch ``querySelectorAll``
or ``innerText`` cannot change what is reported. Password values are never
returned: not as ``value``, and not as a ``value`` attribute inside HTML.

``query`` and ``dom`` are called while holding the tab's work slot, under the
caller's deadline; cancellation abandons the evaluation in flight and
changes nothing. ``console`` only reads the tab's ring buffer (no I/O).
"""

from __future__ import annotations

from typing import Any

from .. import jsontext as decoding
from ..errors import BadRequest, BrowserdError, NoMatch
from .actor import TabActor
from .pagejs import page_function
from .worlds import world_evaluate

__all__ = ["QUERY_HTML_MAX", "QUERY_LIMIT_MAX", "QUERY_TEXT_MAX", "console", "dom", "query"]

QUERY_TEXT_MAX = 200
QUERY_HTML_MAX = 500
QUERY_LIMIT_MAX = 500

_QUERY_MATCHES = page_function("queryMatches")
_DOCUMENT_TEXT = page_function("documentText")


def _parse(remote: dict[str, Any]) -> dict[str, Any]:
    value = remote.get("value")
    if not isinstance(value, str):
        raise BrowserdError("page inspection returned no result")
    try:
        parsed = decoding.loads(value)
    except decoding.UndecodableMessage:
        raise BrowserdError("page inspection returned malformed JSON") from None
    if not isinstance(parsed, dict):
        raise BrowserdError("page inspection returned no result")
    return parsed


async def query(tab: TabActor, selector: str, *, limit: int = 20) -> dict[str, Any]:
    """The elements matching a CSS selector: ``{count, matches: [...]}``.

    Each match: ``{index, tag, id, className, text, value, href, outerHTML,
    truncated}``; text and value are cut to 200 characters, outerHTML to 500.
    Password inputs report ``value: null``. No match is an empty list.
    Raises BadRequest for an invalid selector or limit.
    """
    if not 1 <= limit <= QUERY_LIMIT_MAX:
        raise BadRequest(f"limit must be between 1 and {QUERY_LIMIT_MAX}", field="limit")
    expression = _QUERY_MATCHES.call(selector, limit, QUERY_TEXT_MAX, QUERY_HTML_MAX)
    result = _parse(await world_evaluate(tab, tab.session, tab.main_frame_id, expression))
    if "bad" in result:
        raise BadRequest(f"invalid selector {selector!r}: {result['bad']}", field="selector")
    return {"targetId": tab.target_id, "url": tab.view().url, "count": result.get("count", 0),
            "matches": result.get("matches", [])}


async def dom(tab: TabActor, *, format: str = "html",
              selector: str | None = None, max_chars: int = 200_000) -> dict[str, Any]:
    """The document's (or the first match's) HTML or rendered text.

    ``format`` "html" is outerHTML (password value attributes blanked),
    "text" is innerText. The text is cut to ``max_chars`` (``truncated``).
    Raises NoMatch when ``selector`` matches nothing, BadRequest when it is
    invalid or the format is unknown.
    """
    if format not in ("html", "text"):
        raise BadRequest(f"unknown format {format!r}; use html or text", field="format")
    if max_chars < 1:
        raise BadRequest("maxChars must be at least 1", field="maxChars")
    expression = _DOCUMENT_TEXT.call(selector, format, max_chars)
    result = _parse(await world_evaluate(tab, tab.session, tab.main_frame_id, expression))
    if "bad" in result:
        raise BadRequest(f"invalid selector {selector!r}: {result['bad']}", field="selector")
    if result.get("none"):
        raise NoMatch(f"no element matches {selector!r}", selector=selector,
                      hint="check the selector with GET /query")
    length = int(result.get("length", 0))
    return {"targetId": tab.target_id, "url": tab.view().url, "format": format,
            "text": str(result.get("text", "")), "truncated": length > max_chars,
            "length": length}


_LEVEL_RANK = {"debug": 0, "log": 1, "info": 1, "warn": 2, "error": 3}


def console(tab: TabActor, *, level: str | None = None, clear: bool = False) -> dict[str, Any]:
    """The tab's recent console messages, oldest first.

    ``level`` keeps messages at that severity or above (debug < log = info
    < warn < error); ``clear`` empties the buffer after reading (and resets
    the count). ``dropped`` (present when not 0) counts the messages lost
    since the last clear: pushed out of the ring, or dropped by the tab's
    event stream under a flood. Raises BadRequest for an unknown level.
    """
    if level is not None and level not in _LEVEL_RANK:
        raise BadRequest(f"unknown level {level!r}", field="level",
                         hint="use one of " + ", ".join(_LEVEL_RANK))
    floor = _LEVEL_RANK[level] if level is not None else 0
    entries = tab.console.entries()
    messages = [e.to_json() for e in entries if _LEVEL_RANK.get(e.level, 1) >= floor]
    out: dict[str, Any] = {"targetId": tab.target_id, "messages": messages}
    if tab.console.dropped:
        out["dropped"] = tab.console.dropped
    if clear:
        tab.console.clear()
    return out
