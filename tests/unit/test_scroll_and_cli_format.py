"""Plain code around scrolling and the CLI's output: where a scroll aims, how answers print."""

from __future__ import annotations

import re

from browserd.cli.format import human
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
    steps["steps"][1] = {"index": 1, "kind": "find", "ok": True, "result": found}
    assert human(steps) == ("0: click ok; navigated: http://b/\n1: find ok\n"
                            '[e5] button "Continue"  (in [e3] heading "Sign")\n'
                            "3 match(es), 1 shown")
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
    assert human(clicked) == ("ok (mouse)\ndownload: 'f.csv' "
                              "(browserd download g1 --out FILE)")
    listed = {"downloads": [{"id": "g1", "state": "completed", "suggestedFilename": "f.csv",
                             "receivedBytes": 9, "totalBytes": 9, "url": "http://a/f"}]}
    assert human(listed) == "g1  completed  'f.csv'  9 bytes  http://a/f"
    assert human({"downloads": []}) == "no downloads"
    read = {"snapshotId": "s1", "format": "read", "title": "T", "url": "http://a/",
            "loadState": "loading", "text": "# Hi\n", "truncated": True, "hint": "use /find"}
    assert human(read) == ("T\nhttp://a/  [loading]\n\n# Hi\n… (the page was still loading)"
                           "\n… (truncated: use /find)")


TAB = {"targetId": "T1", "title": "Shop", "url": "http://a/", "isActive": True}
PAGE = {"ok": True, "targetId": "T1", "url": "http://a/", "title": "Shop", "status": 200,
        "loadState": "load", "effects": {}}
ACTED = {"targetId": "T1", "ok": True, "method": "mouse", "effects": {}, "untrusted": ["effects"]}
STATUS = {"state": "running", "pid": 9, "version": "Chrome/1", "executablePath": "/c",
          "profile": "clawd", "color": "#FF4500", "userDataDir": "/p", "controlUrl": "http://c",
          "cdpUrl": "http://d", "headless": True, "restarts": 0, "uptimeS": 1.5, "running": True,
          "ports": {"control": 1, "cdp": 2}, "lastError": None, "profiles": {"clawd": {}}}
PROFILE = {"name": "zz", "driver": "launch", "color": "#2E8B57", "state": "stopped",
           "running": False, "tabs": 0, "sessions": 0, "default": False, "origin": "api"}
EMULATION = {"targetId": "T1", "emulation": {"viewport": {"width": 390, "height": 844,
                                                           "mobile": True},
                                              "timezone": "UTC", "offline": False,
                                              "cpuThrottling": 1.0, "network": None}}
#: One answer of each shape every command prints (hand-written commands that print their
#: own text, raw answers and `openapi` aside), as the service sends it.
ANSWERS: dict[str, dict[str, object]] = {
    "status": STATUS, "start": STATUS, "healthz": {"ok": True, "browser": "open"},
    "stop": {"ok": True, "stopped": True},
    "tabs": {"running": True, "tabs": [TAB]}, "open": TAB,
    "focus": {"ok": True, "targetId": "T1"}, "close": {"ok": True, "targetId": "T1"},
    "release": {"ok": True, "released": "T1"},
    "tabs-request": {"requestId": "r1", "state": "pending", "reason": "pay", "url": None},
    "tabs-requests": {"ok": True, "requestId": "r1", "state": "cancelled"},
    "navigate": PAGE, "back": PAGE, "forward": PAGE, "reload": PAGE,
    "eval": {"ok": True, "targetId": "T1", "url": "http://a/", "result": 2},
    "snapshot": {"snapshotId": "s1", "format": "aria", "text": '[e1] button "Go"\n'},
    "find": {"count": 1, "matches": [{"ref": "e1", "role": "button", "name": "Go"}]},
    "query": {"targetId": "T1", "url": "http://a/", "count": 1, "matches": [
        {"index": 0, "tag": "button", "text": "Go", "outerHTML": "<button>Go</button>"}]},
    "dom": {"targetId": "T1", "format": "text", "text": "Go", "truncated": False},
    "console": {"targetId": "T1", "messages": [{"level": "warn", "text": "hm"}]},
    "scroll": {"ok": True, "scrollX": 0, "scrollY": 10, "atTop": False, "atBottom": False,
               "scroller": "page", "method": "wheel"},
    "click": ACTED, "type": ACTED, "press": ACTED, "hover": ACTED, "drag": ACTED,
    "mouse": {"ok": True, "targetId": "T1", "effects": {}},
    "keyboard": {"ok": True, "targetId": "T1", "effects": {}},
    "select": {**ACTED, "selected": ["Green"]},
    "upload": {"ok": True, "targetId": "T1", "files": ["/u/a.txt"], "effects": {}},
    "wait": {"targetId": "T1", "ok": True, "waitedMs": 4},
    "dialog": {"ok": True, "targetId": "T1", "accepted": True, "effects": {}},
    "act": {"ok": True, "targetId": "T1", "steps": [{"index": 0, "kind": "press", "ok": True}]},
    "login": {"ok": True, "targetId": "T1", "name": "shop", "filled": ["username", "password"],
              "effects": {"navigated": "http://a/home"}},
    "screenshot": {"path": "/m/s.png", "mediaUrl": "/media/s.png", "mime": "image/png"},
    "pdf": {"path": "/m/p.pdf", "mediaUrl": "/media/p.pdf", "mime": "application/pdf"},
    "media": {"path": "out.png", "bytes": 10}, "download": {"path": "f.csv", "bytes": 4},
    "downloads": {"downloads": [{"id": "d1", "state": "completed", "url": "http://a/f",
                                 "suggestedFilename": "f.csv"}]},
    "handoff": {"ok": True, "targetId": "T1", "handoff": {"reason": "log in", "since": 1.0}},
    "handoff-delete": {"ok": True, "targetId": "T1", "ended": True},
    "cookies": {"cookies": [{"name": "a", "value": "b", "domain": "x.test", "path": "/",
                             "expires": -1, "httpOnly": True, "secure": False,
                             "sameSite": "Lax"}]},
    "cookies set": {"ok": True, "set": 1, "notSet": [], "expired": 0},
    "cookies delete": {"ok": True, "deleted": 1},
    "storage get": {"kind": "local", "origin": "http://a", "items": {"theme": "dark"}},
    "storage set": {"ok": True, "kind": "local", "origin": "http://a", "set": 1},
    "storage delete": {"ok": True, "kind": "local", "origin": "http://a", "removed": 1},
    "emulate": EMULATION,
    "profiles": {"profiles": [PROFILE]}, "profiles create": PROFILE,
    "profiles delete": {"ok": True, "name": "zz", "dataRemoved": True, "userDataDir": "/p"},
    "sessions": {"profile": "clawd", "sessions": [{"sessionId": "s1", "name": "q", "ttlS": 60.0,
                                                   "createdAt": 1.0, "idleS": 0.2, "tabs": 0}]},
    "sessions create": {"sessionId": "s1", "name": "q", "ttlS": 1800.0, "profile": "clawd"},
    "sessions delete": {"ok": True, "sessionId": "s1"},
    "network": {"requests": [], "dropped": 0},
    "network block": {"ok": True, "targetId": "T1", "blocked": ["*://*/*.png"],
                      "extraHeaders": []},
    "network har": {"ok": True, "targetId": "T1", "entries": 0, "path": "/m/h.har",
                    "mediaUrl": "/media/h.har", "bytes": 150},
    "tokens revoke": {"ok": True, "name": "ci", "revoked": ["ci", "ci-child"]},
    "secrets delete": {"ok": True, "name": "shop"},
    "confirm": {"ok": True, "id": "c1", "state": "approved"},
    "offer": {"ok": True, "targetId": "T1", "offered": True},
}


def test_every_command_prints_text_not_json() -> None:
    from browserd.cli.main import HAND_WRITTEN
    from browserd.cli.routes import commands_from_routes

    names = {c.name for c in commands_from_routes()} | set(HAND_WRITTEN)
    assert {name.split()[0] for name in ANSWERS} <= names, "no such command"
    # An answer no formatter knows (a route added later) prints as `key: value` lines.
    unknown = {"ok": True, "recording": {"id": "r1", "steps": [{"kind": "click", "ref": "e1"}]},
               "tags": ["a", "b"], "untrusted": ["recording"]}
    assert human(unknown) == ("ok: yes\nrecording:\n  id: r1\n  steps:\n    - kind=click  ref=e1"
                              "\ntags: a, b")
    for name, answer in {**ANSWERS, "(unknown)": unknown}.items():
        for nonce in (None, "0123456789ab"):
            text = human(answer, nonce)
            assert text.strip(), name
            assert not text.lstrip().startswith(("{", "[{", '["')), (name, text)
            assert not re.search(r'^\s*"\w+": ', text, re.M), (name, text)


def test_the_answers_people_asked_about_read_as_sentences() -> None:
    assert human(ANSWERS["healthz"]) == "ok (browser open)"
    assert human(ANSWERS["cookies"]) == "a=b  x.test/  [httpOnly SameSite=Lax]  expires session"
    assert human({"cookies": []}) == "no cookies"
    assert human(ANSWERS["handoff"]).startswith("tab T1 handed to a person: 'log in'")
    assert human(ANSWERS["wait"]) == "ok (after 4 ms)"
    assert human(ANSWERS["download"]) == "wrote 4 bytes to f.csv"
    assert human(ANSWERS["select"]) == "ok (mouse)\nselected: Green"
    assert human(ANSWERS["emulate"]) == "T1  viewport=390x844 mobile  timezone=UTC"
    assert human(ANSWERS["profiles"]) == "  zz  launch  stopped  #2E8B57  tabs 0  sessions 0"
    assert human(ANSWERS["tokens revoke"]) == "ok: yes\nname: ci\nrevoked: ci, ci-child"
    # The pages' words stay between the boundary lines.
    marked = human(ANSWERS["storage get"], "0123456789ab")
    assert marked == "<<page:0123456789ab>>\ntheme=dark\n<</page:0123456789ab>>"


def test_a_cut_snapshot_names_the_command_of_its_hint() -> None:
    cut = {"snapshotId": "s1", "format": "aria", "text": "[e1] main\n", "truncated": True,
           "hint": "use POST /find"}
    assert human(cut, None, lambda hint: hint.replace("POST /find", "browserd find")) == (
        "[e1] main\n… (truncated: use browserd find)")
