"""``browserd record`` and ``browserd replay``: session records from the command line.

``browserd record start [--target ID] [--video]`` / ``stop`` record the calls of
the client's session (``--session``, like every command; ``--video``: also a WebM
video of the tab, which needs ffmpeg where the service runs); ``list`` and ``show
ID`` read them (JSON with ``--json``; page text shown with ``repr`` so it cannot
forge lines); ``html ID --out F`` writes the self-contained page, ``trace ID --out
F`` a Playwright trace zip (``playwright show-trace F`` opens it), ``script ID
--lang python|typescript [--out F]`` the Playwright script, ``video ID --out F``
the video (WebM).
``browserd replay ID [--target ID]`` repeats a record through browserd and
exits non-zero when it stopped at a step; it may take up to
:data:`REPLAY_TIMEOUT_S`. What a page provided (names, titles, URLs, step
listings, a script) is printed between the page boundary lines
(:class:`~browserd.cli.format.PageText`); record ids go into paths quoted.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import BrowserdError
from .format import PageText

__all__ = ["RECORD_COMMANDS", "REPLAY_TIMEOUT_S", "add_record_commands"]

#: How long ``browserd replay`` waits for the service's answer (every step has its own
#: deadline there; a long record takes long).
REPLAY_TIMEOUT_S = 30 * 60.0


def _path(record_id: str, tail: str = "") -> str:
    return f"/records/{quote(record_id, safe='')}{tail}"


def add_record_commands(sub: Any) -> None:
    """Add ``record`` and ``replay`` to the ``browserd`` subparsers ``sub``."""
    p = sub.add_parser("record", help="record this session's actions; read, export records")
    actions = p.add_subparsers(dest="record_action", required=True)
    start = actions.add_parser("start", help="start recording")
    start.add_argument("--target", help="record only this tab (targetId)")
    start.add_argument("--video", action="store_true",
                       help="also record a video (WebM) of the tab (needs ffmpeg)")
    actions.add_parser("stop", help="stop recording")
    actions.add_parser("list", help="the records you may read")
    show = actions.add_parser("show", help="one record's steps")
    show.add_argument("record_id")
    html = actions.add_parser("html", help="write the record as one HTML page")
    html.add_argument("record_id")
    html.add_argument("--out", required=True, help="the file to write")
    trace = actions.add_parser("trace", help="write the record as a Playwright trace zip")
    trace.add_argument("record_id")
    trace.add_argument("--out", required=True, help="the file to write (a .zip)")
    video = actions.add_parser("video", help="write the record's video (WebM)")
    video.add_argument("record_id")
    video.add_argument("--out", required=True, help="the file to write (a .webm)")
    code = actions.add_parser("script", help="the record as a Playwright script")
    code.add_argument("record_id")
    code.add_argument("--lang", choices=("python", "typescript"), default="python")
    code.add_argument("--out", help="the file to write (default: print it)")
    replay = sub.add_parser("replay", help="repeat a record's steps through browserd")
    replay.add_argument("record_id")
    replay.add_argument("--target", help="the tab to replay on (default: the current tab)")


def _text(data: Any) -> str:
    return data.decode("utf-8", errors="replace") if isinstance(data, bytes) else str(data)


def _step_line(step: dict[str, Any]) -> str:
    target = (step.get("targets") or {}).get("element") or {}
    named = " ".join(repr(str(target[k])) for k in ("role", "name") if target.get(k))
    outcome = "ok" if step.get("ok") else (step.get("error") or {}).get("code", "error")
    return f"{step['index']:>3}  {step['kind']:<9} {named or '-'}  {outcome}  " \
           f"{step.get('durationMs', 0):g} ms"


def _video_word(record: dict[str, Any]) -> str:
    video = record.get("video")
    if not isinstance(video, dict):
        return ""
    word = f"  video={video.get('state')}"
    if video.get("state") == "failed":
        word += f" ({video.get('reason')})"
    return word


def _record(client: Any, args: argparse.Namespace) -> Any:
    action = args.record_action
    if action == "start":
        return client.post("/record/start", targetId=args.target,
                           video=True if args.video else None)
    if action == "stop":
        return client.post("/record/stop")
    if action == "list":
        listing = client.get("/records")
        if getattr(args, "json", False):
            return listing
        return PageText("\n".join(f"{r['id']}  steps={r['steps']}  "
                                  f"{'recording' if r['recording'] else 'stopped'}  "
                                  f"session={r['session'] or '-'}" + _video_word(r)
                                  for r in listing["records"])) or "no records"
    if action == "show":
        record = client.get(_path(args.record_id))
        if getattr(args, "json", False):
            return record
        return PageText("\n".join(_step_line(s) for s in record["steps"])) or "no steps"
    if action == "html":
        page = client.get(_path(args.record_id), format="html")
        Path(args.out).write_text(_text(page), encoding="utf-8")
        return f"wrote {args.out}"
    if action == "video":
        data = client.get(_path(args.record_id, "/video"))
        Path(args.out).write_bytes(data if isinstance(data, bytes) else _text(data).encode())
        return f"wrote {args.out}"
    if action == "trace":
        data = client.get(_path(args.record_id), format="trace")
        Path(args.out).write_bytes(data if isinstance(data, bytes) else _text(data).encode())
        return f"wrote {args.out} (open it with: playwright show-trace {args.out})"
    code = _text(client.get(_path(args.record_id), format="script", lang=args.lang))
    if args.out:
        Path(args.out).write_text(code, encoding="utf-8")
        return f"wrote {args.out}"
    return PageText(code)


def _replay(client: Any, args: argparse.Namespace) -> Any:
    """Replay the record; BrowserdError (exit 1) naming the step and the error's code when
    it stopped (not its message: that may quote the page, and the error line is the
    CLI's own words)."""
    waited, client.timeout = client.timeout, max(client.timeout, REPLAY_TIMEOUT_S)
    try:
        answer = client.post(_path(args.record_id, "/replay"), targetId=args.target)
    finally:
        client.timeout = waited
    if not answer.get("ok"):
        error = answer.get("error") or {}
        raise BrowserdError(f"the replay stopped at step {answer.get('stoppedAt')}: "
                            f"{error.get('code')}",
                            hint="show the record: browserd record show "
                                 f"{args.record_id}")
    return answer


RECORD_COMMANDS = {"record": _record, "replay": _replay}
