"""Routes for the browser's stored state: /cookies, /storage and /state.

Cookies and storage state belong to one browser context: the request's
session's, or the default context without a session (``rt.tabs.context``),
so one session never sees another's. Web storage is per origin (and, for
sessionStorage, per tab; a tab is always of the request's scope). Values
never reach a log: the audit log gets one extra line with counts for a
write, naming the profile and session.
Each handler runs under its own deadline (504 TIMEOUT past it); /storage
works on a tab through :func:`~browserd.http.tabwork.on_tab`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import trio

from ...cdp import CdpSession
from ...errors import BadRequest
from ...state import cookies as cookie_ops
from ...state import storage_state, webstorage
from ...state.webstorage import StorageArea
from ...system import System
from ...tabs.actor import TabActor
from ..answers import returns
from ..facts import ACTS, DIALOG, NOT_HELD, NOTHING, READS, SETS, Render, by_hand
from ..fields import TARGET
from ..schema import Field, Route
from ..tabwork import on_tab

__all__ = ["state_routes"]

audit_log = logging.getLogger("browserd.audit")
T = TypeVar("T")

COOKIES_DEADLINE_S = 15.0
STORAGE_DEADLINE_S = 20.0
STATE_DEADLINE_S = 90.0


def _audit(system: System, what: str, **counts: int) -> None:
    audit_log.info("profile=%s session=%s %s %s", system.profile.name,
                   system.session_id or "-", what,
                   " ".join(f"{k}={v}" for k, v in counts.items()))


# -- cookies ------------------------------------------------------------------------


async def get_cookies(system: System, args: dict[str, Any]) -> dict[str, Any]:
    cookie_ops.check_filter_url(args["url"])
    rt = system.require_runtime()
    with trio.fail_after(COOKIES_DEADLINE_S):
        found = await cookie_ops.all_cookies(rt.connection, rt.tabs.context)
    chosen = cookie_ops.select(found, name=args["name"], domain=args["domain"], url=args["url"])
    return {"cookies": [cookie_ops.to_json(c) for c in chosen]}


async def set_cookies(system: System, args: dict[str, Any]) -> dict[str, Any]:
    raw = args["cookies"]
    if len(raw) > cookie_ops.MAX_COOKIES:
        raise BadRequest(f"at most {cookie_ops.MAX_COOKIES} cookies at once", field="cookies")
    params = [cookie_ops.validate_cookie(c, f"cookies[{i}]") for i, c in enumerate(raw)]
    rt = system.require_runtime()
    with trio.fail_after(COOKIES_DEADLINE_S):
        result = await cookie_ops.set_cookies(rt.connection, params, rt.tabs.context)
    _audit(system, "cookies set:", given=len(params), set=result.set, notSet=len(result.not_set))
    return {"ok": True, "set": result.set, "notSet": list(result.not_set),
            "expired": result.skipped_expired}


async def delete_cookies(system: System, args: dict[str, Any]) -> dict[str, Any]:
    filters = {k: args[k] for k in ("name", "domain", "url") if args[k] is not None}
    if not filters and not args["all"]:
        raise BadRequest("no filter given: pass name, domain or url, or all: true to delete "
                         "every cookie", field="all")
    cookie_ops.check_filter_url(args["url"])
    rt = system.require_runtime()
    with trio.fail_after(COOKIES_DEADLINE_S):
        if not filters:
            deleted = await cookie_ops.clear_cookies(rt.connection, rt.tabs.context)
        else:
            found = await cookie_ops.all_cookies(rt.connection, rt.tabs.context)
            deleted = await cookie_ops.delete_cookies(
                rt.connection, cookie_ops.select(found, **filters), rt.tabs.context)
    _audit(system, "cookies deleted:", deleted=deleted)
    return {"ok": True, "deleted": deleted}


# -- web storage ---------------------------------------------------------------------


StorageOp = Callable[[CdpSession, StorageArea], Awaitable[T]]


async def _on_storage(system: System, args: dict[str, Any], op: StorageOp[T]
                      ) -> tuple[StorageArea, T]:
    """Run ``op`` on the storage area a /storage request means; the area and the result.

    The origin (``origin``, else the tab's main frame's) is read and, where
    the tab has a frame of it, ``op`` runs there in the tab's work slot
    (409 DIALOG_OPEN beside a dialog); otherwise after the slot is released,
    through a scratch page (localStorage) or not at all (sessionStorage:
    409 NO_FRAME). All of it within the storage deadline.
    """
    named = None
    if args["origin"] is not None:
        named = webstorage.normalize_origin(args["origin"])
        system.url_policy.check(named + "/")
    local = args["kind"] == "local"
    runtime = system.require_runtime()

    async def in_tab(tab: TabActor) -> tuple[StorageArea, tuple[T] | None]:
        origin = named or await webstorage.main_frame_origin(tab)
        if origin is None:
            raise BadRequest("the tab shows no http(s) page, so it has no storage origin",
                             field="origin", hint="pass origin, e.g. https://example.com")
        area = StorageArea(origin=origin, local=local)
        return area, await webstorage.in_tab(tab, area, lambda s: op(s, area))

    with trio.fail_after(STORAGE_DEADLINE_S):
        area, done = await on_tab(system, args["targetId"], in_tab,
                                  deadline_s=STORAGE_DEADLINE_S, refuse_new_dialog=True)
        if done is not None:
            return area, done[0]
        return area, await webstorage.without_tab(runtime.connection, area,
                                                  lambda s: op(s, area),
                                                  context=runtime.tabs.context)


async def get_storage(system: System, args: dict[str, Any]) -> dict[str, Any]:
    area, items = await _on_storage(system, args, webstorage.read_items)
    return {"kind": area.kind, "origin": area.origin, "items": items}


async def set_storage(system: System, args: dict[str, Any]) -> dict[str, Any]:
    items = webstorage.check_items(args["items"])
    area, count = await _on_storage(
        system, args, lambda s, area: webstorage.write_items(s, area, items))
    if area.local:
        system.require_runtime().tabs.remember_origin(area.origin)
    _audit(system, "storage set:", items=count)
    return {"ok": True, "kind": area.kind, "origin": area.origin, "set": count}


async def delete_storage(system: System, args: dict[str, Any]) -> dict[str, Any]:
    keys = args["keys"]
    area, removed = await _on_storage(
        system, args, lambda s, area: webstorage.remove_items(s, area, keys))
    _audit(system, "storage deleted:", items=removed)
    return {"ok": True, "kind": area.kind, "origin": area.origin, "removed": removed}


# -- storage state ------------------------------------------------------------------


async def get_state(system: System, args: dict[str, Any]) -> dict[str, Any]:
    named = [webstorage.normalize_origin(o, "origins") for o in args["origins"] or []]
    rt = system.require_runtime()
    with trio.fail_after(STATE_DEADLINE_S):
        known = await storage_state.current_origins(rt.connection, rt.tabs.origins_seen(),
                                                    holds_context=rt.tabs.holds_context)
        origins = list(dict.fromkeys([*named, *known]))
        state = await storage_state.export_state(rt.connection, origins, rt.tabs.context)
    _audit(system, "state exported:", cookies=len(state["cookies"]), origins=len(state["origins"]))
    return state


async def post_state(system: System, args: dict[str, Any]) -> dict[str, Any]:
    state = storage_state.parse_state(args["state"])
    for entry in state.origins:
        system.url_policy.check(entry.origin + "/")
    rt = system.require_runtime()
    for entry in state.origins:
        rt.tabs.remember_origin(entry.origin)  # so the next GET /state exports them
    with trio.fail_after(STATE_DEADLINE_S):
        result = await storage_state.import_state(rt.connection, state, rt.tabs.context)
    _audit(system, "state imported:", cookies=result.cookies.set,
           cookiesNotSet=len(result.cookies.not_set), origins=result.origins,
           items=result.items)
    return result.to_json()


def state_routes() -> list[Route]:
    kind = Field(name="kind", type="string", default="local", enum=("local", "session"),
                 description="local: localStorage; session: sessionStorage")
    origin = Field(name="origin", type="string", max_length=300,
                   description="scheme://host[:port]; default: the tab's main frame origin")
    cookie_filters = (
        # (Short: a GET's query must fit hypercorn's 16 KiB request head, percent-encoded.)
        Field(name="name", type="string", max_length=200, description="exactly this name"),
        Field(name="domain", type="string", max_length=253,
              description="cookies of this domain or its subdomains"),
        Field(name="url", type="string", max_length=800,
              description="cookies the browser would send to this URL (its query is not "
              "needed)"),
    )
    return [
        Route(path="/cookies", methods=("GET",), handler=get_cookies, tag="state",
              summary="The cookies of the request's browser context (its session's, or the "
              "default), HttpOnly included, optionally filtered",
              fields=cookie_filters, name="cookies_get", group="state", hints=READS,
              untrusted=(), render=Render.PAGE,
              needs="state", answer=returns("CookieList"), blocked_by=NOTHING,
              cli=by_hand("cookies")),
        Route(path="/cookies", methods=("POST",), handler=set_cookies, tag="state",
              summary="Set cookies (each with url or domain)",
              fields=(Field(name="cookies", type="array", items="object", required=True,
                            description="[{name, value, url | domain, path?, expires?, "
                            "httpOnly?, secure?, sameSite?}]"),),
              name="cookies_set", group="state", hints=ACTS, needs="state",
              confirm=NOT_HELD, untrusted=(), render=Render.FIELDS,
              answer=returns("CookiesSet"), blocked_by=NOTHING, cli=by_hand("cookies")),
        Route(path="/cookies", methods=("DELETE",), handler=delete_cookies, tag="state",
              summary="Delete the cookies matching every filter (no filter: all: true)",
              fields=(*cookie_filters, Field(name="all", type="boolean", default=False,
                                             description="required to delete every cookie")),
              name="cookies_delete", group="state", hints=SETS, needs="state",
              confirm=NOT_HELD, untrusted=(), render=Render.FIELDS,
              answer=returns("CookiesDeleted"), blocked_by=NOTHING, cli=by_hand("cookies")),
        Route(path="/storage", methods=("GET",), handler=get_storage, tag="state",
              summary="localStorage or sessionStorage items of an origin",
              fields=(TARGET, kind, origin), name="storage_get", group="state", hints=READS,
              untrusted=(), render=Render.PAGE,
              needs="state", answer=returns("StorageItems"), blocked_by=DIALOG,
              cli=by_hand("storage")),
        Route(path="/storage", methods=("POST",), handler=set_storage, tag="state",
              summary="Set web storage items of an origin",
              fields=(TARGET, kind, origin,
                      Field(name="items", type="object", required=True,
                            description="{key: value} strings")),
              name="storage_set", group="state", hints=ACTS, needs="state",
              confirm=NOT_HELD, untrusted=(), render=Render.FIELDS,
              answer=returns("StorageSet"), blocked_by=DIALOG, cli=by_hand("storage")),
        Route(path="/storage", methods=("DELETE",), handler=delete_storage, tag="state",
              summary="Remove web storage items of an origin (no keys: all of them)",
              fields=(TARGET, kind, origin,
                      Field(name="keys", type="array", items="string",
                            description="the keys to remove (default: every key)")),
              name="storage_delete", group="state", hints=SETS, needs="state",
              confirm=NOT_HELD, untrusted=(), render=Render.FIELDS,
              answer=returns("StorageRemoved"), blocked_by=DIALOG, cli=by_hand("storage")),
        Route(path="/state", methods=("GET",), handler=get_state, tag="state",
              summary="Storage state (Playwright's shape): cookies and localStorage",
              fields=(Field(name="origins", type="array", items="string", max_length=20,
                            description="also export these origins' localStorage"),),
              name="state_get", group="state", hints=READS, needs="state",
              untrusted=(), render=Render.PAGE,
              answer=returns("StorageState"), blocked_by=NOTHING, cli=by_hand("state")),
        Route(path="/state", methods=("POST",), handler=post_state, tag="state",
              summary="Import a storage state: cookies and localStorage per origin",
              fields=(Field(name="state", type="object", required=True,
                            description="{cookies: [...], origins: [{origin, "
                            "localStorage: [{name, value}]}]}"),),
              name="state_set", group="state", hints=ACTS, needs="state",
              confirm=NOT_HELD, untrusted=(), render=Render.FIELDS,
              answer=returns("StateImported"), blocked_by=NOTHING, cli=by_hand("state")),
    ]
