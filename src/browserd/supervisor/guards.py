"""The page guards of one browser connection: downloads kept in, every navigation judged.

Started by each attempt before its tab registry, in this order:

1. the :class:`~browserd.downloads.DownloadFollower` sets the default browser
   context's download behavior (browserd's downloads directory) and follows
   the browser's download events;
2. the :class:`~browserd.tabs.navguard.NavGuard` auto-attaches to every page,
   each new one paused until its document requests are intercepted and its
   context's download behavior is set (the follower's ``ensure_context``).

With ``allowed_origins`` (the profile's setting) the guard also contains
every page's egress (:mod:`browserd.egress`, :mod:`browserd.tabs.contain`); sessions add narrower
policies for their contexts through ``navguard.egress``.

So no tab exists before both are up. Both are children of the attempt
(``one_for_all``): if either fails the attempt fails and restarts. They end
(cancelled) when the block exits.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import attrs
import trio

from ..cdp import CdpConnection
from ..downloads import DownloadFollower, DownloadStore
from ..egress import EgressPolicy, EgressScopes
from ..tabs.contain import Containment
from ..tabs.navguard import NavGuard
from ..urlpolicy import UrlPolicy

__all__ = ["PageGuards", "open_page_guards"]


@attrs.frozen(kw_only=True)
class PageGuards:
    """The running guards of one connection (None: not configured)."""

    navguard: NavGuard | None
    downloads: DownloadFollower | None


@asynccontextmanager
async def open_page_guards(
    connection: CdpConnection, *, url_policy: UrlPolicy | None, downloads: DownloadStore | None,
    allowed_origins: tuple[str, ...] = (),
) -> AsyncIterator[PageGuards]:
    """Start the follower (with ``downloads``), then the guard (with ``url_policy``
    and, when ``allowed_origins`` is not empty, egress containment).

    Raises BrowserdError when either cannot be set up (bounded by their own
    deadlines); on exit both are cancelled.
    """
    async with trio.open_nursery() as nursery:
        follower: DownloadFollower | None = None
        if downloads is not None:
            follower = await nursery.start(DownloadFollower(connection, downloads).run)
        navguard: NavGuard | None = None
        if url_policy is not None:
            egress = EgressScopes(EgressPolicy.parse(allowed_origins) if allowed_origins else None)
            navguard = await nursery.start(NavGuard(
                connection, url_policy,
                on_attach=follower.ensure_context if follower is not None else None,
                egress=egress, contain=Containment).run)
        try:
            yield PageGuards(navguard=navguard, downloads=follower)
        finally:
            nursery.cancel_scope.cancel()
