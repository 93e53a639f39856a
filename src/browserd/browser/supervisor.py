"""BrowserSupervisor: keeps the agent's browser running while it is wanted.

One supervisor per profile. Its restart loop is the only task that launches
(or attaches to) a browser. Each attempt is a ``one_for_all`` subtree —
BrowserProcess (or nothing, when attaching), CdpConnection and TabRegistry —
so if any part dies, all of it is torn down together and, while the user
still wants a browser, started again after a backoff (0.5 s doubling to 30 s,
with jitter, reset after 60 s healthy) within a budget (``restart_budget``
restarts in ``restart_window_s``), after which the state is ``failed`` with
the reason and the browser's stderr tail. Refusals that a retry cannot fix
(port taken, profile in use, no executable) go straight to ``failed``.

States: disabled, stopped, starting, running, restarting, stopping, failed.
"""

from __future__ import annotations

import json
import logging
import os
import random
import signal
import time
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import trio

from ..cdp import CdpConnection, open_cdp_connection
from ..config import Settings, default_headless
from ..errors import (
    AttachOnly,
    BadRequest,
    BrowserdError,
    BrowserDisabled,
    BrowserGone,
    BrowserNotRunning,
    BrowserStarting,
    ConfigError,
    ExecutableNotFound,
    PortInUse,
    ProfileInUse,
    ProfileRefused,
    unwrap_group,
)
from ..paths import Paths
from ..tabs.registry import TabRegistry, open_tab_registry
from .devtools_http import browser_ws_url
from .executable import find_executable
from .ports import find_port_holder, port_is_free
from .process import BrowserProcess, LaunchSpec, run_browser
from .profile import (
    claim_profile,
    clear_stale_lock,
    on_profile,
    pid_alive,
    prepare_preferences,
    process_argv,
    read_lock,
)

if TYPE_CHECKING:
    from ..downloads import DownloadStore
    from ..urlpolicy import UrlPolicy

log = logging.getLogger(__name__)

BACKOFF_START_S = 0.5
BACKOFF_MAX_S = 30.0
HEALTHY_RESET_S = 60.0
#: Refusals a retry cannot fix: straight to ``failed``. Any other error
#: (a crash, a browser that exits before DevTools is ready) is retried
#: with backoff within the budget (F11).
REFUSALS = (PortInUse, ProfileInUse, ProfileRefused, ExecutableNotFound, ConfigError)


@attrs.frozen(kw_only=True)
class Runtime:
    """What a running attempt offers to request handlers."""

    connection: CdpConnection
    tabs: TabRegistry
    process: BrowserProcess | None
    version: str
    user_agent: str
    started_at: float


@attrs.frozen(kw_only=True)
class SupervisorStatistics:
    state: str
    restarts: int
    spawns: int
    last_error: dict[str, Any] | None
    pid: int | None
    version: str | None
    uptime_s: float | None


class BrowserSupervisor:
    """The restart loop and its handle. Run :meth:`run` in the service nursery."""

    def __init__(
        self,
        settings: Settings,
        paths: Paths,
        *,
        rng: Callable[[], float] = random.random,
        subtree: Callable[[BrowserSupervisor], Awaitable[None]] | None = None,
        url_policy: UrlPolicy | None = None,
        downloads: DownloadStore | None = None,
    ) -> None:
        self.settings = settings
        # navdl: handed to every connection's tab registry.
        self.url_policy = url_policy
        self.downloads = downloads
        self.paths = paths
        self._rng = rng
        self._subtree = subtree
        self.state = "disabled" if not settings.enabled else "stopped"
        self.headless = settings.effective_headless()
        self._wanted = False
        self._wake = trio.Event()
        self._state_changed = trio.Event()
        self._attempt_scope: trio.CancelScope | None = None
        self.runtime: Runtime | None = None
        self.last_error: BrowserdError | None = None
        self.restarts = 0
        self.spawns = 0
        self._restart_times: deque[float] = deque()
        self.executable_path: str | None = None
        self.chosen_browser: str | None = None

    # -- handle API ----------------------------------------------------------

    @property
    def profile_dir(self) -> Path:
        return self.paths.profile_dir(self.settings.profile)

    def require_runtime(self) -> Runtime:
        """The live runtime, or the 503 that says why there is none."""
        if self.state == "disabled":
            raise BrowserDisabled("Browser disabled in settings")
        runtime = self.runtime
        if runtime is not None and self.state == "running" and not runtime.connection.is_closed:
            return runtime
        if self.state in ("starting", "restarting"):
            raise BrowserStarting("the browser is starting")
        if self.state == "failed" and self.last_error is not None:
            raise BrowserNotRunning(
                f"the browser failed: {self.last_error.message}",
                hint="fix the cause shown in /status, then POST /start",
            )
        raise BrowserNotRunning("the browser is not running")

    async def start(self, *, headless: bool | None = None) -> None:
        """Want the browser running and wait until it is (or has failed).

        Raises BrowserDisabled, the startup error when the attempt failed,
        or Cancelled if the caller goes away (the start itself goes on).
        """
        if not self.settings.enabled:
            raise BrowserDisabled("Browser disabled in settings")
        if headless is not None and headless != self.headless:
            if self.settings.is_attach:
                raise AttachOnly("headless cannot be chosen for an attached browser")
            if not headless and default_headless(os.environ):
                raise BadRequest(
                    "there is no display to show a browser window on",
                    hint="set DISPLAY (or WAYLAND_DISPLAY) for the service, or keep headless",
                )
            if self.state == "running":
                # Relaunch with the new mode.
                await self.stop()
            self.headless = headless
        if self.state == "failed":
            self._restart_times.clear()
        self._want(True)
        while self.state not in ("running", "failed"):
            await self._wait_state_change()
        if self.state == "failed" and self.last_error is not None:
            raise self.last_error

    async def stop(self) -> bool:
        """Stop wanting the browser and wait until it is down. True if it was up."""
        was_up = self.state in ("running", "starting", "restarting")
        self._want(False)
        if self._attempt_scope is not None:
            self._set_state("stopping")
            self._attempt_scope.cancel()
        while self.state not in ("stopped", "disabled", "failed"):
            await self._wait_state_change()
        if self.state == "failed":
            self._set_state("stopped")
        return was_up

    def statistics(self) -> SupervisorStatistics:
        rt = self.runtime
        return SupervisorStatistics(
            state=self.state,
            restarts=self.restarts,
            spawns=self.spawns,
            last_error=self.last_error.to_dict() if self.last_error else None,
            pid=rt.process.pid if rt and rt.process else None,
            version=rt.version if rt else None,
            uptime_s=round(time.time() - rt.started_at, 3) if rt else None,
        )

    # -- internals -----------------------------------------------------------

    def _want(self, wanted: bool) -> None:
        self._wanted = wanted
        self._wake.set()

    def _set_state(self, state: str) -> None:
        if state != self.state:
            log.info("browser state %s -> %s", self.state, state)
        self.state = state
        self._state_changed.set()
        self._state_changed = trio.Event()

    async def _wait_state_change(self) -> None:
        await self._state_changed.wait()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The restart loop. Runs until cancelled; cancellation stops the browser."""
        task_status.started()
        if not self.settings.enabled:
            await trio.sleep_forever()
        backoff = BACKOFF_START_S
        while True:
            if not self._wanted and self.state not in ("failed", "stopped"):
                self._set_state("stopped")
            if not self._wanted:
                while not self._wanted:
                    self._wake = trio.Event()
                    await self._wake.wait()
                backoff = BACKOFF_START_S  # a new start: earlier crashes set no delay
            self._set_state("restarting" if self.state in ("running", "restarting") else "starting")
            began = trio.current_time()
            error = await self._attempt()
            healthy_for = trio.current_time() - began
            if not self._wanted:
                self._set_state("stopped")
                continue
            self.last_error = error
            if isinstance(error, REFUSALS):
                log.error("browser start refused: %s", error.message)
                self._wanted = False
                self._set_state("failed")
                continue
            if healthy_for >= HEALTHY_RESET_S:
                backoff = BACKOFF_START_S
                self._restart_times.clear()
            now = trio.current_time()
            self._restart_times.append(now)
            window = self.settings.restart_window_s
            while self._restart_times and now - self._restart_times[0] > window:
                self._restart_times.popleft()
            if len(self._restart_times) > self.settings.restart_budget:
                log.error("browser restart budget exhausted: %s", error)
                self._wanted = False
                self.last_error = BrowserGone(
                    f"restarted {self.settings.restart_budget} times in "
                    f"{self.settings.restart_window_s:.0f} s; giving up: "
                    f"{error.message if error else 'unknown'}",
                    **(error.details if error else {}),
                )
                self._set_state("failed")
                continue
            self.restarts += 1
            self._set_state("restarting")
            delay = backoff * (0.5 + self._rng())
            log.warning("browser down (%s); restarting in %.2f s", error, delay)
            with trio.move_on_after(delay):
                # A stop during the backoff ends the wait at once.
                while self._wanted:
                    self._wake = trio.Event()
                    await self._wake.wait()
            backoff = min(backoff * 2, BACKOFF_MAX_S)

    async def _attempt(self) -> BrowserdError | None:
        """One one_for_all attempt; returns why it ended (None for a requested stop)."""
        try:
            with trio.CancelScope() as scope:
                self._attempt_scope = scope
                if not self._wanted:
                    return None
                if self._subtree is not None:
                    await self._subtree(self)
                elif self.settings.is_attach:
                    await self._run_attached()
                else:
                    await self._run_launched()
            return None
        except BaseException as exc:
            inner = unwrap_group(exc)
            if isinstance(inner, BrowserdError):
                return inner
            if isinstance(inner, trio.Cancelled) or not isinstance(inner, Exception):
                raise
            log.exception("unexpected error in the browser subtree")
            return BrowserGone(f"internal error: {inner!r}")
        finally:
            self._attempt_scope = None
            self.runtime = None

    async def _run_launched(self) -> None:
        settings = self.settings
        exe = find_executable(settings.executable)
        self.executable_path, self.chosen_browser = str(exe.path), exe.kind
        profile_dir = self.profile_dir
        claim_profile(profile_dir)
        await self._stop_our_leftover(profile_dir)
        clear_stale_lock(profile_dir)
        port = settings.effective_cdp_port
        if not port_is_free(port):
            holder = find_port_holder(port)
            raise PortInUse(
                f"DevTools port {port} is already held by {holder.describe()}; "
                "nothing was launched",
                hint="stop that process, choose another cdp_port, or attach to it with cdp_url",
            )
        prepare_preferences(profile_dir, name=settings.profile, color=settings.color)
        spec = LaunchSpec(
            executable=exe.path,
            profile_dir=profile_dir,
            cdp_port=port,
            headless=self.headless,
            no_sandbox=hasattr(os, "geteuid") and os.geteuid() == 0,
        )
        async with trio.open_nursery() as nursery:
            self.spawns += 1
            process: BrowserProcess = await nursery.start(run_browser, spec)
            self._write_pid_record(process)
            try:
                assert process.ws_url is not None
                await self._serve_connection(process.ws_url, process)
            finally:
                nursery.cancel_scope.cancel()
                self._clear_pid_record()

    async def _run_attached(self) -> None:
        with trio.fail_after(10):
            ws_url = await browser_ws_url(self.settings.effective_cdp_url)
        await self._serve_connection(ws_url, None)

    async def _serve_connection(self, ws_url: str, process: BrowserProcess | None) -> None:
        async with open_cdp_connection(ws_url) as conn:
            with trio.fail_after(10):
                version = await conn.send("Browser.getVersion")
            async with open_tab_registry(
                conn, settings=self.settings, headless=self.headless and process is not None,
                url_policy=self.url_policy, downloads=self.downloads,
            ) as tabs:
                self.mark_running(Runtime(
                    connection=conn,
                    tabs=tabs,
                    process=process,
                    version=str(version.get("product", "")),
                    user_agent=str(version.get("userAgent", "")),
                    started_at=time.time(),
                ))
                await conn.wait_closed()
                reason = conn.close_reason
                raise reason if isinstance(reason, BrowserdError) else BrowserGone(
                    "the browser connection closed"
                )

    def mark_running(self, runtime: Runtime | None) -> None:
        """Called by the subtree once it is ready to serve requests."""
        self.runtime = runtime
        self.last_error = None
        self._set_state("running")

    # -- the pid record: proving a leftover browser is ours (F2) -------------

    @property
    def _pid_file(self) -> Path:
        return self.paths.state_dir / f"{self.settings.profile}.json"

    def _write_pid_record(self, process: BrowserProcess) -> None:
        self.paths.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        record = {"pid": process.pid, "profileDir": str(process.spec.profile_dir),
                  "executable": str(process.spec.executable), "startedAt": process.started_at,
                  "servicePid": os.getpid()}
        tmp = self._pid_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(record))
        os.replace(tmp, self._pid_file)

    def _clear_pid_record(self) -> None:
        try:
            self._pid_file.unlink()
        except FileNotFoundError:
            pass

    async def _stop_our_leftover(self, profile_dir: Path) -> None:
        """Kill a browser a previous browserd launched on this profile, if provably ours.

        See :meth:`_leftover_pid` for the proof. SIGTERM then SIGKILL to its
        process group, each followed by a wait of up to 2 s. Never raises.
        """
        pid = self._leftover_pid(profile_dir)
        if pid is None:
            return
        log.warning("stopping leftover browser pid %d of a previous browserd", pid)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(pid, sig)
            except OSError:
                return
            with trio.move_on_after(2.0):
                while pid_alive(pid):  # noqa: ASYNC110 - no event tells us a non-child died
                    await trio.sleep(0.02)
            if not pid_alive(pid):
                return

    def _leftover_pid(self, profile_dir: Path) -> int | None:
        """The pid of a leftover browser that is provably ours, or None.

        Proof: our pid record names the pid, the profile lock names the same
        pid, and its command line carries our --user-data-dir. A browser whose
        browserd (``servicePid`` in the record) is still alive belongs to that
        other browserd and is left alone: the lock check then refuses with
        "profile in use by pid N" (F6).
        """
        try:
            record = json.loads(self._pid_file.read_text())
        except (OSError, ValueError):
            return None
        pid = record.get("pid")
        owner = read_lock(profile_dir)
        if not isinstance(pid, int) or owner is None or owner.pid != pid:
            return None
        service_pid = record.get("servicePid")
        if isinstance(service_pid, int) and service_pid != os.getpid() and (
            _is_live_browserd(service_pid)
        ):
            log.info("browser pid %d belongs to the live browserd pid %d; not touching it",
                     pid, service_pid)
            return None
        argv = process_argv(pid)
        if argv is None or not on_profile(argv, profile_dir):
            return None
        return pid


def _is_live_browserd(pid: int) -> bool:
    """True when ``pid`` is alive and (where /proc tells) runs browserd."""
    if not pid_alive(pid):
        return False
    argv = process_argv(pid)
    if argv is None:
        return True  # no /proc (macOS): assume the worst, touch nothing
    return any("browserd" in arg for arg in argv)
