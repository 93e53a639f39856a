"""One attempt's runtime, built the same way for every driver.

:func:`open_runtime` is the first half of an attempt's body: over a CDP
connection (a launched browser's pipe, an attached browser's websocket, the
extension relay), ask ``Browser.getVersion``, start the page guards and the
tab registry, and yield the :class:`~.runtime.BrowserRuntime` they make. The
second half, serving it (the liveness probe, restoring tabs after a crash,
state ``running``, waiting for its end), is
:meth:`BrowserSupervisor.serve_runtime <browserd.supervisor.BrowserSupervisor.serve_runtime>`.
The browser supervisor (:mod:`.supervisor`) and the extension relay's
subtree (:mod:`browserd.relay.subtree`) both run their attempts through the two.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING

import trio

from ..browser.process import BrowserProcess
from ..cdp import CdpConnection
from ..config import Settings
from ..events import EventSink
from ..tabs.capture_gate import CaptureGate
from ..tabs.commits import CommitLog
from ..tabs.registry import open_tab_registry
from ..tabs.restored import RestoreLedger
from .guards import open_page_guards
from .runtime import BrowserRuntime

if TYPE_CHECKING:
    from ..downloads import DownloadStore
    from ..urlpolicy import UrlPolicy

__all__ = ["VERSION_DEADLINE_S", "open_runtime"]

#: How long ``Browser.getVersion`` may take on a new connection.
VERSION_DEADLINE_S = 10.0


@asynccontextmanager
async def open_runtime(
    opened: AbstractAsyncContextManager[CdpConnection], *, settings: Settings,
    events: EventSink | None, process: BrowserProcess | None = None, headless: bool = False,
    url_policy: UrlPolicy | None = None, downloads: DownloadStore | None = None,
    consent: bool = False, commits: bool = False, restored: RestoreLedger | None = None,
) -> AsyncIterator[BrowserRuntime]:
    """Open ``opened``, then the page guards and the tab registry; yield the runtime.

    ``url_policy`` and ``downloads`` are the page guards (None: that guard is
    not started: the user's own browser, the extension relay). ``consent``:
    only offered pages are tabs (the user's own browser). ``commits`` taps
    the connection's navigation commits before any page attaches (for the
    restore after a crash); ``restored`` is the supervisor's restore ledger.

    Raises the connection's errors (BrowserdError), ``trio.TooSlowError``
    when ``Browser.getVersion`` takes more than :data:`VERSION_DEADLINE_S`
    (the supervisor's attempt turns any error into its answer), and the
    guards' and the registry's set-up errors. On exit (or cancellation) all
    of it is torn down together: registry, guards, connection.
    """
    async with opened as conn:
        log = CommitLog.tapping(conn) if commits else None  # before any page attaches
        with trio.fail_after(VERSION_DEADLINE_S):
            version = await conn.send("Browser.getVersion")
        async with open_page_guards(
            conn, url_policy=url_policy, downloads=downloads,
            allowed_origins=settings.allowed_origins,
        ) as guards, open_tab_registry(
            conn, settings=settings, headless=headless, navguard=guards.navguard,
            events=events, consent=consent,
        ) as tabs:
            if guards.downloads is not None:
                guards.downloads.locate_tabs_with(tabs.locate_frame, session_of=tabs.session_of)
            yield BrowserRuntime(
                connection=conn,
                registry=tabs,
                process=process,
                version=str(version.get("product", "")),
                user_agent=str(version.get("userAgent", "")),
                started_at=time.time(),
                captures=CaptureGate.with_capacity(settings.max_concurrent_captures),
                navguard=guards.navguard,
                downloads=guards.downloads,
                commits=log, restored=restored,
            )
