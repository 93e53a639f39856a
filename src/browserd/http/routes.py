"""The route table: service lifecycle and tabs. Page work lives in page_routes."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import trio

from ..client import healthz_proof
from ..errors import BrowserdError
from ..system import System
from ..tabs.actor import TabActor
from ..tabs.registry import TabRegistry
from .schema import Field, Route

TARGET = Field(name="targetId", type="string", max_length=200,
               description="a tab's targetId or a unique prefix (≥ 4 chars)")


def status_body(system: System) -> dict[str, Any]:
    sup = system.supervisor
    settings = system.settings
    rt = sup.runtime
    stats = sup.statistics()
    media = system.media.statistics()
    return {
        "enabled": settings.enabled,
        "state": stats.state,
        "running": stats.state == "running",
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
        "uptimeS": stats.uptime_s,
        "serviceUptimeS": round(time.time() - system.started_at, 3),
        "tabs": len(rt.tabs.target_ids()) if rt is not None else 0,
        "cdp": attrs.asdict(rt.connection.statistics()) if rt is not None else None,
        "media": {"files": media.files, "bytes": media.bytes, "saves": media.saves,
                  "failures": media.failures, "pruned": media.pruned},
        "downloads": _download_stats(system),  # navdl
    }


def _download_stats(system: System) -> dict[str, Any]:
    stats = system.downloads.statistics()
    return {"enabled": system.downloads.enabled, "directory": str(stats.directory),
            "inProgress": stats.in_progress, "completed": stats.completed,
            "canceled": stats.canceled, "pruned": stats.pruned}


async def healthz(system: System, args: dict[str, Any]) -> dict[str, Any]:
    sup = system.supervisor
    body: dict[str, Any] = {"ok": True}
    if sup.state == "disabled":
        browser = "disabled"
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


async def list_tabs(system: System, args: dict[str, Any]) -> dict[str, Any]:
    try:
        rt = system.supervisor.require_runtime()
    except BrowserdError:
        return {"running": False, "tabs": []}
    await rt.tabs.wait_pending()
    with trio.move_on_after(2):
        await rt.tabs.refresh_infos()
    return {"running": True, "tabs": [t.to_json() for t in rt.tabs.infos()]}


async def open_tab(system: System, args: dict[str, Any]) -> dict[str, Any]:
    from ..tabs import page

    url = system.url_policy.check(args["url"])
    rt = system.supervisor.require_runtime()
    with trio.fail_after(30):
        if args["newTab"]:
            tab = await rt.tabs.open("about:blank")
        else:
            tab = await rt.tabs.resolve(None)
        if url != "about:blank":
            async with tab.work():
                await page.navigate(tab, url, wait_until="load", timeout_s=25)
        if args["newTab"]:
            rt.tabs.note_focused(tab)  # a foreground createTarget is already in front
        else:
            await rt.tabs.focus(tab)
    active = rt.tabs.active_id()
    return tab.info(active=tab.target_id == active).to_json()


async def _on_tab(system: System, args: dict[str, Any],
                  command: Callable[[TabRegistry, TabActor], Awaitable[None]]) -> dict[str, Any]:
    """Run a registry ``command`` on the tab ``args["targetId"]`` within 10 s."""
    rt = system.supervisor.require_runtime()
    tab = rt.tabs.get(args["targetId"])
    with trio.fail_after(10):
        await command(rt.tabs, tab)
    return {"ok": True, "targetId": tab.target_id}


async def focus_tab(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return await _on_tab(system, args, TabRegistry.focus)


async def close_tab(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return await _on_tab(system, args, TabRegistry.close)


def all_routes() -> list[Route]:
    from .page_routes import page_routes

    required_target = Field(name="targetId", type="string", required=True, max_length=200)
    return [
        Route(path="/healthz", methods=("GET",), handler=healthz, auth=False, tag="service",
              fields=(Field(name="challenge", type="string", max_length=128,
                            description="a random nonce; the answer's proof is "
                            "HMAC-SHA256(token, nonce) in hex"),),
              summary="Liveness: {ok, browser: open|closed|disabled}"),
        Route(path="/", methods=("GET",), handler=status, tag="service", summary="Status"),
        Route(path="/status", methods=("GET",), handler=status, tag="service",
              summary="Status of the service and its browser"),
        Route(path="/start", methods=("POST",), handler=start, tag="service",
              fields=(Field(name="headless", type="boolean"),),
              summary="Launch (or attach to) the browser; no-op when running"),
        Route(path="/stop", methods=("POST",), handler=stop, tag="service",
              summary="Stop the browser: graceful, then forced"),
        Route(path="/tabs", methods=("GET",), handler=list_tabs, tag="tabs",
              summary="List tabs"),
        Route(path="/tabs/open", methods=("POST",), handler=open_tab, tag="tabs",
              fields=(Field(name="url", type="string", required=True, max_length=8192),
                      Field(name="newTab", type="boolean", default=True)),
              summary="Open a URL in a new tab (or the current one with newTab: false)"),
        Route(path="/tabs/focus", methods=("POST",), handler=focus_tab, tag="tabs",
              fields=(required_target,), summary="Bring a tab to the front"),
        Route(path="/tabs/close", methods=("POST",), handler=close_tab, tag="tabs",
              fields=(required_target,), summary="Close a tab"),
        Route(path="/tabs/<targetId>", methods=("DELETE",), handler=close_tab, tag="tabs",
              path_params=("targetId",), fields=(required_target,), summary="Close a tab"),
        *page_routes(),
    ]
