"""Element geometry: where a frame's viewport sits in the tab's top-level viewport.

Content quads (``DOM.getContentQuads``) are CSS pixels relative to the
viewport of the element's *session root*: the tab's main frame for the tab's
own session (in-process iframes included), or the out-of-process iframe's
own viewport for an OOPIF session. :func:`oopif_offset` walks up through
nested OOPIFs (``DOM.getFrameOwner`` + ``DOM.getBoxModel`` in each parent
session) to turn those into top-level coordinates. CSS transforms on iframes
themselves are not accounted for. This is the one implementation: input
(pointer actions) and capture (element screenshots) both use it.

Every call here goes through :func:`browserd.tabs.routing.send_in` (bounded by
the tab's CDP deadline); cancellation abandons the call in flight.
"""

from __future__ import annotations

import contextlib

from ..cdp import CdpSession
from ..errors import CdpError
from .actor import TabActor
from .routing import send_in, session_root_frame

__all__ = ["MAX_FRAME_DEPTH", "oopif_offset", "owner_content_origin"]

MAX_FRAME_DEPTH = 8
"""How many nested out-of-process iframes :func:`oopif_offset` follows."""


async def owner_content_origin(tab: TabActor, session: CdpSession, frame_id: str,
                                *, scroll: bool) -> tuple[float, float] | None:
    """Top-left of the content box of ``frame_id``'s owner iframe, in ``session``'s root."""
    try:
        owner = await send_in(tab, session, "DOM.getFrameOwner", {"frameId": frame_id})
        node = {"backendNodeId": owner["backendNodeId"]}
        if scroll:
            with contextlib.suppress(CdpError):
                await send_in(tab, session, "DOM.scrollIntoViewIfNeeded", node)
        box = await send_in(tab, session, "DOM.getBoxModel", node)
    except (CdpError, KeyError):
        return None
    content = box.get("model", {}).get("content") or []
    if len(content) < 2:
        return None
    return float(content[0]), float(content[1])


async def oopif_offset(tab: TabActor, session: CdpSession) -> tuple[float, float] | None:
    """Offset of an OOPIF session's viewport in the top-level viewport ((0, 0) at the top).

    Walks up through nested out-of-process iframes, scrolling each owner
    iframe into view. None when the chain cannot be followed.
    """
    x = y = 0.0
    current = session
    for _ in range(MAX_FRAME_DEPTH):
        if current.session_id == tab.session.session_id:
            return x, y
        frame_id = session_root_frame(tab, current)
        if frame_id is None:
            return None
        parents = [tab.session] + [tab.connection.session(s) for s in tab.child_sessions.values()
                                   if s != current.session_id]
        for parent in parents:
            origin = await owner_content_origin(tab, parent, frame_id, scroll=True)
            if origin is not None:
                x, y = x + origin[0], y + origin[1]
                current = parent
                break
        else:
            return None
    return None
