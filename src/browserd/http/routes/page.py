"""Page routes: navigate and eval; inspection: /snapshot, /find, /query, /dom, /console.

The inspection routes are GET with query parameters, or POST with the same
fields as a JSON body. Snapshot, find, query and dom hold the tab's work
slot and refuse to run beside an open JavaScript dialog (it blocks the
renderer: 409 DIALOG_OPEN); they first let a loading document settle (up to
``settleMs``) and say in ``loadState`` where it got to. Console only reads
the tab's buffer, so it works even then.
"""

from __future__ import annotations

from typing import Any

import trio

from ...errors import EvalDisabled
from ...system import System
from ...tabs import page, settle, snapshots
from ...tabs import query as page_query
from ...tabs.actions.kinds import ACTION_SPECS
from ...tabs.actions.kinds.reads import LINE_CHARS, ROOT, SETTLE, find_elements
from ..answers import returns
from ..facts import ACTS, DIALOG, HANDOFF, NOTHING, READS, SETS, Cli, HeldAs, Render, Words
from ..fields import TARGET, timeout_field
from ..schema import Field, Route
from ..tabwork import on_tab
from .input import ServiceContext

__all__ = ["page_routes"]

NAVIGATE = ACTION_SPECS["navigate"]
FIND = ACTION_SPECS["find"]
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
                        deadline_s=timeout_s + NAVIGATE_GRACE_S)


async def snapshot(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return await on_tab(
        system, args["targetId"],
        lambda tab: snapshots.take_snapshot(
            tab, format=args["format"], interactive=args["interactive"],
            max_chars=args["maxChars"], limit=args["limit"], root=args["root"],
            line_chars=args["lineChars"], nodes=args["nodes"], settle_ms=args["settleMs"],
            since=args["since"]),
        deadline_s=SNAPSHOT_DEADLINE_S, refuse_new_dialog=True)


async def find(system: System, args: dict[str, Any]) -> dict[str, Any]:
    action = FIND.build(args, ServiceContext(system))  # (the find kind's, as in /act)
    return await on_tab(system, args["targetId"], lambda tab: find_elements(tab, action),
                        deadline_s=QUERY_DEADLINE_S, refuse_new_dialog=True)


async def query(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return await on_tab(
        system, args["targetId"],
        lambda tab: settle.after_settling(tab, args["settleMs"], lambda: page_query.query(
            tab, args["selector"], limit=args["limit"])),
        deadline_s=QUERY_DEADLINE_S, refuse_new_dialog=True)


async def dom(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return await on_tab(
        system, args["targetId"],
        lambda tab: settle.after_settling(tab, args["settleMs"], lambda: page_query.dom(
            tab, format=args["format"], selector=args["selector"], max_chars=args["maxChars"])),
        deadline_s=DOM_DEADLINE_S, refuse_new_dialog=True)


async def console(system: System, args: dict[str, Any]) -> dict[str, Any]:
    rt = system.require_runtime()
    with trio.fail_after(CONSOLE_DEADLINE_S):
        tab = await rt.tabs.resolve(args["targetId"])
    tab.check_usable(allow_crashed=True, allow_dialog=True)
    return page_query.console(tab, level=args["level"], clear=args["clear"])


def page_routes() -> list[Route]:
    return [
        Route(path="/navigate", methods=("POST",), handler=navigate, tag="page",
              summary="Navigate a tab and wait for it to load",
              fields=(TARGET, *NAVIGATE.fields),  # (the navigate kind's, as in /act)
              name="navigate", group="core", hints=SETS, needs="act",
              confirm=HeldAs(kind="navigate"), untrusted=("title", "url", "effects"),
              render=Render.ACTION,
              answer=returns("NavigateAnswer"), blocked_by=HANDOFF,
              cli=Cli(positional=("url",))),
        Route(path="/eval", methods=("POST",), handler=evaluate, tag="page",
              summary="Evaluate JavaScript in the page; the result by value",
              fields=(TARGET,
                      Field(name="js", type="string", required=True, max_length=1_000_000,
                            description="a JavaScript expression, evaluated in the page"),
                      Field(name="await", type="boolean", default=False,
                            description="if the value is a promise, wait for it and answer "
                                        "what it resolves to"),
                      timeout_field(10_000)),
              name="eval", group="core", hints=ACTS, needs="eval",
              confirm=HeldAs(kind="eval"), untrusted=("url", "result"), render=Render.VALUE,
              answer=returns("EvalAnswer"), blocked_by=DIALOG | HANDOFF,
              cli=Cli(positional=("js",))),
        Route(path="/snapshot", methods=READ, handler=snapshot, tag="page",
              summary="The page as compact accessibility text with refs (or read view / DOM walk)",
              fields=(TARGET,
                      Field(name="format", type="string", default="aria",
                            enum=snapshots.FORMATS,
                            description="aria: elements with refs (default); read: the main "
                                        "text; domSnapshot: layout boxes as JSON"),
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
                      Field(name="since", type="string", max_length=32,
                            description="a snapshotId of this tab: answer only what changed "
                                        "(added, removed, changed lines) when that is smaller"),
                      SETTLE),
              name="snapshot", group="core", hints=READS, needs="read",
              untrusted=("title", "url", "text", "diff", "nodes"), render=Render.SNAPSHOT,
              answer=returns("SnapshotAnswer"), blocked_by=DIALOG, cli=Cli(),
              tool_text="Read the page as compact text: one element per line with a ref like "
                        "[e12] to act on (click, type, select, upload …); format read: the "
                        "article text"),
        Route(path="/find", methods=READ, handler=find, tag="page",
              summary=FIND.summary, extra_needs=FIND.extra_needs,
              fields=(TARGET, *FIND.fields),  # (the find kind's, as in /act)
              name="find", group="core", hints=READS, needs="read",
              untrusted=("url", "matches"), render=Render.MATCHES,
              answer=returns("FindAnswer"), blocked_by=DIALOG,
              cli=Cli(words=Words(
                  metavar="ROLE NAME", placer="find",
                  help="a known ARIA role, then a name; or one word of text (part of a name "
                       "or of an element's own text)")),
              tool_text="Find elements by role, accessible name or visible text; answers "
                        "their refs"),
        Route(path="/query", methods=READ, handler=query, tag="page",
              summary="Elements matching a CSS selector",
              fields=(TARGET,
                      Field(name="selector", type="string", required=True, max_length=4000,
                            description="a CSS selector"),
                      Field(name="limit", type="integer", default=20, minimum=1,
                            maximum=page_query.QUERY_LIMIT_MAX,
                            description="at most this many elements"),
                      SETTLE),
              name="query", group="page", hints=READS, needs="read",
              untrusted=("matches", "elements"), render=Render.PAGE,
              answer=returns("QueryAnswer"), blocked_by=DIALOG,
              cli=Cli(positional=("selector",))),
        Route(path="/dom", methods=READ, handler=dom, tag="page",
              summary="The document's (or an element's) HTML or text",
              fields=(TARGET,
                      Field(name="format", type="string", default="html",
                            enum=("html", "text"),
                            description="html: the markup; text: the visible text"),
                      Field(name="selector", type="string", max_length=4000,
                            description="a CSS selector (default: the whole document)"),
                      Field(name="maxChars", type="integer", default=200_000, minimum=1,
                            maximum=20_000_000,
                            description="cut the answer at this many characters"),
                      SETTLE),
              name="dom", group="page", hints=READS, needs="read",
              untrusted=("text", "html"), render=Render.TEXT,
              answer=returns("DomAnswer"), blocked_by=DIALOG, cli=Cli()),
        Route(path="/console", methods=READ, handler=console, tag="page",
              summary="Recent console messages of the tab",
              fields=(TARGET,
                      Field(name="level", type="string",
                            enum=("debug", "log", "info", "warn", "error"),
                            description="this severity or above"),
                      Field(name="clear", type="boolean", default=False,
                            description="empty the buffer after reading")),
              name="console", group="core", hints=READS, needs="read",
              untrusted=("messages",), render=Render.PAGE,
              answer=returns("ConsoleAnswer"), blocked_by=NOTHING, cli=Cli()),
    ]
