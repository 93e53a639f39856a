"""Tools the drills (and tests/conftest.py) use to run a private browserd.

- :func:`start_service` / :func:`stop_service` (and their ``_async`` forms): a
  private ``browserd serve`` subprocess on free ports (:func:`free_port_pair`)
  under its own ``BROWSERD_HOME``; :class:`ServiceInfo` says where it is.
- :func:`wait_for`, :func:`status_of`, :func:`route_exists`: polling and asking it.
- ``LOOPBACK_TLS``: the one TLS context of every httpx client the tooling makes.

Its neighbours: :mod:`supervision.rawcdp` (an independent CDP client for
injecting faults), :mod:`supervision.chromium` (a Chromium started by hand) and
:mod:`supervision.servers` (a TCP proxy that can be cut, a page server).

Everything here is test tooling: blocking helpers are plain functions (call
them from a worker thread inside trio), async ones say what cancellation does.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import attrs
import httpx
import trio

#: The one TLS context of every httpx client the tooling makes. httpx builds a new
#: one per client otherwise, loading the CA bundle each time (~28 ms of CPU; it was a
#: fifth of the suite's Python time), and these clients only speak plain HTTP to
#: loopback. Pass it as ``verify=LOOPBACK_TLS``.
LOOPBACK_TLS = ssl.create_default_context()


# -- a private browserd --------------------------------------------------------------------


_HANDED_OUT: set[int] = set()
_HANDED_OUT_LOCK = threading.Lock()


#: The test ports' range, ``LOW-HIGH`` (both ports of a pair inside it); default: the
#: 12,000 ports below the kernel's ephemeral range.
PORTS_ENV = "BROWSERD_TEST_PORTS"


def port_range() -> tuple[int, int]:
    """The range test ports are drawn from: :data:`PORTS_ENV` when set, else the 12,000
    ports below the kernel's ephemeral range. ValueError for a malformed setting."""
    given = os.environ.get(PORTS_ENV, "").strip()
    if given:
        match = re.fullmatch(r"(\d+)\s*-\s*(\d+)", given)
        if match is None:
            raise ValueError(f"{PORTS_ENV}={given!r}: expected LOW-HIGH, e.g. 20000-29999")
        low, high = int(match[1]), int(match[2])
        if not 1024 <= low < high <= 65535:
            raise ValueError(f"{PORTS_ENV}={given!r}: need 1024 <= LOW < HIGH <= 65535")
        return low, high
    low = 32768
    with contextlib.suppress(OSError, ValueError, IndexError):
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    return max(1024, low - 12000), low - 1


def free_port_pair() -> int:
    """A port P such that P and P+1 are both free on 127.0.0.1 right now.

    Drawn from :func:`port_range` (by default below the kernel's ephemeral
    range, so an outgoing connection of some other process cannot take P or
    P+1 between this check and the service's bind; both ports are listeners:
    control API and gateway). Never hands out the same pair twice in one
    process, so concurrent tests and drills here cannot race each other for
    it. Another process can still take it between this probe and browserd's
    bind: :func:`start_service` retries with a new pair when that happens.
    """
    low, high = port_range()
    for _ in range(200):
        port = random.randrange(low, high)  # P+1 <= high
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
    raise RuntimeError(f"no free port pair in {low}-{high} (set {PORTS_ENV} to another range)")


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


__all__ = ["LOOPBACK_TLS", "PORT_ATTEMPTS", "PortTaken", "ServiceInfo", "free_port_pair",
           "route_exists", "start_service", "start_service_async", "status_of", "stop_service",
           "stop_service_async", "wait_for"]
