"""The ref engine: snapshots that hand out refs, and refs turned back into elements.

A ref (``e<N>``) names one element of one document of one tab. The in-page
walker (:mod:`browserd.snapshot`) runs in a CDP isolated world named
``browserd`` — one per (session, frame, document) — where it keeps the
element ↔ ref maps; page scripts can neither see nor patch it. This module
keeps the Python side in ``tab.page_state``:

- ``"refs"``: ref → :class:`RefRecord` (the frame, document and session the
  ref lives in, and its role/name at the last snapshot that listed it);
- ``"refs_gone"``: refs of documents that have since gone (→ ``navigated``);
- ``"worlds"``: (session id, frame id) → the world's (loaderId, contextId);
- ``"snapshot_seq"``: the counter behind ``snapshotId`` ("s<N>").

Same-origin frames are walked inline by the walker; out-of-process iframes
(and frames the walker cannot enter, e.g. sandboxed ones) are snapshotted in
their own world and spliced into the parent's text.

Every function here runs while the caller holds the tab's work slot and
under the caller's deadline. Cancellation abandons the CDP call in flight;
the per-tab state stays consistent (a world is cached only once its walker
is installed, refs are recorded only from a complete walker reply). Errors
are :mod:`browserd.errors` classes; an element is never returned for a ref
unless it is the very element the ref was issued for.
"""

from __future__ import annotations

import math
import re
import time
from collections import OrderedDict
from typing import Any, cast

import attrs
import trio

from ..cdp import CdpSession, decoding
from ..errors import (
    BadRequest,
    BrowserdError,
    CdpError,
    NoMatch,
    RefNotFound,
    StaleRef,
    Timeout,
)
from ..snapshot import (
    DESCRIBE_FUNCTION,
    WALKER_SOURCE,
    SnapshotOptions,
    cap_text,
    dom_snapshot_call,
    find_by_text_call,
    js_literal,
    read_view_call,
    resolve_call,
    snapshot_call,
    splice_frame_text,
)
from .actor import TabActor

WORLD_NAME = "browserd"
OBJECT_GROUP = "browserd"
"""Object group of element handles handed out by the resolve functions."""

_CONTEXT_GONE = "Cannot find context with specified id"
_CONTEXT_DESTROYED = "Execution context was destroyed"
_REF_RE = re.compile(r"^e[1-9][0-9]{0,9}$")
_GONE_CAP = 100_000
_REFS_CAP = 200_000
_FRAME_DEPTH_CAP = 4
_READ_TEXT_BUDGET = 4000

_STALE_HINT = "take a new snapshot"


@attrs.frozen(kw_only=True)
class RefRecord:
    """Where a ref lives: its frame, that frame's document, the CDP session.

    ``session_id`` None is the tab's own session; otherwise the session of an
    out-of-process iframe. ``role``/``name`` are those of the last snapshot
    that listed the ref.
    """

    ref: str
    frame_id: str
    loader_id: str
    session_id: str | None
    role: str
    name: str


@attrs.frozen(kw_only=True)
class ElementHandle:
    """A live element: a RemoteObject id in the ``browserd`` world of its frame.

    ``session`` is the CDP session to use for it (the tab's, or an OOPIF's);
    ``ref`` is None when it was found by selector or text.
    """

    session: CdpSession
    object_id: str
    context_id: int
    frame_id: str
    role: str
    name: str
    ref: str | None


@attrs.frozen(kw_only=True)
class _World:
    loader_id: str
    context_id: int


WorldKey = tuple[str | None, str]


# -- per-tab state -------------------------------------------------------------

def _refs(tab: TabActor) -> dict[str, RefRecord]:
    return cast(dict[str, RefRecord], tab.page_state.setdefault("refs", {}))


def _gone(tab: TabActor) -> OrderedDict[str, str]:
    return cast("OrderedDict[str, str]", tab.page_state.setdefault("refs_gone", OrderedDict()))


def _worlds(tab: TabActor) -> dict[WorldKey, _World]:
    return cast(dict[WorldKey, _World], tab.page_state.setdefault("worlds", {}))


def _own_id(tab: TabActor, session: CdpSession) -> str | None:
    """None for the tab's own session, else the (OOPIF) session id."""
    if session.session_id == tab.session.session_id:
        return None
    return session.session_id


def _session(tab: TabActor, session_id: str | None) -> CdpSession:
    return tab.session if session_id is None else tab.connection.session(session_id)


async def _send(tab: TabActor, session: CdpSession, method: str,
                params: dict[str, Any] | None = None) -> dict[str, Any]:
    if _own_id(tab, session) is None:
        return await tab.send(method, params)
    tab.check_usable()
    return await session.send(method, params)


def _remaining_ms() -> int | None:
    """What is left of the caller's deadline, for Runtime.evaluate's own timeout."""
    deadline = trio.current_effective_deadline()
    if deadline == math.inf:
        return None
    return max(1, int((deadline - trio.current_time()) * 1000) - 250)


# -- worlds --------------------------------------------------------------------

def _find_frame(tree: dict[str, Any], frame_id: str) -> dict[str, Any] | None:
    frame = cast(dict[str, Any], tree.get("frame", {}))
    if frame.get("id") == frame_id:
        return frame
    for child in tree.get("childFrames", ()) or ():
        found = _find_frame(child, frame_id)
        if found is not None:
            return found
    return None


async def _current_loader(tab: TabActor, session_id: str | None, frame_id: str) -> str | None:
    """The loaderId of the frame's current document; None when the frame is gone."""
    if session_id is None:
        return tab.frame_loaders.get(frame_id)
    if session_id not in tab.child_sessions.values():
        return None
    try:
        tree = await _send(tab, _session(tab, session_id), "Page.getFrameTree")
    except CdpError:
        return None
    frame = _find_frame(tree.get("frameTree", {}), frame_id)
    return None if frame is None else str(frame.get("loaderId", ""))


async def world_context(tab: TabActor, session: CdpSession, frame_id: str) -> int:
    """The execution context id of the ``browserd`` world in the frame's current document.

    Reused while the frame's loaderId is unchanged; otherwise a new isolated
    world is created and the walker installed in it. Raises CdpError when
    the frame does not exist (any more). On cancellation nothing is cached,
    so the next call starts over.
    """
    key: WorldKey = (_own_id(tab, session), frame_id)
    loader = await _current_loader(tab, key[0], frame_id)
    worlds = _worlds(tab)
    world = worlds.get(key)
    if world is not None and loader is not None and world.loader_id == loader:
        return world.context_id
    worlds.pop(key, None)
    created = await _send(tab, session, "Page.createIsolatedWorld", {
        "frameId": frame_id, "worldName": WORLD_NAME, "grantUniversalAccess": False})
    context_id = int(created["executionContextId"])
    installed = await _send(tab, session, "Runtime.evaluate", {
        "expression": WALKER_SOURCE, "contextId": context_id, "returnByValue": True})
    if installed.get("exceptionDetails"):
        raise BrowserdError("the snapshot walker could not be installed: "
                            + _exception_text(installed["exceptionDetails"]))
    # The document may have changed while we worked: cache the world only if
    # the loader we saw is still current (else the next call recreates it).
    if key[0] is not None or tab.frame_loaders.get(frame_id) == loader:
        worlds[key] = _World(loader_id=loader or "", context_id=context_id)
    return context_id


def _exception_text(details: dict[str, Any]) -> str:
    exc = details.get("exception") or {}
    return str(exc.get("description") or exc.get("value") or details.get("text", "error"))[:500]


async def world_evaluate(tab: TabActor, session: CdpSession, frame_id: str, expression: str,
                         *, by_value: bool = True, object_group: str = OBJECT_GROUP
                         ) -> dict[str, Any]:
    """Evaluate ``expression`` in the frame's ``browserd`` world; the RemoteObject.

    The world is (re)created as needed, and once more if the context has
    vanished under us. The evaluation is bounded by the caller's deadline
    (Runtime.evaluate's own timeout ends a runaway walk in the renderer).
    Raises Timeout when that timeout ends it, BrowserdError for any other
    exception thrown in the world, CdpError for protocol errors.
    """
    key: WorldKey = (_own_id(tab, session), frame_id)
    for attempt in range(2):
        try:
            context_id = await world_context(tab, session, frame_id)
            params: dict[str, Any] = {"expression": expression, "contextId": context_id,
                                      "returnByValue": by_value, "objectGroup": object_group}
            timeout = _remaining_ms()
            if timeout is not None:
                params["timeout"] = timeout
            result = await _send(tab, session, "Runtime.evaluate", params)
        except CdpError as exc:
            if attempt == 0 and (_CONTEXT_GONE in exc.message
                                 or _CONTEXT_DESTROYED in exc.message):
                _worlds(tab).pop(key, None)
                continue
            raise
        details = result.get("exceptionDetails")
        if details:
            text = _exception_text(details)
            if "terminated" in text.lower():
                raise Timeout("the page inspection did not finish within its deadline",
                              hint="scope it with root, or lower limit/maxChars")
            raise BrowserdError(f"page inspection failed: {text}")
        return cast(dict[str, Any], result.get("result", {}))
    raise AssertionError("unreachable")  # pragma: no cover


def _decode(remote: dict[str, Any]) -> Any:
    value = remote.get("value")
    if isinstance(value, str) and value[:1] in ("{", "["):
        return decoding.loads(value)
    return value


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


# -- recording -----------------------------------------------------------------

def _record(tab: TabActor, nodes: list[dict[str, Any]], *, frame_id: str, loader_id: str,
            session_id: str | None) -> None:
    refs = _refs(tab)
    gone = _gone(tab)
    for node in nodes:
        ref = node.get("ref")
        if not isinstance(ref, str):
            continue
        refs.pop(ref, None)  # re-insert: the dict's order is least recently listed first
        refs[ref] = RefRecord(ref=ref, frame_id=frame_id, loader_id=loader_id,
                              session_id=session_id, role=str(node.get("role") or "generic"),
                              name=str(node.get("name") or ""))
        gone.pop(ref, None)
    while len(refs) > _REFS_CAP:
        # A document that keeps growing: forget the refs not listed for longest.
        oldest = next(iter(refs))
        del refs[oldest]
        gone[oldest] = "detached"


def _prune(tab: TabActor) -> None:
    """Move refs of documents known to be gone to the (bounded) gone list."""
    refs = _refs(tab)
    if not refs:
        return
    gone = _gone(tab)
    children = set(tab.child_sessions.values())
    dead = [
        ref for ref, rec in refs.items()
        if (rec.session_id is None and tab.frame_loaders.get(rec.frame_id) != rec.loader_id)
        or (rec.session_id is not None and rec.session_id not in children)
    ]
    for ref in dead:
        del refs[ref]
        gone[ref] = "navigated"
    while len(gone) > _GONE_CAP:
        gone.popitem(last=False)
    worlds = _worlds(tab)
    for key in [k for k, w in worlds.items()
                if (k[0] is None and tab.frame_loaders.get(k[1]) != w.loader_id)
                or (k[0] is not None and k[0] not in children)]:
        del worlds[key]


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
        described = await _send(tab, session, "DOM.describeNode", {"objectId": object_id})
    finally:
        with trio.CancelScope(shield=True), trio.move_on_after(1):
            try:
                await _send(tab, session, "Runtime.releaseObject", {"objectId": object_id})
            except BrowserdError:
                pass
    child_frame = described.get("node", {}).get("frameId")
    if not child_frame:
        return None
    child_sid = tab.child_sessions.get(child_frame)
    if child_sid:
        return tab.connection.session(child_sid), child_frame
    if _own_id(tab, session) is None and child_frame in tab.frame_loaders:
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
    reply = _decode(await world_evaluate(tab, session, frame_id, call))
    if not isinstance(reply, dict):
        raise BrowserdError("the snapshot walker returned no result")
    if "error" in reply:
        raise _walker_error(reply["error"], root)
    key: WorldKey = (_own_id(tab, session), frame_id)
    world = _worlds(tab).get(key)
    tab.next_ref = max(tab.next_ref, int(reply.get("nextRef") or tab.next_ref))
    nodes: list[dict[str, Any]] = list(reply.get("nodes") or [])
    _record(tab, nodes, frame_id=frame_id, loader_id=world.loader_id if world else "",
            session_id=key[0])
    return reply, nodes


async def _walk(tab: TabActor, session: CdpSession, frame_id: str, *, interactive: bool,
                max_chars: int | None, limit: int | None, root_ref: str | None,
                root_selector: str | None, nesting: int) -> _Walk:
    opts = SnapshotOptions(next_ref=tab.next_ref, interactive=interactive, max_chars=max_chars,
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
    recorded for :func:`resolve_ref`; ``tab.next_ref`` advances.

    Raises StaleRef / RefNotFound for a bad root ref, NoMatch / BadRequest
    for a root selector that matches nothing / is invalid, Timeout when the
    walk outlives the caller's deadline, CdpError / BrowserGone when the
    page or browser goes away. Cancellation leaves already recorded refs valid.
    """
    if format not in ("aria", "read", "domSnapshot"):
        raise BadRequest(f"unknown snapshot format {format!r}", field="format")
    started = time.perf_counter()
    _prune(tab)
    root_ref, root_selector = _scope_of(root)
    session, frame_id = tab.session, tab.main_frame_id
    if root_ref is not None:
        handle = await resolve_ref(tab, root_ref)
        session, frame_id = handle.session, handle.frame_id
    seq = int(tab.page_state.get("snapshot_seq", 0)) + 1
    tab.page_state["snapshot_seq"] = seq
    info = _decode(await world_evaluate(
        tab, session, frame_id, "JSON.stringify([location.href, document.title])"))
    url, title = (str(info[0]), str(info[1])) if isinstance(info, list) else (tab.url, "")
    out: dict[str, Any] = {"snapshotId": f"s{seq}", "targetId": tab.target_id, "format": format,
                           "url": url, "title": title}
    if format == "domSnapshot":
        out.update(await _dom_walk(tab, session, frame_id, limit=limit, root_ref=root_ref,
                                   root_selector=root_selector))
    else:
        aria_max = max_chars
        if format == "read":
            budget = _READ_TEXT_BUDGET if max_chars is None else min(
                _READ_TEXT_BUDGET, max_chars // 3)
            view = _decode(await world_evaluate(tab, session, frame_id, read_view_call(
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
    opts = SnapshotOptions(next_ref=tab.next_ref, limit=limit, root_ref=root_ref,
                           root_selector=root_selector)
    reply, nodes = await _run_walker(tab, session, frame_id, dom_snapshot_call(opts),
                                     root_ref or root_selector)
    return {"nodes": nodes, "truncated": bool(reply.get("truncated")),
            "stats": {"nodes": len(nodes), "refs": len(nodes),
                      "ms": round((time.perf_counter() - started) * 1000, 1)}}


# -- resolving -----------------------------------------------------------------

def _stale(ref: str, reason: str, message: str, **details: Any) -> StaleRef:
    return StaleRef(f"ref {ref} is stale: {message}", hint=_STALE_HINT, reason=reason, ref=ref,
                    **details)


async def resolve_ref(tab: TabActor, ref: str) -> ElementHandle:
    """The element ``ref`` was issued for — or why it cannot be had.

    Raises RefNotFound (404) for a ref never issued in this tab, and
    StaleRef (409, with ``reason``) when its document has gone
    (``navigated``), its element was removed (``detached``) or its role or
    name changed since the snapshot (``changed``, with ``was`` and ``now``).
    Never returns another element than the one the ref named.
    """
    record = _refs(tab).get(ref)
    if record is None:
        reason = _gone(tab).get(ref)
        if reason == "navigated":
            raise _stale(ref, "navigated", "its page has navigated since the snapshot")
        if reason is not None:
            raise _stale(ref, reason, "it has not been listed by a snapshot for too long")
        raise RefNotFound(f"no ref {ref!r} in tab {tab.target_id}", ref=ref)
    loader = await _current_loader(tab, record.session_id, record.frame_id)
    if loader is None or loader != record.loader_id:
        raise _stale(ref, "navigated", "its page or frame has navigated since the snapshot")
    # Refs live in the walker's maps, keyed by element identity, and ref
    # numbers are never reused within a tab: whichever world answers, it
    # cannot hand back another element for this ref.
    session = _session(tab, record.session_id)
    remote = await world_evaluate(tab, session, record.frame_id, resolve_call(ref, None, None),
                                  by_value=False)
    world = _worlds(tab).get((record.session_id, record.frame_id))
    if world is None or world.loader_id != record.loader_id:
        raise _stale(ref, "navigated", "its document is no longer the one snapshotted")
    object_id = remote.get("objectId")
    if remote.get("subtype") == "node" and object_id:
        return ElementHandle(session=session, object_id=str(object_id),
                             context_id=world.context_id, frame_id=record.frame_id,
                             role=record.role, name=record.name, ref=ref)
    verdict = _decode(remote)
    reason = verdict.get("stale") if isinstance(verdict, dict) else None
    if reason == "changed":
        assert isinstance(verdict, dict)
        now = {"role": verdict.get("role", ""), "name": verdict.get("name", "")}
        was = {"role": record.role, "name": record.name}
        raise _stale(ref, "changed",
                     f"it was {record.role} {record.name!r}, now {now['role']} {now['name']!r}",
                     was=was, now=now)
    if reason == "detached":
        raise _stale(ref, "detached", "its element was removed from the page")
    raise _stale(ref, "navigated", "its document is no longer the one snapshotted")


async def _handle_from(tab: TabActor, session: CdpSession, frame_id: str,
                       remote: dict[str, Any]) -> ElementHandle | None:
    object_id = remote.get("objectId")
    if remote.get("subtype") != "node" or not object_id:
        return None
    described = await _send(tab, session, "Runtime.callFunctionOn", {
        "functionDeclaration": DESCRIBE_FUNCTION, "objectId": object_id, "returnByValue": True})
    value = (described.get("result") or {}).get("value") or {}
    key: WorldKey = (_own_id(tab, session), frame_id)
    world = _worlds(tab).get(key)
    context_id = world.context_id if world else await world_context(tab, session, frame_id)
    return ElementHandle(session=session, object_id=str(object_id), context_id=context_id,
                         frame_id=frame_id, role=str(value.get("role") or "generic"),
                         name=str(value.get("name") or ""), ref=None)


_SELECT_JS = """(() => {
  const sel = %s, index = %d;
  let list;
  try { list = document.querySelectorAll(sel); }
  catch (e) { return JSON.stringify({bad: String(e && e.message || e)}); }
  if (index >= list.length) return JSON.stringify({count: list.length});
  return list[index];
})()"""


async def resolve_selector(tab: TabActor, selector: str, *, index: int = 0) -> ElementHandle:
    """The ``index``-th element matching a CSS selector in the main document.

    Evaluated in the ``browserd`` world, so page scripts cannot interfere.
    Raises BadRequest for an invalid selector, NoMatch when fewer than
    ``index + 1`` elements match.
    """
    if index < 0:
        raise BadRequest("index must not be negative", field="index")
    session, frame_id = tab.session, tab.main_frame_id
    expression = _SELECT_JS % (js_literal(selector), index)
    remote = await world_evaluate(tab, session, frame_id, expression, by_value=False)
    handle = await _handle_from(tab, session, frame_id, remote)
    if handle is not None:
        return handle
    verdict = _decode(remote)
    if isinstance(verdict, dict) and "bad" in verdict:
        raise BadRequest(f"invalid selector {selector!r}: {verdict['bad']}", field="selector")
    count = verdict.get("count", 0) if isinstance(verdict, dict) else 0
    raise NoMatch(f"no element matches {selector!r}" if not count else
                  f"{selector!r} matches {count} element(s); index {index} is out of range",
                  selector=selector, hint="check the selector with GET /query")


async def resolve_text(tab: TabActor, text: str) -> ElementHandle:
    """The best visible element showing ``text`` (buttons and links first).

    Raises NoMatch when nothing visible matches.
    """
    session, frame_id = tab.session, tab.main_frame_id
    remote = await world_evaluate(tab, session, frame_id, find_by_text_call(text),
                                  by_value=False)
    handle = await _handle_from(tab, session, frame_id, remote)
    if handle is None:
        raise NoMatch(f"no visible element shows the text {text[:200]!r}",
                      hint="take a snapshot to see what the page shows")
    return handle


async def resolve_target(tab: TabActor, *, ref: str | None = None, selector: str | None = None,
                         text: str | None = None) -> ElementHandle:
    """Resolve exactly one of ``ref``, ``selector``, ``text`` (else BadRequest)."""
    given = [name for name, v in (("ref", ref), ("selector", selector), ("text", text))
             if v is not None]
    if len(given) != 1:
        raise BadRequest("give exactly one of ref, selector or text"
                         + (f" (got {', '.join(given)})" if given else ""),
                         hint="e.g. {\"ref\": \"e12\"} from GET /snapshot")
    if ref is not None:
        return await resolve_ref(tab, ref)
    if selector is not None:
        return await resolve_selector(tab, selector)
    assert text is not None
    return await resolve_text(tab, text)
