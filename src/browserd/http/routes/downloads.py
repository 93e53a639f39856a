"""Routes for downloads: ``GET /downloads`` and ``GET /downloads/<id>``.

``GET /downloads`` lists the records newest last (``{downloads: [{id,
targetId, url, suggestedFilename, state, receivedBytes, totalBytes, path?,
mediaUrl?, reason?}]}``); ``targetId`` filters by tab. ``GET
/downloads/<id>`` streams a completed file as ``application/octet-stream``
with ``Content-Disposition: attachment`` (a sanitised filename, never
inline) and ``X-Content-Type-Options: nosniff``; any other id is one and the
same 404. (``POST /wait {download: true}``, which waits for a tab's next
download, is an input route: :mod:`browserd.http.routes.input`.)

The file is read in 1 MiB chunks in worker threads; a client that goes away
ends the stream (the file is closed). A file pruned between lookup and read
is a 404.

Downloads are the profile's (``<data>/downloads/<profile>/``) and each
record says which ``profile`` and ``session`` made it. A request sees the
downloads of its own scope only, as with tabs: with a session, that
session's; without one, those of no session. Another scope's download is
the same 404 as an unknown one.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any
from urllib.parse import quote

from quart import Response

from ...errors import NotFound
from ...system import System
from ..answers import returns
from ..facts import NO_TOOL, NOTHING, READS, Cli, HeldDownload, Prefix, Render
from ..files import file_response
from ..schema import Answer, Field, Route

__all__ = ["content_disposition", "download_routes", "safe_filename"]

_UNSAFE_NAME_CHARS = re.compile(r'[\x00-\x1f\x7f"\\/:*?<>|;%]')


def safe_filename(suggested: str) -> str:
    """A filename safe to offer in Content-Disposition: no path, quotes or controls.

    Path separators and reserved characters become ``_``, leading dots are
    dropped (no hidden files, no ``..``), the result is cut to 150
    characters; an empty result is ``download``.
    """
    name = unicodedata.normalize("NFC", suggested)
    name = "".join(c for c in name if unicodedata.category(c)[0] != "C")
    name = _UNSAFE_NAME_CHARS.sub("_", name).strip().lstrip(".").strip()
    return name[:150] or "download"


def content_disposition(suggested: str) -> str:
    """``attachment`` with an ASCII fallback and the UTF-8 name (RFC 6266 / 5987)."""
    name = safe_filename(suggested)
    ascii_name = name.encode("ascii", "replace").decode().replace("?", "_")
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name, safe='')}"


def _check_session(system: System) -> None:
    """A request naming a session: 404 SESSION_NOT_FOUND unless it is live."""
    if system.session_id is not None:
        system.require_runtime()  # resolves (and touches) the session


async def list_downloads(system: System, args: dict[str, Any]) -> dict[str, Any]:
    _check_session(system)
    records = [r for r in system.downloads.records() if r.session_id == system.session_id]
    if args["targetId"]:
        wanted = args["targetId"]
        records = [r for r in records if r.target_id and r.target_id.startswith(wanted)]
    return {"downloads": [r.to_json() for r in records]}


async def get_download(system: System, args: dict[str, Any]) -> Response:
    _check_session(system)
    record = system.downloads.get(args["id"])
    if record.session_id != system.session_id:  # another scope's: as if unknown
        raise NotFound("download not found",
                       hint="ids come from GET /downloads; old downloads are pruned by retention")
    record, path = system.downloads.resolve_file(record.id)
    return await file_response(
        path, content_type="application/octet-stream",
        headers={"Content-Disposition": content_disposition(record.suggested_filename),
                 "X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox",
                 "Cache-Control": "no-store"},
        missing=lambda: NotFound("download not found",  # pruned between resolve and read
                                 hint="old downloads are pruned by retention"))


def download_routes() -> list[Route]:
    return [
        Route(path="/downloads", methods=("GET",), handler=list_downloads, tag="page",
              summary="Downloads the browser made (kept under the service's data dir)",
              fields=(Field(name="targetId", type="string", max_length=200,
                            description="only this tab's downloads (id or prefix)"),),
              name="downloads", group="files", hints=READS, needs="read",
              untrusted=("downloads",), render=Render.PAGE,
              answer=returns("DownloadList"), blocked_by=NOTHING, cli=Cli()),
        Route(path="/downloads/<id>", methods=("GET",), handler=get_download, tag="page",
              raw_response=True, path_params=("id",),
              summary="A completed download's file, as an attachment",
              fields=(Field(name="id", type="string", required=True, max_length=64),),
              name="download", group=NO_TOOL, hints=READS, needs="files", blocked_by=NOTHING,
              confirm=HeldDownload(field="id"),
              answer=Answer(media_types=("application/octet-stream",),
                            description="the downloaded file (an attachment)"),
              cli=Cli(positional=("id",),
                      prefixed=Prefix(listing="/downloads", key="downloads"))),
    ]
