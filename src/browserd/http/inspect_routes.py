"""Routes for page inspection: /snapshot, /query, /dom and /console.

All are read-only: GET with query parameters, or POST with the same fields
as a JSON body. Snapshot, query and dom hold the tab's work slot and refuse
to run beside an open JavaScript dialog (it blocks the renderer: 409
DIALOG_OPEN); console only reads the tab's buffer, so it works even then.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import trio

from ..errors import DialogOpen
from ..system import System
from ..tabs import query as page_query
from ..tabs import refs
from ..tabs.actor import TabActor
from .page_routes import TARGET
from .schema import Field, Route

T = TypeVar("T")

SNAPSHOT_DEADLINE_S = 30.0
QUERY_DEADLINE_S = 15.0
DOM_DEADLINE_S = 20.0
CONSOLE_DEADLINE_S = 5.0
READ = ("GET", "POST")


async def _page_work(system: System, target_id: str | None, deadline_s: float,
                     fn: Callable[[TabActor], Awaitable[T]]) -> T:
    """Run ``fn`` on the tab under a deadline, refusing beside a JS dialog.

    Raises DialogOpen if a dialog is open or opens meanwhile (the work is
    abandoned), trio.TooSlowError past the deadline (504 at the façade).
    """
    rt = system.supervisor.require_runtime()
    with trio.fail_after(deadline_s):
        tab = await rt.tabs.resolve(target_id)
        async with tab.work(allow_dialog=False):
            result, dialog = await tab.race_dialog(lambda: fn(tab))
            if dialog is not None:
                raise DialogOpen(f"a {dialog.type} dialog is open: {dialog.message[:200]}",
                                 dialog=dialog.to_json())
            assert result is not None
            return result


async def snapshot(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return await _page_work(system, args["targetId"], SNAPSHOT_DEADLINE_S, lambda tab:
                            refs.take_snapshot(tab, format=args["format"],
                                               interactive=args["interactive"],
                                               max_chars=args["maxChars"], limit=args["limit"],
                                               root=args["root"]))


async def query(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return await _page_work(system, args["targetId"], QUERY_DEADLINE_S, lambda tab:
                            page_query.query(tab, args["selector"], limit=args["limit"]))


async def dom(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return await _page_work(system, args["targetId"], DOM_DEADLINE_S, lambda tab:
                            page_query.dom(tab, format=args["format"], selector=args["selector"],
                                        max_chars=args["maxChars"]))


async def console(system: System, args: dict[str, Any]) -> dict[str, Any]:
    rt = system.supervisor.require_runtime()
    with trio.fail_after(CONSOLE_DEADLINE_S):
        tab = await rt.tabs.resolve(args["targetId"])
    tab.check_usable(allow_crashed=True, allow_dialog=True)
    return page_query.console(tab, level=args["level"], clear=args["clear"])


def inspect_routes() -> list[Route]:
    return [
        Route(path="/snapshot", methods=READ, handler=snapshot, tag="page",
              summary="The page as compact accessibility text with refs (or read view / DOM walk)",
              fields=(TARGET,
                      Field(name="format", type="string", default="aria",
                            enum=("aria", "read", "domSnapshot")),
                      Field(name="limit", type="integer", minimum=1, maximum=200_000,
                            description="at most this many nodes with refs"),
                      Field(name="maxChars", type="integer", minimum=1, maximum=20_000_000,
                            description="cap the text (cut at a line; truncated: true)"),
                      Field(name="interactive", type="boolean", default=False,
                            description="only what can be acted on"),
                      Field(name="root", type="string", max_length=4000,
                            description="scope to a ref (e12) or a CSS selector"))),
        Route(path="/query", methods=READ, handler=query, tag="page",
              summary="Elements matching a CSS selector",
              fields=(TARGET,
                      Field(name="selector", type="string", required=True, max_length=4000),
                      Field(name="limit", type="integer", default=20, minimum=1,
                            maximum=page_query.QUERY_LIMIT_MAX))),
        Route(path="/dom", methods=READ, handler=dom, tag="page",
              summary="The document's (or an element's) HTML or text",
              fields=(TARGET,
                      Field(name="format", type="string", default="html",
                            enum=("html", "text")),
                      Field(name="selector", type="string", max_length=4000),
                      Field(name="maxChars", type="integer", default=200_000, minimum=1,
                            maximum=20_000_000))),
        Route(path="/console", methods=READ, handler=console, tag="page",
              summary="Recent console messages of the tab",
              fields=(TARGET,
                      Field(name="level", type="string",
                            enum=("debug", "log", "info", "warn", "error"),
                            description="this severity or above"),
                      Field(name="clear", type="boolean", default=False,
                            description="empty the buffer after reading"))),
    ]
