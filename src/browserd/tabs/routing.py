"""One home for OOPIF session routing: which CDP session a call goes to.

A tab's own session is ``tab.session``; each out-of-process iframe (OOPIF)
attached under it has a child session (``tab.child_sessions``: the iframe's
targetId → its sessionId). Calls on the tab's own session go through
:meth:`TabActor.send` (crash/dialog/closed checks, deadline); calls on a
child session check the tab is usable first and then go straight to that
session. Errors are the CDP call's (CdpError, Timeout, BrowserGone);
cancellation abandons the call in flight.
"""

from __future__ import annotations

from typing import Any

from ..cdp import CdpSession
from .actor import TabActor

__all__ = ["own_session_id", "send_in", "session_by_id", "session_root_frame"]


def own_session_id(tab: TabActor, session: CdpSession) -> str | None:
    """None for the tab's own session, else the (OOPIF) session id."""
    if session.session_id == tab.session.session_id:
        return None
    return session.session_id


def session_by_id(tab: TabActor, session_id: str | None) -> CdpSession:
    """The tab's own session for None, else the (OOPIF) session of that id."""
    return tab.session if session_id is None else tab.connection.session(session_id)


async def send_in(tab: TabActor, session: CdpSession, method: str,
                  params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Send ``method`` on ``session``, which is the tab's own or one of its OOPIF sessions."""
    if own_session_id(tab, session) is None:
        return await tab.send(method, params)
    tab.check_usable()
    return await session.send(method, params)


def session_root_frame(tab: TabActor, session: CdpSession) -> str | None:
    """The frame id at the root of ``session``: the main frame, or the OOPIF's target id."""
    if session.session_id == tab.session.session_id:
        return tab.main_frame_id
    for target_id, sid in tab.child_sessions.items():
        if sid == session.session_id:
            return target_id
    return None
