"""The consent scope's routes (live profiles): the user offers a tab, the agent releases it.

``GET /tabs/offerable`` and ``POST /tabs/offer`` are the *owner's*: the
Guard lets only the owner token through (the agent's is 403 OWNER_ONLY), and
they are never agent operations (no MCP tool, no ``/ws`` method; the CLI's
``browserd offer`` reads the owner token itself). ``POST /tabs/release`` is
the agent's: control ends, the page stays open for its user (an extension
profile's tab is unshared through the extension: its badge clears).
Titles and URLs of the user's pages are untrusted page data, answered as is.
"""

from __future__ import annotations

from typing import Any

import trio

from ...errors import NotAgentTab
from ...profiles.spec import Driver
from ...system import System
from ..fields import REQUIRED_TARGET
from ..schema import Field, Route

__all__ = ["consent_routes"]

#: Bound on attaching to an offered page.
OFFER_DEADLINE_S = 15.0


async def list_offerable(system: System, args: dict[str, Any]) -> dict[str, Any]:
    rt = system.supervisor.require_runtime()
    return {"pages": rt.tabs.registry.offerable()}


async def offer_tab(system: System, args: dict[str, Any]) -> dict[str, Any]:
    rt = system.supervisor.require_runtime()
    with trio.fail_after(OFFER_DEADLINE_S):
        tab = await rt.tabs.registry.offer(args["targetId"])
    return tab.info(active=tab.target_id == rt.tabs.active_id()).to_json()


async def release_tab(system: System, args: dict[str, Any]) -> dict[str, Any]:
    rt = system.supervisor.require_runtime()
    tab = rt.tabs.get(args["targetId"])
    system.handoffs.check_input(tab.target_id)
    transport = system.profiles.relay.transport(system.profile.name)
    if system.profile.spec.driver == Driver.EXTENSION and transport is not None:
        # The extension unshares the tab (its badge clears); browserd sees it go.
        with trio.fail_after(OFFER_DEADLINE_S):
            if not await transport.release(tab.target_id):
                raise NotAgentTab(f"tab {tab.target_id} was opened by the agent: close it",
                                  hint="POST /tabs/close closes a tab the agent opened")
    else:
        rt.tabs.registry.release(tab)
    return {"ok": True, "released": tab.target_id}


def consent_routes() -> list[Route]:
    return [
        Route(path="/tabs/offerable", methods=("GET",), handler=list_offerable, tag="owner",
              scope="profile",
              summary="The user's pages that can be offered (owner token; live profiles)"),
        Route(path="/tabs/offer", methods=("POST",), handler=offer_tab, tag="owner",
              scope="profile",
              fields=(Field(name="targetId", type="string", required=True, max_length=128),),
              summary="Offer one of the user's pages to the agent (owner token)"),
        Route(path="/tabs/release", methods=("POST",), handler=release_tab, tag="tabs",
              scope="profile", fields=(REQUIRED_TARGET,),
              summary="End control of a tab without closing it (live profiles)"),
    ]
