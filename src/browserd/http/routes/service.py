"""Service routes: /healthz, /, /status, /start, /stop."""

from __future__ import annotations

import time
from typing import Any

import attrs
import trio

from ...client import healthz_proof
from ...supervisor.state import SupervisorState
from ...system import System
from ..answers import returns
from ..facts import (
    LOCAL_ACTS,
    LOCAL_ADDS,
    LOCAL_READS,
    NO_SCOPE,
    NO_TOOL,
    NOTHING,
    Cli,
    Render,
    by_hand,
)
from ..schema import Field, Route

__all__ = ["service_routes", "status_body"]


def status_body(system: System) -> dict[str, Any]:
    sup = system.supervisor
    settings = system.settings
    rt = sup.runtime
    stats = sup.statistics()
    media = system.media.statistics()
    return {
        "enabled": settings.enabled,
        "state": stats.state,
        "running": stats.state == SupervisorState.RUNNING,
        "cdpReady": rt is not None and not rt.connection.is_closed,
        "pid": stats.pid,
        "version": stats.version,
        "chosenBrowser": sup.chosen_browser,
        "executablePath": sup.executable_path,
        "userDataDir": None if settings.is_attach else str(sup.profile_dir),
        "profile": settings.profile,
        "color": settings.color,
        "headless": sup.headless,
        "attachOnly": settings.is_attach_only,
        "controlUrl": settings.control_url,
        "cdpUrl": settings.effective_cdp_url,
        "ports": {"control": settings.control_port, "cdp": settings.effective_cdp_port},
        "restarts": stats.restarts,
        "spawns": stats.spawns,
        "lastError": stats.last_error,
        "lastCrash": stats.last_crash,
        "uptimeS": stats.uptime_s,
        "serviceUptimeS": round(time.time() - system.started_at, 3),
        "tabs": rt.tab_count() if rt is not None else 0,
        "spareTab": rt is not None and rt.tabs.has_spare,
        "cdpGateway": settings.gateway_active,
        "cdp": attrs.asdict(rt.connection.statistics()) if rt is not None else None,
        "media": {"files": media.files, "bytes": media.bytes, "saves": media.saves,
                  "failures": media.failures, "pruned": media.pruned},
        "downloads": _download_stats(system),
        "default": system.profile.is_default,
        "sessions": len(system.profile.sessions.live(rt)),
        "profiles": {p.name: {"state": str(p.supervisor.state),
                              "running": p.supervisor.state == SupervisorState.RUNNING}
                     for p in system.profiles.all()},
        "events": _event_stats(system),
    }


def _event_stats(system: System) -> dict[str, Any]:
    stats = system.events.statistics()
    return {"published": stats.published, "lastId": stats.last_id, "oldestId": stats.oldest_id,
            "subscribers": stats.subscribers, "dropped": stats.dropped}


def _download_stats(system: System) -> dict[str, Any]:
    stats = system.downloads.statistics()
    return {"enabled": system.downloads.enabled, "directory": str(stats.directory),
            "inProgress": stats.in_progress, "completed": stats.completed,
            "canceled": stats.canceled, "pruned": stats.pruned}


async def healthz(system: System, args: dict[str, Any]) -> dict[str, Any]:
    """200 always (the service answers; the proof must stay checkable); ``ok`` is false
    while the browser is ``unresponsive`` (hung, being restarted)."""
    sup = system.supervisor
    body: dict[str, Any] = {"ok": True}
    if sup.state == SupervisorState.DISABLED:
        browser = "disabled"
    elif sup.state == SupervisorState.UNRESPONSIVE:
        browser = "unresponsive"
        body["ok"] = False
    else:
        rt = sup.runtime
        browser = "open" if rt is not None and not rt.connection.is_closed else "closed"
    body["browser"] = browser
    if args["challenge"]:
        # Lets a client prove this listener holds the token before sending it.
        body["proof"] = healthz_proof(system.token, args["challenge"])
    return body


async def status(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return status_body(system)


async def start(system: System, args: dict[str, Any]) -> dict[str, Any]:
    with trio.fail_after(60):
        await system.supervisor.start(headless=args["headless"])
    return status_body(system)


async def stop(system: System, args: dict[str, Any]) -> dict[str, Any]:
    with trio.fail_after(30):
        stopped = await system.supervisor.stop()
    return {"ok": True, "stopped": stopped}


def service_routes() -> list[Route]:
    return [
        Route(path="/healthz", methods=("GET",), handler=healthz, auth=False, tag="service",
              scope="none",
              fields=(Field(name="challenge", type="string", max_length=128,
                            description="a random nonce; the answer's proof is "
                            "HMAC-SHA256(token, nonce) in hex"),),
              summary="Liveness: {ok, browser: open|closed|disabled|unresponsive}",
              name="healthz", group=NO_TOOL, hints=LOCAL_READS, needs=NO_SCOPE,
              answer=returns("Health"), blocked_by=NOTHING, cli=Cli()),
        Route(path="/", methods=("GET",), handler=status, tag="service", summary="Status",
              scope="profile", name="index", group=NO_TOOL, hints=LOCAL_READS, needs="read",
              answer=returns("Status"), blocked_by=NOTHING, cli=by_hand("status")),
        Route(path="/status", methods=("GET",), handler=status, tag="service", scope="profile",
              summary="Status of the service and one profile's browser (a summary of all)",
              name="status", group="service", hints=LOCAL_READS, needs="read",
              render=Render.FIELDS,
              answer=returns("Status"), blocked_by=NOTHING, cli=Cli()),
        Route(path="/start", methods=("POST",), handler=start, tag="service", scope="profile",
              fields=(Field(name="headless", type="boolean",
                            description="run the browser without a window (default: the "
                                        "profile's setting)"),),
              summary="Launch (or attach to) a profile's browser; no-op when running",
              name="start", group="service", hints=LOCAL_ADDS, needs="profiles",
              render=Render.FIELDS,
              answer=returns("Status"), blocked_by=NOTHING,
              cli=Cli(negations={"headed": "headless"})),
        Route(path="/stop", methods=("POST",), handler=stop, tag="service", scope="profile",
              summary="Stop a profile's browser: graceful, then forced",
              name="stop", group="service", hints=LOCAL_ACTS, needs="profiles",
              render=Render.FIELDS,
              answer=returns("Stopped"), blocked_by=NOTHING, cli=Cli()),
    ]
