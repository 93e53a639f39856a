"""The ref engine's issuing side: snapshots that hand out refs.

A ref (``e<N>``) names one element of one document of one tab. The in-page
walker (:mod:`browserd.snapshot`) runs in the frame's ``browserd`` isolated
world (:mod:`browserd.tabs.worlds`), where it keeps the element ↔ ref maps;
page scripts can neither see nor patch it. Every ref a snapshot lists is
recorded in the tab's :class:`~browserd.tabs.state.RefMap` (``tab.refs``),
from which :mod:`browserd.tabs.resolve` turns it back into that very element.

Same-origin frames are walked inline by the walker; out-of-process iframes
(and frames the walker cannot enter, e.g. sandboxed ones) are snapshotted in
their own world and spliced into the parent's text.

Every function here runs while the caller holds the tab's work slot and
under the caller's deadline. Cancellation abandons the CDP call in flight;
the per-tab state stays consistent (refs are recorded only from a complete
walker reply). Errors are :mod:`browserd.errors` classes.
"""

from __future__ import annotations

import re
import time
from typing import Any

import attrs
import trio

from ..cdp import CdpSession
from ..errors import (
    BadRequest,
    BrowserdError,
    CdpError,
    NoMatch,
    StaleRef,
)
from ..snapshot import (
    SnapshotOptions,
    cap_text,
    dom_snapshot_call,
    read_view_call,
    resolve_call,
    snapshot_call,
    splice_frame_text,
)
from .actor import TabActor
from .resolve import resolve_ref
from .routing import own_session_id, send_in
from .state import WorldKey
from .worlds import decode_value, world_evaluate

__all__ = ["take_snapshot"]

_REF_RE = re.compile(r"^e[1-9][0-9]{0,9}$")
_FRAME_DEPTH_CAP = 4
_READ_TEXT_BUDGET = 4000


def _walker_error(error: dict[str, Any], root: str | None) -> BrowserdError:
    code = error.get("code")
    if code == "STALE_REF":
        reason = str(error.get("reason") or "detached")
        reason = "navigated" if reason == "unknown" else reason
        return StaleRef(f"ref {root} is stale ({reason})", reason=reason, ref=root)
    if code == "NO_MATCH":
        return NoMatch(f"no element matches {root!r}", selector=root,
                       hint="check the selector with GET /query")
    if code == "BAD_SELECTOR":
        return BadRequest(f"invalid selector {root!r}: {error.get('message', '')}",
                          field="root")
    return BrowserdError(f"page inspection failed: {error}")


# -- snapshots -----------------------------------------------------------------

@attrs.define
class _Walk:
    text: str
    nodes: list[dict[str, Any]]
    truncated: bool
    stats: dict[str, Any]
    frames: int = 0


async def _frame_target(tab: TabActor, session: CdpSession, frame_id: str, ref: str
                        ) -> tuple[CdpSession, str] | None:
    """The session and frame id to snapshot the iframe ``ref`` in, if any."""
    remote = await world_evaluate(tab, session, frame_id, resolve_call(ref, None, None),
                                  by_value=False)
    object_id = remote.get("objectId")
    if remote.get("subtype") != "node" or not object_id:
        return None
    try:
        described = await send_in(tab, session, "DOM.describeNode", {"objectId": object_id})
    finally:
        with trio.CancelScope(shield=True), trio.move_on_after(1):
            try:
                await send_in(tab, session, "Runtime.releaseObject", {"objectId": object_id})
            except BrowserdError:
                pass
    child_frame = described.get("node", {}).get("frameId")
    if not child_frame:
        return None
    child_sid = tab.child_sessions.get(child_frame)
    if child_sid:
        return tab.connection.session(child_sid), child_frame
    if own_session_id(tab, session) is None and child_frame in tab.frame_loaders:
        # An in-process frame the walker could not enter (e.g. sandboxed).
        return session, child_frame
    return None


async def _run_walker(tab: TabActor, session: CdpSession, frame_id: str, call: str,
                      root: str | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Evaluate a walker ``call`` in the frame's world; its reply and the nodes it listed.

    The tab's ref counter advances and the listed refs are recorded against
    the world's document. Raises BrowserdError when the walker answers
    nothing, the :func:`_walker_error` of an error reply (``root`` names the
    scope), and whatever :func:`world_evaluate` raises.
    """
    reply = decode_value(await world_evaluate(tab, session, frame_id, call))
    if not isinstance(reply, dict):
        raise BrowserdError("the snapshot walker returned no result")
    if "error" in reply:
        raise _walker_error(reply["error"], root)
    key: WorldKey = (own_session_id(tab, session), frame_id)
    world = tab.refs.world(key)
    tab.refs.advance(int(reply.get("nextRef") or tab.refs.next_ref))
    nodes: list[dict[str, Any]] = list(reply.get("nodes") or [])
    tab.refs.record(nodes, frame_id=frame_id, loader_id=world.loader_id if world else "",
            session_id=key[0])
    return reply, nodes


async def _walk(tab: TabActor, session: CdpSession, frame_id: str, *, interactive: bool,
                max_chars: int | None, limit: int | None, root_ref: str | None,
                root_selector: str | None, nesting: int) -> _Walk:
    opts = SnapshotOptions(next_ref=tab.refs.next_ref, interactive=interactive, max_chars=max_chars,
                           limit=limit, root_ref=root_ref, root_selector=root_selector)
    reply, nodes = await _run_walker(tab, session, frame_id, snapshot_call(opts),
                                     root_ref or root_selector)
    walk = _Walk(text=str(reply.get("text") or ""), nodes=nodes,
                 truncated=bool(reply.get("truncated")), stats=dict(reply.get("stats") or {}))
    frames = list(reply.get("frames") or [])
    if not frames and root_ref is not None and nodes and nodes[0].get("ref") == root_ref \
            and nodes[0].get("role") == "iframe":
        # Scoped to an iframe itself: the walker lists it but does not enter it.
        frames = [{"ref": root_ref, "depth": 0}]
    if nesting >= _FRAME_DEPTH_CAP:
        return walk
    for frame in frames:
        ref, depth = str(frame.get("ref")), int(frame.get("depth") or 0)
        room_chars = None if max_chars is None else max_chars - len(walk.text)
        room_nodes = None if limit is None else limit - len(walk.nodes)
        if (room_chars is not None and room_chars <= 0) or (room_nodes is not None
                                                            and room_nodes <= 0):
            walk.truncated = True
            break
        try:
            target = await _frame_target(tab, session, frame_id, ref)
            if target is None:
                continue
            child = await _walk(tab, target[0], target[1], interactive=interactive,
                                max_chars=room_chars, limit=room_nodes, root_ref=None,
                                root_selector=None, nesting=nesting + 1)
        except CdpError:
            continue  # the frame went away under us: leave its iframe line as is
        walk.text = splice_frame_text(walk.text, ref, child.text, depth)
        at = next((i for i, n in enumerate(walk.nodes) if n.get("ref") == ref), None)
        if at is not None:
            shifted = [{**n, "depth": int(n.get("depth") or 0) + depth + 1} for n in child.nodes]
            walk.nodes[at + 1:at + 1] = shifted
        walk.truncated = walk.truncated or child.truncated
        walk.frames += 1 + child.frames
        for stat in ("newRefs", "ms"):
            if isinstance(child.stats.get(stat), int | float):
                walk.stats[stat] = walk.stats.get(stat, 0) + child.stats[stat]
    return walk


def _scope_of(root: str | None) -> tuple[str | None, str | None]:
    if root is None or root == "":
        return None, None
    if _REF_RE.match(root):
        return root, None
    return None, root


async def take_snapshot(tab: TabActor, *, format: str = "aria",
                        interactive: bool = False, max_chars: int | None = None,
                        limit: int | None = None, root: str | None = None) -> dict[str, Any]:
    """Snapshot the tab: the /snapshot answer (API.md "Snapshots and refs").

    ``format`` is "aria" (text + nodes with refs), "read" (title, URL,
    visible text, then the aria snapshot) or "domSnapshot" (a bounded DOM
    walk). ``root`` scopes to a ref or a CSS selector. Every ref issued is
    recorded for :func:`resolve_ref`; ``tab.refs.next_ref`` advances.

    Raises StaleRef / RefNotFound for a bad root ref, NoMatch / BadRequest
    for a root selector that matches nothing / is invalid, Timeout when the
    walk outlives the caller's deadline, CdpError / BrowserGone when the
    page or browser goes away. Cancellation leaves already recorded refs valid.
    """
    if format not in ("aria", "read", "domSnapshot"):
        raise BadRequest(f"unknown snapshot format {format!r}", field="format")
    started = time.perf_counter()
    tab.refs.prune(tab.frame_loaders, tab.child_sessions.values())
    root_ref, root_selector = _scope_of(root)
    session, frame_id = tab.session, tab.main_frame_id
    if root_ref is not None:
        handle = await resolve_ref(tab, root_ref)
        session, frame_id = handle.session, handle.frame_id
    snapshot_id = tab.refs.next_snapshot_id()
    info = decode_value(await world_evaluate(
        tab, session, frame_id, "JSON.stringify([location.href, document.title])"))
    url, title = (str(info[0]), str(info[1])) if isinstance(info, list) else (tab.url, "")
    out: dict[str, Any] = {"snapshotId": snapshot_id, "targetId": tab.target_id, "format": format,
                           "url": url, "title": title}
    if format == "domSnapshot":
        out.update(await _dom_walk(tab, session, frame_id, limit=limit, root_ref=root_ref,
                                   root_selector=root_selector))
    else:
        aria_max = max_chars
        if format == "read":
            budget = _READ_TEXT_BUDGET if max_chars is None else min(
                _READ_TEXT_BUDGET, max_chars // 3)
            view = decode_value(await world_evaluate(tab, session, frame_id, read_view_call(
                SnapshotOptions(text_budget=budget))))
            view = view if isinstance(view, dict) else {}
            out["text"] = str(view.get("text") or "")
            out["textTruncated"] = bool(view.get("truncated"))
            if max_chars is not None:
                aria_max = max(0, max_chars - len(out["text"]))
        walk = await _walk(tab, session, frame_id, interactive=interactive,
                           max_chars=aria_max, limit=limit, root_ref=root_ref,
                           root_selector=root_selector, nesting=0)
        text, cut = cap_text(walk.text, aria_max)
        nodes = walk.nodes
        if cut:
            kept = {m.group(1) for m in re.finditer(r"\[(e\d+)\] ", text)}
            nodes = [n for n in nodes if n.get("ref") in kept]
        stats = {**walk.stats, "nodes": _count_lines(text), "refs": len(nodes),
                 "chars": len(text), "frames": walk.frames,
                 "totalMs": round((time.perf_counter() - started) * 1000, 1)}
        out.update({"text" if format == "aria" else "snapshot": text, "nodes": nodes,
                    "truncated": walk.truncated or cut, "stats": stats})
    return out


def _count_lines(text: str) -> int:
    return text.count("\n") + (0 if not text or text.endswith("\n") else 1)


async def _dom_walk(tab: TabActor, session: CdpSession, frame_id: str, *, limit: int | None,
                    root_ref: str | None, root_selector: str | None) -> dict[str, Any]:
    started = time.perf_counter()
    opts = SnapshotOptions(next_ref=tab.refs.next_ref, limit=limit, root_ref=root_ref,
                           root_selector=root_selector)
    reply, nodes = await _run_walker(tab, session, frame_id, dom_snapshot_call(opts),
                                     root_ref or root_selector)
    return {"nodes": nodes, "truncated": bool(reply.get("truncated")),
            "stats": {"nodes": len(nodes), "refs": len(nodes),
                      "ms": round((time.perf_counter() - started) * 1000, 1)}}

