"""Turning a ref, a selector or a text back into one live element (an ElementHandle).

A ref is resolved only to the very element it was issued for (refs live in
the walker's maps keyed by element identity, and ref numbers are never
reused within a tab); otherwise the answer says why not (RefNotFound,
StaleRef with a ``reason``). Selectors and texts are evaluated in the
``browserd`` world of the main frame, so page scripts cannot interfere.

Every function runs while the caller holds the tab's work slot and under
the caller's deadline; cancellation abandons the CDP call in flight.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..cdp import CdpSession
from ..errors import BadRequest, NoMatch, RefNotFound, StaleRef
from ..snapshot import DESCRIBE_FUNCTION, find_by_text_call, resolve_call
from .actor import TabActor
from .locator import ElementTarget
from .pagejs import page_function
from .routing import own_session_id, send_in, session_by_id
from .state import WorldKey
from .worlds import current_loader, decode_value, world_context, world_evaluate

__all__ = ["ElementHandle", "resolve_ref", "resolve_selector", "resolve_target",
           "resolve_text"]

_STALE_HINT = "take a new snapshot"


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
    record = tab.refs.get(ref)
    if record is None:
        reason = tab.refs.gone_reason(ref)
        if reason == "navigated":
            raise _stale(ref, "navigated", "its page has navigated since the snapshot")
        if reason is not None:
            raise _stale(ref, reason, "it has not been listed by a snapshot for too long")
        raise RefNotFound(f"no ref {ref!r} in tab {tab.target_id}", ref=ref)
    loader = await current_loader(tab, record.session_id, record.frame_id)
    if loader is None or loader != record.loader_id:
        raise _stale(ref, "navigated", "its page or frame has navigated since the snapshot")
    # Refs live in the walker's maps, keyed by element identity, and ref
    # numbers are never reused within a tab: whichever world answers, it
    # cannot hand back another element for this ref.
    session = session_by_id(tab, record.session_id)
    remote = await world_evaluate(tab, session, record.frame_id, resolve_call(ref, None, None),
                                  by_value=False)
    world = tab.refs.world((record.session_id, record.frame_id))
    if world is None or world.loader_id != record.loader_id:
        raise _stale(ref, "navigated", "its document is no longer the one snapshotted")
    object_id = remote.get("objectId")
    if remote.get("subtype") == "node" and object_id:
        return ElementHandle(session=session, object_id=str(object_id),
                             context_id=world.context_id, frame_id=record.frame_id,
                             role=record.role, name=record.name, ref=ref)
    verdict = decode_value(remote)
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
    described = await send_in(tab, session, "Runtime.callFunctionOn", {
        "functionDeclaration": DESCRIBE_FUNCTION, "objectId": object_id, "returnByValue": True})
    value = (described.get("result") or {}).get("value") or {}
    key: WorldKey = (own_session_id(tab, session), frame_id)
    world = tab.refs.world(key)
    context_id = world.context_id if world else await world_context(tab, session, frame_id)
    return ElementHandle(session=session, object_id=str(object_id), context_id=context_id,
                         frame_id=frame_id, role=str(value.get("role") or "generic"),
                         name=str(value.get("name") or ""), ref=None)


_SELECTOR_MATCH = page_function("selectorMatch")


async def resolve_selector(tab: TabActor, selector: str, *, index: int = 0) -> ElementHandle:
    """The ``index``-th element matching a CSS selector in the main document.

    Evaluated in the ``browserd`` world, so page scripts cannot interfere.
    Raises BadRequest for an invalid selector, NoMatch when fewer than
    ``index + 1`` elements match.
    """
    if index < 0:
        raise BadRequest("index must not be negative", field="index")
    session, frame_id = tab.session, tab.main_frame_id
    expression = _SELECTOR_MATCH.call(selector, index)
    remote = await world_evaluate(tab, session, frame_id, expression, by_value=False)
    handle = await _handle_from(tab, session, frame_id, remote)
    if handle is not None:
        return handle
    verdict = decode_value(remote)
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


async def resolve_target(tab: TabActor, target: ElementTarget) -> ElementHandle:
    """Resolve the element ``target`` names (exactly one part given, else BadRequest)."""
    target.check()
    if target.is_locator:
        raise BadRequest("a role/name locator names an element for an action "
                         "(click, type, hover, select, …); here give a ref or a selector",
                         field="role")
    if target.ref is not None:
        return await resolve_ref(tab, target.ref)
    if target.selector is not None:
        return await resolve_selector(tab, target.selector)
    assert target.text is not None
    return await resolve_text(tab, target.text)

