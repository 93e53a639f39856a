"""Plain code around scrolling and the CLI's output: where a scroll aims, how answers print."""

from __future__ import annotations

from browserd.cli_format import human
from browserd.tabs.actions import scroll

STATE = {"page": True, "x": 0.0, "y": 300.0, "maxX": 0.0, "maxY": 5000.0, "vw": 1280.0,
         "vh": 720.0}


def test_where_a_scroll_aims() -> None:
    assert scroll._wanted(STATE, "top", None, None) == (0.0, 0.0)
    assert scroll._wanted(STATE, "bottom", None, None) == (0.0, 5000.0)
    assert scroll._wanted(STATE, None, None, 250) == (0.0, 550.0)
    assert scroll._wanted(STATE, None, None, -10_000) == (0.0, 0.0)  # clamped
    assert scroll._wanted(STATE, None, 40, 10_000) == (0.0, 5000.0)  # no horizontal room
    assert scroll._wanted(STATE, None, None, None) == (0.0, 300.0 + round(720 * 0.9))


def test_the_scroll_answer() -> None:
    assert scroll._answer({**STATE, "y": 4999.5}, "wheel") == {
        "ok": True, "scrollX": 0.0, "scrollY": 4999.5, "atTop": False, "atBottom": True,
        "scroller": "page", "method": "wheel"}
    out = scroll._answer({**STATE, "page": False, "y": 0.4}, "script", "covered")
    assert out["atTop"] and not out["atBottom"] and out["scroller"] == "element"
    assert out["fallbackReason"] == "covered"


def test_answers_print_for_people() -> None:
    assert human({"ok": True, "targetId": "T", "scrollX": 0, "scrollY": 5000.0,
                  "atTop": False, "atBottom": True, "scroller": "page",
                  "method": "wheel"}) == "page at x=0 y=5000 (bottom)  [wheel]"
    assert human({"ok": True, "targetId": "T", "url": "http://a/", "title": "A",
                  "status": 200, "loadState": "domcontentloaded"}) == (
        "T  'A'  http://a/  [200]  (domcontentloaded)")
    found = {"count": 3, "truncated": True, "matches": [
        {"ref": "e5", "role": "button", "name": "Continue", "context": '[e3] heading "Sign"'}]}
    assert human(found) == ('[e5] button "Continue"  (in [e3] heading "Sign")\n'
                            "3 match(es), 1 shown")
    steps = {"ok": False, "targetId": "T", "failedAt": 1, "steps": [
        {"index": 0, "kind": "click", "ok": True,
         "result": {"effects": {"navigated": "http://b/"}}},
        {"index": 1, "kind": "wait", "ok": False, "error": {"error": "late", "code": "TIMEOUT"}}]}
    assert human(steps) == "0: click ok; navigated: http://b/\n1: wait failed: late [TIMEOUT]"
    assert human({"targetId": "T", "messages": []}) == "no console messages"


def test_effects_and_pages_print_for_people() -> None:
    moved = {"ok": True, "targetId": "T", "url": "chrome-error://chromewebdata/",
             "title": "", "status": None, "loadState": "load",
             "effects": {"navigated": "http://a/x", "blocked": [
                 {"url": "http://a/x", "reason": "port", "redirectedFrom": "http://a/r"}]}}
    assert human(moved) == ("T  ''  chrome-error://chromewebdata/\n"
                            "blocked: http://a/x (port)")
    clicked = {"targetId": "T", "ok": True, "method": "mouse", "effects": {
        "downloads": [{"id": "g1", "url": "http://a/f", "suggestedFilename": "f.csv"}]}}
    assert human(clicked) == "ok (mouse)\ndownload: 'f.csv' (id g1, GET /downloads)"
    listed = {"downloads": [{"id": "g1", "state": "completed", "suggestedFilename": "f.csv",
                             "receivedBytes": 9, "totalBytes": 9, "url": "http://a/f"}]}
    assert human(listed) == "g1  completed  'f.csv'  9 bytes  http://a/f"
    assert human({"downloads": []}) == "no downloads"
    read = {"snapshotId": "s1", "format": "read", "title": "T", "url": "http://a/",
            "loadState": "loading", "text": "# Hi\n", "truncated": True, "hint": "use /find"}
    assert human(read) == ("T\nhttp://a/  [loading]\n\n# Hi\n… (the page was still loading)"
                           "\n… (truncated: use /find)")
