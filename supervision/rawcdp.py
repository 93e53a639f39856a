"""An independent CDP client, for injecting faults on a DevTools port.

:class:`RawCdp` is one websocket to a DevTools endpoint (browserd's CDP gateway
or a Chromium's own port): replies matched by id, events kept. :func:`open_cdp`
connects to a websocket URL, :func:`open_raw_cdp` to a port's browser endpoint
(``Page.crash``, cookies, dialogs). tests/integration/_rawcdp.py builds on it.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import trio
from trio_websocket import ConnectionClosed, WebSocketConnection, open_websocket_url

from .harness import LOOPBACK_TLS


class CdpFailed(Exception):
    """A raw CDP command got an error reply, or the socket closed first."""


class CdpCommandError(CdpFailed):
    """The browser answered a command with an error object."""


class CdpClosed(CdpFailed):
    """The websocket closed before the reply came."""


class RawCdp:
    """One websocket to a DevTools endpoint; replies matched by id, events kept.

    Cancelling :meth:`send` abandons the reply (dropped when it arrives).
    """

    def __init__(self, ws: WebSocketConnection) -> None:
        self._ws = ws
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[trio.Event, list[dict[str, Any]]]] = {}
        self.events: list[dict[str, Any]] = []
        self.closed = False

    async def send(self, method: str, params: dict[str, Any] | None = None,
                   session_id: str | None = None) -> dict[str, Any]:
        """Send one command and wait (caller's deadline) for its result.

        Raises CdpCommandError on an error reply, CdpClosed on a closed socket
        (both are CdpFailed).
        """
        if self.closed:
            raise CdpClosed(f"{method}: connection closed")
        msg_id = next(self._ids)
        message: dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        event, box = trio.Event(), list[dict[str, Any]]()
        self._pending[msg_id] = (event, box)
        try:
            await self._ws.send_message(orjson.dumps(message).decode())
            await event.wait()
        finally:
            self._pending.pop(msg_id, None)
        if not box:
            raise CdpClosed(f"{method}: connection closed")
        if "error" in box[0]:
            raise CdpCommandError(f"{method}: {box[0]['error']}")
        result: dict[str, Any] = box[0].get("result", {})
        return result

    async def fire(self, method: str, params: dict[str, Any] | None = None,
                   session_id: str | None = None) -> None:
        """Send a command without waiting for a reply (e.g. ``Page.crash``)."""
        message: dict[str, Any] = {"id": next(self._ids), "method": method,
                                   "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        await self._ws.send_message(orjson.dumps(message).decode())

    async def _reader(self) -> None:
        try:
            while True:
                message = orjson.loads(await self._ws.get_message())
                entry = self._pending.get(message.get("id", -1))
                if entry is not None:
                    entry[1].append(message)
                    entry[0].set()
                elif "method" in message and len(self.events) < 10000:
                    self.events.append(message)
        except ConnectionClosed:
            pass
        finally:
            self.closed = True
            for event, _box in self._pending.values():
                event.set()


def browser_ws_url(cdp_port: int, host: str = "127.0.0.1", *, token: str | None = None) -> str:
    """The browser websocket URL of a DevTools port (blocking GET /json/version).

    ``token``: browserd's CDP gateway wants ``Authorization: Bearer <token>``.
    """
    headers = {"Host": f"{host}:{cdp_port}"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    r = httpx.get(f"http://{host}:{cdp_port}/json/version", timeout=5, headers=headers,
                  verify=LOOPBACK_TLS)
    url: str = r.json()["webSocketDebuggerUrl"]
    return url


@contextlib.asynccontextmanager
async def open_cdp(ws_url: str, *, token: str | None = None) -> AsyncIterator[RawCdp]:
    """Connect to a DevTools websocket URL (browser or page); yield a :class:`RawCdp`.

    ``token`` is sent as ``Authorization: Bearer`` (browserd's CDP gateway).

    Leaving the block cancels the reader and closes the socket. An exception
    from the body comes out as itself, not wrapped in a group.
    """
    try:
        async with (
            open_websocket_url(ws_url, max_message_size=64 * 1024 * 1024,
                               extra_headers=_auth_headers(token)) as ws,
            trio.open_nursery() as nursery,
        ):
            cdp = RawCdp(ws)
            nursery.start_soon(cdp._reader)
            try:
                yield cdp
            finally:
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise


@contextlib.asynccontextmanager
async def open_raw_cdp(cdp_port: int, *, token: str | None = None) -> AsyncIterator[RawCdp]:
    """Connect to the browser endpoint on ``cdp_port`` (browserd's gateway wants
    ``token``); closed on exit."""
    url = await trio.to_thread.run_sync(
        lambda: browser_ws_url(cdp_port, token=token))
    async with open_cdp(url, token=token) as cdp:
        yield cdp


def _auth_headers(token: str | None) -> list[tuple[bytes, bytes]]:
    return [] if token is None else [(b"authorization", f"Bearer {token}".encode())]


__all__ = ["CdpClosed", "CdpCommandError", "CdpFailed", "RawCdp", "browser_ws_url", "open_cdp",
           "open_raw_cdp"]
