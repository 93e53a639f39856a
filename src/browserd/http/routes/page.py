"""Page routes: navigate and eval; the read-only inspection /snapshot, /query, /dom, /console.

The inspection routes are GET with query parameters, or POST with the same
fields as a JSON body. Snapshot, query and dom hold the tab's work slot and
refuse to run beside an open JavaScript dialog (it blocks the renderer: 409
DIALOG_OPEN); console only reads the tab's buffer, so it works even then.
"""

from __future__ import annotations

from typing import Any

import trio

from ...errors import EvalDisabled
from ...system import System
from ...tabs import page, refs
from ...tabs import query as page_query
from ..fields import TARGET, timeout_field
from ..schema import Field, Route
from ..tabwork import on_tab

__all__ = ["page_routes"]

NAVIGATE_GRACE_S = 5.0
"""Time beyond ``timeoutMs`` for waiting for the tab's slot and answering."""
SNAPSHOT_DEADLINE_S = 30.0
QUERY_DEADLINE_S = 15.0
DOM_DEADLINE_S = 20.0
CONSOLE_DEADLINE_S = 5.0
READ = ("GET", "POST")


async def navigate(system: System, args: dict[str, Any]) -> dict[str, Any]:
    url = system.url_policy.check(args["url"])
    timeout_s = args["timeoutMs"] / 1000
    return await on_tab(system, args["targetId"], lambda tab:
                        page.navigate(tab, url, wait_until=args["waitUntil"], timeout_s=timeout_s),
                        deadline_s=timeout_s + NAVIGATE_GRACE_S, allow_crashed=True)


async def evaluate(system: System, args: dict[str, Any]) -> dict[str, Any]:
    if not system.settings.evaluate_enabled:
        raise EvalDisabled("JavaScript evaluation is disabled in settings")
    timeout_s = args["timeoutMs"] / 1000
    return await on_tab(system, args["targetId"], lambda tab:
                        page.run_eval(tab, args["js"], await_promise=args["await"],
                                      timeout_s=timeout_s,
                                      max_bytes=system.settings.eval_max_bytes),
                        deadline_s=timeout_s + NAVIGATE_GRACE_S, allow_dialog=False)


async def snapshot(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return await on_tab(
        system, args["targetId"],
        lambda tab: refs.take_snapshot(tab, format=args["format"],
                                       interactive=args["interactive"],
                                       max_chars=args["maxChars"], limit=args["limit"],
                                       root=args["root"]),
        deadline_s=SNAPSHOT_DEADLINE_S, allow_dialog=False, refuse_new_dialog=True)


async def query(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return await on_tab(
        system, args["targetId"],
        lambda tab: page_query.query(tab, args["selector"], limit=args["limit"]),
        deadline_s=QUERY_DEADLINE_S, allow_dialog=False, refuse_new_dialog=True)


async def dom(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return await on_tab(
        system, args["targetId"],
        lambda tab: page_query.dom(tab, format=args["format"], selector=args["selector"],
                                   max_chars=args["maxChars"]),
        deadline_s=DOM_DEADLINE_S, allow_dialog=False, refuse_new_dialog=True)


async def console(system: System, args: dict[str, Any]) -> dict[str, Any]:
    rt = system.supervisor.require_runtime()
    with trio.fail_after(CONSOLE_DEADLINE_S):
        tab = await rt.tabs.resolve(args["targetId"])
    tab.check_usable(allow_crashed=True, allow_dialog=True)
    return page_query.console(tab, level=args["level"], clear=args["clear"])


def page_routes() -> list[Route]:
    return [
        Route(path="/navigate", methods=("POST",), handler=navigate, tag="page",
              summary="Navigate a tab and wait for it to load",
              fields=(TARGET,
                      Field(name="url", type="string", required=True, max_length=8192),
                      Field(name="waitUntil", type="string", default="load",
                            enum=("load", "domcontentloaded", "none")),
                      timeout_field(30_000))),
        Route(path="/eval", methods=("POST",), handler=evaluate, tag="page",
              summary="Evaluate JavaScript in the page; the result by value",
              fields=(TARGET,
                      Field(name="js", type="string", required=True, max_length=1_000_000),
                      Field(name="await", type="boolean", default=False),
                      timeout_field(10_000))),
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
