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
"""

from __future__ import annotations

import logging
import os
import socket
import stat
from typing import Any

__all__ = ["abort_connection"]

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
