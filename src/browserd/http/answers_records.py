"""The answer shapes of the session record routes (``/record/*``, ``/records*``).

Like :mod:`browserd.http.answers_page`: components of ``/openapi.json``, by
name, in :data:`RECORD_SCHEMAS`; routes name them as their answers.
"""

from __future__ import annotations

from typing import Any

from .answers_json import BOOL, INT, NUM, STR, STRS, arr, enum, maybe, obj, ref

__all__ = ["RECORD_SCHEMAS"]

_VIDEO = obj({"state": enum("recording", "done", "failed"), "targetId": maybe(STR),
              "mime": STR, "url": {**STR, "description": "GET it once the record stopped"},
              "reason?": {**STR, "description": "why it ended"}, "frames?": INT,
              "screencastFrames?": INT, "durationS?": NUM, "bytes?": INT,
              "width?": maybe(INT), "height?": maybe(INT)},
             description="the record's video (POST /record/start {video: true})")
_INFO = {"id": STR, "principal": {**STR, "description": "the token that started it"},
         "profile": STR, "session": maybe(STR), "targetId": maybe(STR),
         "startedAt": NUM, "stoppedAt": maybe(NUM), "recording": BOOL, "bytes": INT,
         "truncated": BOOL, "video": maybe(_VIDEO)}
_SHOT = obj({"name": STR, "width": INT, "height": INT, "bytes": INT,
             "data?": {**STR, "description": "the JPEG, base64 (shots: true)"}})

#: Every record answer component, by name.
RECORD_SCHEMAS: dict[str, Any] = {
    "RecordInfo": obj({**_INFO, "steps": {**INT, "description": "how many steps it holds"}},
                      description="a session record's header"),
    "RecordStep": obj({"index": INT, "kind": STR, "args": obj({}), "targets": obj({}),
                       "targetId": maybe(STR), "startedAt": NUM, "durationMs": NUM,
                       "ok": BOOL, "error": maybe(obj({})), "effects": maybe(obj({})),
                       "url": maybe(STR), "title": maybe(STR), "before": maybe(_SHOT),
                       "after": maybe(_SHOT), "console": arr(obj({})),
                       "failedRequests": arr(obj({})), "actions?": arr(obj({}))}),
    "Record": obj({**_INFO, "untrusted?": STRS, "steps": arr(ref("RecordStep"))},
                  description="a whole record (format json)"),
    "RecordChanged": obj({"ok": BOOL, "record": ref("RecordInfo")}),
    "RecordList": obj({"records": arr(ref("RecordInfo"))}),
    "RecordDeleted": obj({"ok": BOOL, "deleted": STR}),
    "ReplayAnswer": obj({"ok": BOOL, "recordId": STR, "done": INT, "stoppedAt?": INT,
                         "step?": ref("RecordStep"), "error?": ref("Error"),
                         "untrusted?": STRS},
                        description="a replay's outcome (the first failed step ends it)"),
}
