"""The page answers an agent reads: /snapshot (aria, read, domSnapshot) and /find.

Both settle first (:func:`browserd.tabs.settle.settle_read`): a document
still ``loading`` is waited for up to ``settleMs`` until it has been parsed,
and every answer carries ``loadState``, so a partial page is never silent.

Answers are lean by default: the snapshot text is cut at ``maxChars``
(20,000 characters for ``aria``; for ``read`` 8,000 of reading text, and the
list of interactive refs fills the rest of 12,000) with ``truncated`` and a ``hint``
naming the ways to read more; ``nodes`` (the refs as JSON) only on request.
``/find`` matches role, accessible name and visible text inside the page
(the walker's ``find``) and hands out ordinary refs.

Every function here runs while the caller holds the tab's work slot and
under the caller's deadline; the walks themselves are bounded by it
(``Runtime.evaluate``'s own timeout). Errors are those of
:mod:`browserd.tabs.refs` (StaleRef / RefNotFound for a bad root ref,
NoMatch / BadRequest for a bad root selector, Timeout, CdpError). On
cancellation the refs already recorded stay valid; nothing else changes.
"""

from __future__ import annotations

import re
import time
from typing import Any

import attrs

from ..errors import BadRequest
from ..snapshot import (
    FindOptions,
    SnapshotOptions,
    cap_text,
    dom_snapshot_call,
    find_call,
    read_view_call,
)
from .actor import TabActor
from .diffs import diff_lines
from .pagejs import page_function
from .refs import Scope, run_walker, walk_scope, walk_tree, walker_error
from .settle import DEFAULT_SETTLE_MS, settle_read
from .worlds import decode_value, world_evaluate

__all__ = ["ARIA_MAX_CHARS", "FORMATS", "READ_TEXT_CHARS", "READ_TOTAL_CHARS", "find",
           "take_snapshot"]

FORMATS = ("aria", "read", "domSnapshot")
ARIA_MAX_CHARS = 20_000
"""Default ``maxChars`` of an aria snapshot (0 asks for no limit)."""
READ_TEXT_CHARS = 8_000
"""Default ``maxChars`` of a read view: its reading text."""
READ_TOTAL_CHARS = 12_000
"""With the default ``maxChars``, a read view's whole text (reading + refs) fits in this."""
_READ_SEPARATOR = "\n\nInteractive:\n"
_REF_LINE = re.compile(r"^ *\[(e\d+)\] ", re.MULTILINE)
_PAGE_IDENTITY = page_function("pageIdentity")


def _hint(max_chars: int | None) -> str:
    shown = "the default" if max_chars is None else str(max_chars)
    return (f"the answer was cut at maxChars ({shown}): scope it with root (a ref such as "
            "e12, or a CSS selector), search the page with /find, or raise maxChars "
            "(0 = no limit)")


def _count_lines(text: str) -> int:
    return text.count("\n") + (0 if not text or text.endswith("\n") else 1)


async def take_snapshot(tab: TabActor, *, format: str = "aria", interactive: bool = False,
                        max_chars: int | None = None, limit: int | None = None,
                        root: str | None = None, line_chars: int | None = None,
                        nodes: bool = False, settle_ms: int = DEFAULT_SETTLE_MS,
                        since: str | None = None) -> dict[str, Any]:
    """Snapshot the tab: the /snapshot answer (docs/api.md "Snapshots and refs").

    ``format`` "aria": ``text`` (lines ``[eN] role "name" states``, a field's
    ``placeholder="…"`` and a link's ``→ target`` last) cut at
    ``max_chars`` (None: 20,000; 0: no limit). "read": the visible text in
    reading order (None: 8,000 characters; 0: no limit), then the
    interactive refs as one list. "domSnapshot": a bounded DOM walk, always
    with ``nodes``. ``line_chars`` caps names and text lines (None: 300; 0:
    whole). ``nodes`` adds the refs as JSON. ``root`` scopes to a ref or a
    CSS selector. Every ref issued is recorded in ``tab.refs`` (its counter
    advances), and the answer's ``snapshotId`` is the tab's next.

    ``since`` (a snapshotId of this tab, taken with the same options): answer
    ``diff {added, removed, changed}`` and ``baseSnapshotId`` with ``full:
    false`` instead of ``text`` (:mod:`.diffs`), or the whole snapshot with
    ``full: true`` when the diff is not smaller or the base is unknown.

    Raises BadRequest for an unknown format; otherwise as the module says.
    """
    if format not in FORMATS:
        raise BadRequest(f"unknown snapshot format {format!r}", field="format")
    load_state, settled = await settle_read(tab, settle_ms=settle_ms)
    started = time.perf_counter()
    scope = await walk_scope(tab, root)
    snapshot_id = tab.refs.next_snapshot_id()
    info = decode_value(await world_evaluate(
        tab, scope.session, scope.frame_id, _PAGE_IDENTITY.call()))
    url, title = (str(info[0]), str(info[1])) if isinstance(info, list) else (
        tab.view().url, "")
    out: dict[str, Any] = {"snapshotId": snapshot_id, "targetId": tab.target_id, "url": url,
                           "title": title, "format": format, "loadState": load_state.value,
                           "settled": settled}
    if format == "domSnapshot":
        out.update(await _dom_walk(tab, scope, limit=limit))
        return out
    text_cut = False
    reading = ""
    if format == "read":
        budget = READ_TEXT_CHARS if max_chars is None else max_chars or 1_000_000_000
        read_opts = SnapshotOptions(text_budget=budget, root_ref=scope.root_ref,
                                    root_selector=scope.root_selector)
        view = decode_value(await world_evaluate(tab, scope.session, scope.frame_id,
                                                 read_view_call(read_opts)))
        view = view if isinstance(view, dict) else {}
        if "error" in view:
            raise walker_error(view["error"], root)
        reading = str(view.get("text") or "")
        text_cut = bool(view.get("truncated"))
        interactive = True
        walk_max = (READ_TOTAL_CHARS - len(reading) - len(_READ_SEPARATOR) if max_chars is None
                    else None if max_chars == 0 else max(1000, max_chars // 2))
    else:
        walk_max = ARIA_MAX_CHARS if max_chars is None else max_chars or None
    walk = await walk_tree(tab, scope, interactive=interactive, max_chars=walk_max,
                           limit=limit, line_chars=line_chars)
    text, cut = cap_text(walk.text, walk_max)
    listed = walk.nodes
    if cut:
        kept = {m.group(1) for m in _REF_LINE.finditer(text)}
        listed = [n for n in listed if n.get("ref") in kept]
    truncated = walk.truncated or cut or text_cut
    stats = {**walk.stats, "nodes": _count_lines(text), "refs": len(listed),
             "frames": walk.frames}
    if format == "read":
        text = reading + (_READ_SEPARATOR + text if text else "")
    stats["chars"] = len(text)
    stats["totalMs"] = round((time.perf_counter() - started) * 1000, 1)
    out.update(text=text, truncated=truncated, stats=stats)
    if truncated:
        out["hint"] = _hint(max_chars)
    if nodes:
        out["nodes"] = listed
    options = (format, interactive, max_chars, limit, root, line_chars)
    tab.refs.snapshots.remember(snapshot_id, options, text)
    if since is not None:
        _as_diff(out, tab, since, options, text)
    return out


def _as_diff(out: dict[str, Any], tab: TabActor, since: str, options: Any, text: str) -> None:
    """Turn ``out`` into a diff against snapshot ``since`` when that is smaller."""
    base = tab.refs.snapshots.get(since)
    if base is None or base[0] != options:
        out.update(full=True, diffHint=f"no snapshot {since!r} of this tab with these "
                   "options (a tab keeps its last 8): the whole snapshot")
        return
    change = diff_lines(base[1], text)
    if change.chars() >= len(text):
        out["full"] = True
        return
    del out["text"]
    out.update(full=False, baseSnapshotId=since, diff=change.to_json())


async def _dom_walk(tab: TabActor, scope: Scope, *, limit: int | None) -> dict[str, Any]:
    started = time.perf_counter()
    opts = SnapshotOptions(next_ref=tab.refs.next_ref, limit=limit, root_ref=scope.root_ref,
                           root_selector=scope.root_selector)
    reply, listed = await run_walker(tab, scope.session, scope.frame_id,
                                     dom_snapshot_call(opts), scope.root)
    return {"nodes": listed, "truncated": bool(reply.get("truncated")),
            "stats": {"nodes": len(listed), "refs": len(listed),
                      "ms": round((time.perf_counter() - started) * 1000, 1)}}


async def find(tab: TabActor, *, role: str | None = None, name: str | None = None,
               text: str | None = None, exact: bool = False, limit: int = 20,
               root: str | None = None, line_chars: int | None = None,
               around: bool = False, settle_ms: int = DEFAULT_SETTLE_MS) -> dict[str, Any]:
    """The /find answer: elements matching ``role`` / ``name`` / ``text``, with refs.

    Case-insensitive substring matches (whole-string with ``exact``) on the
    accessible name, or for ``text`` on the name or the element's own
    visible text, done by the walker in the page; every given criterion must
    hold. Answers ``{targetId, url, loadState, count, matches: [{ref, role,
    name, text?, placeholder?, href?, target?, context?, around?}], truncated, stats}``
    (``target``: a link's target as snapshot lines show it) — ``count`` counts every
    match, ``matches`` holds the first ``limit`` in document order, and
    ``context`` is the nearest heading (or enclosing landmark) before the
    match as a snapshot line; with ``around``, ``around`` is the match's table row,
    definition group or list item as one line (its actionable elements as refs).
    Out-of-process iframes are not searched.

    Raises BadRequest when no criterion is given; otherwise as the module says.
    """
    opts = FindOptions(role=role, name=name, text=text, exact=exact, limit=limit,
                       line_chars=line_chars, around=around)  # validates before any page work
    load_state, settled = await settle_read(tab, settle_ms=settle_ms)
    started = time.perf_counter()
    scope = await walk_scope(tab, root)
    opts = attrs.evolve(opts, next_ref=tab.refs.next_ref, root_ref=scope.root_ref,
                        root_selector=scope.root_selector)
    reply, _listed = await run_walker(tab, scope.session, scope.frame_id, find_call(opts),
                                      scope.root)
    matches = list(reply.get("matches") or [])
    stats = {**dict(reply.get("stats") or {}),
             "totalMs": round((time.perf_counter() - started) * 1000, 1)}
    return {"targetId": tab.target_id, "url": tab.view().url, "loadState": load_state.value,
            "settled": settled, "count": int(reply.get("count") or 0), "matches": matches,
            "truncated": bool(reply.get("truncated")), "stats": stats}
