"""Holding an agent's action for the person: the gate every lane's call passes.

:func:`hold_if_confirmed` runs before a route's handler (in
:func:`browserd.http.dispatch.run_handler`, so HTTP, ``/ws`` and MCP alike):
when a ``confirm`` rule matches the action — its kind, the page's origin (a
navigation's target origin), the target's accessible name — the action is
held on the :class:`~browserd.confirm.ConfirmationBoard` and the call answers
202 CONFIRMATION_REQUIRED ``{confirmation: {id, kind, summary, target}}`` at
once; nothing reached the page. ``POST /wait {confirmation: id}`` waits for
the person and then runs it (:func:`wait_for_confirmation`). The person's
own calls are never held.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import trio

from ..confirm import first_match
from ..errors import BrowserdError, ConfirmationRequired, Timeout
from ..events import EventType
from ..system import System
from ..tabs.actor import TabActor
from ..tabs.origins import origin_of
from .schema import Route

__all__ = ["ROUTE_KINDS", "hold_if_confirmed", "kinds_of", "wait_for_confirmation"]

#: The confirm kind of each route that acts (``/act`` steps: their own kinds).
ROUTE_KINDS = {"/click": "click", "/type": "type", "/press": "press", "/select": "select",
               "/drag": "drag", "/upload": "upload", "/dialog": "dialog",
               "/navigate": "navigate", "/back": "navigate", "/forward": "navigate",
               "/reload": "navigate", "/eval": "eval", "/login": "submit",
               "/tabs/open": "navigate"}


def kinds_of(kind: str, step: dict[str, Any]) -> tuple[str, ...]:
    """The rule kinds one action answers to (a type that submits is also a ``submit``)."""
    if kind == "type" and step.get("submit"):
        return ("type", "submit")
    if kind == "press" and str(step.get("key", "")).split("+")[-1] == "Enter":
        return ("press", "submit")
    return (kind,)


def _steps(route: Route, args: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    if route.path == "/act":
        return [(str(a.get("kind")), a) for a in args.get("actions") or ()
                if isinstance(a, dict)]
    kind = ROUTE_KINDS.get(route.path)
    return [] if kind is None else [(kind, args)]


def _tab(system: System, target_id: Any) -> TabActor | None:
    try:
        tabs = system.supervisor.require_runtime().tabs
        ident = target_id if isinstance(target_id, str) else tabs.active_id()
        return tabs.get(ident) if ident else None
    except BrowserdError:
        return None  # the handler reports it


def _name(tab: TabActor | None, step: dict[str, Any]) -> str | None:
    ref = step.get("ref")
    if isinstance(ref, str) and tab is not None:
        record = tab.refs.get(ref)
        return record.name if record is not None else None
    text = step.get("text")
    return text if isinstance(text, str) and "secret" not in step else None


def _download_step(system: System, download_id: str) -> tuple[str | None, str | None]:
    """(origin, name) of a download: its page's origin and its suggested file name."""
    try:
        record = system.downloads.get(download_id)
    except BrowserdError:
        return None, None  # the route answers 404
    return origin_of(record.url), record.suggested_filename


async def hold_if_confirmed(system: System, route: Route, args: dict[str, Any],
                            run: Callable[[], Awaitable[Any]]) -> None:
    """Raise ConfirmationRequired (202) holding ``run`` when a ``confirm`` rule matches.

    A ``download`` rule holds the *file*: the download itself happened in the
    browser (into browserd's own directory), but ``GET /downloads/<id>`` gives
    it to the agent only once the person approved (the approval releases it
    to that token; the agent's ``/wait {confirmation}`` answers when it may fetch).
    """
    rules = system.settings.confirm
    if not rules or system.principal.is_owner:
        return
    if route.path == "/downloads/<id>":
        await _hold_download(system, str(args.get("id", "")))
        return
    steps = _steps(route, args)
    if not steps:
        return
    tab = _tab(system, args.get("targetId"))
    page_origin = origin_of(tab.url) if tab is not None else None
    for kind, step in steps:
        url = step.get("url")
        origin = origin_of(url) if kind == "navigate" and isinstance(url, str) else page_origin
        name = _name(tab, step)
        for candidate in kinds_of(kind, step):
            rule = first_match(rules, kind=candidate, origin=origin, name=name)
            if rule is None:
                continue
            what = f"{candidate}" + (f" {name[:80]!r}" if name else "") + (
                f" on {origin}" if origin else "")
            held = system.confirmations.hold(
                kind=candidate, summary=what, profile=system.profile.name,
                target={"targetId": tab.target_id if tab else None, "name": name,
                        "origin": origin, "route": route.path},
                token=system.principal.name, runner=run)
            system.events.publish(EventType.CONFIRMATION_REQUESTED, profile=held.profile,
                                  target_id=held.target["targetId"], confirmation=held.to_json())
            raise ConfirmationRequired(f"held for the person's confirmation: {what}",
                                       confirmation=held.to_json(), rule=rule.to_json())


async def _hold_download(system: System, download_id: str) -> None:
    board, token = system.confirmations, system.principal.name
    if board.released(download_id, token=token):
        return
    origin, name = _download_step(system, download_id)
    rule = first_match(system.settings.confirm, kind="download", origin=origin, name=name)
    if rule is None:
        return
    what = "download" + (f" {name[:80]!r}" if name else "") + (f" from {origin}" if origin
                                                               else "")

    async def release() -> dict[str, Any]:
        return board.release(download_id, token=token)

    held = board.hold(kind="download", summary=what, profile=system.profile.name,
                      target={"download": download_id, "name": name, "origin": origin,
                              "route": "/downloads/<id>"}, token=token, runner=release)
    system.events.publish(EventType.CONFIRMATION_REQUESTED, profile=held.profile,
                          confirmation=held.to_json())
    raise ConfirmationRequired(f"held for the person's confirmation: {what}",
                               confirmation=held.to_json(), rule=rule.to_json())


async def wait_for_confirmation(system: System, confirmation_id: str,
                                timeout_ms: int) -> dict[str, Any]:
    """Wait for the person's answer (within ``timeout_ms``), then run the held action.

    Answers ``{ok, waitedMs, confirmation, result}`` (the action's own answer);
    403 DENIED when denied; 504 TIMEOUT ``{waitedMs}`` while still pending
    (it stays held); 404 for another token's id. The action runs under its
    own deadline, not the wait's.
    """
    board = system.confirmations
    started = trio.current_time()
    with trio.move_on_after(timeout_ms / 1000) as scope:
        held = await board.wait_answered(confirmation_id, token=system.principal.name)
    waited = round((trio.current_time() - started) * 1000)
    if scope.cancelled_caught:
        raise Timeout(f"the person has not answered {confirmation_id} after {waited} ms",
                      hint="wait again; it stays held", waitedMs=waited)
    system.events.publish(EventType.CONFIRMATION_ENDED, profile=held.profile,
                          confirmation=held.to_json())
    result = await board.run_approved(confirmation_id)
    return {"ok": True, "waitedMs": waited, "confirmation": held.to_json(), "result": result}
