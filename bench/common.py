"""Benchmark plumbing: timing, /proc readings, and the three sides' processes.

- Timing: :func:`time_sync` / :func:`time_async` run an operation ``n`` times
  after ``warmup`` untimed runs and return wall-clock samples in ms;
  :class:`Stats` summarises them (median first).
- /proc: :func:`cpu_seconds`, :func:`rss_kb`, :func:`pss_kb`,
  :func:`chromium_pids` (every process of one profile), :func:`descendants`.
- browserd: :class:`Service` starts a private ``browserd serve`` on free
  ports under a temporary ``BROWSERD_HOME`` and times process start →
  ``/healthz`` saying ``browser: "open"``.
- raw CDP: :func:`raw_browser` launches Chromium exactly as browserd does
  (:func:`browserd.browser.process.run_browser`: CDP over the pipe, no TCP
  port) and drives it with :class:`browserd.cdp.CdpConnection` directly.
- Threads: the raw side runs in a :class:`TrioWorker` (its own ``trio.run``),
  Playwright's async API in an :class:`AsyncioWorker` (its own event loop);
  each operation is timed *inside* its worker, so the thread hop is never
  part of a sample. browserd's side runs in the main thread through one
  keep-alive ``httpx.Client``, like an agent's tool calls.

Everything here is bench tooling, not product code: blocking helpers block,
and errors propagate to the caller (the bench records them per operation).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import attrs
import httpx
import trio
from supervision.harness import LOOPBACK_TLS
from supervision.harness import free_port_pair as free_port_pair
from supervision.invariants import cpu_seconds as cpu_seconds

from browserd.browser.process import BrowserProcess, LaunchSpec, run_browser
from browserd.browser.profile import profile_pids
from browserd.cdp import CdpConnection, open_cdp_over

T = TypeVar("T")

CHROMIUM = "/usr/lib/chromium/chromium"


# -- timing ------------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Stats:
    """Summary of samples in ms (``n`` samples; median, p10, p90, min)."""

    n: int
    median: float
    p10: float
    p90: float
    min: float

    @classmethod
    def of(cls, samples: list[float]) -> Stats:
        if not samples:
            raise ValueError("no samples")
        ordered = sorted(samples)

        def pct(q: float) -> float:
            return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]

        return cls(n=len(ordered), median=statistics.median(ordered), p10=pct(0.1),
                   p90=pct(0.9), min=ordered[0])


def time_sync(fn: Callable[[], object], n: int, warmup: int = 1) -> list[float]:
    """``fn()`` ``warmup`` times untimed, then ``n`` times timed; ms per call."""
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


async def time_async(fn: Callable[[], Awaitable[object]], n: int, warmup: int = 1) -> list[float]:
    """The async twin of :func:`time_sync` (works under trio and asyncio alike)."""
    for _ in range(warmup):
        await fn()
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        await fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


# -- /proc ---------------------------------------------------------------------------------------


def cpu_of(pids: list[int]) -> dict[int, float]:
    return {pid: cpu_seconds(pid) for pid in pids}


def cpu_delta(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds spent between two readings (processes that exited are lost)."""
    return sum(max(0.0, after[p] - before.get(p, 0.0)) for p in after)


def _status_kb(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def rss_kb(pid: int) -> int:
    return _status_kb(pid, "VmRSS")


def pss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(
            errors="replace")
    except OSError:
        return ""


def _all_pids() -> list[int]:
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]


def chromium_pids(profile_dir: Path) -> list[int]:
    """Every live process whose command line names this ``--user-data-dir``."""
    return profile_pids(profile_dir)


def descendants(root: int) -> list[int]:
    """All live descendants of ``root`` (not ``root`` itself)."""
    children: dict[int, list[int]] = {}
    for pid in _all_pids():
        try:
            raw = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        ppid = int(raw.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


# -- browserd --------------------------------------------------------------------------------


class Service:
    """A private ``browserd serve`` (headless) on free ports under ``home``.

    :meth:`start` blocks until ``/healthz`` says the browser is open and
    records ``startup_ms`` (process spawn → that answer). :meth:`stop` sends
    SIGTERM and waits (SIGKILL after 20 s). Raises RuntimeError with the log
    if the service exits or never gets ready.
    """

    def __init__(self, home: Path, *, env: dict[str, str] | None = None) -> None:
        self.home = home
        self.env = env or {}
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.startup_ms = 0.0
        self.token = ""

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    @property
    def profile_dir(self) -> Path:
        return self.home / "data" / "profiles" / "clawd"

    def start(self, timeout: float = 60.0) -> Service:
        self.port = free_port_pair()
        self.home.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "BROWSERD_HOME": str(self.home), "BROWSERD_HEADLESS": "1",
               "BROWSERD_CONTROL_URL": self.base_url, **self.env}
        log = open(self.home / "serve.log", "ab")  # noqa: SIM115 - the child owns it
        t0 = time.perf_counter()
        self.proc = subprocess.Popen([sys.executable, "-m", "browserd", "serve"], env=env,
                                     stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + timeout
        with httpx.Client(timeout=2, verify=LOOPBACK_TLS) as probe:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"browserd exited {self.proc.returncode}:\n"
                                       f"{self.log_tail()}")
                if time.monotonic() > deadline:
                    self.proc.kill()
                    raise RuntimeError(f"browserd did not get ready:\n{self.log_tail()}")
                try:
                    r = probe.get(f"{self.base_url}/healthz")
                    if r.status_code == 200 and r.json().get("browser") == "open":
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.005)
        self.startup_ms = (time.perf_counter() - t0) * 1000
        self.token = (self.home / "config" / "token").read_text().strip()
        return self

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def client(self) -> httpx.Client:
        """One persistent keep-alive client with the token (what an agent holds)."""
        return httpx.Client(base_url=self.base_url, headers=self.headers, timeout=120,
                            verify=LOOPBACK_TLS)

    def async_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.base_url, headers=self.headers, timeout=120,
                                 limits=httpx.Limits(max_connections=32,
                                                     max_keepalive_connections=32),
                                 verify=LOOPBACK_TLS)

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return (self.home / "serve.log").read_text(errors="replace")[-chars:]
        except OSError:
            return ""


# -- raw CDP -------------------------------------------------------------------------------------


@attrs.define
class RawBrowser:
    """A Chromium launched by the bench exactly as browserd launches it, and one CDP
    connection over its pipe (there is no DevTools port)."""

    process: BrowserProcess
    conn: CdpConnection
    profile_dir: Path

    @property
    def pid(self) -> int:
        return self.process.pid


@contextlib.asynccontextmanager
async def raw_browser(profile_dir: Path, cdp_port: int) -> AsyncIterator[RawBrowser]:
    """Launch Chromium exactly as browserd would, connect, yield once CDP answers.

    Ready means: ``Browser.getVersion`` answered over the pipe. On exit (or
    cancellation) browserd's own stop ladder runs (Browser.close, then
    signals). ``cdp_port`` is unused (kept for callers): nothing listens on TCP.
    """
    spec = LaunchSpec(executable=Path(CHROMIUM), profile_dir=profile_dir,
                      headless=True, no_sandbox=os.geteuid() == 0)
    profile_dir.mkdir(parents=True, exist_ok=True)
    async with trio.open_nursery() as nursery:
        process: BrowserProcess = await nursery.start(run_browser, spec)
        async with open_cdp_over(process.transport, "pipe", close_transport=False) as conn:
            yield RawBrowser(process=process, conn=conn, profile_dir=profile_dir)
        nursery.cancel_scope.cancel()


@attrs.define
class RawTab:
    """One page target attached with a flattened session."""

    conn: CdpConnection
    target_id: str
    session_id: str

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.conn.send(method, params, session_id=self.session_id)


async def raw_open_tab(conn: CdpConnection, *, setup: bool = True) -> RawTab:
    """createTarget + attachToTarget(flatten); ``setup`` also enables Page/Runtime and
    emulates focus and a 1280x720 viewport, as browserd's tab actor does."""
    target = await conn.send("Target.createTarget", {"url": "about:blank"})
    attached = await conn.send("Target.attachToTarget",
                               {"targetId": target["targetId"], "flatten": True})
    tab = RawTab(conn=conn, target_id=target["targetId"], session_id=attached["sessionId"])
    if setup:
        for method, params in (
            ("Page.enable", {}), ("Runtime.enable", {}),
            ("Emulation.setFocusEmulationEnabled", {"enabled": True}),
            ("Emulation.setDeviceMetricsOverride",
             {"width": 1280, "height": 720, "deviceScaleFactor": 1, "mobile": False}),
        ):
            await tab.send(method, params)
    return tab


# -- worker threads ------------------------------------------------------------------------------


class TrioWorker:
    """A thread running its own ``trio.run``; :meth:`run` calls an async function there.

    :meth:`start_task` starts a long-lived task (``nursery.start`` semantics)
    and returns its started value. :meth:`close` cancels everything and joins.
    """

    def __init__(self) -> None:
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._nursery: trio.Nursery | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._thread_main, name="bench-trio", daemon=True)
        self._thread.start()
        self._ready.wait()

    def _thread_main(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:
            self._error = exc
            self._ready.set()

    async def _main(self) -> None:
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self._token = trio.lowlevel.current_trio_token()
            self._ready.set()
            await trio.sleep_forever()

    def run(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        assert self._token is not None
        return trio.from_thread.run(fn, *args, trio_token=self._token)

    def start_task(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        assert self._nursery is not None
        nursery = self._nursery

        async def start() -> Any:
            return await nursery.start(fn, *args)

        return self.run(start)

    def close(self) -> None:
        if self._token is not None and self._nursery is not None:
            nursery = self._nursery
            with contextlib.suppress(trio.RunFinishedError):
                trio.from_thread.run_sync(nursery.cancel_scope.cancel, trio_token=self._token)
        self._thread.join(timeout=30)


class AsyncioWorker:
    """A thread running an asyncio loop; :meth:`run` runs a coroutine there and waits."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="bench-asyncio",
                                        daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=30)
        self.loop.close()


def temp_dir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))


def remove_dir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
