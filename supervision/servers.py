"""Small local servers the drills run beside browserd.

- :class:`TcpProxy`: a trio TCP proxy whose connections can be cut, to drop a
  CDP websocket while the browser lives.
- :func:`serve_pages` / :class:`PageServer`: a tiny threaded HTTP server for
  drill pages.
"""

from __future__ import annotations

import contextlib
import http.server
import socket
import threading
from collections.abc import Iterator
from typing import Any

import attrs
import trio


class TcpProxy:
    """Forwards 127.0.0.1:<port> to an upstream port; :meth:`cut` drops every connection.

    Run with ``await nursery.start(proxy.run)``; cancelling it closes everything.
    """

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = 0
        self.accepted = 0
        self._scopes: set[trio.CancelScope] = set()
        self._refuse_until = 0.0

    @property
    def live(self) -> int:
        return len(self._scopes)

    def cut(self, *, refuse_for: float = 0.0) -> int:
        """Abort every live connection; refuse new ones for ``refuse_for`` s. Returns count."""
        n = len(self._scopes)
        for scope in list(self._scopes):
            scope.cancel()
        self._refuse_until = trio.current_time() + refuse_for
        return n

    async def run(self, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        self.port = listeners[0].socket.getsockname()[1]
        task_status.started(self.port)
        await trio.serve_listeners(self._handle, listeners)

    async def _handle(self, client: trio.SocketStream) -> None:
        if trio.current_time() < self._refuse_until:
            await client.aclose()
            return
        self.accepted += 1
        with trio.CancelScope() as scope:
            self._scopes.add(scope)
            try:
                upstream = await trio.open_tcp_stream("127.0.0.1", self.upstream_port)
            except OSError:
                self._scopes.discard(scope)
                await client.aclose()
                return
            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._pump, client, upstream, nursery.cancel_scope)
                    nursery.start_soon(self._pump, upstream, client, nursery.cancel_scope)
            finally:
                self._scopes.discard(scope)
        # Abortive close (RST) so the peer notices at once, like a dropped link.
        for stream in (client, upstream):
            with contextlib.suppress(OSError):
                stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                         b"\x01\x00\x00\x00\x00\x00\x00\x00")
            with contextlib.suppress(Exception):
                await trio.aclose_forcefully(stream)

    @staticmethod
    async def _pump(src: trio.SocketStream, dst: trio.SocketStream,
                    scope: trio.CancelScope) -> None:
        try:
            while True:
                data = await src.receive_some(65536)
                if not data:
                    break
                await dst.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        scope.cancel()


class _Handler(http.server.BaseHTTPRequestHandler):
    pages: dict[str, tuple[str, bytes]] = {}

    def do_GET(self) -> None:
        page = self.pages.get(self.path.split("?")[0])
        if page is None:
            self.send_error(404)
            return
        ctype, body = page
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@attrs.frozen
class PageServer:
    port: int
    server: http.server.ThreadingHTTPServer

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


@contextlib.contextmanager
def serve_pages(pages: dict[str, str]) -> Iterator[PageServer]:
    """Serve ``{path: html}`` on 127.0.0.1 (reachable as 127.0.0.1 and localhost)."""
    handler = type("DrillPages", (_Handler,), {
        "pages": {p: ("text/html; charset=utf-8", html.encode()) for p, html in pages.items()}})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield PageServer(int(server.server_address[1]), server)
    finally:
        server.shutdown()
        server.server_close()


__all__ = ["PageServer", "TcpProxy", "serve_pages"]
