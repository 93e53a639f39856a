"""Network work on a tab: request details and bodies, blocking, extra headers, HAR.

Everything here runs in the tab's work slot (see :func:`browserd.http.tabwork.on_tab`)
and uses the tab's own CDP session; the ring itself is :class:`~browserd.tabs.netlog.NetworkLog`.

- :func:`ensure_enabled` switches the tab's Network domain on (with
  ``network_capture = "on-demand"``, the default, the first network route
  used on a tab does): blocking and extra headers need it, and from then on
  the ring records that tab.
- :func:`request_detail` answers ``GET /network/{id}``: headers, post data
  and the response body. Chromium keeps bodies in the renderer only while
  the document that loaded them is alive and within its buffer (20 MiB per
  tab, 5 MiB per response); otherwise the answer says ``bodyUnavailable``
  with the reason instead of failing.
- :func:`set_blocked` / :func:`set_extra_headers` apply to the tab's session
  and stay across its navigations (Chromium keeps them per session). Out-of-
  process iframes have sessions of their own: the actor switches recording
  on in each as it attaches, with the tab's controls, and changes reach the
  ones attached already (best effort: a frame that goes away is skipped).

Errors: CdpError / Timeout / BrowserGone of the CDP calls; BadRequest for a
pattern Chromium cannot parse or a header browserd refuses. Cancellation
abandons the CDP call in flight; the ring and the controls change only after
Chromium accepted the change.
"""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Mapping
from typing import Any

import orjson
import trio

from ..errors import BadRequest, BrowserdError, CdpError, RequestNotFound
from .actor import TabActor
from .har import HarBody, body_for_har, build_har
from .netlog import NETWORK_ENABLE, NetworkControls, NetworkEntry, blocked_params
from .routing import send_in, session_by_id

__all__ = ["MAX_HEADERS", "REFUSED_HEADERS", "check_headers", "ensure_enabled", "export_har",
           "request_detail", "set_blocked", "set_extra_headers"]

MAX_HEADERS = 64
MAX_HEADER_VALUE = 8192
MAX_PATTERNS = 256
REFUSED_HEADERS = frozenset({
    "host", "cookie", "content-length", "transfer-encoding", "connection", "keep-alive",
    "upgrade", "te", "trailer", "expect", "proxy-authorization", "proxy-connection",
})
"""Header names ``POST /network/headers`` refuses: they would misroute or corrupt requests
(Host, framing headers) or send one site's cookie to every site (Cookie: use /cookies)."""
_TOKEN_RE = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}")
_HAR_BODY_BUDGET = 50 * 1024 * 1024
_GONE = ("Chromium no longer has this response's body: it keeps bodies only while the "
         "document that loaded them is alive and within its buffer (20 MiB per tab)")


async def ensure_enabled(tab: TabActor) -> None:
    """Switch the tab's Network domain on, in its OOPIF sessions too (no-op when on)."""
    if tab.network.recording:
        return
    await tab.send("Network.enable", dict(NETWORK_ENABLE))
    tab.network.mark_recording(time.time())
    await tab.children.configure_all()


def _entry(tab: TabActor, entry_id: int) -> NetworkEntry:
    entry = tab.network.get(entry_id)
    if entry is None:
        raise RequestNotFound(f"no request {entry_id} in this tab's network ring")
    return entry


def _cut_body(body: str, base64_encoded: bool, max_bytes: int) -> dict[str, Any]:
    raw = base64.b64decode(body) if base64_encoded else body.encode()
    out: dict[str, Any] = {"bodyBytes": len(raw), "bodyTruncated": len(raw) > max_bytes}
    part = raw[:max_bytes]
    if base64_encoded:
        try:
            text = part.decode("utf-8")
            out |= {"body": text, "bodyEncoding": "text"}
        except UnicodeDecodeError:
            out |= {"body": base64.b64encode(part).decode(), "bodyEncoding": "base64"}
    else:
        out |= {"body": part.decode("utf-8", errors="ignore"), "bodyEncoding": "text"}
    return out


async def _post_data(tab: TabActor, entry: NetworkEntry) -> dict[str, Any]:
    if not entry.has_post_data:
        return {"postData": None}
    if entry.post_data is not None and len(entry.post_data) < 16 * 1024:
        return {"postData": entry.post_data}
    try:
        reply = await send_in(tab, session_by_id(tab, entry.session_id),
                              "Network.getRequestPostData", {"requestId": entry.request_id})
        return {"postData": str(reply.get("postData", ""))}
    except CdpError:
        return {"postData": entry.post_data, "postDataTruncated": True}


async def request_detail(tab: TabActor, entry_id: int, *, max_bytes: int) -> dict[str, Any]:
    """``GET /network/{id}``: the summary plus headers, post data and body (≤ ``max_bytes``).

    Raises RequestNotFound for an id the ring does not (or no longer) hold.
    """
    entry = _entry(tab, entry_id)
    out = entry.summary()
    out |= {"statusText": entry.status_text, "protocol": entry.protocol,
            "remoteAddress": entry.remote_address,
            "requestHeaders": dict(entry.request_headers),
            "responseHeaders": dict(entry.response_headers)}
    out |= await _post_data(tab, entry)
    reason = None
    if not entry.finished:
        reason = "the response has not finished loading"
    elif entry.failed:
        reason = "the request failed; there is no body"
    elif entry.redirect_to is not None:
        reason = "a redirect has no body"
    elif tab.view().crashed:
        reason = "the tab's renderer crashed"
    if reason is None:
        try:
            reply = await send_in(tab, session_by_id(tab, entry.session_id),
                                  "Network.getResponseBody", {"requestId": entry.request_id})
        except CdpError as exc:
            reason = f"{_GONE} ({exc.message})"
        else:
            out |= _cut_body(str(reply.get("body", "")), bool(reply.get("base64Encoded")),
                             max_bytes)
    if reason is not None:
        out |= {"body": None, "bodyUnavailable": reason}
    return out


async def set_blocked(tab: TabActor, patterns: list[str]) -> NetworkControls:
    """Block requests whose URL matches any of ``patterns`` (URLPattern syntax); [] clears.

    Raises BadRequest when Chromium cannot parse a pattern (nothing changes then).
    """
    if len(patterns) > MAX_PATTERNS:
        raise BadRequest(f"at most {MAX_PATTERNS} patterns", field="patterns")
    for pattern in patterns:
        if not pattern or len(pattern) > 4096:
            raise BadRequest("a pattern must be 1 to 4096 characters", field="patterns")
    await ensure_enabled(tab)
    try:
        await tab.send("Network.setBlockedURLs", blocked_params(patterns))
    except CdpError as exc:
        if exc.cdp_code == -32602:
            raise BadRequest(
                f"Chromium cannot use that pattern: {exc.message.split(': ', 1)[-1]}",
                field="patterns",
                hint="patterns are absolute URLPattern strings, e.g. *://*:*/*.png or "
                     "https://ads.example.com/*") from None
        raise
    controls = NetworkControls(blocked=tuple(patterns),
                               extra_headers=tab.network.controls.extra_headers)
    tab.network.set_controls(controls)
    await tab.children.configure_all()
    return controls


def check_headers(headers: Mapping[str, Any]) -> dict[str, str]:
    """Validated extra headers (names are RFC 9110 tokens, values one line).

    Raises BadRequest naming the header (never echoing its value) for a bad
    name or value, for a refused name (:data:`REFUSED_HEADERS`, ``Sec-*``,
    ``Proxy-*``) and for more than :data:`MAX_HEADERS` headers.
    """
    if len(headers) > MAX_HEADERS:
        raise BadRequest(f"at most {MAX_HEADERS} headers", field="headers")
    out: dict[str, str] = {}
    seen: set[str] = set()
    for name, value in headers.items():
        if not _TOKEN_RE.fullmatch(name):
            raise BadRequest(f"{name[:64]!r} is not a valid header name", field="headers")
        low = name.lower()
        if low in REFUSED_HEADERS or low.startswith(("sec-", "proxy-")):
            raise BadRequest(
                f"the {name} header cannot be set for every request", field="headers",
                hint="cookies go through POST /cookies; Host and framing headers are the "
                     "browser's own")
        if low in seen:
            raise BadRequest(f"the {name} header is given twice", field="headers")
        seen.add(low)
        if not isinstance(value, str):
            raise BadRequest(f"the value of {name} must be a string", field="headers")
        if len(value) > MAX_HEADER_VALUE or any(c in value for c in "\r\n\0"):
            raise BadRequest(f"the value of {name} must be one line of at most "
                             f"{MAX_HEADER_VALUE} characters", field="headers")
        out[name] = value
    return out


async def set_extra_headers(tab: TabActor, headers: Mapping[str, Any]) -> NetworkControls:
    """Send ``headers`` with every request of the tab (any site); {} clears.

    Raises BadRequest (see :func:`check_headers`); nothing changes then.
    """
    checked = check_headers(headers)
    await ensure_enabled(tab)
    await tab.send("Network.setExtraHTTPHeaders", {"headers": checked})
    controls = NetworkControls(blocked=tab.network.controls.blocked, extra_headers=checked)
    tab.network.set_controls(controls)
    await tab.children.configure_all()
    return controls


async def _har_bodies(tab: TabActor, entries: list[NetworkEntry],
                      max_bytes: int) -> dict[int, HarBody]:
    """Bodies Chromium still has, each ≤ ``max_bytes``, 50 MiB in all; the rest are left out."""
    bodies: dict[int, HarBody] = {}
    budget = _HAR_BODY_BUDGET
    for entry in entries:
        if (not entry.finished or entry.failed or entry.redirect_to is not None
                or tab.view().crashed):
            continue
        try:
            with trio.fail_after(5):
                reply = await send_in(tab, session_by_id(tab, entry.session_id),
                                      "Network.getResponseBody",
                                      {"requestId": entry.request_id})
        except (BrowserdError, trio.TooSlowError):
            continue
        body = body_for_har(str(reply.get("body", "")), bool(reply.get("base64Encoded")))
        if body.size > max_bytes or body.size > budget:
            continue
        budget -= body.size
        bodies[entry.id] = body
    return bodies


async def export_har(tab: TabActor, *, version: str, bodies: bool, max_body_bytes: int,
                     url_contains: str | None = None) -> tuple[bytes, int]:
    """The tab's ring as a HAR 1.2 file (UTF-8 JSON) and its number of entries."""
    entries = [e for e in tab.network.entries()
               if e.matches(url_contains=url_contains, resource_type=None, status=None,
                            failed=None)]
    got = await _har_bodies(tab, entries, max_body_bytes) if bodies else {}
    view = tab.view()
    har = build_har(entries, creator_version=version, bodies=got, page_title=view.title,
                    page_url=view.url)
    # Up to 1000 entries and 50 MiB of bodies: encoded off the event loop.
    data = await trio.to_thread.run_sync(lambda: orjson.dumps(har, option=orjson.OPT_INDENT_2))
    return data, len(entries)
