"""Routes for session records: start and stop one, list, read (JSON, HTML, script), delete,
replay (:mod:`browserd.records`).

``POST /record/start {targetId?, video?}`` records the calls of the request's session
(its profile and session; only that tab's with ``targetId``) until ``POST
/record/stop`` or the session ends; with ``video: true`` also that tab's (else the
current tab's) screencast as a WebM video (:mod:`browserd.records.video`; ffmpeg is
looked up first: 424 FFMPEG_MISSING), served by ``GET /records/<id>/video`` once the
record stopped. A record belongs to the token that started it: it holds that token's
calls only (another agent's in the same session are not in it), and only that token
reads, replays or deletes it, in its profile and session (any other agent gets 404,
as if it did not exist); the person (owner token) reads and deletes every record. The
recording itself is :mod:`browserd.records.recorder`, reached from
:func:`browserd.http.dispatch.run_handler`.
``GET /records/<id>`` answers JSON (``format=json``, shots inline as base64 with
``shots=true``; ``untrusted: ["steps"]``), a self-contained HTML page (``format=html``),
a Playwright script (``format=script&lang=python|typescript``) or a Playwright trace
zip (``format=trace``, :mod:`browserd.records.trace`); the steps have every
vault value replaced by its marker before any of them is rendered.
``POST /records/<id>/replay`` repeats the steps through the route table (each call
authorized, audited and bound as the replay request), naming elements by role and
name; it stops at the first step that fails with ``{ok: false, stoppedAt, step, error,
untrusted: ["step"]}`` (HTTP 200: the replay ran and says where it stopped). File
errors are 507; cancellation abandons the call in flight.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from typing import Any

import orjson
import trio
from quart import Response

from ...errors import BrowserdError, Conflict, NotFound
from ...principals import require
from ...records import RecordInfo, Step
from ...records.html import record_html
from ...records.replay import replay_plan
from ...records.scripts import LANGS, script
from ...records.store import record_not_found
from ...records.trace import trace_zip
from ...records.video import VIDEO_MIME, find_ffmpeg, video_task
from ...system import System
from .. import calls
from ..answers import returns
from ..answers_json import ref
from ..facts import ACTS, LOCAL_ACTS, LOCAL_READS, NO_TOOL, NOT_HELD, NOTHING, Cli, Render, by_hand
from ..fields import TARGET
from ..files import file_response
from ..schema import Answer, Field, Route, parse_args

__all__ = ["record_routes"]


_ID = Field(name="id", type="string", required=True, max_length=64,
            description="a record id from GET /records")
_RESOLVE_DEADLINE_S = 5.0


def _visible(system: System, info: RecordInfo) -> bool:
    """The person sees every record; an agent its own, in this profile and session."""
    if system.principal.is_owner:
        return True
    return (info.principal == system.principal.name and info.profile == system.profile.name
            and info.session == system.session_id)


def _allow(system: System, scope: str, what: str) -> None:
    """The routes the person reaches too (they need ``any``): an agent needs
    ``scope``; the owner token needs nothing more (ScopeRequired otherwise)."""
    if not system.principal.is_owner:
        require(system.principal, scope, what=what)


async def _end_orphans(system: System) -> None:
    """End the records of sessions that ended (closed, or idle past their ttl)."""
    for profile, session in system.records.recorded_sessions():
        try:
            alive = session in system.profiles.get(profile).sessions
        except BrowserdError:
            alive = False
        if not alive:
            await system.records.end_session(profile, session)


async def _load(system: System, record_id: str) -> tuple[RecordInfo, list[Step]]:
    """The record if this caller may see it; 404 alike for unknown and not theirs."""
    await _end_orphans(system)
    info, steps = await system.records.load(record_id)
    if not _visible(system, info):
        raise record_not_found()
    return info, steps


def _redacted(system: System, steps: list[Step]) -> list[Step]:
    """The steps with every vault value replaced by its marker (before any rendering)."""
    redact = system.vault.redactor.redact
    return [Step.from_json(redact(s.to_json())) for s in steps]


async def start(system: System, args: dict[str, Any]) -> dict[str, Any]:
    """Begin recording this session (409 CONFLICT when it already records); with ``video``,
    424 FFMPEG_MISSING before anything starts when there is no ffmpeg."""
    ffmpeg = find_ffmpeg(system.settings.ffmpeg) if args["video"] else None
    target_id = None
    video = None
    if args["targetId"] is not None or ffmpeg is not None:
        runtime = system.require_runtime()
        with trio.fail_after(_RESOLVE_DEADLINE_S):
            tab = await runtime.tabs.resolve(args["targetId"], use=False)
        if args["targetId"] is not None:
            target_id = tab.target_id
        if ffmpeg is not None:
            video = video_task(runtime.connection, tab, ffmpeg=ffmpeg,
                               front_lock=runtime.captures.front_lock)
    await _end_orphans(system)
    info = await system.records.start(system.profile.name, system.session_id,
                                      system.principal.name, target_id, video=video,
                                      video_target=None if video is None else tab.target_id)
    return {"ok": True, "record": info.to_json()}


async def stop(system: System, args: dict[str, Any]) -> dict[str, Any]:
    """End this session's recording (404 when none records)."""
    info = await system.records.stop(system.profile.name, system.session_id,
                                     system.principal.name)
    return {"ok": True, "record": info.to_json()}


async def list_records(system: System, args: dict[str, Any]) -> dict[str, Any]:
    """The records this caller may read (the person: all), newest first."""
    _allow(system, "read", "GET /records")
    await _end_orphans(system)
    infos = [i for i in await system.records.infos() if _visible(system, i)]
    return {"records": [i.to_json() for i in infos]}


async def _shots(system: System, info: RecordInfo, steps: list[Step]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for step in steps:
        for shot in (step.before, step.after):
            if shot is not None:
                try:
                    out[shot.name] = await system.records.shot(info.id, shot.name)
                except BrowserdError:
                    continue  # removed meanwhile: the page shows the step without it
    return out


async def get_record(system: System, args: dict[str, Any]) -> Response:
    """One record as JSON, HTML or a script (raw response; vault values redacted in the
    steps first, then rendered; the screenshots are inlined after)."""
    _allow(system, "read", "GET /records/<id>")
    info, steps = await _load(system, args["id"])
    steps = _redacted(system, steps)
    if args["format"] == "html":
        page = record_html(info, steps, await _shots(system, info, steps))
        return Response(page, status=200, content_type="text/html; charset=utf-8",
                        headers={"Content-Security-Policy": "default-src 'none'; img-src data:; "
                                                            "style-src 'unsafe-inline'"})
    if args["format"] == "trace":
        data = trace_zip(info, steps, await _shots(system, info, steps))
        return Response(data, status=200, content_type="application/zip",
                        headers={"Content-Disposition": f'attachment; filename="{info.id}.zip"'})
    if args["format"] == "script":
        text = script(steps, args["lang"], record_id=info.id)
        ext = "py" if args["lang"] == "python" else "ts"
        return Response(text, status=200, content_type="text/plain; charset=utf-8",
                        headers={"Content-Disposition": f'inline; filename="{info.id}.{ext}"'})
    body: dict[str, Any] = {**info.to_json(), "untrusted": ["steps"],
                            "steps": [s.to_json() for s in steps]}
    if args["shots"]:
        shots = await _shots(system, info, steps)
        for step in body["steps"]:
            for which in ("before", "after"):
                shot = step.get(which)
                if shot is not None and shot["name"] in shots:
                    shot["data"] = base64.b64encode(shots[shot["name"]]).decode("ascii")
    return Response(orjson.dumps(body), status=200,
                    mimetype="application/json")


async def get_shot(system: System, args: dict[str, Any]) -> Response:
    """One screenshot of a record this caller may read (JPEG)."""
    _allow(system, "read", "GET /records/<id>/shots/<name>")
    info, _ = await _load(system, args["id"])
    data = await system.records.shot(info.id, args["name"])
    return Response(data, status=200, content_type="image/jpeg")


async def get_video(system: System, args: dict[str, Any]) -> Response:
    """The record's video (WebM), once its recording ended; 404 when it has none, 409 while
    it is being recorded. Streamed (:func:`~browserd.http.files.file_response`)."""
    _allow(system, "read", "GET /records/<id>/video")
    info, _ = await _load(system, args["id"])
    if info.video is None:
        raise NotFound("this record has no video",
                       hint="POST /record/start {video: true} records one")
    if info.video.get("state") == "recording":
        raise Conflict("the video is being recorded", hint="POST /record/stop first")
    path = system.records.video_path(info.id)
    no_file = NotFound(f"this record's video has no file ({info.video.get('reason')})",
                       hint="the record's video.reason says why")
    try:
        empty = (await trio.Path(path).stat()).st_size == 0
    except OSError:
        empty = True
    if empty:
        raise no_file
    return await file_response(
        path, content_type=VIDEO_MIME,
        headers={"Content-Disposition": f'inline; filename="{info.id}.webm"'},
        missing=lambda: no_file)


async def delete_record(system: System, args: dict[str, Any]) -> dict[str, Any]:
    """Delete a record this caller may read (one being recorded stops first)."""
    _allow(system, "act", "DELETE /records/<id>")
    info, _ = await _load(system, args["id"])
    await system.records.delete(info.id)
    return {"ok": True, "deleted": info.id}


async def _run_step(system: System, route: Route, body: dict[str, Any], *,
                    record_id: str) -> None:
    """One replayed call, made as any call is (:mod:`browserd.http.calls`): authorized,
    run by ``run_handler`` (a ``confirm`` rule's hold, the recorder, the deadline) and
    audited (method ``REPLAY``). Raises the BrowserdError the step failed with;
    cancellation propagates (audited as ``cancelled``)."""
    started = time.perf_counter()
    outcome = "cancelled"
    args: dict[str, Any] = {}
    what = f"replay {route.path} ({record_id})"
    try:
        args = parse_args(route.fields, query={}, body=body)
        calls.authorize(system.principal, route, args, what=what)
        await calls.run_handler(system, route, args, path=route.path)
        outcome = "ok"
    except BaseException as exc:
        error = calls.redacted(system, calls.domain_error(exc, what=what))  # re-raises cancel
        outcome = error.code
        raise error from None
    finally:
        calls.audit(system, who=system.principal.name, method="REPLAY", path=route.path,
                    args=args, outcome=outcome, started=started, profile=system.profile.name,
                    session=system.session_id or "-")


def _stop_error(system: System, exc: BrowserdError) -> dict[str, Any]:
    """The ``error`` of a stopped replay: the BrowserdError's body (vault values redacted)."""
    body: dict[str, Any] = system.vault.redactor.redact(exc.to_dict())
    return body


def _replay_handler(table: Callable[[], list[Route]]) -> Any:
    async def replay(system: System, args: dict[str, Any]) -> dict[str, Any]:
        """Repeat the record's steps on ``targetId`` (default: the current tab).

        Each step is one route call made as this request (:func:`_run_step`),
        with an audit line. The first that fails ends the replay: ``{ok: false,
        stoppedAt, step, error, done}``. Cancellation abandons the call in flight.
        """
        info, steps = await _load(system, args["id"])
        routes = {r.path: r for r in table() if "POST" in r.methods}
        by_index = {s.index: s for s in steps}
        done = 0
        for planned in replay_plan(steps):
            try:
                if planned.problem is not None:
                    raise Conflict(planned.problem, hint="record with role/name or selectors "
                                   "to replay this step")
                await _run_step(system, routes[planned.path],
                                {**planned.body, "targetId": args["targetId"]},
                                record_id=info.id)
            except BrowserdError as exc:
                error = _stop_error(system, exc)
                if planned.problem is not None:
                    error["code"] = "NO_LOCATOR"
                return {"ok": False, "recordId": info.id, "stoppedAt": planned.index,
                        "step": system.vault.redactor.redact(by_index[planned.index].to_json()),
                        "error": error, "done": done, "untrusted": ["step"]}
            done += 1
        return {"ok": True, "recordId": info.id, "done": done}

    return replay


def record_routes(table: Callable[[], list[Route]]) -> list[Route]:
    """The session record routes; ``table`` gives the whole route table (for replays)."""
    return [
        Route(path="/record/start", methods=("POST",), handler=start, tag="ops",
              summary="Start recording this session's actions (steps, targets, screenshots)",
              fields=(Field(name="targetId", type="string", max_length=200,
                            description="record only this tab's calls (default: every tab "
                                        "of the session)"),
                      Field(name="video", type="boolean", default=False,
                            description="also record a video (WebM) of this tab (default: "
                                        "the current tab); needs ffmpeg")),
              name="record_start", group="service", hints=LOCAL_ACTS, needs="act",
              render=Render.FIELDS,
              answer=returns("RecordChanged"), blocked_by=NOTHING, cli=by_hand("record")),
        Route(path="/record/stop", methods=("POST",), handler=stop, tag="ops",
              summary="Stop recording this session", fields=(),
              name="record_stop", group="service", hints=LOCAL_ACTS, needs="act",
              render=Render.FIELDS,
              answer=returns("RecordChanged"), blocked_by=NOTHING, cli=by_hand("record")),
        Route(path="/records", methods=("GET",), handler=list_records, tag="ops",
              summary="The session records you may read", fields=(),
              name="records", group="service", hints=LOCAL_READS, needs="any",
              render=Render.FIELDS,
              answer=returns("RecordList"), blocked_by=NOTHING, cli=by_hand("record")),
        Route(path="/records/<id>", methods=("GET",), handler=get_record, tag="ops",
              raw_response=True, path_params=("id",),
              summary="One record: JSON steps, an HTML page or a Playwright script",
              fields=(_ID,
                      Field(name="format", type="string", default="json",
                            enum=("json", "html", "script", "trace")),
                      Field(name="lang", type="string", default="python", enum=LANGS,
                            description="format script: the script's language"),
                      Field(name="shots", type="boolean", default=False,
                            description="format json: screenshots inline as base64 data")),
              name="record", group=NO_TOOL, hints=LOCAL_READS, needs="any",
              answer=Answer(media_types=("application/json", "text/html", "text/plain"),
                            schema=ref("Record"),
                            description="format json: the record; html: a page of it; "
                                        "script: a Playwright script"),
              blocked_by=NOTHING, cli=by_hand("record")),
        Route(path="/records/<id>/shots/<name>", methods=("GET",), handler=get_shot,
              tag="ops", raw_response=True, path_params=("id", "name"),
              summary="One screenshot of a record (JPEG)",
              fields=(_ID, Field(name="name", type="string", required=True, max_length=32)),
              name="records_shots", group=NO_TOOL, hints=LOCAL_READS, needs="any",
              answer=Answer(media_types=("image/jpeg",), description="the screenshot"),
              blocked_by=NOTHING, cli=Cli()),
        Route(path="/records/<id>/video", methods=("GET",), handler=get_video, tag="ops",
              raw_response=True, path_params=("id",),
              summary="A record's video (WebM), once it stopped", fields=(_ID,),
              name="records_video", group=NO_TOOL, hints=LOCAL_READS, needs="any",
              answer=Answer(media_types=("video/webm",), description="the record's video"),
              blocked_by=NOTHING, cli=by_hand("record")),
        Route(path="/records/<id>", methods=("DELETE",), handler=delete_record, tag="ops",
              path_params=("id",), summary="Delete a record", fields=(_ID,),
              name="records_delete", group=NO_TOOL, hints=LOCAL_ACTS, needs="any",
              answer=returns("RecordDeleted"), blocked_by=NOTHING, cli=Cli()),
        Route(path="/records/<id>/replay", methods=("POST",), handler=_replay_handler(table),
              tag="ops", path_params=("id",),
              summary="Repeat a record's steps through browserd, by role and name",
              fields=(_ID, TARGET), name="records_replay", group=NO_TOOL, hints=ACTS,
              confirm=NOT_HELD, untrusted=("step",),
              needs="act", answer=returns("ReplayAnswer"), blocked_by=NOTHING,
              cli=by_hand("replay")),
    ]
