"""A tiny raw CDP client for integration tests (a stand-in for browserd.cdp).

:func:`launch_chromium` starts a headless Chromium on an ephemeral DevTools
port (synchronously, so one browser can serve a whole test module) and yields
its browser websocket URL. :func:`open_cdp` connects to it from trio and yields
a :class:`RawCdp` whose :meth:`RawCdp.send` issues one command and waits for
its reply. :func:`open_page` creates a tab, attaches to it with a flattened
session, and closes it again on exit.

Errors: a command answered with an error raises :class:`CdpCommandError`; a
dead connection fails every pending command with :class:`CdpClosed`.
Cancellation: cancelling :meth:`RawCdp.send` abandons the reply (it is dropped
when it arrives); leaving :func:`open_cdp` cancels the reader task and closes
the websocket.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import orjson
import trio
from trio_websocket import ConnectionClosed, WebSocketConnection, open_websocket_url

CHROMIUM = "/usr/lib/chromium/chromium"
MAX_MESSAGE = 64 * 1024 * 1024


class CdpCommandError(Exception):
    """The browser answered a command with an error object."""


class CdpClosed(Exception):
    """The websocket to the browser closed before the reply came."""


@contextlib.contextmanager
def launch_chromium(
    startup_timeout: float = 20.0, extra_args: tuple[str, ...] = ()
) -> Iterator[str]:
    """Start headless Chromium on an ephemeral DevTools port; yield its ws URL.

    The process, its group and its profile directory are removed on exit.
    Raises RuntimeError if no ``DevTools listening on`` line appears in time.
    """
    profile = tempfile.mkdtemp(prefix="browserd-test-profile-")
    log_path = os.path.join(profile, "stderr.log")
    args = [
        CHROMIUM,
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--remote-debugging-port=0",
        f"--user-data-dir={profile}",
        "--window-size=1280,720",
        *extra_args,
        "about:blank",
    ]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )
    try:
        url = None
        deadline = time.monotonic() + startup_timeout
        while url is None:
            with open(log_path, "rb") as f:
                for raw in f.read().decode("utf-8", "replace").splitlines():
                    if raw.startswith("DevTools listening on "):
                        url = raw.removeprefix("DevTools listening on ").strip()
            if url is None:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("chromium did not report its DevTools URL")
                time.sleep(0.02)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
        shutil.rmtree(profile, ignore_errors=True)


class RawCdp:
    """One websocket to the browser; commands are matched to replies by id."""

    def __init__(self, ws: WebSocketConnection) -> None:
        self._ws = ws
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[trio.Event, list[dict[str, Any]]]] = {}
        self._closed = False

    async def send(
        self, method: str, params: dict[str, Any] | None = None, session_id: str | None = None
    ) -> dict[str, Any]:
        """Send one command and return its ``result`` object."""
        if self._closed:
            raise CdpClosed(method)
        msg_id = next(self._ids)
        message: dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        event = trio.Event()
        box: list[dict[str, Any]] = []
        self._pending[msg_id] = (event, box)
        try:
            await self._ws.send_message(orjson.dumps(message).decode())
            await event.wait()
        finally:
            self._pending.pop(msg_id, None)
        if not box:
            raise CdpClosed(method)
        reply = box[0]
        if "error" in reply:
            raise CdpCommandError(f"{method}: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    async def _reader(self) -> None:
        try:
            while True:
                data = await self._ws.get_message()
                reply = orjson.loads(data)
                entry = self._pending.get(reply.get("id", -1))
                if entry is not None:
                    entry[1].append(reply)
                    entry[0].set()
        except ConnectionClosed:
            pass
        finally:
            self._closed = True
            for event, _box in self._pending.values():
                event.set()


@contextlib.asynccontextmanager
async def open_cdp(ws_url: str) -> AsyncIterator[RawCdp]:
    """Connect to the browser endpoint; yield a :class:`RawCdp`.

    An exception from the body comes out as itself, not wrapped in a group.
    """
    try:
        async with (
            open_websocket_url(ws_url, max_message_size=MAX_MESSAGE) as ws,
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
async def open_page(cdp: RawCdp) -> AsyncIterator[str]:
    """Create a tab and a flattened session to it; yield the session id."""
    target = await cdp.send("Target.createTarget", {"url": "about:blank"})
    target_id = target["targetId"]
    try:
        attached = await cdp.send("Target.attachToTarget", {"targetId": target_id, "flatten": True})
        yield attached["sessionId"]
    finally:
        with (
            trio.CancelScope(shield=True),
            trio.move_on_after(5),
            contextlib.suppress(CdpClosed, CdpCommandError),
        ):
            await cdp.send("Target.closeTarget", {"targetId": target_id})
