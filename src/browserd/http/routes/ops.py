"""Ops routes: /handoff, /metrics (agents) and /ui-codes (the ops page's login: the person's).

- ``POST /handoff {targetId?, reason}`` hands a tab to a person (see
  :mod:`browserd.handoff`); ``DELETE /handoff {targetId?}`` withdraws it.
- ``GET /metrics``: Prometheus text format (:mod:`browserd.metrics`).
- ``POST /ui-codes``: a one-time login code for the ops page and its URL
  (``browserd ui`` prints or opens it, with the owner token). Only the person
  mints it: an agent's token is 403 OWNER_ONLY, and it is no ``/ws`` method
  or MCP tool.
"""

from __future__ import annotations

import time
from typing import Any

import trio
from quart import Response

from ...downloads import DownloadState
from ...handoff import HandoffOutcome
from ...metrics import CONTENT_TYPE, ServiceGauges
from ...supervisor.state import SupervisorState
from ...system import System
from ..answers import returns
from ..facts import (
    ADDS,
    LOCAL_ADDS,
    LOCAL_READS,
    LOCAL_SETS,
    NO_TOOL,
    NOT_HELD,
    NOTHING,
    Cli,
    Render,
    by_hand,
)
from ..fields import TARGET
from ..schema import Answer, Field, Route

__all__ = ["ops_routes", "service_gauges"]

RESOLVE_DEADLINE_S = 10.0


async def request_handoff(system: System, args: dict[str, Any]) -> dict[str, Any]:
    runtime = system.require_runtime()
    with trio.fail_after(RESOLVE_DEADLINE_S):
        tab = await runtime.tabs.resolve(args["targetId"], use=False)
    handoff = system.handoffs.request(tab.target_id, args["reason"])
    return {"ok": True, "targetId": tab.target_id, "handoff": handoff.to_json()}


async def cancel_handoff(system: System, args: dict[str, Any]) -> dict[str, Any]:
    runtime = system.require_runtime()
    with trio.fail_after(RESOLVE_DEADLINE_S):
        tab = await runtime.tabs.resolve(args["targetId"], use=False)
    ended = system.handoffs.end(tab.target_id, HandoffOutcome.CANCELLED, by="agent")
    return {"ok": True, "targetId": tab.target_id, "ended": ended is not None}


def service_gauges(system: System) -> ServiceGauges:
    """What ``/metrics`` reports besides the request counts, read now."""
    sup = system.supervisor
    stats = sup.statistics()
    runtime = sup.runtime
    tab_ids = runtime.tabs.target_ids() if runtime is not None else []
    system.handoffs.prune(tab_ids)
    cdp = runtime.connection.statistics() if runtime is not None else None
    media = system.media.statistics()
    downloads = system.downloads.statistics()
    download_bytes = sum(r.received_bytes for r in system.downloads.records()
                         if r.state != DownloadState.CANCELED)
    return ServiceGauges(
        profile=system.settings.profile, state=str(stats.state),
        states=tuple(str(s) for s in SupervisorState), restarts=stats.restarts,
        spawns=stats.spawns, browser_uptime_s=stats.uptime_s,
        service_uptime_s=max(0.0, time.time() - system.started_at), tabs=len(tab_ids),
        handoffs=len(system.handoffs.all_active()),
        cdp_pending=cdp.pending if cdp else None, cdp_sent=cdp.sent if cdp else None,
        cdp_replies=cdp.received_replies if cdp else None,
        cdp_events=cdp.received_events if cdp else None,
        media_files=media.files, media_bytes=media.bytes,
        downloads_in_progress=downloads.in_progress, downloads_completed=downloads.completed,
        downloads_canceled=downloads.canceled, download_bytes=download_bytes,
        ui_sessions=system.ui.sessions.count(),
    )


async def metrics(system: System, args: dict[str, Any]) -> Response:
    body = system.metrics.exposition(service_gauges(system))
    return Response(body, status=200, content_type=CONTENT_TYPE)


async def ui_code(system: System, args: dict[str, Any]) -> dict[str, Any]:
    login = system.ui.sessions.issue_code()
    base = system.settings.control_url.rstrip("/")
    return {"url": f"{base}/ui/login?code={login.code}", "code": login.code,
            "expiresInS": login.expires_in_s}


def ops_routes() -> list[Route]:
    return [
        Route(path="/handoff", methods=("POST",), handler=request_handoff, tag="ops",
              fields=(TARGET,
                      Field(name="reason", type="string", required=True, max_length=500,
                            description="what the person should do (shown on the ops page)")),
              summary="Hand a tab to a person; agent input on it is 409 until they are done",
              name="handoff_set", group="core", hints=ADDS, needs="act",
              confirm=NOT_HELD, untrusted=(), render=Render.FIELDS,
              answer=returns("HandoffSet"), blocked_by=NOTHING, cli=Cli(command="handoff"),
              tool_text="Hand a tab to the person (for a login, a CAPTCHA …); agent input on "
                        "it fails with HANDOFF_ACTIVE until they are done (wait with "
                        "handoff: true)"),
        Route(path="/handoff", methods=("DELETE",), handler=cancel_handoff, tag="ops",
              fields=(TARGET,), summary="Withdraw this agent's handoff of a tab",
              name="handoff_delete", group="service", hints=LOCAL_SETS, needs="act",
              render=Render.FIELDS,
              answer=returns("HandoffCancelled"), blocked_by=NOTHING, cli=Cli()),
        Route(path="/metrics", methods=("GET",), handler=metrics, tag="ops",
              raw_response=True, summary="Prometheus metrics (text exposition format)",
              name="metrics", group=NO_TOOL, hints=LOCAL_READS, needs="read",
              answer=Answer(media_types=("text/plain",),
                            description="Prometheus text exposition format 0.0.4"),
              blocked_by=NOTHING, cli=Cli()),
        Route(path="/ui-codes", methods=("POST",), handler=ui_code, tag="owner",
              summary="A one-time login URL for the ops page (single use, 60 s)",
              name="ui_codes", group=NO_TOOL, hints=LOCAL_ADDS, needs="owner",
              answer=returns("UiCode"), blocked_by=NOTHING, cli=by_hand("ui")),
    ]
