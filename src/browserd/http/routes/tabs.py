"""Tab routes: list, open, focus and close tabs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import trio

from ...errors import Unavailable
from ...system import System
from ...tabs import page
from ...tabs.actor import TabActor
from ...tabs.scope import TabScope
from ..answers import returns
from ..facts import (
    ACTS,
    ADDS,
    HANDOFF,
    NO_TOOL,
    NOT_HELD,
    NOTHING,
    READS,
    SETS,
    Cli,
    HeldAs,
    Render,
    by_hand,
)
from ..fields import REQUIRED_TARGET
from ..schema import Field, Route
from ..tabwork import check_tab

__all__ = ["tab_routes"]


async def list_tabs(system: System, args: dict[str, Any]) -> dict[str, Any]:
    try:
        rt = system.require_runtime()
    except Unavailable:  # no browser (an unknown session is still a 404)
        system.handoffs.prune(())  # no browser, no tab: their handoffs are over
        return {"running": False, "tabs": []}
    await rt.tabs.wait_pending()
    with trio.move_on_after(2):
        await rt.tabs.refresh_infos()
    infos = rt.tabs.infos()
    system.handoffs.prune([t.target_id for t in infos])
    return {"running": True, "tabs": [_with_handoff(system, t.to_json()) for t in infos]}


def _with_handoff(system: System, tab: dict[str, Any]) -> dict[str, Any]:
    """The tab's JSON plus ``handoff: {reason, since}`` while a person has it."""
    handoff = system.handoffs.active(tab["targetId"])
    return tab if handoff is None else {**tab, "handoff": handoff.to_json()}


async def open_tab(system: System, args: dict[str, Any]) -> dict[str, Any]:
    url = system.url_policy.check(args["url"])
    rt = system.require_runtime()
    with trio.fail_after(30):
        if args["newTab"]:
            tab = await rt.tabs.open("about:blank")
        else:
            tab = await rt.tabs.resolve(None)
            check_tab(system, tab)  # the current tab is navigated: not while handed over
        if url != "about:blank":
            async with tab.work():
                await page.navigate(tab, url, wait_until="load", timeout_s=25)
        if args["newTab"]:
            rt.tabs.note_focused(tab)  # a foreground createTarget is already in front
        else:
            await rt.tabs.focus(tab)
    active = rt.tabs.active_id()
    return tab.info(active=tab.target_id == active).to_json()


async def _registry_command(system: System, args: dict[str, Any],
                  command: Callable[[TabScope, TabActor], Awaitable[None]]) -> dict[str, Any]:
    """Run a registry ``command`` on the tab ``args["targetId"]`` within 10 s."""
    rt = system.require_runtime()
    tab = rt.tabs.get(args["targetId"])
    with trio.fail_after(10):
        await command(rt.tabs, tab)
    return {"ok": True, "targetId": tab.target_id}


async def focus_tab(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return await _registry_command(system, args, TabScope.focus)


async def close_tab(system: System, args: dict[str, Any]) -> dict[str, Any]:
    rt = system.require_runtime()
    check_tab(system, rt.tabs.get(args["targetId"]))
    return await _registry_command(system, args, TabScope.close)


def tab_routes() -> list[Route]:
    return [
        Route(path="/tabs", methods=("GET",), handler=list_tabs, tag="tabs",
              summary="List tabs", name="tabs", group="core", hints=READS, needs="read",
              untrusted=("tabs",), render=Render.TABS,
              answer=returns("TabList"), blocked_by=NOTHING, cli=Cli()),
        Route(path="/tabs/open", methods=("POST",), handler=open_tab, tag="tabs",
              fields=(Field(name="url", type="string", required=True, max_length=8192,
                            description="the URL to open (http, https, or another scheme the "
                                        "URL policy allows)"),
                      Field(name="newTab", type="boolean", default=True,
                            description="false: open it in the current tab instead of a "
                                        "new one")),
              summary="Open a URL in a new tab (or the current one with newTab: false)",
              name="tabs_open", group="core", hints=ADDS, needs="act", answer=returns("Tab"),
              confirm=HeldAs(kind="navigate"), untrusted=("title", "url"), render=Render.OPENED,
              blocked_by=HANDOFF, cli=Cli(command="open", positional=("url",))),
        Route(path="/tabs/focus", methods=("POST",), handler=focus_tab, tag="tabs",
              fields=(REQUIRED_TARGET,), summary="Bring a tab to the front",
              name="tabs_focus", group="page", hints=SETS, needs="act",
              confirm=NOT_HELD, untrusted=(), render=Render.FIELDS,
              answer=returns("TabDone"), blocked_by=NOTHING,
              cli=Cli(command="focus", positional=("targetId",))),
        Route(path="/tabs/close", methods=("POST",), handler=close_tab, tag="tabs",
              fields=(REQUIRED_TARGET,), summary="Close a tab",
              name="tabs_close", group="core", hints=ACTS, needs="act",
              confirm=NOT_HELD, untrusted=(), render=Render.FIELDS,
              answer=returns("TabDone"), blocked_by=HANDOFF,
              cli=Cli(command="close", positional=("targetId",))),
        Route(path="/tabs/<targetId>", methods=("DELETE",), handler=close_tab, tag="tabs",
              path_params=("targetId",), fields=(REQUIRED_TARGET,), summary="Close a tab",
              name="tabs_delete", group=NO_TOOL, hints=ACTS, needs="act",
              confirm=NOT_HELD, untrusted=(),
              answer=returns("TabDone"), blocked_by=HANDOFF, cli=by_hand("close")),
    ]
