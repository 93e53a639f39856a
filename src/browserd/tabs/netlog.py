"""The tab's network ring: the last requests, fed from ``Network.*`` events.

:class:`NetworkLog` is typed tab state like :mod:`browserd.tabs.state`: one
per :class:`~browserd.tabs.actor.TabActor`, changed only through its own
methods (CDP sinks call :meth:`NetworkLog.on_event` from the reader; routes
in the tab's work slot call :meth:`NetworkLog.set_controls`). Nothing here
does I/O, so all of it is unit-testable without a browser.

Each request hop is one entry: the ring changes its own private copy in
place on every event and hands out :class:`NetworkEntry` snapshots (frozen
records) when read. A redirect closes the hop it answers (status 3xx) and opens a
new entry for the next hop under the same CDP ``requestId``. Entries get
service-side ids (1, 2, …) that never repeat within the tab. The ring keeps
at most ``capacity`` entries and about ``max_bytes`` of text; the oldest go
first and are counted in :attr:`NetworkLog.dropped`.

Page content is untrusted: URLs, headers and post data are capped per
entry (:data:`URL_CAP`, :data:`HEADERS_CAP`, :data:`POST_DATA_CAP`) and
header values are kept out of ``repr`` so they cannot reach a log line by
accident (Authorization, Cookie and Set-Cookie carry secrets).

A WebSocket is one entry too (``resourceType: "websocket"``), pending while
it is open. A request the navigation guard stopped for egress containment
(:mod:`browserd.egress`; Chromium reports it as an ``inspector``
block, or a WebSocket as offline) has ``blockedReason: "egress"``.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from ..egress import blocked_reason

__all__ = ["HEADERS_CAP", "NETWORK_BUFFER", "NETWORK_ENABLE", "NETWORK_EVENTS", "NETWORK_QUIET",
           "POST_DATA_CAP", "RESOURCE_TYPES", "URL_CAP", "NetworkControls", "NetworkEntry",
           "NetworkLog", "blocked_params"]

NETWORK_BUFFER = 1000
"""Requests kept per tab (the oldest go first)."""
RING_BYTES = 16 * 1024 * 1024
"""About this much URL, header and post-data text is kept per tab."""
URL_CAP = 8192
"""URLs longer than this (``data:`` URLs…) are cut; the entry says ``urlTruncated``."""
HEADERS_CAP = 32 * 1024
"""Header text kept per header set (names + values); the rest is dropped."""
POST_DATA_CAP = 16 * 1024
"""Post data kept in the ring; larger bodies are fetched from Chromium on demand."""

NETWORK_ENABLE: Mapping[str, int] = {
    "maxTotalBufferSize": 20 * 1024 * 1024, "maxResourceBufferSize": 5 * 1024 * 1024,
    "maxPostDataSize": POST_DATA_CAP,
}
"""``Network.enable`` parameters: the renderer keeps up to 20 MiB of response bodies per
tab (5 MiB per response) for ``GET /network/{id}``; post data up to the ring's cap
comes inline with the request event."""
NETWORK_QUIET: Mapping[str, int] = {"maxTotalBufferSize": 0, "maxResourceBufferSize": 0,
                                    "maxPostDataSize": 0}
"""``Network.enable`` parameters that keep no bodies: a tab's Network domain before its
network routes are used (its events still say what is in flight), the guard's sessions."""

_WS_EVENTS = frozenset({
    "Network.webSocketCreated", "Network.webSocketWillSendHandshakeRequest",
    "Network.webSocketHandshakeResponseReceived", "Network.webSocketFrameError",
    "Network.webSocketClosed",
})
NETWORK_EVENTS = frozenset({
    "Network.requestWillBeSent", "Network.responseReceived", "Network.loadingFinished",
    "Network.loadingFailed", "Network.requestServedFromCache",
}) | _WS_EVENTS

RESOURCE_TYPES = ("document", "stylesheet", "image", "media", "font", "script", "texttrack",
                  "xhr", "fetch", "prefetch", "eventsource", "websocket", "manifest",
                  "signedexchange", "ping", "cspviolationreport", "preflight", "fedcm", "other")
"""Chromium's resource types, lower-cased as the API spells them."""


def _cap_headers(raw: Any) -> dict[str, str]:
    """Headers as str → str, at most :data:`HEADERS_CAP` characters of them."""
    out: dict[str, str] = {}
    if not isinstance(raw, Mapping):
        return out
    used = 0
    for name, value in raw.items():
        name, text = str(name), str(value)
        used += len(name) + len(text)
        if used > HEADERS_CAP:
            break
        out[name] = text
    return out


def _headers_size(headers: Mapping[str, str]) -> int:
    return sum(len(k) + len(v) for k, v in headers.items())


class _EntryFields:
    """What :class:`NetworkEntry` and the ring's live :class:`_Hop` both answer."""

    __slots__ = ()
    url: str
    resource_type: str
    status: int | None
    failed: bool
    start_ts: float
    end_ts: float | None

    @property
    def duration_ms(self) -> float | None:
        if self.end_ts is None:
            return None
        return round(max(0.0, self.end_ts - self.start_ts) * 1000, 1)

    def matches(self, *, url_contains: str | None, resource_type: str | None,
                status: int | None, failed: bool | None) -> bool:
        if url_contains is not None and url_contains.lower() not in self.url.lower():
            return False
        if resource_type is not None and self.resource_type != resource_type.lower():
            return False
        if status is not None and self.status != status:
            return False
        return failed is None or self.failed == failed


@attrs.frozen(kw_only=True)
class NetworkEntry(_EntryFields):
    """One request hop as the ring hands it out (a snapshot: later events do not change it).

    ``start_ts``/``end_ts`` are Chromium's monotonic seconds (for durations);
    ``started_at`` is wall-clock seconds. ``session_id`` None is the tab's
    own session. Header and post-data fields never appear in ``repr``.
    """

    id: int
    request_id: str
    session_id: str | None = None
    method: str
    url: str
    url_truncated: bool = False
    resource_type: str
    frame_id: str | None = None
    started_at: float
    start_ts: float
    request_headers: Mapping[str, str] = attrs.field(factory=dict, repr=False)
    post_data: str | None = attrs.field(default=None, repr=False)
    has_post_data: bool = False
    status: int | None = None
    status_text: str = ""
    mime_type: str | None = None
    response_headers: Mapping[str, str] = attrs.field(factory=dict, repr=False)
    protocol: str | None = None
    remote_address: str | None = None
    timing: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    from_cache: bool = False
    end_ts: float | None = None
    encoded_bytes: int | None = None
    finished: bool = False
    failed: bool = False
    error_text: str | None = None
    blocked_reason: str | None = None
    redirect_to: int | None = None
    size: int = attrs.field(default=0, repr=False, eq=False)
    """About how many characters the entry holds (the ring's byte budget)."""

    def summary(self) -> dict[str, Any]:
        """The ``GET /network`` item: no headers, no bodies."""
        out: dict[str, Any] = {
            "id": self.id, "method": self.method, "url": self.url,
            "resourceType": self.resource_type, "status": self.status,
            "mimeType": self.mime_type, "fromCache": self.from_cache,
            "startedAt": self.started_at, "durationMs": self.duration_ms,
            "encodedBytes": self.encoded_bytes, "failed": self.failed,
        }
        if self.error_text is not None:
            out["errorText"] = self.error_text
        if self.blocked_reason is not None:
            out["blockedReason"] = self.blocked_reason
        if not self.finished:
            out["pending"] = True
        if self.redirect_to is not None:
            out["redirectedTo"] = self.redirect_to
        if self.url_truncated:
            out["urlTruncated"] = True
        return out


@attrs.define(kw_only=True, slots=True)
class _Hop(_EntryFields):
    """The ring's own, mutable copy of one entry (events change it in place).

    Private to :class:`NetworkLog`: an event updates a few fields here
    instead of building a new frozen record (``attrs.evolve`` of ~30 fields
    per event was the ring's largest cost); readers get :meth:`freeze`.
    Same fields as :class:`NetworkEntry`; header and post-data fields stay
    out of ``repr``.
    """

    id: int
    request_id: str
    session_id: str | None
    method: str
    url: str
    url_truncated: bool
    resource_type: str
    frame_id: str | None
    started_at: float
    start_ts: float
    request_headers: Mapping[str, str] = attrs.field(repr=False)
    post_data: str | None = attrs.field(repr=False)
    has_post_data: bool
    status: int | None = None
    status_text: str = ""
    mime_type: str | None = None
    response_headers: Mapping[str, str] = attrs.field(factory=dict, repr=False)
    protocol: str | None = None
    remote_address: str | None = None
    timing: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    from_cache: bool = False
    end_ts: float | None = None
    encoded_bytes: int | None = None
    finished: bool = False
    failed: bool = False
    error_text: str | None = None
    blocked_reason: str | None = None
    redirect_to: int | None = None
    size: int = attrs.field(default=0, repr=False)

    def measure(self) -> int:
        """Recompute :attr:`size` (after headers or post data changed); the change in size."""
        size = (200 + len(self.url) + _headers_size(self.request_headers)
                + _headers_size(self.response_headers) + len(self.post_data or ""))
        delta, self.size = size - self.size, size
        return delta

    def freeze(self) -> NetworkEntry:
        return NetworkEntry(**{name: getattr(self, name) for name in _ENTRY_FIELDS})

    def take_response(self, response: Mapping[str, Any], *, resource_type: Any = None) -> None:
        """Take the response's fields (call :meth:`measure` after)."""
        if isinstance(resource_type, str):
            self.resource_type = resource_type.lower()
        self.status = _int(response.get("status"))
        self.status_text = str(response.get("statusText") or "")[:200]
        mime = response.get("mimeType")
        self.mime_type = str(mime)[:200] if mime else None
        self.response_headers = _cap_headers(response.get("headers"))
        protocol = response.get("protocol")
        self.protocol = str(protocol)[:32] if protocol else None
        address = response.get("remoteIPAddress")
        self.remote_address = (f"{address}:{response.get('remotePort', '')}" if address
                               else None)
        timing = response.get("timing")
        self.timing = dict(timing) if isinstance(timing, Mapping) else None
        self.from_cache = self.from_cache or bool(response.get("fromDiskCache")
                                                  or response.get("fromPrefetchCache"))


_ENTRY_FIELDS = tuple(a.name for a in attrs.fields(NetworkEntry))


def blocked_params(patterns: Iterable[str]) -> dict[str, Any]:
    """``Network.setBlockedURLs`` parameters for URLPattern strings."""
    return {"urlPatterns": [{"urlPattern": p, "block": True} for p in patterns]}


@attrs.frozen(kw_only=True)
class NetworkControls:
    """What the agent set on the tab's network: blocked URL patterns, extra headers.

    Header values are secrets as far as logs go: they never appear in ``repr``.
    """

    blocked: tuple[str, ...] = ()
    extra_headers: Mapping[str, str] = attrs.field(factory=dict, repr=False)

    def commands(self) -> list[tuple[str, dict[str, Any]]]:
        """The CDP commands that switch recording on with these controls, for one session."""
        out: list[tuple[str, dict[str, Any]]] = [("Network.enable", dict(NETWORK_ENABLE))]
        if self.blocked:
            out.append(("Network.setBlockedURLs", blocked_params(self.blocked)))
        if self.extra_headers:
            out.append(("Network.setExtraHTTPHeaders", {"headers": dict(self.extra_headers)}))
        return out

    def to_json(self) -> dict[str, Any]:
        """Patterns and header *names* only (values are not echoed back)."""
        return {"blocked": list(self.blocked), "extraHeaders": sorted(self.extra_headers)}


class NetworkLog:
    """A ring of the tab's recent requests, plus its network controls.

    :attr:`recording_since` is when the tab's Network domain was switched on
    (wall-clock seconds; None while it is off): the ring knows nothing older.
    """

    def __init__(self, capacity: int = NETWORK_BUFFER, max_bytes: int = RING_BYTES) -> None:
        self._hops: OrderedDict[int, _Hop] = OrderedDict()
        self._live: dict[tuple[str | None, str], _Hop] = {}  # (session, requestId) → open hop
        self._capacity = capacity
        self._max_bytes = max_bytes
        self._bytes = 0
        self._next_id = 1
        self.dropped = 0
        self.recording_since: float | None = None
        self.controls = NetworkControls()

    # -- reading ---------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._hops)

    def get(self, entry_id: int) -> NetworkEntry | None:
        hop = self._hops.get(entry_id)
        return hop.freeze() if hop is not None else None

    def entries(self) -> list[NetworkEntry]:
        """Every entry, oldest first."""
        return [hop.freeze() for hop in self._hops.values()]

    def query(self, *, url_contains: str | None = None, resource_type: str | None = None,
              status: int | None = None, failed: bool | None = None,
              limit: int = 100) -> list[NetworkEntry]:
        """The newest ``limit`` entries that match, oldest first."""
        found: list[NetworkEntry] = []
        for hop in reversed(self._hops.values()):
            if len(found) >= limit:
                break
            if hop.matches(url_contains=url_contains, resource_type=resource_type,
                           status=status, failed=failed):
                found.append(hop.freeze())
        found.reverse()
        return found

    @property
    def bytes(self) -> int:
        return self._bytes

    # -- changing --------------------------------------------------------------

    def clear(self) -> None:
        """Forget every entry (``dropped`` is reset too); controls stay."""
        self._hops.clear()
        self._live.clear()
        self._bytes = 0
        self.dropped = 0

    @property
    def recording(self) -> bool:
        return self.recording_since is not None

    def mark_recording(self, since: float) -> None:
        """Record that the tab's Network domain is on (events flow) since ``since``."""
        if self.recording_since is None:
            self.recording_since = since

    def set_controls(self, controls: NetworkControls) -> None:
        self.controls = controls

    def on_event(self, method: str, params: Mapping[str, Any],
                 session_id: str | None = None) -> None:
        """Apply one ``Network.*`` event; unknown requests and methods are ignored."""
        request_id = params.get("requestId")
        if not isinstance(request_id, str):
            return
        key = (session_id, request_id)
        if method in _WS_EVENTS:
            self._on_websocket(key, method, params)
            return
        if method == "Network.requestWillBeSent":
            self._on_request(key, params)
            return
        hop = self._live.get(key)
        if hop is None:
            return
        if method == "Network.responseReceived":
            hop.take_response(params.get("response") or {}, resource_type=params.get("type"))
            self._bytes += hop.measure()
            self._evict()
        elif method == "Network.requestServedFromCache":
            hop.from_cache = True
        elif method == "Network.loadingFinished":
            hop.end_ts = _float(params.get("timestamp"))
            hop.encoded_bytes = _int(params.get("encodedDataLength"))
            hop.finished = True
            del self._live[key]
        elif method == "Network.loadingFailed":
            blocked = blocked_reason(request_id) or params.get("blockedReason")
            text = str(params.get("errorText") or "")[:500]
            if not text and blocked:
                text = f"blocked ({blocked})"
            if params.get("canceled") and not text:
                text = "canceled"
            hop.end_ts = _float(params.get("timestamp"))
            hop.finished = hop.failed = True
            hop.error_text = text or "failed"
            hop.blocked_reason = str(blocked) if blocked else None
            del self._live[key]

    def _on_request(self, key: tuple[str | None, str], p: Mapping[str, Any]) -> None:
        request = p.get("request") or {}
        timestamp = _float(p.get("timestamp")) or 0.0
        new_id = self._next_id
        self._next_id += 1
        previous = self._live.get(key)
        if previous is not None:
            # A redirect (or a reused id): the previous hop ends here.
            redirect = p.get("redirectResponse")
            if isinstance(redirect, Mapping):
                previous.take_response(redirect)
                previous.encoded_bytes = _int(redirect.get("encodedDataLength"))
                self._bytes += previous.measure()
            previous.end_ts = timestamp
            previous.finished = True
            previous.redirect_to = new_id
        url = str(request.get("url") or "") + str(request.get("urlFragment") or "")
        post = request.get("postData")
        frame_id = p.get("frameId")
        hop = _Hop(
            id=new_id, request_id=key[1], session_id=key[0],
            method=str(request.get("method") or "GET"),
            url=url[:URL_CAP], url_truncated=len(url) > URL_CAP,
            resource_type=str(p.get("type") or "Other").lower(),
            frame_id=frame_id if isinstance(frame_id, str) else None,
            started_at=_float(p.get("wallTime")) or 0.0, start_ts=timestamp,
            request_headers=_cap_headers(request.get("headers")),
            post_data=str(post)[:POST_DATA_CAP] if post is not None else None,
            has_post_data=bool(request.get("hasPostData")) or post is not None,
        )
        self._bytes += hop.measure()
        self._live[key] = hop
        self._hops[new_id] = hop
        self._evict()

    def _on_websocket(self, key: tuple[str | None, str], method: str,
                      p: Mapping[str, Any]) -> None:
        """One WebSocket event: an entry per socket, pending until it closes."""
        hop = self._live.get(key)
        if method == "Network.webSocketCreated":
            url = str(p.get("url") or "")
            hop = _Hop(id=self._next_id, request_id=key[1], session_id=key[0], method="GET",
                       url=url[:URL_CAP], url_truncated=len(url) > URL_CAP,
                       resource_type="websocket", frame_id=None, started_at=time.time(),
                       start_ts=0.0, request_headers={}, post_data=None, has_post_data=False)
            self._next_id += 1
            self._bytes += hop.measure()
            self._live[key] = self._hops[hop.id] = hop
            self._evict()
            return
        if hop is None or hop.resource_type != "websocket":
            return
        timestamp = _float(p.get("timestamp"))
        if method == "Network.webSocketWillSendHandshakeRequest":
            hop.start_ts = timestamp or hop.start_ts
            hop.request_headers = _cap_headers((p.get("request") or {}).get("headers"))
        elif method == "Network.webSocketHandshakeResponseReceived":
            hop.take_response(p.get("response") or {})
        elif method == "Network.webSocketFrameError" and hop.status is None:
            hop.failed = True  # it never opened
            hop.error_text = str(p.get("errorMessage") or "failed")[:500]
            hop.blocked_reason = blocked_reason(key[1])
        elif method == "Network.webSocketClosed":
            hop.end_ts = timestamp
            hop.start_ts = hop.start_ts or timestamp or 0.0
            hop.finished = True
            del self._live[key]
        self._bytes += hop.measure()
        self._evict()

    def _evict(self) -> None:
        while self._hops and (len(self._hops) > self._capacity
                              or self._bytes > self._max_bytes):
            _, hop = self._hops.popitem(last=False)
            self._bytes -= hop.size
            key = (hop.session_id, hop.request_id)
            if self._live.get(key) is hop:
                del self._live[key]
            self.dropped += 1

    def feed(self, events: Iterable[tuple[str, Mapping[str, Any]]]) -> None:
        """Apply several ``(method, params)`` events of the tab's own session (tests, benches)."""
        for method, params in events:
            self.on_event(method, params)


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None
