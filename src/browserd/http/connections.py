"""Cutting one client connection of this process, for a reader that never reads.

hypercorn writes to a socket in a shielded ``send_all``: a client that keeps
its connection open but never reads blocks that write forever, and no
cancellation reaches it (so the service could not even stop). A long-lived
lane (``/events``, ``/ws``) that has given up on such a client calls
:func:`abort_connection` with the request's ASGI scope: the socket of this
process whose local and peer addresses are the scope's ``server`` and
``client`` is shut down (both directions). The blocked write then fails
(EPIPE), hypercorn sees the connection as closed and everything waiting on it
unwinds. Only a duplicate of the descriptor is opened and closed here; the
server still owns, and closes, the socket itself.

Looks through ``/proc/self/fd`` (Linux) or ``/dev/fd`` (macOS): only on the
rare give-up path. Never raises: False when no such socket was found.

:class:`WatchedSender` is the one writer of such a lane's WebSocket frames:
one at a time, in order, and a write stuck for its ``stall_s`` gets the
connection cut.
"""

from __future__ import annotations

import logging
import os
import socket
import stat
from collections.abc import Awaitable, Callable
from typing import Any

import trio

__all__ = ["WatchedSender", "abort_connection"]

log = logging.getLogger(__name__)


def _same(address: Any, wanted: Any) -> bool:
    return (isinstance(address, tuple) and isinstance(wanted, (tuple, list))
            and len(wanted) >= 2 and tuple(address[:2]) == (wanted[0], wanted[1]))


def _descriptors() -> list[int]:
    for where in ("/proc/self/fd", "/dev/fd"):
        try:
            return [int(name) for name in os.listdir(where) if name.isdigit()]
        except OSError:
            continue
    return []


def abort_connection(scope: dict[str, Any] | Any) -> bool:
    """Shut down the TCP connection ``scope`` arrived on; True if it was found."""
    client, server = scope.get("client"), scope.get("server")
    if not client or not server:
        return False
    for fd in _descriptors():
        try:
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
            sock = socket.socket(fileno=os.dup(fd))
        except OSError:
            continue
        try:
            if sock.type != socket.SOCK_STREAM:
                continue
            if _same(sock.getsockname(), server) and _same(sock.getpeername(), client):
                sock.shutdown(socket.SHUT_RDWR)
                log.info("cut the connection of a client that stopped reading")
                return True
        except OSError:
            continue
        finally:
            sock.close()
    return False


class WatchedSender:
    """Text frames to one ASGI WebSocket, FIFO; a write stuck too long cuts the connection.

    Callers of :meth:`send_text` wait their turn (so answers keep their
    order). :meth:`watch` runs beside them (in the connection's nursery) and,
    once one write has been stuck for ``stall_s``, calls
    :func:`abort_connection` and returns: the server's write is shielded, so
    no cancel scope can end it; shutting the socket down does, and the
    connection then ends as disconnected.
    """

    def __init__(self, scope: dict[str, Any] | Any,
                 send: Callable[[dict[str, Any]], Awaitable[None]], *, stall_s: float,
                 on_cut: Callable[[], None] | None = None) -> None:
        self._scope, self._send, self._stall_s, self._on_cut = scope, send, stall_s, on_cut
        self._lock = trio.Lock()
        self._writing_since: float | None = None

    async def send_text(self, frame: str) -> None:
        """Write one text frame (after the frames before it)."""
        async with self._lock:
            self._writing_since = trio.current_time()
            try:
                await self._send({"type": "websocket.send", "text": frame})
            finally:
                self._writing_since = None

    async def watch(self) -> None:
        """Return after cutting a connection whose write is stuck (runs until cancelled)."""
        while True:
            await trio.sleep(self._stall_s / 4)
            since = self._writing_since
            if since is not None and trio.current_time() - since > self._stall_s:
                if self._on_cut is not None:
                    self._on_cut()
                abort_connection(self._scope)
                return
