"""The ops page's Records panel: the session records, read with the person's ``/ui`` session.

The person reads every record (as with the owner token), through the same
functions the token routes use (:mod:`browserd.http.routes.records`: vault
values redacted before anything is rendered, the same 404 for an unknown id):

- ``GET /ui/api/records``: ``{records: [record]}``, newest first;
- ``GET /ui/api/records/<id>``: the record as JSON (steps, ``untrusted: ["steps"]``);
- ``GET /ui/api/records/<id>/shots/<name>``: one step's JPEG;
- ``GET /ui/api/records/<id>/export?format=html|trace|script[&lang=python|typescript]``:
  the export, as a download (``Content-Disposition: attachment``);
- ``GET /ui/api/records/<id>/video``: the video (WebM).

Handlers take ``(system, session)`` as every ``/ui`` handler does (the
caller, :func:`browserd.http.routes.ui.register_ui`, adds its headers and its
error answers); ``system`` is the service's own (the person's). Reads only:
nothing here changes a record.
"""

from __future__ import annotations

from typing import Any

import orjson
from quart import Response, request

from ...errors import BadRequest
from ...records.scripts import LANGS
from ...system import System
from ...ui.sessions import UiSession
from . import records

__all__ = ["RECORD_UI_ROUTES"]

_EXPORTS = ("html", "trace", "script")


def _arg(name: str) -> str:
    value = (request.view_args or {}).get(name)
    if not isinstance(value, str) or not value or len(value) > 64:
        raise BadRequest(f"{name} is required", field=name)
    return value


async def list_records(system: System, session: UiSession | None) -> Response:
    answer = await records.list_records(system, {})
    return Response(orjson.dumps(answer), content_type="application/json")


async def get_record(system: System, session: UiSession | None) -> Response:
    return await records.get_record(system, {"id": _arg("id"), "format": "json",
                                             "lang": "python", "shots": False})


async def get_shot(system: System, session: UiSession | None) -> Response:
    return await records.get_shot(system, {"id": _arg("id"), "name": _arg("name")})


async def export(system: System, session: UiSession | None) -> Response:
    """One export of a record, to be saved (never shown in the ops page's own origin)."""
    fmt = request.args.get("format", "html")
    lang = request.args.get("lang", "python")
    if fmt not in _EXPORTS:
        raise BadRequest(f"format must be one of {', '.join(_EXPORTS)}", field="format")
    if lang not in LANGS:
        raise BadRequest(f"lang must be one of {', '.join(LANGS)}", field="lang")
    record_id = _arg("id")
    response = await records.get_record(system, {"id": record_id, "format": fmt,
                                                 "lang": lang, "shots": False})
    ext = {"html": "html", "trace": "zip", "script": "py" if lang == "python" else "ts"}[fmt]
    response.headers["Content-Disposition"] = f'attachment; filename="{record_id}.{ext}"'
    return response


async def get_video(system: System, session: UiSession | None) -> Response:
    return await records.get_video(system, {"id": _arg("id")})


#: (rule, handler) of the panel's routes, for :func:`browserd.http.routes.ui.register_ui`.
RECORD_UI_ROUTES: tuple[tuple[str, Any], ...] = (
    ("/ui/api/records", list_records),
    ("/ui/api/records/<id>", get_record),
    ("/ui/api/records/<id>/shots/<name>", get_shot),
    ("/ui/api/records/<id>/export", export),
    ("/ui/api/records/<id>/video", get_video),
)
