"""Routes for page inspection: /snapshot, /find, /query, /dom and /console.

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
from ..tabs import inspect, settle, snapshots
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
                            snapshots.take_snapshot(
                                tab, format=args["format"], interactive=args["interactive"],
                                max_chars=args["maxChars"], limit=args["limit"],
                                root=args["root"], line_chars=args["lineChars"],
                                nodes=args["nodes"], settle_ms=args["settleMs"]))


async def _settled(tab: TabActor, settle_ms: int,
                   fn: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """Settle the document (up to ``settle_ms``), run ``fn``; its answer with ``loadState``."""
    load_state = await settle.settle_document(tab, settle_ms=settle_ms)
    return {**await fn(), "loadState": load_state}


async def query(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return await _page_work(system, args["targetId"], QUERY_DEADLINE_S, lambda tab: _settled(
        tab, args["settleMs"], lambda: inspect.query(tab, args["selector"],
                                                     limit=args["limit"])))


async def dom(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return await _page_work(system, args["targetId"], DOM_DEADLINE_S, lambda tab: _settled(
        tab, args["settleMs"], lambda: inspect.dom(tab, format=args["format"],
                                                   selector=args["selector"],
                                                   max_chars=args["maxChars"])))


async def find(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return await _page_work(system, args["targetId"], QUERY_DEADLINE_S, lambda tab:
                            snapshots.find(tab, role=args["role"], name=args["name"],
                                           text=args["text"], exact=args["exact"],
                                           limit=args["limit"], root=args["root"],
                                           line_chars=args["lineChars"],
                                           settle_ms=args["settleMs"]))


SETTLE = Field(name="settleMs", type="integer", default=settle.DEFAULT_SETTLE_MS, minimum=0,
               maximum=60_000, description="wait up to this long for a loading document to "
               "reach domcontentloaded (0: do not wait); loadState says where it got to")
LINE_CHARS = Field(name="lineChars", type="integer", minimum=0, maximum=1_000_000,
                   description="longest name or text line shown (default 300; 0: whole)")
ROOT = Field(name="root", type="string", max_length=4000,
             description="scope to a ref (e12) or a CSS selector")


async def console(system: System, args: dict[str, Any]) -> dict[str, Any]:
    rt = system.supervisor.require_runtime()
    with trio.fail_after(CONSOLE_DEADLINE_S):
        tab = await rt.tabs.resolve(args["targetId"])
    tab.check_usable(allow_crashed=True, allow_dialog=True)
    return inspect.console(tab, level=args["level"], clear=args["clear"])


def inspect_routes() -> list[Route]:
    return [
        Route(path="/snapshot", methods=READ, handler=snapshot, tag="page",
              summary="The page as compact accessibility text with refs (or read view / DOM walk)",
              fields=(TARGET,
                      Field(name="format", type="string", default="aria",
                            enum=snapshots.FORMATS),
                      Field(name="limit", type="integer", minimum=1, maximum=200_000,
                            description="at most this many nodes with refs"),
                      Field(name="maxChars", type="integer", minimum=0, maximum=20_000_000,
                            description="cap the text (aria: 20000, read: 8000 by default; "
                            "0: no limit; cut at a line; truncated: true)"),
                      Field(name="interactive", type="boolean", default=False,
                            description="only what can be acted on"),
                      ROOT, LINE_CHARS,
                      Field(name="nodes", type="boolean", default=False,
                            description="also answer the refs as JSON nodes"),
                      SETTLE)),
        Route(path="/find", methods=READ, handler=find, tag="page",
              summary="Elements matching a role, accessible name or visible text, with refs",
              fields=(TARGET,
                      Field(name="role", type="string", max_length=100,
                            description="the role, e.g. link, button, heading"),
                      Field(name="name", type="string", max_length=2000,
                            description="part of the accessible name (case-insensitive)"),
                      Field(name="text", type="string", max_length=2000,
                            description="part of the name or of the element's own text"),
                      Field(name="exact", type="boolean", default=False,
                            description="match the whole name / text, not a part"),
                      Field(name="limit", type="integer", default=20, minimum=1, maximum=1000),
                      ROOT, LINE_CHARS, SETTLE)),
        Route(path="/query", methods=READ, handler=query, tag="page",
              summary="Elements matching a CSS selector",
              fields=(TARGET,
                      Field(name="selector", type="string", required=True, max_length=4000),
                      Field(name="limit", type="integer", default=20, minimum=1,
                            maximum=inspect.QUERY_LIMIT_MAX),
                      SETTLE)),
        Route(path="/dom", methods=READ, handler=dom, tag="page",
              summary="The document's (or an element's) HTML or text",
              fields=(TARGET,
                      Field(name="format", type="string", default="html",
                            enum=("html", "text")),
                      Field(name="selector", type="string", max_length=4000),
                      Field(name="maxChars", type="integer", default=200_000, minimum=1,
                            maximum=20_000_000),
                      SETTLE)),
        Route(path="/console", methods=READ, handler=console, tag="page",
              summary="Recent console messages of the tab",
              fields=(TARGET,
                      Field(name="level", type="string",
                            enum=("debug", "log", "info", "warn", "error"),
                            description="this severity or above"),
                      Field(name="clear", type="boolean", default=False,
                            description="empty the buffer after reading"))),
    ]
