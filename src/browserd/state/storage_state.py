"""Storage state in Playwright's shape: ``{cookies, origins: [{origin, localStorage}]}``.

Both act on one browser context: the default one, or a session's.
Export reads every cookie (HttpOnly included) and the ``localStorage`` of
each origin browserd knows of: the origins the caller names, those of the
open tabs and their out-of-process frames, and those seen since the
browser started (most recent first, at most :data:`MAX_ORIGINS`; one that
cannot be read is left out, its error code logged). Import
sets the cookies, then writes each origin's items. Both reach web storage
through one scratch page (:mod:`.scratch`), so an origin needs no open tab,
the site's own code never runs and nothing goes to the network.

Values are never logged (the route logs counts). Errors: BadRequest for a
malformed state (nothing is written then); CdpError / BrowserGone / Timeout
from the browser. The caller owns the deadline; on cancellation or error
an import may be partly applied (cookies first, then origin by origin).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from ..cdp import CdpConnection
from ..errors import BadRequest, BrowserdError
from . import cookies as cookie_ops
from .scratch import open_scratch_page
from .webstorage import StorageArea, normalize_origin, origin_of_url, read_items, write_items

__all__ = ["MAX_ORIGINS", "ImportResult", "OriginState", "StorageState", "current_origins",
           "export_state", "import_state", "parse_state"]

log = logging.getLogger(__name__)

MAX_ORIGINS = 200


@attrs.frozen(kw_only=True)
class OriginState:
    origin: str
    local_storage: tuple[tuple[str, str], ...]

    def to_json(self) -> dict[str, Any]:
        return {"origin": self.origin,
                "localStorage": [{"name": k, "value": v} for k, v in self.local_storage]}


@attrs.frozen(kw_only=True)
class StorageState:
    """A validated state: CDP cookie params and per-origin items."""

    cookies: tuple[dict[str, Any], ...]
    origins: tuple[OriginState, ...]
    partitioned: int = 0  # partitioned cookies left out

    @property
    def item_count(self) -> int:
        return sum(len(o.local_storage) for o in self.origins)


@attrs.frozen(kw_only=True)
class ImportResult:
    cookies: cookie_ops.CookieSetResult
    partitioned: int
    origins: int
    items: int

    def to_json(self) -> dict[str, Any]:
        return {"ok": True, "cookies": self.cookies.set,
                "cookiesNotSet": list(self.cookies.not_set),
                "cookiesExpired": self.cookies.skipped_expired,
                "cookiesPartitioned": self.partitioned,
                "origins": self.origins, "items": self.items}


def parse_state(raw: Any) -> StorageState:
    """Validate a Playwright storage state; BadRequest naming the first fault."""
    if not isinstance(raw, dict):
        raise BadRequest("state must be an object {cookies, origins}", field="state")
    unknown = set(raw) - {"cookies", "origins"}
    if unknown:
        raise BadRequest(f"state: unknown field {sorted(unknown)[0]!r}", field="state")
    raw_cookies = [] if raw.get("cookies") is None else raw["cookies"]
    raw_origins = [] if raw.get("origins") is None else raw["origins"]
    if not isinstance(raw_cookies, list) or len(raw_cookies) > cookie_ops.MAX_COOKIES:
        raise BadRequest(f"state.cookies must be a list of at most {cookie_ops.MAX_COOKIES}",
                         field="state.cookies")
    if not isinstance(raw_origins, list) or len(raw_origins) > MAX_ORIGINS:
        raise BadRequest(f"state.origins must be a list of at most {MAX_ORIGINS}",
                         field="state.origins")
    # Partitioned cookies cannot be set through this API: they are left out
    # (and counted), never imported as unpartitioned ones.
    params = tuple(cookie_ops.validate_cookie(c, f"state.cookies[{i}]", lenient=True)
                   for i, c in enumerate(raw_cookies) if not cookie_ops.is_partitioned(c))
    origins: dict[str, dict[str, str]] = {}
    for i, entry in enumerate(raw_origins):
        where = f"state.origins[{i}]"
        if not isinstance(entry, dict):
            raise BadRequest(f"{where} must be an object {{origin, localStorage}}", field=where)
        origin = normalize_origin(entry.get("origin"), f"{where}.origin")
        items = [] if entry.get("localStorage") is None else entry["localStorage"]
        if not isinstance(items, list):
            raise BadRequest(f"{where}.localStorage must be a list of {{name, value}}",
                             field=f"{where}.localStorage")
        target = origins.setdefault(origin, {})
        for j, item in enumerate(items):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str) or \
                    not isinstance(item.get("value"), str):
                raise BadRequest(f"{where}.localStorage[{j}] must be {{name, value}} strings",
                                 field=f"{where}.localStorage")
            target[item["name"]] = item["value"]
    return StorageState(cookies=params, partitioned=len(raw_cookies) - len(params),
                        origins=tuple(
        OriginState(origin=o, local_storage=tuple(items.items()))
        for o, items in origins.items()))


async def current_origins(connection: CdpConnection, seen: Iterable[str], *,
                          holds_context: Callable[[object], bool] = lambda _: True
                          ) -> list[str]:
    """Origins of open pages and frames (browser-side, no renderer needed), then ``seen``.

    Only targets whose ``browserContextId`` ``holds_context`` accepts count
    (a session's export does not name the default context's pages).
    """
    result = await connection.send("Target.getTargets", {})
    out: dict[str, None] = {}
    for info in result.get("targetInfos", []):
        if info.get("type") in ("page", "iframe") and holds_context(
                info.get("browserContextId")):
            origin = origin_of_url(str(info.get("url", "")))
            if origin:
                out[origin] = None
    for origin in reversed(list(seen)):
        normal = origin_of_url(origin)
        if normal:
            out[normal] = None
    return list(out)


async def export_state(connection: CdpConnection, origins: list[str],
                       context: str | None = None) -> dict[str, Any]:
    """``{cookies, origins}`` of browser context ``context`` (None: the default):
    unpartitioned cookies, non-empty localStorage of ``origins``."""
    cookies = [cookie_ops.to_json(c) for c in await cookie_ops.all_cookies(connection, context)
               if not cookie_ops.is_partitioned(c)]
    states: list[OriginState] = []
    if origins:
        async with open_scratch_page(connection, context) as page:
            for origin in origins[:MAX_ORIGINS]:
                try:
                    await page.visit(origin)
                    items = await read_items(page.session,
                                             StorageArea(origin=origin, local=True))
                except BrowserdError as exc:  # one odd origin does not sink the export
                    log.info("state export: an origin was skipped: %s", exc.code)
                    continue
                if items:
                    states.append(OriginState(origin=origin,
                                              local_storage=tuple(sorted(items.items()))))
    return {"cookies": cookies, "origins": [s.to_json() for s in states]}


async def import_state(connection: CdpConnection, state: StorageState,
                       context: str | None = None) -> ImportResult:
    """Set the state's cookies, then write each origin's localStorage items (merged),
    in browser context ``context`` (None: the default)."""
    result = await cookie_ops.set_cookies(connection, list(state.cookies), context)
    written = 0
    with_items = [o for o in state.origins if o.local_storage]
    if with_items:
        async with open_scratch_page(connection, context) as page:
            for origin in with_items:
                await page.visit(origin.origin)
                written += await write_items(page.session,
                                             StorageArea(origin=origin.origin, local=True),
                                             dict(origin.local_storage))
    return ImportResult(cookies=result, partitioned=state.partitioned,
                        origins=len(with_items), items=written)
