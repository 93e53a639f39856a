"""The answer shapes of the tab and page routes: tabs, reads, input, media, network.

Each entry of :data:`PAGE_SCHEMAS` is one component of ``/openapi.json``
(``#/components/schemas/NAME``); each route names the one it answers
(:func:`browserd.http.answers.returns`). The shapes are those ``docs/api.md`` describes; a
property that is always there is required, one that comes and goes is not
(``name?`` in :func:`~browserd.http.answers_json.obj`).
"""

from __future__ import annotations

from typing import Any

from .answers_json import ANY, BOOL, INT, NUM, STR, STRS, arr, enum, maybe, obj, ref

__all__ = ["PAGE_SCHEMAS"]

_LOAD_STATE = enum("none", "loading", "domcontentloaded", "load")
_UNTRUSTED = {"untrusted?": {**STRS, "description": "the fields that hold page content"}}
_POINT = obj({"x": NUM, "y": NUM})

_TABS: dict[str, Any] = {
    "Handoff": obj({"reason": STR, "since": NUM}, description="a tab handed to a person"),
    "HandoffEnd": obj({"reason": STR, "since": NUM, "outcome": enum("done", "cancelled",
                                                                     "closed"),
                       "endedAt": NUM}),
    "Tab": obj({"targetId": STR, "title": STR, "url": STR, "type": STR, "isActive": BOOL,
                "lastFocusedAt": maybe(NUM), "crashed?": BOOL, "broken?": BOOL,
                "handoff?": ref("Handoff"), "restoredFrom?": STR, **_UNTRUSTED}),
    "TabList": obj({"running": BOOL, "tabs": arr(ref("Tab")), **_UNTRUSTED}),
    "TabDone": obj({"ok": BOOL, "targetId": STR}),
    "OfferablePages": obj({"pages": arr(obj({"targetId": STR, "title": STR, "url": STR})),
                           **_UNTRUSTED}),
    "TabReleased": obj({"ok": BOOL, "released": STR}),
    "TabRequest": obj({"requestId": STR, "profile": STR, "token": STR, "reason": STR,
                       "url": maybe(STR),
                       "state": enum("pending", "approved", "denied", "cancelled"),
                       "targetId": maybe(STR), "createdAt": NUM, "endedAt": maybe(NUM)}),
    "TabRequestAsked": obj({"requestId": STR, "state": STR, "hint?": STR}),
    "TabRequestList": obj({"requests": arr(ref("TabRequest"))}),
    "HandoffSet": obj({"ok": BOOL, "targetId": STR, "handoff": ref("Handoff")}),
    "HandoffCancelled": obj({"ok": BOOL, "targetId": STR, "ended": BOOL}),
}

_READS: dict[str, Any] = {
    "SnapshotNode": obj({"ref": STR, "role?": STR, "name?": STR, "depth": INT,
                         "parentRef?": maybe(STR), "tag?": STR, "href?": STR,
                         "target?": {**STR, "description": "a link's target as the line "
                                                           "shows it (origin-relative)"},
                         "placeholder?": STR}),
    "SnapshotAnswer": obj({
        "snapshotId": STR, "targetId": STR, "url": STR, "title": STR,
        "format": enum("aria", "read", "domSnapshot"), "loadState": _LOAD_STATE,
        "settled?": BOOL,
        "text?": {**STR, "description": "the page as text (absent in a diff and in "
                                        "domSnapshot)"},
        "truncated?": BOOL, "hint?": STR,
        "stats?": obj({"nodes?": INT, "refs?": INT, "newRefs?": INT, "chars?": INT,
                       "ms?": NUM, "frames?": INT, "totalMs?": NUM}),
        "nodes?": arr(ref("SnapshotNode")),
        "full?": BOOL, "baseSnapshotId?": STR, "diffHint?": STR,
        "diff?": obj({"added": STRS, "removed": STRS, "changed": STRS}),
        **_UNTRUSTED}),
    "Match": obj({"ref": STR, "role": STR, "name": STR, "text?": STR, "context?": STR,
                  "around?": STR, "href?": STR, "target?": STR, "placeholder?": STR}),
    "FindAnswer": obj({"targetId": STR, "url": STR, "loadState": _LOAD_STATE,
                       "settled?": BOOL, "count": INT, "matches": arr(ref("Match")),
                       "truncated": BOOL,
                       "stats?": obj({"elements?": INT, "ms?": NUM, "totalMs?": NUM}),
                       **_UNTRUSTED}),
    "QueryMatch": obj({"index": INT, "tag": STR, "id": STR, "className": STR, "text": STR,
                       "value": maybe(STR), "href": maybe(STR), "outerHTML": STR,
                       "truncated": BOOL}),
    "QueryAnswer": obj({"targetId": STR, "url": STR, "loadState": _LOAD_STATE,
                        "settled?": BOOL, "count": INT, "matches": arr(ref("QueryMatch")),
                        **_UNTRUSTED}),
    "DomAnswer": obj({"targetId": STR, "url": STR, "loadState": _LOAD_STATE,
                      "settled?": BOOL, "format": enum("html", "text"), "text": STR,
                      "truncated": BOOL, "length": INT, **_UNTRUSTED}),
    "ConsoleMessage": obj({"level": STR, "text": STR, "url": maybe(STR), "line": maybe(INT),
                           "timestamp": NUM, "source": STR}),
    "ConsoleAnswer": obj({"targetId": STR, "messages": arr(ref("ConsoleMessage")),
                          "dropped?": INT, **_UNTRUSTED}),
    "EvalAnswer": obj({"ok": BOOL, "targetId": STR, "url": STR,
                       "result": {**ANY, "description": "the script's value, as JSON"},
                       **_UNTRUSTED}),
}

_PAGE_MOVE = {"ok": BOOL, "targetId": STR, "url": STR, "title": STR, "status": maybe(INT),
              "loadState": _LOAD_STATE, **_UNTRUSTED}
_INPUT = {"ok": BOOL, "targetId": STR, "effects": ref("Effects"),
          "snapshot?": ref("SnapshotAnswer"), **_UNTRUSTED}
_EDITOR = obj({"kind": STR, "via?": enum("surface", "focus"), "because?": STR,
                "verified?": maybe(BOOL), "reason?": STR},
               description="a rich editor (CodeMirror, Monaco, ProseMirror, contenteditable) "
                           "the action went through")
_POINTER = {"method": enum("mouse", "dom", "focus"), "fallbackReason?": STR,
            "coveredBy?": ANY, "editor?": _EDITOR}

_INPUT_ANSWERS: dict[str, Any] = {
    "Effects": obj({
        "navigated?": {**STR, "description": "the tab's new URL"},
        "loadState?": _LOAD_STATE, "navigationPending?": STR, "newTabs?": STRS,
        "dialog?": obj({"type": STR, "message": STR}),
        "fileChooser?": obj({"multiple": BOOL}),
        "downloads?": arr(obj({"id": STR, "url": STR, "suggestedFilename": STR})),
        "blocked?": arr(obj({"url": STR, "reason": STR, "resourceType?": STR,
                             "redirectedFrom?": STR, "targetId?": STR})),
    }, description="what an input action, a navigation or a history move caused"),
    "NavigateAnswer": obj({**_PAGE_MOVE, "effects": ref("Effects")}),
    "HistoryAnswer": obj({**_PAGE_MOVE, "effects": ref("Effects")}),
    "ScrollAnswer": obj({"ok": BOOL, "targetId": STR, "scrollX": NUM, "scrollY": NUM,
                         "atTop": BOOL, "atBottom": BOOL, "scroller": enum("page", "element"),
                         "method": enum("wheel", "script", "intoView", "none"),
                         "fallbackReason?": STR}),
    "InputAnswer": obj({**_INPUT, "editor?": _EDITOR},
                       description="the answer of /type, /press"),
    "ClickAnswer": obj({**_INPUT, **_POINTER, "files?": STRS, "multiple?": BOOL}),
    "HoverAnswer": obj({**_INPUT, **_POINTER}),
    "SelectAnswer": obj({**_INPUT, "selected": maybe(STRS)}),
    "DialogAnswer": obj({**_INPUT, "dialog": obj({"type": STR, "message": STR,
                                                  "defaultPrompt?": STR}),
                         "accepted": BOOL}),
    "UploadAnswer": obj({**_INPUT, "files": STRS, "multiple": BOOL,
                         "via": enum("input", "chooser")}),
    "DragAnswer": obj({**_INPUT, "native": BOOL, "from?": _POINT, "to": _POINT,
                       "files?": STRS}),
    "MouseAnswer": obj({**_INPUT, "x": NUM, "y": NUM, "buttons": STRS}),
    "KeyboardAnswer": obj({**_INPUT, "modifiers": STRS}),
    "WaitAnswer": obj({"ok": BOOL, "targetId?": STR, "waitedMs": NUM,
                       "download?": ref("Download"), "handoff?": ref("HandoffEnd"),
                       "tabRequest?": ref("TabRequest"), "confirmation?": ref("Confirmation"),
                       "result?": {**ANY, "description": "a confirmed action's own answer"},
                       **_UNTRUSTED}),
    "ActStep": obj({"index": INT, "kind": STR, "ok": BOOL,
                    "result?": obj({"ok?": BOOL, "effects?": ref("Effects")},
                                   description="the step's own answer (as its route's)"),
                    "error?": ref("Error"), "uncertain?": BOOL}),
    "ActAnswer": obj({"ok": BOOL, "targetId": STR, "steps": arr(ref("ActStep")),
                      "failedAt?": INT, "snapshot?": ref("SnapshotAnswer"), **_UNTRUSTED}),
    "LoginAnswer": obj({"ok": BOOL, "targetId": STR, "name": STR, "filled": STRS,
                        "submitted": BOOL}),
}

_MEDIA = {"ok": BOOL, "targetId": STR, "media": {**STR, "description": "MEDIA:<path>"},
          "mediaUrl": {**STR, "description": "its path on this API (GET /media/{name})"},
          "path": STR, "bytes": INT, "mime": STR}

_FILES: dict[str, Any] = {
    "Capture": obj({**_MEDIA, "mediaId": {**STR, "description": "its name (screenshot "
                                                                 "{since} takes it)"},
                    "url": STR, "width": maybe(INT), "height": maybe(INT),
                    "profile": STR, "session": maybe(STR), "scaled?": BOOL, "clipped?": BOOL,
                    "pageHeight?": NUM, "note?": STR,
                    "data?": {**STR, "description": "the image, base64 (inline: true)"},
                    "diff?": ref("ScreenshotDiff")},
                   description="a screenshot or PDF in the media store"),
    "ScreenshotDiff": obj({
        "since": {**STR, "description": "the mediaId compared with"}, "changed": BOOL,
        "region": maybe(obj({"x": INT, "y": INT, "width": INT, "height": INT},
                            description="the changed pixels' box, CSS px from the captured "
                                        "region's top-left")),
        "changedPixels": INT, "ratio": {**NUM, "description": "changed share of all pixels"},
        "tolerance": INT,
        **{f"{k}?": v for k, v in _MEDIA.items() if k not in ("ok", "targetId")},
        "mediaId?": STR, "width?": INT, "height?": INT,
        "data?": {**STR, "description": "the changed region's image, base64 (inline: true)"}},
        description="screenshot {since}: what changed, and (when something did) the new "
                    "screenshot's changed region as an image of its own"),
    "HarAnswer": obj({**_MEDIA, "entries": INT}),
    "Download": obj({"id": STR, "targetId": maybe(STR), "profile": maybe(STR),
                     "session": maybe(STR), "url": STR, "suggestedFilename": STR,
                     "state": enum("inProgress", "completed", "canceled"),
                     "receivedBytes": INT, "totalBytes": INT, "startedAt": NUM, "path?": STR,
                     "mediaUrl?": STR, "reason?": STR}),
    "DownloadList": obj({"downloads": arr(ref("Download")), **_UNTRUSTED}),
}

_NET_ENTRY = {"id": INT, "method": STR, "url": STR, "resourceType": maybe(STR),
              "status": maybe(INT), "mimeType": maybe(STR), "fromCache": BOOL,
              "startedAt": NUM, "durationMs": maybe(NUM), "encodedBytes": maybe(NUM),
              "failed": BOOL, "errorText?": STR, "blockedReason?": STR, "pending?": BOOL,
              "redirectedTo?": INT, "urlTruncated?": BOOL}
_CONTROLS = {"blocked": STRS, "extraHeaders": {**STRS, "description": "header names"}}

_NETWORK: dict[str, Any] = {
    "NetworkRequest": obj(_NET_ENTRY),
    "NetworkList": obj({"targetId": STR, "requests": arr(ref("NetworkRequest")),
                        "dropped": INT, "kept": INT, "recordingSince": maybe(NUM),
                        **_CONTROLS, "note?": STR, **_UNTRUSTED}),
    "NetworkDetail": obj({**{k: v for k, v in _NET_ENTRY.items() if not k.endswith("?")},
                          "targetId?": STR, "statusText?": maybe(STR),
                          "protocol?": maybe(STR), "remoteAddress?": maybe(STR),
                          "requestHeaders?": obj({}, values=STR),
                          "responseHeaders?": maybe(obj({}, values=STR)),
                          "postData?": maybe(STR), "postDataTruncated?": BOOL,
                          "body?": maybe(STR), "bodyEncoding?": enum("text", "base64"),
                          "bodyBytes?": maybe(INT), "bodyTruncated?": BOOL,
                          "bodyUnavailable?": STR, **_UNTRUSTED}),
    "NetworkControls": obj({"ok": BOOL, "targetId": STR, **_CONTROLS}),
}

_VIEWPORT = obj({"width": INT, "height": INT, "deviceScaleFactor": NUM, "mobile": BOOL})
_EMULATION: dict[str, Any] = {
    "Emulation": obj({
        "viewport": maybe(_VIEWPORT), "userAgent": maybe(STR), "locale": maybe(STR),
        "timezone": maybe(STR),
        "geolocation": maybe(obj({"latitude": NUM, "longitude": NUM, "accuracy": NUM})),
        "colorScheme": maybe(STR), "reducedMotion": maybe(STR), "offline": BOOL,
        "cpuThrottling": NUM,
        "network": maybe(obj({"latencyMs": NUM, "downloadKbps": NUM, "uploadKbps": NUM})),
    }, description="a tab's emulation (null / false / 1: not emulated)"),
    "EmulationAnswer": obj({"ok?": BOOL, "targetId": STR, "emulation": ref("Emulation")}),
}

#: Every page-side answer component, by name.
PAGE_SCHEMAS: dict[str, Any] = {**_TABS, **_READS, **_INPUT_ANSWERS, **_FILES, **_NETWORK,
                                **_EMULATION}
