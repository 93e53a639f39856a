"""HAR 1.2 from the network ring: plain code, no I/O.

:func:`build_har` turns ring entries (and, optionally, response bodies the
caller fetched) into a HAR 1.2 ``log`` object (http://www.softwareishard.com/blog/har-12-spec/).
Only what the ring knows goes in: headers as Chromium reported them to the
page's session (no raw ``Cookie`` / ``Set-Cookie`` lines: those are only in
Chromium's ``*ExtraInfo`` events, which browserd does not record, so a HAR
file does not carry the profile's cookies), ``cookies`` lists are empty,
``headersSize`` is -1. A failed request has ``response.status`` 0 and its
error in ``response._error``; a request still in flight has ``time`` 0 and
``_pending: true``. ``time`` is the sum of the timings (``ssl`` is inside
``connect``), as HAR 1.2 asks.
"""

from __future__ import annotations

import base64
import datetime
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import attrs

from .netlog import NetworkEntry

__all__ = ["HarBody", "body_for_har", "build_har"]


@attrs.frozen(kw_only=True)
class HarBody:
    """A response body for the HAR: ``text`` is base64 when ``base64`` is set."""

    text: str = attrs.field(repr=False)
    base64: bool
    size: int


def _iso(seconds: float) -> str:
    stamp = datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _headers(headers: Mapping[str, str]) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in headers.items()]


def _http_version(protocol: str | None) -> str:
    return {"http/1.0": "HTTP/1.0", "http/1.1": "HTTP/1.1", "h2": "HTTP/2",
            "h3": "HTTP/3"}.get((protocol or "").lower(), protocol or "")


def _timings(entry: NetworkEntry) -> dict[str, float]:
    """HAR timings (ms) from Chromium's ResourceTiming; -1 where a phase did not happen."""
    total = entry.duration_ms
    timing = entry.timing or {}
    out = {"blocked": -1.0, "dns": -1.0, "connect": -1.0, "ssl": -1.0,
           "send": 0.0, "wait": 0.0, "receive": 0.0}
    if total is None:
        return out

    def span(start: str, end: str) -> float:
        a, b = timing.get(start), timing.get(end)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a >= 0 and b >= a:
            return round(float(b - a), 3)
        return -1.0

    if timing:
        out["dns"] = span("dnsStart", "dnsEnd")
        out["connect"] = span("connectStart", "connectEnd")
        out["ssl"] = span("sslStart", "sslEnd")
        out["send"] = max(0.0, span("sendStart", "sendEnd"))
        out["wait"] = max(0.0, span("sendEnd", "receiveHeadersEnd"))
    used = sum(v for k, v in out.items() if v > 0 and k != "ssl")  # ssl is within connect
    out["receive"] = round(max(0.0, total - used), 3)
    return out


def _query(url: str) -> list[dict[str, str]]:
    try:
        query = urlsplit(url).query
    except ValueError:
        return []
    return [{"name": k, "value": v} for k, v in parse_qsl(query, keep_blank_values=True)]


def _entry(entry: NetworkEntry, body: HarBody | None) -> dict[str, Any]:
    timings = _timings(entry)
    request: dict[str, Any] = {
        "method": entry.method, "url": entry.url,
        "httpVersion": _http_version(entry.protocol), "cookies": [],
        "headers": _headers(entry.request_headers), "queryString": _query(entry.url),
        "headersSize": -1, "bodySize": len(entry.post_data.encode()) if entry.post_data else 0,
    }
    if entry.post_data is not None:
        mime = next((v for k, v in entry.request_headers.items()
                     if k.lower() == "content-type"), "")
        request["postData"] = {"mimeType": mime, "text": entry.post_data}
    content: dict[str, Any] = {"size": body.size if body else max(0, entry.encoded_bytes or 0),
                               "mimeType": entry.mime_type or "x-unknown"}
    if body is not None:
        content["text"] = body.text
        if body.base64:
            content["encoding"] = "base64"
    redirect = next((v for k, v in entry.response_headers.items() if k.lower() == "location"),
                    "")
    response: dict[str, Any] = {
        "status": entry.status or 0, "statusText": entry.status_text,
        "httpVersion": _http_version(entry.protocol), "cookies": [],
        "headers": _headers(entry.response_headers), "content": content,
        "redirectURL": redirect, "headersSize": -1,
        "bodySize": entry.encoded_bytes if entry.encoded_bytes is not None else -1,
    }
    if entry.failed:
        response["_error"] = entry.error_text or "failed"
        if entry.blocked_reason:
            response["_blockedReason"] = entry.blocked_reason
    out: dict[str, Any] = {
        "startedDateTime": _iso(entry.started_at),
        "time": round(sum(v for k, v in timings.items() if v > 0 and k != "ssl"), 3),
        "request": request, "response": response, "cache": {}, "timings": timings,
        "_resourceType": entry.resource_type, "_id": entry.id,
    }
    if not entry.finished:
        out["_pending"] = True
    if entry.from_cache:
        out["_fromCache"] = True
    if entry.remote_address:
        out["serverIPAddress"] = entry.remote_address.rsplit(":", 1)[0].strip("[]")
    return out


def build_har(entries: Iterable[NetworkEntry], *, creator_version: str,
              bodies: Mapping[int, HarBody] | None = None,
              page_title: str = "", page_url: str = "") -> dict[str, Any]:
    """The HAR document (``{"log": …}``) for ``entries``, oldest first.

    All entries belong to one page record (``page_1``) titled with the tab's
    title (or URL) at export time; ``bodies`` maps entry ids to response bodies.
    """
    items = list(entries)
    got = bodies or {}
    started = min((e.started_at for e in items), default=0.0)
    page = {"startedDateTime": _iso(started), "id": "page_1",
            "title": page_title or page_url or "page", "pageTimings": {}}
    har_entries = []
    for entry in items:
        item = _entry(entry, got.get(entry.id))
        item["pageref"] = "page_1"
        har_entries.append(item)
    return {"log": {
        "version": "1.2",
        "creator": {"name": "browserd", "version": creator_version},
        "pages": [page] if items else [],
        "entries": har_entries,
    }}


def body_for_har(body: str, base64_encoded: bool) -> HarBody:
    """A :class:`HarBody` from ``Network.getResponseBody``'s reply."""
    size = len(base64.b64decode(body)) if base64_encoded else len(body.encode())
    return HarBody(text=body, base64=base64_encoded, size=size)
