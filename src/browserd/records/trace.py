"""A record as a Playwright trace (a zip ``playwright show-trace`` opens).

The zip holds what Playwright's trace viewer reads: ``trace.trace``, one
JSON event a line, ``trace.network`` (the same for network entries) and
``resources/<sha1>`` files named by the SHA-1 of their bytes. The events
are written in trace format :data:`TRACE_VERSION` (actions named by
``apiName``, screencast frames naming their resource by ``sha1``), which
the viewer upgrades on loading to its own newest format:

* ``context-options`` first: the format version, browser, wall and
  monotonic clocks (milliseconds; both the wall clock here), a title;
* per step a ``before`` and an ``after`` event sharing one ``callId``
  (``call@<index>``): ``apiName`` (``page.goto``, ``locator.click``,
  ``locator.fill`` …), the protocol ``class``/``method``, ``params`` (the
  step's arguments, its element as a Playwright selector from its role and
  accessible name, else its CSS selector or text), the URL and title after
  as ``result``, and a failed step's ``error`` (its code and message). An
  ``/act`` batch is one action whose calls are its children (``parentId``;
  they share the batch's times: a record does not time them one by one);
* ``screencast-frame`` events for the before and after shots (at the
  step's start and end), ``console`` events for the console errors;
* in ``trace.network`` a ``resource-snapshot`` (a HAR entry) per failed
  request, at the start of the step that saw it.

What it is given is written as it is: the route hands it steps whose vault
values are already markers, and adds nothing of its own but the shots'
bytes. A shot it is not given is left out. Plain code: builds bytes, no I/O.
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
import time
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..tabs.actions.kinds import RECORDINGS
from .model import Call, RecordInfo, Shot, Step
from .playwright import playwright_selector

__all__ = ["TRACE_VERSION", "api_call", "playwright_selector", "trace_events", "trace_zip"]

#: The trace format version written (the viewer modernizes it to its own on loading).
TRACE_VERSION = 7

_PLATFORMS = {"darwin": "darwin", "win32": "win32"}

#: Argument names a target's selector replaces in ``params``.
_TARGET_ARGS = frozenset({"role", "name", "exact", "nth", "selector", "within"})


def api_call(call: Call) -> tuple[str, str, str, dict[str, Any]]:
    """(class, method, apiName, params) of the Playwright call that does what ``call`` did.

    ``params`` are the call's (already redacted) arguments, its element as
    ``selector`` (a drag's as ``source`` and ``target``); a ``secret``
    argument is typed as the secret's marker, never a value. Which call it is
    is the kind's own (:data:`browserd.tabs.actions.kinds.RECORDINGS`); a kind
    with no Playwright twin (``scroll`` by an offset, ``wait`` for a handoff …)
    is ``browserd.<kind>``.
    """
    kind, args = call.kind, dict(call.args)
    recording = RECORDINGS.get(kind)
    target = call.targets.get("element")
    selector = playwright_selector(target) if target is not None else None
    params: dict[str, Any] = {}
    if selector is not None:
        params["selector"] = selector
        args = {k: v for k, v in args.items() if k not in _TARGET_ARGS}
        if recording is not None and recording.text_names_element and target is not None \
                and target.text is not None:
            args.pop("text", None)
    params.update(args)
    if recording is None or recording.trace is None:
        return "Browserd", kind, f"browserd.{kind}", params
    cls, method, api = recording.trace(call, selector, params)
    return cls, method, api, params


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def _page_id(step: Step, info: RecordInfo) -> str:
    return f"page@{step.target_id or info.target_id or info.id}"


def _result(step: Step) -> dict[str, Any]:
    out = {"url": step.url, "title": step.title,
           "effects": None if step.effects is None else dict(step.effects)}
    return {k: v for k, v in out.items() if v is not None}


def _error(step: Step) -> dict[str, Any]:
    error = step.error or {}
    code = str(error.get("code") or "ERROR")
    message = str(error.get("message") or "the step failed")
    return {"name": code, "message": f"{code}: {message}"}


def _frame(shot: Shot | None, shots: Mapping[str, bytes], page_id: str, at: float,
           resources: dict[str, bytes]) -> dict[str, Any] | None:
    """The screencast frame of ``shot`` (its bytes kept in ``resources``), or None."""
    data = shots.get(shot.name) if shot is not None else None
    if shot is None or data is None:
        return None
    sha1 = hashlib.sha1(data).hexdigest()
    resources[sha1] = data
    return {"type": "screencast-frame", "pageId": page_id, "sha1": sha1,
            "width": shot.width, "height": shot.height, "timestamp": at}


def _step_events(step: Step, info: RecordInfo, shots: Mapping[str, bytes],
                 resources: dict[str, bytes]) -> Iterator[dict[str, Any]]:
    """The events of one step, in time order."""
    page_id = _page_id(step, info)
    start = _ms(step.started_at)
    end = round(start + max(step.duration_ms, 0.0), 3)
    call_id = f"call@{step.index}"
    before = _frame(step.before, shots, page_id, start, resources)
    if before is not None:
        yield before
    cls, method, api, params = api_call(step.call)
    yield {"type": "before", "callId": call_id, "startTime": start, "apiName": api,
           "class": cls, "method": method, "params": params, "pageId": page_id,
           "wallTime": start}
    if step.call.kind == "act":
        for n, action in enumerate(step.actions):
            cls, method, api, params = api_call(action)
            child = f"{call_id}.{n}"
            yield {"type": "before", "callId": child, "parentId": call_id, "startTime": start,
                   "apiName": api, "class": cls, "method": method, "params": params,
                   "pageId": page_id, "wallTime": start}
            yield {"type": "after", "callId": child, "endTime": end}
    for entry in step.console:
        at = entry.get("timestamp")
        yield {"type": "console", "time": _ms(float(at)) if isinstance(at, int | float)
               else start, "pageId": page_id,
               "messageType": "error", "text": str(entry.get("text") or ""),
               "location": {"url": "", "lineNumber": 0, "columnNumber": 0}}
    if step.url is not None:
        yield {"type": "log", "callId": call_id, "time": end,
               "message": f"now at {step.url}"}
    after: dict[str, Any] = {"type": "after", "callId": call_id, "endTime": end,
                             "result": _result(step)}
    if not step.ok:
        after["error"] = _error(step)
    yield after
    frame = _frame(step.after, shots, page_id, end, resources)
    if frame is not None:
        yield frame


def _network_entry(request: Mapping[str, Any], page_id: str, at: float) -> dict[str, Any]:
    """A failed request as the HAR entry of a ``resource-snapshot`` event."""
    status = request.get("status")
    failure = request.get("errorText")
    empty: list[Any] = []
    return {"type": "resource-snapshot", "snapshot": {
        "pageref": page_id,
        "startedDateTime": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at / 1000))
        + f".{int(at % 1000):03d}Z",
        "time": 0, "_monotonicTime": at,
        "_resourceType": str(request.get("resourceType") or "other").lower(),
        "request": {"method": str(request.get("method") or "GET"),
                    "url": str(request.get("url") or ""), "httpVersion": "HTTP/1.1",
                    "cookies": empty, "headers": empty, "queryString": empty,
                    "headersSize": -1, "bodySize": -1},
        "response": {"status": int(status) if isinstance(status, int) else -1,
                     "statusText": "" if failure is None else str(failure),
                     "httpVersion": "HTTP/1.1", "cookies": empty, "headers": empty,
                     "content": {"size": -1, "mimeType": "x-unknown"},
                     "redirectURL": "", "headersSize": -1, "bodySize": -1,
                     "_transferSize": -1,
                     **({} if failure is None else {"_failureText": str(failure)})},
        "cache": {}, "timings": {"send": -1, "wait": -1, "receive": -1}}}


def trace_events(info: RecordInfo, steps: Sequence[Step], shots: Mapping[str, bytes]
                 ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, bytes]]:
    """(``trace.trace`` events, ``trace.network`` events, resources by SHA-1) of a record.

    ``shots`` maps a shot's name to its JPEG bytes (a missing one is left out).
    """
    wall = _ms(info.started_at)
    events: list[dict[str, Any]] = [{
        "version": TRACE_VERSION, "type": "context-options", "origin": "library",
        "browserName": "chromium", "platform": _PLATFORMS.get(sys.platform, "linux"),
        "wallTime": wall, "monotonicTime": wall, "title": f"browserd record {info.id}",
        "options": {}, "sdkLanguage": "python", "contextId": f"browserd@{info.id}"}]
    network: list[dict[str, Any]] = []
    resources: dict[str, bytes] = {}
    for step in sorted(steps, key=lambda s: s.index):
        events.extend(_step_events(step, info, shots, resources))
        page_id = _page_id(step, info)
        network.extend(_network_entry(r, page_id, _ms(step.started_at))
                       for r in step.failed_requests)
    return events, network, resources


def _lines(events: Sequence[Mapping[str, Any]]) -> bytes:
    return "".join(json.dumps(e, ensure_ascii=False, default=str) + "\n"
                   for e in events).encode("utf-8")


def trace_zip(info: RecordInfo, steps: Sequence[Step], shots: Mapping[str, bytes]) -> bytes:
    """The record as a Playwright trace zip (see the module docstring)."""
    events, network, resources = trace_events(info, steps, shots)
    stamp = time.gmtime(max(info.started_at, 315532800.0))[:6]  # zip dates start in 1980
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data, method in (("trace.trace", _lines(events), zipfile.ZIP_DEFLATED),
                                   ("trace.network", _lines(network), zipfile.ZIP_DEFLATED),
                                   *((f"resources/{sha1}", data, zipfile.ZIP_STORED)
                                     for sha1, data in resources.items())):
            member = zipfile.ZipInfo(name, date_time=stamp)
            member.compress_type = method
            member.external_attr = 0o600 << 16
            zf.writestr(member, data)
    return out.getvalue()
