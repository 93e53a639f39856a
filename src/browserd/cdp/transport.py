"""Transports: how CDP messages travel between browserd and a browser.

A :class:`Transport` moves whole messages (JSON bytes), nothing more:

- :class:`PipeTransport` — ``--remote-debugging-pipe``: two OS pipes to the
  launched Chromium (it reads commands on its fd 3 and writes replies and
  events on its fd 4); every message is JSON followed by one NUL byte. This
  is the only channel to a browser browserd launches: it has no TCP
  listener anyone else could reach.
- :class:`WebSocketTransport` — trio-websocket, for attaching to a browser
  that some other program launched (``cdp_url``).

``send`` writes one whole message under a lock, shielded with its own short
bound, so two messages' bytes never interleave and a cancelled caller never
leaves half a frame on the wire. ``receive`` raises
:class:`~browserd.errors.BrowserGone` once the peer is gone (EOF, closed
socket). ``aclose`` is idempotent and never raises.
"""

from __future__ import annotations

import collections
import logging
from typing import Protocol

import trio
import trio_websocket

from ..errors import BrowserGone

log = logging.getLogger(__name__)

#: Largest message accepted from the browser (screenshots and AX trees are big).
MAX_MESSAGE_BYTES = 512 * 1024 * 1024
SEND_DEADLINE_S = 5.0
_READ_CHUNK = 1 << 20


class Transport(Protocol):
    """One message channel to a browser (see the module docstring)."""

    description: str

    async def send(self, data: bytes) -> None: ...

    async def receive(self) -> bytes | str: ...

    async def aclose(self) -> None: ...


class PipeTransport:
    """NUL-framed CDP over a pair of pipe fds (``--remote-debugging-pipe``).

    Takes ownership of both fds (they are closed by :meth:`aclose`). Holding
    them open is also the browser's lifeline: when browserd dies, the kernel
    closes them and Chromium exits by itself.

    ``receive`` reads up to 1 MiB at a time and splits all of it at once
    (C-level ``bytes.split``): the messages it held come out of later calls
    with no read, lock or task switch each (a page load with network
    recording is ~600 small events). The unfinished tail is buffered,
    bounded by :data:`MAX_MESSAGE_BYTES`; a longer message closes the
    transport with BrowserGone (the stream cannot be resynchronised).
    Cancelling ``receive`` loses nothing: bytes already read stay buffered
    for the next call.
    """

    description = "pipe"

    def __init__(self, write_fd: int, read_fd: int, *,
                 max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self._out = trio.lowlevel.FdStream(write_fd)
        self._in = trio.lowlevel.FdStream(read_fd)
        self._send_lock = trio.Lock()
        self._receive_lock = trio.Lock()
        self._ready: collections.deque[bytes] = collections.deque()  # whole messages
        self._partial = bytearray()  # the start of the next message
        self._max = max_message_bytes
        self._closed = False
        self._eof = False

    async def send(self, data: bytes) -> None:
        """Write ``data`` plus the NUL terminator as one uninterrupted message.

        Raises BrowserGone if the pipe is closed or the write does not finish
        within SEND_DEADLINE_S (the browser stopped reading). Cancellation
        waits for the write in progress (bounded) so no half message is left.
        """
        if b"\0" in data:
            raise ValueError("a CDP message cannot contain a NUL byte")
        async with self._send_lock:
            if self._closed:
                raise BrowserGone("the browser pipe is closed")
            with trio.CancelScope(shield=True, deadline=trio.current_time() + SEND_DEADLINE_S):
                try:
                    await self._out.send_all(data + b"\0")
                    return
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                    raise BrowserGone(f"the browser pipe closed ({exc})") from None
            raise BrowserGone(f"the browser did not read a command within {SEND_DEADLINE_S} s")

    async def receive(self) -> bytes:
        """The next whole message (without its NUL). Raises BrowserGone at EOF.

        A message already read is returned at once, without a checkpoint
        (the reader then handles a whole read's messages in one go; a read
        is at most 1 MiB, so the time between checkpoints stays bounded).
        """
        if self._ready:
            return self._ready.popleft()
        async with self._receive_lock:
            while not self._ready:
                if self._eof or self._closed:
                    raise BrowserGone("the browser pipe closed")
                try:
                    chunk = await self._in.receive_some(_READ_CHUNK)
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    chunk = b""
                if not chunk:
                    self._eof = True
                    continue
                if not self._take(chunk):
                    await self.aclose()
                    raise BrowserGone(
                        f"the browser sent a message larger than {self._max} bytes")
            return self._ready.popleft()

    def _take(self, chunk: bytes) -> bool:
        """Split ``chunk`` into whole messages and the new tail; False when one is too long."""
        parts = chunk.split(b"\0")
        tail = parts.pop()
        if parts:
            if self._partial:
                self._partial += parts[0]
                parts[0] = bytes(self._partial)
            if len(parts[0]) > self._max:
                return False
            self._ready.extend(parts)
            self._partial = bytearray(tail)
        else:
            self._partial += tail
        return len(self._partial) <= self._max

    async def drain(self) -> None:
        """Read and discard until EOF (keeps a shutting-down browser from blocking on us)."""
        try:
            while True:
                await self.receive()
        except BrowserGone:
            return

    async def aclose(self) -> None:
        """Close both fds (idempotent). The browser sees EOF and exits."""
        if self._closed:
            return
        self._closed = True
        for stream in (self._out, self._in):
            try:
                await stream.aclose()
            except (OSError, trio.ClosedResourceError):
                pass


class WebSocketTransport:
    """CDP over an open trio-websocket connection (attach mode; unit-test seam)."""

    def __init__(self, ws: trio_websocket.WebSocketConnection, url: str) -> None:
        self._ws = ws
        self.description = url
        self._send_lock = trio.Lock()

    async def send(self, data: bytes) -> None:
        """Send one text frame; BrowserGone if the socket is closed (shielded, bounded)."""
        async with self._send_lock:
            with trio.CancelScope(shield=True, deadline=trio.current_time() + SEND_DEADLINE_S):
                try:
                    await self._ws.send_message(data.decode())
                    return
                except (trio_websocket.ConnectionClosed, trio.BrokenResourceError,
                        trio.ClosedResourceError) as exc:
                    raise BrowserGone(f"the browser connection closed ({exc})") from None
            raise BrowserGone(f"the browser did not take a command within {SEND_DEADLINE_S} s")

    async def receive(self) -> bytes | str:
        """The next message as received; BrowserGone (with the close code) once closed."""
        try:
            message = await self._ws.get_message()
        except trio_websocket.ConnectionClosed as exc:
            code = getattr(exc.reason, "code", None)
            raise BrowserGone(f"the browser connection closed (code {code})") from None
        return message

    async def aclose(self) -> None:
        """Close the socket; a brief (0.1 s) chance for the close handshake, never more."""
        with trio.CancelScope(shield=True, deadline=trio.current_time() + 0.1):
            try:
                await self._ws.aclose()
            except Exception:
                pass


__all__ = ["MAX_MESSAGE_BYTES", "PipeTransport", "Transport", "WebSocketTransport"]
