"""Network routes: the tab's request ring, one request in detail, blocking, headers, HAR.

``GET /network`` reads the ring the tab's actor keeps (no work slot, so it
answers beside an open dialog). With ``network_capture = "on-demand"`` (the
default) a tab records from the first network route used on it: the first
``GET /network`` switches its Network domain on in its work slot and says
so in ``note``; ``"always"`` records every tab from its first request (it
costs the service CPU on every page load: see docs/benchmarks.md).
``GET /network/{id}`` holds the work slot (409 DIALOG_OPEN beside a
dialog: Chromium reads bodies from the renderer).
``/network/block`` and ``/network/headers`` replace the tab's whole set
(an empty list/object clears it) and answer the tab's current controls:
patterns and header *names* (values are never echoed, logged or audited).
``/network/har`` writes a HAR 1.2 file to the media store (atomic write;
507 when it cannot be written) and answers its ``mediaUrl``.

Deadlines: list 5 s, detail 15 s, block/headers 10 s, HAR 60 s (504 TIMEOUT).
Cancellation abandons the CDP call in flight; the controls change only
once Chromium accepted them.
"""

from __future__ import annotations

from typing import Any

import orjson
import trio

from ... import __version__
from ...errors import RequestNotFound
from ...media import media_token, media_url
from ...system import System
from ...tabs import network
from ...tabs.actor import TabActor
from ...tabs.netlog import NETWORK_BUFFER, RESOURCE_TYPES
from ..answers import returns
from ..facts import ACTS, DIALOG, NO_TOOL, NOT_HELD, NOTHING, READS, SETS, Render, by_hand
from ..fields import TARGET
from ..schema import Field, Route
from ..tabwork import on_tab

__all__ = ["network_routes"]

LIST_DEADLINE_S = 5.0
DETAIL_DEADLINE_S = 15.0
CONTROL_DEADLINE_S = 10.0
HAR_DEADLINE_S = 60.0
READ = ("GET", "POST")


async def list_requests(system: System, args: dict[str, Any]) -> dict[str, Any]:
    rt = system.require_runtime()
    with trio.fail_after(LIST_DEADLINE_S):
        tab = await rt.tabs.resolve(args["targetId"])
        started = not tab.network.recording
        if started:
            await on_tab(system, tab.target_id, network.ensure_enabled,
                         deadline_s=LIST_DEADLINE_S)
    tab.check_usable(allow_crashed=True, allow_dialog=True)
    ring = tab.network
    found = ring.query(url_contains=args["urlContains"], resource_type=args["resourceType"],
                       status=args["status"], failed=args["failed"], limit=args["limit"])
    out: dict[str, Any] = {"targetId": tab.target_id,
                           "requests": [e.summary() for e in found],
                           "dropped": ring.dropped, "kept": len(ring),
                           "recordingSince": ring.recording_since,
                           **ring.controls.to_json()}
    if started:
        out["note"] = ("the ring records this tab from now on; reload or navigate to see "
                       "the page's requests")
    if args["clear"]:
        ring.clear()
    return out


def _entry_id(raw: str) -> int:
    if not raw.isdigit() or len(raw) > 12:
        raise RequestNotFound(f"no request {raw[:40]!r} in this tab's network ring")
    return int(raw)


async def request_detail(system: System, args: dict[str, Any]) -> dict[str, Any]:
    entry_id = _entry_id(args["id"])
    return await on_tab(system, args["targetId"],
                        lambda tab: network.request_detail(tab, entry_id,
                                                           max_bytes=args["maxBytes"]),
                        deadline_s=DETAIL_DEADLINE_S, allow_crashed=True,
                        refuse_new_dialog=True)


async def block(system: System, args: dict[str, Any]) -> dict[str, Any]:
    async def run(tab: TabActor) -> dict[str, Any]:
        controls = await network.set_blocked(tab, args["patterns"])
        return {"ok": True, "targetId": tab.target_id, **controls.to_json()}

    return await on_tab(system, args["targetId"], run, deadline_s=CONTROL_DEADLINE_S)


async def headers(system: System, args: dict[str, Any]) -> dict[str, Any]:
    network.check_headers(args["headers"])  # 400 before touching the tab

    async def run(tab: TabActor) -> dict[str, Any]:
        controls = await network.set_extra_headers(tab, args["headers"])
        return {"ok": True, "targetId": tab.target_id, **controls.to_json()}

    return await on_tab(system, args["targetId"], run, deadline_s=CONTROL_DEADLINE_S)


async def har(system: System, args: dict[str, Any]) -> dict[str, Any]:
    async def run(tab: TabActor) -> dict[str, Any]:
        data, count = await network.export_har(
            tab, version=__version__, bodies=args["bodies"],
            max_body_bytes=args["maxBodyBytes"], url_contains=args["urlContains"])
        if system.vault.redactor.active:  # no vault value in the file (parsed: JSON escapes)
            data = orjson.dumps(system.vault.redactor.redact(orjson.loads(data)))
        saved = await system.media.save(data, kind="har", ext="har", mime="application/json")
        return {"ok": True, "targetId": tab.target_id, "entries": count,
                "media": media_token(saved.path), "mediaUrl": media_url(saved.name),
                "path": str(saved.path), "bytes": saved.bytes, "mime": saved.mime}

    return await on_tab(system, args["targetId"], run, deadline_s=HAR_DEADLINE_S,
                        allow_crashed=True)


URL_CONTAINS = Field(name="urlContains", type="string", max_length=2000,
                     description="only requests whose URL contains this (any case)")


def network_routes() -> list[Route]:
    return [
        Route(path="/network", methods=READ, handler=list_requests, tag="network",
              summary="The tab's recent requests (a ring of the last 1000)",
              fields=(TARGET, URL_CONTAINS,
                      Field(name="resourceType", type="string", enum=RESOURCE_TYPES,
                            description="only requests of this type"),
                      Field(name="status", type="integer", minimum=0, maximum=999,
                            description="only responses with this HTTP status"),
                      Field(name="failed", type="boolean",
                            description="only failed (true) or only not failed (false)"),
                      Field(name="limit", type="integer", default=100, minimum=1,
                            maximum=NETWORK_BUFFER, description="the newest this many"),
                      Field(name="clear", type="boolean", default=False,
                            description="empty the ring after reading")),
              name="network", group="network", hints=READS, needs="read",
              untrusted=("requests",), render=Render.PAGE,
              answer=returns("NetworkList"), blocked_by=NOTHING, cli=by_hand("network")),
        Route(path="/network/<id>", methods=("GET",), handler=request_detail, tag="network",
              path_params=("id",),
              summary="One request: headers, post data and the response body",
              fields=(TARGET, Field(name="id", type="string", required=True, max_length=40),
                      Field(name="maxBytes", type="integer", default=100_000, minimum=0,
                            maximum=20_000_000, description="cut the body at this size")),
              name="network_request", group=NO_TOOL, hints=READS, needs="network",
              untrusted=("url", "requestHeaders", "responseHeaders", "postData", "body"),
              answer=returns("NetworkDetail"), blocked_by=DIALOG, cli=by_hand("network")),
        Route(path="/network/block", methods=("POST",), handler=block, tag="network",
              summary="Block requests by URL pattern (replaces the set; [] clears)",
              fields=(TARGET,
                      Field(name="patterns", type="array", items="string", required=True,
                            description="URLPattern strings, e.g. *://*:*/*.png")),
              name="network_block", group="network", hints=SETS, needs="network",
              confirm=NOT_HELD, untrusted=(), render=Render.FIELDS,
              answer=returns("NetworkControls"), blocked_by=NOTHING, cli=by_hand("network")),
        Route(path="/network/headers", methods=("POST",), handler=headers, tag="network",
              summary="Extra HTTP headers on every request of the tab (replaces; {} clears)",
              fields=(TARGET,
                      Field(name="headers", type="object", required=True,
                            description="name → value")),
              name="network_headers", group="network", hints=SETS, needs="network",
              confirm=NOT_HELD, untrusted=(), render=Render.FIELDS,
              answer=returns("NetworkControls"), blocked_by=NOTHING, cli=by_hand("network")),
        Route(path="/network/har", methods=("POST",), handler=har, tag="network",
              summary="Export the tab's ring as a HAR 1.2 file into the media store",
              fields=(TARGET, URL_CONTAINS,
                      Field(name="bodies", type="boolean", default=False,
                            description="include the response bodies Chromium still has"),
                      Field(name="maxBodyBytes", type="integer", default=1_000_000, minimum=0,
                            maximum=20_000_000, description="leave out larger bodies")),
              name="network_har", group="network", hints=ACTS, needs="network",
              confirm=NOT_HELD, untrusted=(), render=Render.FIELDS,
              answer=returns("HarAnswer"), blocked_by=NOTHING, cli=by_hand("network")),
    ]
