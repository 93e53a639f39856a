"""Routes for media: ``/screenshot``, ``/pdf`` and ``GET /media/<name>``.

A capture answers ``{ok, targetId, url, media: "MEDIA:<path>", mediaUrl,
path, mediaId, width, height, bytes, mime, profile, session}`` plus ``scaled: true`` /
``clipped: true`` and ``note`` when a size limit applied (see
:mod:`browserd.tabs.capture`); a full-page capture also has ``pageHeight``.
``profile`` and ``session`` (null without one) say whose tab was captured;
the audit log gets a line naming them and the file for every save. With
``inline: true`` the image is made to fit
:data:`~browserd.tabs.capture.INLINE_MAX_BYTES` (1 MiB) and also returned as
base64 ``data`` (the same bytes as the stored file). ``mediaUrl`` is the
path of ``GET /media/<name>`` on this API (same token). A PDF answers the
same shape with ``mime: "application/pdf"`` and ``width``/``height`` null.
``mediaId`` is the file's name (the last part of ``mediaUrl``).

**Screenshot diffs.** ``since: <mediaId>`` (an earlier screenshot of the same
tab, taken the same way: viewport, ``fullPage`` or an element, same format)
adds ``diff: {since, changed, region, changedPixels, ratio, tolerance}`` to the
answer: the pixels where a channel moved by more than ``tolerance`` (default
:data:`~browserd.tabs.imagediff.DEFAULT_TOLERANCE`), and ``region``, their
box in CSS pixels from the captured region's top-left (None when nothing
changed). When something changed, that box cut out of the new screenshot is
saved too (kind ``diff``), and ``diff`` also has its ``media``,
``mediaUrl``, ``mediaId``, ``path``, ``width``, ``height``, ``bytes``,
``mime`` (and ``data`` with ``inline``). The comparison
(:mod:`browserd.tabs.imagediff`) runs in a worker thread. A ``since`` that
is unknown, of another profile or session, or taken before the service
started is 404 NOT_FOUND; of another tab of this scope 409 CONFLICT; taken
another way or in another format 400 BAD_REQUEST (``field: since``); of
another pixel size (the page or viewport changed size) 409 CONFLICT with the
new screenshot saved and named (``mediaId``) to diff against next time.

Concurrency: every capture holds its tab's work slot (so it never overlaps
other work on that tab; 429 TAB_BUSY when the tab's queue is full) and then
one token of the runtime's capture limiter; the Chromium command itself is
serialised across tabs by the runtime's front lock (a tab must be in front
while it is captured, see :mod:`browserd.tabs.capture_gate`). When twice the limiter's capacity
already waits for a token, a new capture is refused at once with 503
OVERLOADED: the limit is the service's, not the tab's, so this is not
TAB_BUSY, and the client should back off and retry.

Deadlines (whole request, tab wait and save included): viewport 15 s; full
page, element (an element can be as large as the page) and PDF 60 s; expiry
is 504 TIMEOUT.

Errors: 400 for bad argument combinations (``quality`` with PNG; ``fullPage``
with ``ref``/``selector``; both ``ref`` and ``selector``), 404/409 from
resolving the element, 409 CONFLICT when Chromium refuses to print a PDF,
507 INSUFFICIENT_STORAGE when the file cannot be written (nothing partial
is left).

Cancellation (client gone, deadline): the CDP command in flight is
abandoned and the tab's slot and the limiter token are released; a save
already running in its worker thread completes first, so its file stays on
disk and is counted by the next retention pass.
"""

from __future__ import annotations

import logging
from typing import Any

import attrs
import trio
from quart import Response

from ...errors import BadRequest, BrowserdError, Conflict, NotFound
from ...media import CaptureOrigin, MediaFile, media_token, media_url
from ...system import System
from ...tabs import capture, imagediff
from ...tabs.actor import TabActor
from ...tabs.locator import ElementTarget
from ...tabs.resolve import ElementHandle, resolve_target
from ..answers import returns
from ..facts import ADDS, DIALOG, NO_TOOL, NOT_HELD, NOTHING, READS, Cli, Render
from ..fields import TARGET
from ..files import file_response
from ..schema import Answer, Field, Route
from ..tabwork import on_tab

__all__ = ["media_routes"]

audit_log = logging.getLogger("browserd.audit")

VIEWPORT_DEADLINE_S = 15.0
FULL_PAGE_DEADLINE_S = 60.0
PDF_DEADLINE_S = 60.0

def _check_screenshot_args(args: dict[str, Any]) -> None:
    if args["quality"] is not None and args["format"] != "jpeg":
        raise BadRequest("quality applies to format jpeg only", field="quality",
                         hint="drop quality, or ask for format: jpeg")
    if args["ref"] is not None and args["selector"] is not None:
        raise BadRequest("give ref or selector, not both", field="selector")
    if args["fullPage"] and (args["ref"] is not None or args["selector"] is not None):
        raise BadRequest("fullPage captures the whole page; it cannot be combined with "
                         "ref or selector", field="fullPage")


def _body(system: System, tab: TabActor, url: str, saved: MediaFile, *, width: int | None,
          height: int | None) -> dict[str, Any]:
    audit_log.info("profile=%s session=%s media saved: %s bytes=%d", system.profile.name,
                   system.session_id or "-", saved.name, saved.bytes)
    return {
        "ok": True, "targetId": tab.target_id, "url": url,
        "media": media_token(saved.path), "mediaUrl": media_url(saved.name),
        "path": str(saved.path), "mediaId": saved.name, "width": width, "height": height,
        "bytes": saved.bytes, "mime": saved.mime,
        "profile": system.profile.name, "session": system.session_id,
    }


async def _release(handle: ElementHandle) -> None:
    """Drop the element's remote object (bounded, shielded, errors ignored)."""
    with trio.CancelScope(shield=True), trio.move_on_after(1):
        try:
            await handle.session.send("Runtime.releaseObject", {"objectId": handle.object_id})
        except BrowserdError:
            pass


@attrs.frozen(kw_only=True)
class _DiffBase:
    """The earlier screenshot a ``since`` names, and what it shows."""

    file: MediaFile
    origin: CaptureOrigin


def _media_name(value: str) -> str:
    """A media name from a mediaId, a mediaUrl, a ``MEDIA:<path>`` or a path (the last part)."""
    return value.removeprefix("MEDIA:").rstrip("/").rpartition("/")[2]


def _diff_base(system: System, args: dict[str, Any], region: str) -> _DiffBase | None:
    """The screenshot ``since`` names (checked: this scope, the same region and format)."""
    if args["since"] is None:
        return None
    found = system.media.resolve(_media_name(args["since"]))  # 404 for bad and unknown
    origin = system.media.origin_of(found.name)
    if origin is None or (origin.profile, origin.session) != (system.profile.name,
                                                              system.session_id):
        raise NotFound("no screenshot to diff against: since names no screenshot of this "
                       "profile and session taken since the service started", field="since",
                       hint="pass the mediaId of an earlier /screenshot answer of this tab")
    if origin.region != region:
        raise BadRequest(f"since names a screenshot of the {_REGION_WORDS[origin.region]}; "
                         f"this one is of the {_REGION_WORDS[region]}", field="since",
                         hint="take both the same way (viewport, fullPage or the same element)")
    wanted = "image/jpeg" if args["format"] == "jpeg" else "image/png"
    if found.mime != wanted:
        raise BadRequest(f"since names a {found.mime} screenshot; this one is {wanted}",
                         field="since", hint="take both in the same format")
    return _DiffBase(file=found, origin=origin)


_REGION_WORDS = {"viewport": "viewport", "page": "whole page (fullPage)",
                 "element": "an element"}


async def _diff(system: System, base: _DiffBase, shot: capture.Capture, saved: MediaFile,
                args: dict[str, Any]) -> dict[str, Any]:
    """The ``diff`` of the answer: ``shot`` against ``base`` (a crop saved when it changed)."""
    try:
        old = await trio.to_thread.run_sync(base.file.path.read_bytes)
    except OSError:  # pruned meanwhile
        raise NotFound("the earlier screenshot was removed by retention", field="since",
                       hint="diff against this new screenshot (its mediaId) next time",
                       mediaId=saved.name) from None
    old_size = capture.image_size(old, base.file.mime)
    if old_size != (shot.width, shot.height):
        raise imagediff.size_mismatch(old_size, (shot.width, shot.height), mediaId=saved.name,
                                      mediaUrl=media_url(saved.name))
    result = await imagediff.compare_in_thread(
        old, base.file.mime, shot.data, shot.mime, tolerance=args["tolerance"],
        jpeg_quality=args["quality"] or capture.DEFAULT_JPEG_QUALITY)
    body: dict[str, Any] = {
        "since": base.file.name, "changed": result.changed, "region": None,
        "changedPixels": result.changed_pixels, "ratio": result.ratio,
        "tolerance": args["tolerance"]}
    if result.box is None or result.crop is None or result.crop_size is None:
        return body
    body["region"] = imagediff.css_region(result.box, image_size=(shot.width, shot.height),
                                          css_size=(shot.css_width, shot.css_height))
    crop = await system.media.save(result.crop, kind="diff", ext=shot.ext, mime=shot.mime)
    audit_log.info("profile=%s session=%s media saved: %s bytes=%d", system.profile.name,
                   system.session_id or "-", crop.name, crop.bytes)
    body.update({"media": media_token(crop.path), "mediaUrl": media_url(crop.name),
                 "mediaId": crop.name, "path": str(crop.path), "width": result.crop_size[0],
                 "height": result.crop_size[1], "bytes": crop.bytes, "mime": crop.mime})
    if args["inline"] and crop.bytes <= capture.INLINE_MAX_BYTES:
        body["data"] = await capture.encode_base64(result.crop)
    return body


async def screenshot(system: System, args: dict[str, Any]) -> dict[str, Any]:
    """POST/GET /screenshot (admission and the front lock: the runtime's ``captures``)."""
    _check_screenshot_args(args)
    element_wanted = args["ref"] is not None or args["selector"] is not None
    region = "element" if element_wanted else "page" if args["fullPage"] else "viewport"
    base = _diff_base(system, args, region)
    gate = system.require_runtime().captures
    gate.admit()
    deadline = (FULL_PAGE_DEADLINE_S if args["fullPage"] or element_wanted
                else VIEWPORT_DEADLINE_S)

    async def run(tab: TabActor) -> dict[str, Any]:
        if base is not None and base.origin.target_id != tab.target_id:
            raise Conflict("since names a screenshot of another tab", field="since",
                           sinceTargetId=base.origin.target_id,
                           hint="diff on that tab (its targetId), or drop since")
        gate.admit()
        async with gate.limiter:
            handle = None
            if element_wanted:
                handle = await resolve_target(
                    tab, ElementTarget(ref=args["ref"], selector=args["selector"]))
            max_bytes = capture.INLINE_MAX_BYTES if args["inline"] else capture.MAX_BYTES
            try:
                shot = await capture.screenshot(
                    tab, full_page=args["fullPage"], fmt=args["format"],
                    quality=args["quality"], element=handle, front_lock=gate.front_lock,
                    max_bytes=max_bytes)
            finally:
                if handle is not None:
                    await _release(handle)
            url = tab.view().url
            origin = CaptureOrigin(target_id=tab.target_id, profile=system.profile.name,
                                   session=system.session_id, region=shot.region,
                                   css_width=shot.css_width, css_height=shot.css_height)
            saved = await system.media.save(shot.data, kind="screenshot", ext=shot.ext,
                                            mime=shot.mime, origin=origin)
            body = _body(system, tab, url, saved, width=shot.width, height=shot.height)
            if base is not None:
                body["diff"] = await _diff(system, base, shot, saved, args)
        if shot.scaled:
            body["scaled"] = True
        if shot.page_height is not None:
            body["pageHeight"] = round(shot.page_height)
        if shot.clipped:
            body["clipped"] = True
        if shot.note:
            body["note"] = shot.note
        if args["inline"] and len(shot.data) <= capture.INLINE_MAX_BYTES:
            body["data"] = await capture.encode_base64(shot.data)
        return body

    return await on_tab(system, args["targetId"], run, deadline_s=deadline)


async def print_pdf(system: System, args: dict[str, Any]) -> dict[str, Any]:
    """POST /pdf: width/height are null; 409 CONFLICT if Chromium will not print."""
    gate = system.require_runtime().captures
    gate.admit()

    async def run(tab: TabActor) -> dict[str, Any]:
        gate.admit()
        async with gate.limiter:
            data = await capture.pdf(tab)
            url = tab.view().url
            saved = await system.media.save(data, kind="pdf", ext="pdf", mime="application/pdf")
        return _body(system, tab, url, saved, width=None, height=None)

    return await on_tab(system, args["targetId"], run, deadline_s=PDF_DEADLINE_S)


async def get_media(system: System, args: dict[str, Any]) -> Response:
    """The stored file, streamed (:func:`~browserd.http.files.file_response`); 404 for any
    bad or unknown name."""
    found = system.media.resolve(args["name"])
    return await file_response(
        found.path, content_type=found.mime,
        headers={"Content-Disposition": f'inline; filename="{found.name}"'},
        missing=lambda: NotFound("media not found",  # pruned between resolve and read
                                 hint="media names come from /screenshot responses; old "
                                      "files are pruned by retention"))


#: What ``GET /media/<name>`` may answer: a capture, a PDF, a HAR file.
_MEDIA_TYPES = ("image/png", "image/jpeg", "application/pdf", "application/json")


def media_routes() -> list[Route]:
    """The media routes of one app (so of one service and its one browser)."""
    return [
        Route(path="/screenshot", methods=("GET", "POST"), handler=screenshot, tag="page",
              summary="Screenshot the viewport, the whole page or one element into the "
                      "media store",
              fields=(TARGET,
                      Field(name="fullPage", type="boolean", default=False,
                            description="the whole scrollable page"),
                      Field(name="ref", type="string", max_length=32,
                            description="an element ref from GET /snapshot"),
                      Field(name="selector", type="string", max_length=4096,
                            description="a CSS selector (first match, main document)"),
                      Field(name="format", type="string", default="png",
                            enum=("png", "jpeg"),
                            description="png, or jpeg (smaller; see quality)"),
                      Field(name="quality", type="integer", minimum=0, maximum=100,
                            description="JPEG quality (format jpeg only)"),
                      Field(name="inline", type="boolean", default=False,
                            description="also return the image as base64 `data`; it is "
                                        "made to fit 1 MiB (JPEG, lower quality, scaled — "
                                        "a full page clipped)"),
                      Field(name="since", type="string", max_length=512,
                            description="the mediaId of an earlier screenshot of this tab "
                                        "(taken the same way): also answer `diff`, what "
                                        "changed since, and an image of just that"),
                      Field(name="tolerance", type="integer",
                            default=imagediff.DEFAULT_TOLERANCE, minimum=0,
                            maximum=255, description="with since: how much (0-255) a "
                            "colour channel must change for its pixel to count")),
              name="screenshot", group="core", hints=READS, needs="read",
              untrusted=(), render=Render.IMAGE,
              answer=returns("Capture"), blocked_by=DIALOG, cli=Cli(),
              tool_text="Screenshot the viewport, the whole page or one element: answers the "
                        "image (up to 1 MiB) and its mediaUrl; with since, what changed"),
        Route(path="/pdf", methods=("POST",), handler=print_pdf, tag="page",
              summary="Print the tab to PDF into the media store",
              fields=(TARGET,), name="pdf", group="files", hints=ADDS, needs="read",
              confirm=NOT_HELD, untrusted=(), render=Render.FILE,
              answer=returns("Capture"), blocked_by=DIALOG, cli=Cli()),
        Route(path="/media/<name>", methods=("GET",), handler=get_media, tag="page",
              raw_response=True, path_params=("name",),
              summary="A stored screenshot or PDF, by the name a capture returned",
              fields=(Field(name="name", type="string", required=True),),
              name="media", group=NO_TOOL, hints=READS, needs="read", blocked_by=NOTHING,
              answer=Answer(media_types=_MEDIA_TYPES,
                            schema={"type": "object", "description": "a HAR 1.2 file"},
                            description="the file, in its own content type (a HAR file is "
                                        "application/json)"),
              cli=Cli(positional=("name",))),
    ]
