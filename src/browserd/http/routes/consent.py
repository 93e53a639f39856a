"""The consent scope's routes (live profiles): the user offers a tab, the agent releases it.

``GET /tabs/offerable`` and ``POST /tabs/offer`` are the *owner's*: the
Guard lets only the owner token through (the agent's is 403 OWNER_ONLY), and
they are never agent operations (no MCP tool, no ``/ws`` method; the CLI's
``browserd offer`` reads the owner token itself). ``POST /tabs/release`` is
the agent's: control ends, the page stays open for its user (an extension
profile's tab is unshared through the extension: its badge clears).
Titles and URLs of the user's pages are untrusted page data, answered as is.

Tab requests (:mod:`browserd.tabrequests`): ``POST /tabs/request {reason,
url?}`` is the agent's (``act``; 202-like ``{requestId, state: pending}``),
``DELETE /tabs/requests/<id>`` cancels its own; ``GET /tabs/requests`` and
``POST /tabs/requests/<id> {approve: targetId} | {deny: true}`` are the
person's. An approval offers the page (live profiles; on an extension
profile the person shares it with the extension first) and grants it to the
requesting token alone. Events ``tab.requested`` and ``tab.requestEnded``.
"""

from __future__ import annotations

from typing import Any

import trio

from ...errors import BadRequest, NotAgentTab
from ...events import EventType
from ...profilespec import Driver
from ...system import System
from ...tabrequests import TabRequest, TabRequestState
from ..answers import returns
from ..facts import (
    ACTS,
    ADDS,
    HANDOFF,
    LOCAL_ACTS,
    LOCAL_READS,
    NO_TOOL,
    NOT_HELD,
    NOTHING,
    READS,
    Cli,
    Render,
    by_hand,
)
from ..fields import REQUIRED_TARGET
from ..schema import Field, Route
from ..tabwork import check_tab

__all__ = ["consent_routes", "settle_tab_request"]

#: Bound on attaching to an offered page.
OFFER_DEADLINE_S = 15.0


async def list_offerable(system: System, args: dict[str, Any]) -> dict[str, Any]:
    rt = system.require_runtime()
    return {"pages": rt.tabs.offerable()}


async def offer_tab(system: System, args: dict[str, Any]) -> dict[str, Any]:
    rt = system.require_runtime()
    with trio.fail_after(OFFER_DEADLINE_S):
        tab = await rt.tabs.offer(args["targetId"])
    return tab.info(active=tab.target_id == rt.tabs.active_id()).to_json()


async def release_tab(system: System, args: dict[str, Any]) -> dict[str, Any]:
    rt = system.require_runtime()
    tab = rt.tabs.get(args["targetId"])
    check_tab(system, tab)
    transport = system.profiles.relay.transport(system.profile.name)
    if system.profile.spec.driver == Driver.EXTENSION and transport is not None:
        # The extension unshares the tab (its badge clears); browserd sees it go.
        with trio.fail_after(OFFER_DEADLINE_S):
            if not await transport.release(tab.target_id):
                raise NotAgentTab(f"tab {tab.target_id} was opened by the agent: close it",
                                  hint="POST /tabs/close closes a tab the agent opened")
    else:
        rt.tabs.release(tab)
    system.tab_requests.forget_tab(system.profile.name, tab.target_id)  # the grant ends too
    return {"ok": True, "released": tab.target_id}


def _ended(system: System, request: TabRequest) -> dict[str, object]:
    system.events.publish(EventType.TAB_REQUEST_ENDED, profile=request.profile,
                          target_id=request.target_id, requestId=request.request_id,
                          state=request.state.value, token=request.token)
    return request.to_json()


async def request_tab(system: System, args: dict[str, Any]) -> dict[str, Any]:
    if system.profile.spec.driver not in (Driver.LIVE, Driver.EXTENSION):
        raise BadRequest(f"profile {system.profile.name!r} is browserd's own browser: open a "
                         "tab with POST /tabs/open", field="profile",
                         hint="tab requests are for live and extension profiles (the "
                              "person's own browser)")
    request = system.tab_requests.ask(profile=system.profile.name, token=system.principal.name,
                                      reason=args["reason"], url=args["url"])
    system.events.publish(EventType.TAB_REQUESTED, profile=request.profile,
                          requestId=request.request_id, reason=request.reason, url=request.url,
                          token=request.token)
    return {"requestId": request.request_id, "state": request.state.value,
            "hint": "the person answers on the ops page or with `browserd offer --requests`; "
                    "POST /wait {tabRequest} waits for it"}


async def cancel_tab_request(system: System, args: dict[str, Any]) -> dict[str, Any]:
    board = system.tab_requests
    board.get(args["requestId"], token=system.principal.name)  # only its own
    return _ended(system, board.end(args["requestId"], TabRequestState.CANCELLED))


async def list_tab_requests(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return {"requests": [r.to_json() for r in system.tab_requests.listing(
        pending_only=args["pending"])]}


async def answer_tab_request(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return await settle_tab_request(system, args["requestId"], approve=args["approve"],
                                    deny=args["deny"])


async def settle_tab_request(system: System, request_id: str, *, approve: str | None,
                             deny: bool) -> dict[str, Any]:
    """The person's answer (this route's and the ops page's): the ended request."""
    board = system.tab_requests
    request = board.get(request_id)
    if (approve is None) == (not deny):
        raise BadRequest("give approve (a targetId) or deny: true", field="approve")
    if approve is None:  # (so deny)
        return _ended(system, board.end(request.request_id, TabRequestState.DENIED))
    bound = system.bind(request.profile, None)
    rt = bound.require_runtime()
    target_id = approve
    if target_id not in rt.tabs.target_ids():
        with trio.fail_after(OFFER_DEADLINE_S):
            tab = await rt.tabs.offer(target_id)
        target_id = tab.target_id
    return _ended(system, board.end(request.request_id, TabRequestState.APPROVED,
                                    target_id=target_id))


def consent_routes() -> list[Route]:
    request_id = Field(name="requestId", type="string", required=True, max_length=64)
    return [
        Route(path="/tabs/offerable", methods=("GET",), handler=list_offerable, tag="owner",
              scope="profile",
              summary="The user's pages that can be offered (owner token; live profiles)",
              name="tabs_offerable", group=NO_TOOL, hints=READS, needs="owner",
              untrusted=("pages",),
              answer=returns("OfferablePages"), blocked_by=NOTHING, cli=by_hand("offer")),
        Route(path="/tabs/offer", methods=("POST",), handler=offer_tab, tag="owner",
              scope="profile",
              fields=(Field(name="targetId", type="string", required=True, max_length=128),),
              summary="Offer one of the user's pages to the agent (owner token)",
              name="tabs_offer", group=NO_TOOL, hints=ADDS, needs="owner",
              untrusted=("title", "url"),
              answer=returns("Tab"), blocked_by=NOTHING, cli=by_hand("offer")),
        Route(path="/tabs/release", methods=("POST",), handler=release_tab, tag="tabs",
              scope="profile", fields=(REQUIRED_TARGET,),
              summary="End control of a tab without closing it (live profiles)",
              name="tabs_release", group="page", hints=ACTS, needs="act",
              confirm=NOT_HELD, untrusted=(), render=Render.FIELDS,
              answer=returns("TabReleased"), blocked_by=HANDOFF,
              cli=Cli(command="release", positional=("targetId",))),
        Route(path="/tabs/request", methods=("POST",), handler=request_tab, tag="tabs",
              scope="profile",
              fields=(Field(name="reason", type="string", required=True, max_length=500,
                            description="what the agent wants the tab for (shown to the "
                                        "person)"),
                      Field(name="url", type="string", max_length=8192,
                            description="the page the agent hopes for (a hint)")),
              summary="Ask the person for one of their tabs (live and extension profiles); "
                      "wait with POST /wait {tabRequest}",
              name="tabs_request", group="page", hints=ADDS, needs="act",
              confirm=NOT_HELD, untrusted=(), render=Render.FIELDS,
              answer=returns("TabRequestAsked"), blocked_by=NOTHING, cli=Cli(),
              tool_text="Ask the person for one of their tabs (live and extension profiles); "
                        "wait for the answer with the wait tool's tabRequest"),
        Route(path="/tabs/requests/<requestId>", methods=("DELETE",), handler=cancel_tab_request,
              tag="tabs", scope="none", path_params=("requestId",), fields=(request_id,),
              summary="Cancel your own pending tab request",
              name="tabs_requests_cancel", group=NO_TOOL, hints=LOCAL_ACTS, needs="act",
              answer=returns("TabRequest"), blocked_by=NOTHING,
              cli=Cli(command="tabs-requests")),
        Route(path="/tabs/requests", methods=("GET",), handler=list_tab_requests, tag="owner",
              scope="none", fields=(Field(name="pending", type="boolean", default=False),),
              summary="Agents' tab requests (owner token)",
              name="tabs_requests", group=NO_TOOL, hints=LOCAL_READS, needs="owner",
              answer=returns("TabRequestList"), blocked_by=NOTHING, cli=by_hand("offer")),
        Route(path="/tabs/requests/<requestId>", methods=("POST",), handler=answer_tab_request,
              tag="owner", scope="none", path_params=("requestId",),
              fields=(request_id,
                      Field(name="approve", type="string", max_length=128,
                            description="the targetId of the page to give (one of yours)"),
                      Field(name="deny", type="boolean", default=False)),
              summary="Approve (with one of your pages) or deny a tab request (owner token)",
              name="tabs_requests_answer", group=NO_TOOL, hints=LOCAL_ACTS, needs="owner",
              answer=returns("TabRequest"), blocked_by=NOTHING, cli=by_hand("offer")),
    ]
