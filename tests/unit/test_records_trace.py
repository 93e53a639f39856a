"""A record as a Playwright trace zip: well-formed events, resources named by their SHA-1."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from typing import Any

from browserd.records.model import Call, RecordInfo, Shot, Step, Target
from browserd.records.trace import TRACE_VERSION, playwright_selector, trace_zip

_T0 = 1_800_000_000.0
_INFO = RecordInfo(id="rec-20270115-080000-0123456789abcdef", principal="agent",
                   profile="default", session="s1", target_id="T1", started_at=_T0,
                   stopped_at=_T0 + 5)
_JPEG_A, _JPEG_B = b"\xff\xd8 first shot", b"\xff\xd8 second shot"
_SECRET = "«secret:pin»"


def _steps() -> list[Step]:
    field = Target(ref="e3", role="textbox", name="Full name", exact=True)
    pay = Target(ref="e9", role="button", name="Pay", exact=True)
    return [
        Step(index=0, call=Call(kind="navigate", args={"url": "https://shop.test/"}),
             target_id="T1", started_at=_T0 + 0.1, duration_ms=250.0, ok=True,
             url="https://shop.test/", title="Shop",
             before=Shot(name="0000-before.jpeg", width=320, height=200, bytes=12),
             after=Shot(name="0000-after.jpeg", width=320, height=200, bytes=13),
             failed_requests=({"method": "GET", "url": "https://shop.test/x.png",
                               "status": 404, "errorText": None, "resourceType": "Image"},)),
        Step(index=1, call=Call(kind="type", args={"ref": "e3", "secret": "pin"},
                                targets={"element": field}),
             target_id="T1", started_at=_T0 + 1.0, duration_ms=80.0, ok=True,
             console=({"level": "error", "text": "boom", "source": "javascript",
                       "timestamp": _T0 + 1.05},),
             after=Shot(name="0001-after.jpeg", width=320, height=200, bytes=13)),
        Step(index=2, call=Call(kind="click", args={"ref": "e9"}, targets={"element": pay}),
             target_id="T1", started_at=_T0 + 2.0, duration_ms=500.0, ok=False,
             error={"code": "NO_MATCH", "message": "no element matches"},
             before=Shot(name="0002-before.jpeg", width=320, height=200, bytes=1)),
        Step(index=3, call=Call(kind="act", args={}), target_id="T1", started_at=_T0 + 3.0,
             duration_ms=40.0, ok=True,
             actions=(Call(kind="press", args={"key": "Enter"}),
                      Call(kind="click", args={"selector": "#go"},
                           targets={"element": Target(selector="#go")}))),
    ]


def _open(data: bytes) -> tuple[zipfile.ZipFile, list[dict[str, Any]], list[dict[str, Any]]]:
    zf = zipfile.ZipFile(io.BytesIO(data))
    events = [json.loads(line) for line in zf.read("trace.trace").decode().splitlines()]
    network = [json.loads(line) for line in zf.read("trace.network").decode().splitlines()]
    return zf, events, network


def _zip() -> bytes:
    # 0002-before.jpeg is missing (removed meanwhile): that frame is left out.
    return trace_zip(_INFO, _steps(), {"0000-before.jpeg": _JPEG_A,
                                        "0000-after.jpeg": _JPEG_B, "0001-after.jpeg": _JPEG_B})


def test_the_trace_opens_with_its_context_and_pairs_every_before_with_an_after() -> None:
    _, events, _ = _open(_zip())
    first = events[0]
    assert first["type"] == "context-options" and first["version"] == TRACE_VERSION
    assert first["browserName"] == "chromium" and first["wallTime"] == _T0 * 1000
    assert _INFO.id in first["title"]
    befores = {e["callId"]: e for e in events if e["type"] == "before"}
    afters = {e["callId"]: e for e in events if e["type"] == "after"}
    assert set(befores) == set(afters) == {"call@0", "call@1", "call@2", "call@3",
                                            "call@3.0", "call@3.1"}
    assert [befores[f"call@{i}"]["apiName"] for i in range(4)] == [
        "page.goto", "locator.fill", "locator.click", "browserd.act"]
    assert befores["call@3.0"]["parentId"] == befores["call@3.1"]["parentId"] == "call@3"
    for call_id, before in befores.items():
        assert {"class", "method", "params", "startTime"} <= set(before), call_id
        assert afters[call_id]["endTime"] >= before["startTime"]
    assert befores["call@0"]["startTime"] == (_T0 + 0.1) * 1000
    assert afters["call@0"]["endTime"] == (_T0 + 0.1) * 1000 + 250
    assert befores["call@2"]["params"]["selector"] == 'internal:role=button[name="Pay"s]'
    assert afters["call@0"]["result"]["url"] == "https://shop.test/"


def test_frames_name_resources_by_the_sha1_of_their_bytes() -> None:
    zf, events, _ = _open(_zip())
    frames = [e for e in events if e["type"] == "screencast-frame"]
    assert len(frames) == 3  # the missing shot is left out
    for frame in frames:
        data = zf.read(f"resources/{frame['sha1']}")
        assert hashlib.sha1(data).hexdigest() == frame["sha1"]
        assert frame["pageId"] == "page@T1" and frame["width"] == 320
    assert sorted(n for n in zf.namelist() if n.startswith("resources/")) == sorted(
        f"resources/{hashlib.sha1(d).hexdigest()}" for d in (_JPEG_A, _JPEG_B))
    assert frames[0]["timestamp"] == (_T0 + 0.1) * 1000  # the before shot at the start


def test_a_failed_step_carries_its_error_and_the_logs_are_events() -> None:
    _, events, network = _open(_zip())
    failed = next(e for e in events if e["type"] == "after" and e["callId"] == "call@2")
    assert failed["error"]["name"] == "NO_MATCH"
    assert "no element matches" in failed["error"]["message"]
    assert all("error" not in e for e in events if e["type"] == "after"
               and e["callId"] != "call@2")
    console = [e for e in events if e["type"] == "console"]
    assert [(c["messageType"], c["text"]) for c in console] == [("error", "boom")]
    assert {"url", "lineNumber", "columnNumber"} <= set(console[0]["location"])
    [entry] = network
    assert entry["type"] == "resource-snapshot"
    har = entry["snapshot"]
    assert har["request"]["url"] == "https://shop.test/x.png"
    assert har["response"]["status"] == 404 and har["_monotonicTime"] == (_T0 + 0.1) * 1000


def test_a_secret_is_typed_as_its_marker_and_no_value_is_written() -> None:
    zf, events, _ = _open(_zip())
    fill = next(e for e in events if e["type"] == "before" and e["callId"] == "call@1")
    assert fill["params"]["value"] == _SECRET
    assert fill["params"]["selector"] == 'internal:role=textbox[name="Full name"s]'
    # Only what it was given: a redacted step stays redacted.
    raw = b"".join(zf.read(n) for n in zf.namelist())
    assert _SECRET.encode() in raw
    value = "hunter2-value"
    redacted = [Step.from_json(json.loads(json.dumps(s.to_json()).replace(value, _SECRET)))
                for s in _steps()]
    assert value.encode() not in trace_zip(_INFO, redacted, {})


def test_selectors_follow_playwrights_engines() -> None:
    assert playwright_selector(Target(role="link", name="More…")) == \
        'internal:role=link[name="More"i]'
    assert playwright_selector(Target(selector="#a", nth=2)) == "#a >> nth=2"
    assert playwright_selector(Target(text="Go")) == 'internal:text="Go"i'
    assert playwright_selector(Target(ref="e1")) is None
    assert playwright_selector(Target(role='x"]', name="n")) is None  # not a role: dropped
