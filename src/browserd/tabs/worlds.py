"""The ``browserd`` isolated world of a frame: created, cached, evaluated in.

The in-page walker (:mod:`browserd.snapshot`) runs in a CDP isolated world
named ``browserd`` — one per (session, frame, document) — where page scripts
can neither see nor patch it. The tab's :class:`~browserd.tabs.state.RefMap`
caches each world's (loaderId, contextId); a world is cached only once its
walker is installed, and only while its document is the frame's current one
(the tab's actor forgets it when the frame navigates or detaches); it is
recreated when the frame's document changed.

Every function here runs while the caller holds the tab's work slot and
under the caller's deadline; cancellation abandons the CDP call in flight
and caches nothing.
"""

from __future__ import annotations

import math
from typing import Any, cast

import trio

from .. import jsontext
from ..cdp import CdpSession
from ..errors import BrowserdError, CdpError, Timeout
from ..snapshot import WALKER_SOURCE
from .actor import TabActor
from .remote import exception_text
from .routing import own_session_id, send_in, session_by_id
from .state import World, WorldKey

__all__ = ["OBJECT_GROUP", "WORLD_NAME", "current_loader", "decode_value", "world_context",
           "world_evaluate"]

WORLD_NAME = "browserd"
OBJECT_GROUP = "browserd"
"""Object group of element handles handed out by the resolve functions."""

_CONTEXT_GONE = "Cannot find context with specified id"
_CONTEXT_DESTROYED = "Execution context was destroyed"


def _remaining_ms() -> int | None:
    """What is left of the caller's deadline, for Runtime.evaluate's own timeout."""
    deadline = trio.current_effective_deadline()
    if deadline == math.inf:
        return None
    return max(1, int((deadline - trio.current_time()) * 1000) - 250)


def _find_frame(tree: dict[str, Any], frame_id: str) -> dict[str, Any] | None:
    frame = cast(dict[str, Any], tree.get("frame", {}))
    if frame.get("id") == frame_id:
        return frame
    for child in tree.get("childFrames", ()) or ():
        found = _find_frame(child, frame_id)
        if found is not None:
            return found
    return None


async def current_loader(tab: TabActor, session_id: str | None, frame_id: str) -> str | None:
    """The loaderId of the frame's current document; None when the frame is gone."""
    if session_id is None:
        return tab.frame_loader(frame_id)
    if session_id not in tab.child_sessions.values():
        return None
    try:
        tree = await send_in(tab, session_by_id(tab, session_id), "Page.getFrameTree")
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
    key: WorldKey = (own_session_id(tab, session), frame_id)
    loader = await current_loader(tab, key[0], frame_id)
    world = tab.refs.world(key)
    if world is not None and loader is not None and world.loader_id == loader:
        return world.context_id
    tab.refs.drop_world(key)
    created = await send_in(tab, session, "Page.createIsolatedWorld", {
        "frameId": frame_id, "worldName": WORLD_NAME, "grantUniversalAccess": False})
    context_id = int(created["executionContextId"])
    installed = await send_in(tab, session, "Runtime.evaluate", {
        "expression": WALKER_SOURCE, "contextId": context_id, "returnByValue": True})
    if installed.get("exceptionDetails"):
        raise BrowserdError("the snapshot walker could not be installed: "
                            + exception_text(installed["exceptionDetails"]))
    # The document may have changed while we worked: the tab caches the world only
    # if the loader we saw is still current (else the next call recreates it).
    tab.refs.set_world(key, World(loader_id=loader or "", context_id=context_id))
    return context_id


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
    key: WorldKey = (own_session_id(tab, session), frame_id)
    for attempt in range(2):
        try:
            context_id = await world_context(tab, session, frame_id)
            params: dict[str, Any] = {"expression": expression, "contextId": context_id,
                                      "returnByValue": by_value, "objectGroup": object_group}
            timeout = _remaining_ms()
            if timeout is not None:
                params["timeout"] = timeout
            result = await send_in(tab, session, "Runtime.evaluate", params)
        except CdpError as exc:
            if attempt == 0 and (_CONTEXT_GONE in exc.message
                                 or _CONTEXT_DESTROYED in exc.message):
                tab.refs.drop_world(key)
                continue
            if "terminated" in exc.message.lower():
                # Runtime.evaluate's own timeout can also end as a protocol error.
                raise Timeout("the page inspection did not finish within its deadline",
                              hint="scope it with root, or lower limit/maxChars") from None
            raise
        details = result.get("exceptionDetails")
        if details:
            text = exception_text(details)
            if "terminated" in text.lower():
                raise Timeout("the page inspection did not finish within its deadline",
                              hint="scope it with root, or lower limit/maxChars")
            raise BrowserdError(f"page inspection failed: {text}")
        return cast(dict[str, Any], result.get("result", {}))
    raise AssertionError("unreachable")  # pragma: no cover


def decode_value(remote: dict[str, Any]) -> Any:
    value = remote.get("value")
    if isinstance(value, str) and value[:1] in ("{", "["):
        return jsontext.loads(value)
    return value

