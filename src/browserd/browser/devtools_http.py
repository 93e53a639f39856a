"""The smallest HTTP GET needed to read ``/json/version`` from a DevTools port.

Chromium answers these endpoints with HTTP/1.0-style replies; its websocket
URL omits the port unless the Host header carries it, so we always send it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import orjson
import trio

from ..errors import BrowserGone

__all__ = ["browser_ws_url", "get_json"]

_MAX_REPLY = 1024 * 1024


async def get_json(base_url: str, path: str) -> Any:
    """GET ``base_url + path`` and decode its JSON body.

    Caller owns the deadline. Raises BrowserGone when nothing answers or the
    reply is not JSON.
    """
    parts = urlsplit(base_url)
    host = parts.hostname or "127.0.0.1"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if parts.scheme == "https":
        raise BrowserGone("https DevTools endpoints are not supported; use a ws:// cdp_url")
    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    request = f"GET {path} HTTP/1.1\r\nHost: {netloc}\r\nConnection: close\r\n\r\n".encode()
    try:
        stream = await trio.open_tcp_stream(host, port)
    except OSError as exc:
        raise BrowserGone(f"nothing answers at {netloc}: {exc}") from None
    async with stream:
        try:
            await stream.send_all(request)
            chunks: list[bytes] = []
            size = 0
            while size < _MAX_REPLY and not _complete(b"".join(chunks)):
                chunk = await stream.receive_some(65536)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        except (trio.BrokenResourceError, OSError) as exc:
            raise BrowserGone(f"{netloc} closed the connection: {exc}") from None
    raw = b"".join(chunks)
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line = head.split(b"\r\n", 1)[0]
    if b" 200 " not in status_line + b" ":
        raise BrowserGone(f"{netloc}{path} answered {status_line.decode(errors='replace')!r}")
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        raise BrowserGone(f"{netloc}{path} did not answer JSON") from None


def _complete(raw: bytes) -> bool:
    """True once a reply with a Content-Length has all of its body.

    Chromium answers ``Connection: close`` requests with HTTP/1.1 and keeps the
    socket open, so reading to EOF would wait forever.
    """
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                return len(body) >= int(value.strip())
            except ValueError:
                return False
    return False


async def browser_ws_url(cdp_url: str) -> str:
    """The browser-level websocket URL of a DevTools endpoint (ws URLs pass through)."""
    if cdp_url.startswith(("ws://", "wss://")):
        return cdp_url
    info = await get_json(cdp_url, "/json/version")
    url = info.get("webSocketDebuggerUrl") if isinstance(info, dict) else None
    if not isinstance(url, str):
        raise BrowserGone(f"{cdp_url}/json/version has no webSocketDebuggerUrl")
    return url
