"""The ref engine's issuing side: walker runs that hand out refs.

A ref (``e<N>``) names one element of one document of one tab. The in-page
walker (:mod:`browserd.snapshot`) runs in the frame's ``browserd`` isolated
world (:mod:`browserd.tabs.worlds`), where it keeps the element ↔ ref maps;
page scripts can neither see nor patch it. Every ref a walker reply lists is
recorded in the tab's :class:`~browserd.tabs.state.RefMap` (``tab.refs``),
from which :mod:`browserd.tabs.resolve` turns it back into that very element.
The tab's actor forgets the refs of a document as it goes (the frame
navigated or detached): from then on they answer ``navigated``.

This module runs the walker; :mod:`browserd.tabs.snapshots` composes the
answers (/snapshot, /find) from its pieces: :func:`walk_scope` (where a walk
runs: the tab's main frame, or the frame of a ``root`` ref / the element of a
``root`` selector), :func:`run_walker` (one walker call, its refs recorded)
and :func:`walk_tree` (a snapshot walk with its out-of-process frames spliced
in). Same-origin frames are walked inline by the walker; out-of-process
iframes (and frames the walker cannot enter, e.g. sandboxed ones) are walked
in their own world and spliced into the parent's text.

Every function here runs while the caller holds the tab's work slot and
under the caller's deadline. Cancellation abandons the CDP call in flight;
the per-tab state stays consistent (refs are recorded only from a complete
walker reply). Errors are :mod:`browserd.errors` classes.
"""

from __future__ import annotations

import re
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
    resolve_call,
    snapshot_call,
    splice_frame_text,
)
from .actor import TabActor
from .resolve import resolve_ref
from .routing import own_session_id, send_in
from .state import WorldKey
from .worlds import decode_value, world_evaluate

__all__ = ["Scope", "Walk", "run_walker", "walk_scope", "walk_tree", "walker_error"]

_REF_RE = re.compile(r"^e[1-9][0-9]{0,9}$")
_FRAME_DEPTH_CAP = 4


def walker_error(error: dict[str, Any], root: str | None) -> BrowserdError:
    """The error for a walker's ``{error: {code, …}}`` reply; ``root`` names the scope.

    STALE_REF → StaleRef, NO_MATCH → NoMatch, BAD_SELECTOR → BadRequest
    (field ``root``); anything else a plain BrowserdError.
    """
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


# -- where a walk runs ---------------------------------------------------------

@attrs.frozen(kw_only=True)
class Scope:
    """Where a walk runs: a CDP session, a frame, and at most one root in it.

    ``root_ref`` scopes to the element a ref names (``session`` / ``frame_id``
    are then its frame's), ``root_selector`` to the first element a CSS
    selector matches in the main frame; neither: the whole document.
    """

    session: CdpSession
    frame_id: str
    root_ref: str | None = None
    root_selector: str | None = None

    @property
    def root(self) -> str | None:
        """The root as the caller spelt it (for error messages)."""
        return self.root_ref or self.root_selector


async def walk_scope(tab: TabActor, root: str | None) -> Scope:
    """Where a new walk of the tab runs; ``root`` is a ref (``e12``), a CSS selector or None.

    Raises RefNotFound / StaleRef for a ``root`` ref that cannot be resolved
    (its document went: ``navigated``); a bad selector is reported by the walk.
    """
    if not root:
        return Scope(session=tab.session, frame_id=tab.main_frame_id)
    if _REF_RE.match(root):
        handle = await resolve_ref(tab, root)
        return Scope(session=handle.session, frame_id=handle.frame_id, root_ref=root)
    return Scope(session=tab.session, frame_id=tab.main_frame_id, root_selector=root)


# -- walker calls --------------------------------------------------------------

async def run_walker(tab: TabActor, session: CdpSession, frame_id: str, call: str,
                     root: str | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Evaluate a walker ``call`` in the frame's world; its reply and the nodes it listed.

    The tab's ref counter advances and the listed refs are recorded against
    the world's document. Raises BrowserdError when the walker answers
    nothing, the :func:`walker_error` of an error reply (``root`` names the
    scope), and whatever :func:`~browserd.tabs.worlds.world_evaluate` raises.
    """
    reply = decode_value(await world_evaluate(tab, session, frame_id, call))
    if not isinstance(reply, dict):
        raise BrowserdError("the snapshot walker returned no result")
    if "error" in reply:
        raise walker_error(reply["error"], root)
    key: WorldKey = (own_session_id(tab, session), frame_id)
    world = tab.refs.world(key)
    tab.refs.advance(int(reply.get("nextRef") or tab.refs.next_ref))
    nodes: list[dict[str, Any]] = list(reply.get("nodes") or [])
    tab.refs.record(nodes, frame_id=frame_id, loader_id=world.loader_id if world else "",
                    session_id=key[0])
    return reply, nodes


@attrs.define
class Walk:
    """A snapshot walk: its text, the nodes it listed (refs), and how it went.

    Mutable while out-of-process frames are spliced in; the caller owns it
    afterwards. ``frames`` counts the frames walked in worlds of their own.
    """

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
    if own_session_id(tab, session) is None and tab.frame_loader(child_frame) is not None:
        # An in-process frame the walker could not enter (e.g. sandboxed).
        return session, child_frame
    return None


async def walk_tree(tab: TabActor, scope: Scope, *, interactive: bool, max_chars: int | None,
                    limit: int | None, line_chars: int | None = None) -> Walk:
    """Snapshot-walk ``scope``: the walker's text and nodes, frames it cannot enter spliced in.

    ``max_chars`` / ``limit`` bound the text and the number of listed nodes
    across all frames (either sets ``truncated``); ``line_chars`` caps names
    and text lines (None: the walker's default; 0: whole). Frames are
    followed at most four levels deep; a frame that goes away meanwhile
    keeps its iframe line. Raises as :func:`run_walker`.
    """
    return await _walk(tab, scope.session, scope.frame_id, interactive=interactive,
                       max_chars=max_chars, limit=limit, root_ref=scope.root_ref,
                       root_selector=scope.root_selector, nesting=0, line_chars=line_chars)


async def _walk(tab: TabActor, session: CdpSession, frame_id: str, *, interactive: bool,
                max_chars: int | None, limit: int | None, root_ref: str | None,
                root_selector: str | None, nesting: int, line_chars: int | None) -> Walk:
    opts = SnapshotOptions(next_ref=tab.refs.next_ref, interactive=interactive,
                           max_chars=max_chars, limit=limit, root_ref=root_ref,
                           root_selector=root_selector, line_chars=line_chars)
    reply, nodes = await run_walker(tab, session, frame_id, snapshot_call(opts),
                                    root_ref or root_selector)
    walk = Walk(text=str(reply.get("text") or ""), nodes=nodes,
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
                                root_selector=None, nesting=nesting + 1,
                                line_chars=line_chars)
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
