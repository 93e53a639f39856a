"""Tools the drills (and tests/conftest.py) use to run and poke a real browserd.

- :func:`start_service` / :func:`stop_service`: a private ``browserd serve``
  subprocess on free ports under its own ``BROWSERD_HOME`` (moved here from
  tests/conftest.py, which imports them back; behaviour unchanged).
- :class:`RawCdp` / :func:`open_raw_cdp` / :func:`open_cdp`: an independent
  CDP client for injecting faults on the service's DevTools port
  (``Page.crash``, cookies); tests/integration/_rawcdp.py builds on it too.
- :class:`TcpProxy`: a trio TCP proxy whose connections can be cut, to drop
  a CDP websocket while the browser lives.
- :func:`launch_chromium`: a Chromium started by hand (not by browserd),
  on a given DevTools port, one Chromium picks (``cdp_port=0``), or none.
- :class:`PageServer`: a tiny local HTTP server for drill pages.

Everything here is test tooling: blocking helpers are plain functions (call
them from a worker thread inside trio), async ones say what cancellation does.
"""

from __future__ import annotations

import contextlib
import http.server
import itertools
import os
import random
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import attrs
import httpx
import orjson
import trio
from trio_websocket import ConnectionClosed, WebSocketConnection, open_websocket_url

from browserd.browser.profile import user_data_dir_arg

CHROMIUM = shutil.which("chromium") or "/usr/lib/chromium/chromium"
REAL_CHROMIUM = "/usr/lib/chromium/chromium" if Path("/usr/lib/chromium/chromium").exists() \
    else CHROMIUM
QUIET_FLAGS = (
    "--headless=new", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
)


#: The one TLS context of every httpx client the tooling makes. httpx builds a new
#: one per client otherwise, loading the CA bundle each time (~28 ms of CPU; it was a
#: fifth of the suite's Python time), and these clients only speak plain HTTP to
#: loopback. Pass it as ``verify=LOOPBACK_TLS``.
LOOPBACK_TLS = ssl.create_default_context()


# -- a private browserd --------------------------------------------------------------------


_HANDED_OUT: set[int] = set()
_HANDED_OUT_LOCK = threading.Lock()


def free_port_pair() -> int:
    """A port P such that P and P+1 are both free on 127.0.0.1 right now.

    Drawn below the kernel's ephemeral range, so an outgoing connection of
    some other process cannot take P or P+1 between this check and the
    service's bind (both ports are listeners: control API and gateway).
    Never hands out the same pair twice in one process, so concurrent tests
    and drills here cannot race each other for it. Another process can still
    take it between this probe and browserd's bind: :func:`start_service`
    retries with a new pair when that happens.
    """
    low = 32768
    with contextlib.suppress(OSError, ValueError, IndexError):
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    for _ in range(200):
        port = random.randrange(max(1024, low - 12000), low - 2)
        if port in (9221, 9222):
            continue
        with _HANDED_OUT_LOCK:
            if {port, port + 1} & _HANDED_OUT:
                continue
            try:
                with socket.socket() as s, socket.socket() as s2:
                    s.bind(("127.0.0.1", port))
                    s2.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
            _HANDED_OUT.update((port, port + 1))
        return port
    raise RuntimeError("no free port pair")


class PortTaken(RuntimeError):
    """The service found its control or gateway port held by someone else: try another."""


#: How many fresh port pairs :func:`start_service` tries when it picks the ports.
PORT_ATTEMPTS = 4


@attrs.frozen(kw_only=True)
class ServiceInfo:
    proc: subprocess.Popen[bytes]
    home: Path
    port: int
    cdp_port: int
    token: str
    log_path: Path
    profile: str = "clawd"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def profile_dir(self) -> Path:
        return self.home / "data" / "profiles" / self.profile

    @property
    def media_dir(self) -> Path:
        return self.home / "cache" / "media"

    @property
    def token_file(self) -> Path:
        return self.home / "config" / "token"

    def client(self, **kw: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.base_url, headers=self.headers,
                                 timeout=kw.pop("timeout", 60),
                                 verify=kw.pop("verify", LOOPBACK_TLS), **kw)

    def sync_client(self, **kw: Any) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, headers=self.headers,
                            timeout=kw.pop("timeout", 60),
                            verify=kw.pop("verify", LOOPBACK_TLS), **kw)

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""


def start_service(
    home: Path,
    *,
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = (),
    wait_browser: bool = True,
    port: int | None = None,
    timeout: float = 30.0,
    log_name: str = "serve.log",
) -> ServiceInfo:
    """Start ``browserd serve`` as a subprocess and wait until it answers.

    Blocking. ``wait_browser`` also waits for ``/healthz`` to say the browser
    is open. Raises RuntimeError (with the log) if it exits or never answers.
    """
    if port is not None:
        return _start_service_on(home, port, env=env, args=args, wait_browser=wait_browser,
                                 timeout=timeout, log_name=log_name)
    for attempt in range(PORT_ATTEMPTS):
        try:
            return _start_service_on(home, free_port_pair(), env=env, args=args,
                                     wait_browser=wait_browser, timeout=timeout,
                                     log_name=log_name)
        except PortTaken:
            if attempt == PORT_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def _start_service_on(
    home: Path, port: int, *, env: dict[str, str] | None, args: tuple[str, ...],
    wait_browser: bool, timeout: float, log_name: str,
) -> ServiceInfo:
    """One start on ``port`` (control) and ``port + 1`` (CDP gateway, unless ``env`` says).

    Raises PortTaken when browserd exits because one of them is held,
    RuntimeError for any other exit or if it never gets ready.
    """
    home.mkdir(parents=True, exist_ok=True)
    log_path = home / log_name
    log_start = log_path.stat().st_size if log_path.exists() else 0
    full_env = {**os.environ, "BROWSERD_HOME": str(home), "BROWSERD_HEADLESS": "1",
                "BROWSERD_CONTROL_URL": f"http://127.0.0.1:{port}", **(env or {})}
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "browserd", "serve", *args],
            env=full_env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
    deadline = time.monotonic() + timeout
    token_file = home / "config" / "token"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            output = log_path.read_bytes()[log_start:].decode(errors="replace")
            held = "already held" in output or "already in use" in output
            if "PORT_IN_USE" in output or ("port" in output and held):
                raise PortTaken(f"browserd exited {proc.returncode}: port {port} or {port + 1} "
                                f"was taken before it bound them:\n{output}")
            raise RuntimeError(f"browserd exited {proc.returncode}:\n{log_path.read_text()}")
        try:
            r = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1, verify=LOOPBACK_TLS)
            if r.status_code == 200 and (not wait_browser or r.json()["browser"] == "open"):
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    else:
        proc.kill()
        proc.wait()
        raise RuntimeError(f"browserd did not get ready:\n{log_path.read_text()}")
    cdp_port = int(full_env.get("BROWSERD_CDP_PORT") or port + 1)
    return ServiceInfo(proc=proc, home=home, port=port, cdp_port=cdp_port,
                       token=token_file.read_text().strip(), log_path=log_path,
                       profile=full_env.get("BROWSERD_PROFILE") or "clawd")


def stop_service(info: ServiceInfo, timeout: float = 20.0) -> int:
    """SIGTERM the service and wait for its exit code (SIGKILL after ``timeout``)."""
    if info.proc.poll() is None:
        info.proc.send_signal(signal.SIGTERM)
        try:
            return info.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            info.proc.kill()
            info.proc.wait()
            raise
    return int(info.proc.returncode or 0)


async def start_service_async(home: Path, **kw: Any) -> ServiceInfo:
    """:func:`start_service` in a worker thread (not abandoned on cancellation)."""
    return await trio.to_thread.run_sync(lambda: start_service(home, **kw))


async def stop_service_async(info: ServiceInfo, timeout: float = 20.0) -> int:
    return await trio.to_thread.run_sync(lambda: stop_service(info, timeout))


async def wait_for(predicate: Any, *, timeout: float, interval: float = 0.05) -> float:
    """Poll a sync or async predicate until truthy; seconds it took, or TooSlowError."""
    start = trio.current_time()
    with trio.fail_after(timeout):
        while True:
            value = predicate()
            if hasattr(value, "__await__"):
                value = await value
            if value:
                return trio.current_time() - start
            await trio.sleep(interval)


async def status_of(api: httpx.AsyncClient) -> dict[str, Any]:
    r = await api.get("/status", timeout=5)
    body: dict[str, Any] = r.json()
    return body


async def route_exists(api: httpx.AsyncClient, method: str, path: str) -> bool:
    """False when the service has no such route (404 NOT_FOUND from the router)."""
    r = await api.request(method, path, json={} if method != "GET" else None, timeout=10)
    return not (r.status_code == 404 and r.json().get("code") == "NOT_FOUND"
                and "no route" in r.json().get("error", ""))


# -- a raw CDP client ----------------------------------------------------------------------


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
        event, box = trio.Event(), []
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


# -- a TCP proxy that can be cut -----------------------------------------------------------


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


# -- a Chromium of our own -----------------------------------------------------------------


@attrs.frozen(kw_only=True)
class PlainChromium:
    proc: subprocess.Popen[bytes]
    profile_dir: Path
    cdp_port: int | None
    ws_url: str | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        """SIGTERM then SIGKILL its process group; waits (bounded)."""
        for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue


def _active_port(profile_dir: Path) -> int | None:
    """The DevTools port Chromium wrote to the profile's ``DevToolsActivePort``, if any."""
    try:
        first = (profile_dir / "DevToolsActivePort").read_text().split("\n", 1)[0]
        return int(first)
    except (OSError, ValueError):
        return None


def launch_chromium(profile_dir: Path, *, cdp_port: int | None = None,
                    timeout: float = 20.0, extra_args: tuple[str, ...] = ()) -> PlainChromium:
    """Start Chromium by hand on ``profile_dir`` (blocking until it is up).

    Up means: DevTools answers when ``cdp_port`` is given (0: a port Chromium
    picks, read back from ``DevToolsActivePort``; the result's ``cdp_port``
    and ``ws_url`` name it), otherwise the profile's ``SingletonLock`` names
    its pid. ``extra_args`` go before the start URL. Raises RuntimeError
    (after stopping it) otherwise.
    """
    profile_dir.mkdir(parents=True, exist_ok=True)
    if cdp_port == 0:  # a stale file from an earlier run must not be read back
        with contextlib.suppress(FileNotFoundError):
            (profile_dir / "DevToolsActivePort").unlink()
    argv = [REAL_CHROMIUM, *QUIET_FLAGS, user_data_dir_arg(profile_dir)]
    if os.geteuid() == 0:
        argv.append("--no-sandbox")
    if cdp_port is not None:
        argv += [f"--remote-debugging-port={cdp_port}", "--remote-debugging-address=127.0.0.1"]
    argv += [*extra_args, "about:blank"]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    chromium = PlainChromium(proc=proc, profile_dir=profile_dir, cdp_port=cdp_port)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            chromium.stop()
            raise RuntimeError(f"chromium exited {proc.returncode}")
        if cdp_port is not None:
            port = _active_port(profile_dir) if cdp_port == 0 else cdp_port
            try:
                if port is not None:
                    return attrs.evolve(chromium, cdp_port=port, ws_url=browser_ws_url(port))
            except (httpx.HTTPError, KeyError, ValueError):
                pass
        else:
            try:
                if os.readlink(profile_dir / "SingletonLock").endswith(f"-{proc.pid}"):
                    return chromium
            except OSError:
                pass
        time.sleep(0.05)
    chromium.stop()
    raise RuntimeError("chromium did not come up")


# -- pages ---------------------------------------------------------------------------------


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
