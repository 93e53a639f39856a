"""BrowserSupervisor: keeps the agent's browser running while it is wanted.

One supervisor per profile. Its restart loop is the only task that launches
(or attaches to) a browser. Each attempt is a ``one_for_all`` subtree —
BrowserProcess (or nothing, when attaching), CdpConnection, the page guards
(:mod:`.guards`: download follower, navigation guard) and TabRegistry —
so if any part dies, all of it is torn down together and, while the user
still wants a browser, started again after a backoff (0.5 s doubling to 30 s,
with jitter, reset after 60 s healthy) within a budget (``restart_budget``
restarts in ``restart_window_s``), after which the state is ``failed`` with
the reason and the browser's stderr tail. Refusals that a retry cannot fix
(port taken, profile in use, no executable) go straight to ``failed``.

States: :class:`SupervisorState` (disabled, stopped, starting, running,
unresponsive, restarting, stopping, failed). Policy is data
(:class:`RestartPolicy`, :class:`~.liveness.LivenessPolicy`), applied by the
supervised child's :class:`~.child.RestartTracker`; pid records and
leftovers: :mod:`.leftovers`. Every attempt builds its runtime with
:func:`~.serve.open_runtime` and serves it through
:meth:`BrowserSupervisor.serve_runtime`, which runs the liveness probe: a hung
browser is ``unresponsive``, then restarted (reason ``hung``; an attached one is
reconnected, never killed). A running browser's end is told by the crash
account (:mod:`.crash`): ``/status.lastCrash`` and a ``browser.crashed`` event.
After such a crash the next browser reopens the agent's tabs and carries its
sessions over before it is ``running`` (:mod:`.restore`, ``restore_tabs``).
"""

from __future__ import annotations

import logging
import os
import random
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import trio

from ..browser.devtools_http import browser_ws_url
from ..browser.executable import find_executable
from ..browser.live import live_ws_url
from ..browser.process import BrowserProcess
from ..cdp import open_cdp_connection, open_cdp_over
from ..config import Settings, default_headless
from ..errors import (
    AttachOnly,
    BadRequest,
    BrowserdError,
    BrowserDisabled,
    BrowserGone,
    BrowserNotRunning,
    BrowserStarting,
    BrowserUnresponsive,
    ExtensionNotConnected,
    LiveBrowserNotFound,
    unwrap_group,
)
from ..events import EventSink, EventType
from ..paths import Paths
from .child import Outcome, RestartTracker, RestartType
from .crash import CrashWatch
from .launch import prepare_launch, run_launched_browser
from .leftovers import PidRecord
from .liveness import AbortableTransport, LivenessPolicy, LivenessProbe
from .policy import RestartPolicy
from .restore import SessionCarrier, TabRestorer
from .runtime import BrowserRuntime
from .serve import open_runtime
from .state import SupervisorState, SupervisorStatistics

if TYPE_CHECKING:
    from ..downloads import DownloadStore
    from ..urlpolicy import UrlPolicy

log = logging.getLogger(__name__)

__all__ = ["BrowserSupervisor", "SupervisorStatistics"]  # (the record lives in .state)

#: States in which a browser is (or is about to be) up.
_UP = frozenset({SupervisorState.RUNNING, SupervisorState.STARTING, SupervisorState.RESTARTING,
                 SupervisorState.AWAITING_APPROVAL, SupervisorState.AWAITING_EXTENSION,
                 SupervisorState.UNRESPONSIVE})
#: States whose ``browser.state`` event carries the error that led there.
_WITH_ERROR = frozenset({SupervisorState.RESTARTING, SupervisorState.FAILED,
                         SupervisorState.UNRESPONSIVE})
#: States in which no attempt runs.
_DOWN = frozenset({SupervisorState.STOPPED, SupervisorState.DISABLED, SupervisorState.FAILED})


class BrowserSupervisor:
    """The restart loop and its handle. Run :meth:`run` in the service nursery."""

    def __init__(
        self,
        settings: Settings,
        paths: Paths,
        *,
        rng: Callable[[], float] = random.random,
        subtree: Callable[[BrowserSupervisor], Awaitable[None]] | None = None,
        policy: RestartPolicy | None = None,
        url_policy: UrlPolicy | None = None,
        downloads: DownloadStore | None = None,
        events: EventSink | None = None,
        liveness: LivenessPolicy | None = None,
        sessions: SessionCarrier | None = None,
    ) -> None:
        self.settings = settings
        # browser.state here; tab.* / dialog.* / console.error from the registry and its tabs.
        self.events = events
        # Each connection's page guards (the navigation guard, the download follower).
        self.url_policy = url_policy
        self.downloads = downloads
        self.paths = paths
        self._subtree = subtree
        self.policy = policy if policy is not None else RestartPolicy.from_settings(settings)
        self.liveness = liveness if liveness is not None else LivenessPolicy.from_settings(settings)
        self.state = SupervisorState.DISABLED if not settings.enabled else SupervisorState.STOPPED
        self.headless = settings.effective_headless()
        self._wanted = False
        self._wake = trio.Event()
        self._state_changed = trio.Event()
        self._attempt_scope: trio.CancelScope | None = None
        self.runtime: BrowserRuntime | None = None
        self.last_error: BrowserdError | None = None
        self.crashes = CrashWatch()  # .last: /status.lastCrash
        # After a crash: the tabs to reopen, the sessions to carry over, the old ids' ledger.
        self.restorer = TabRestorer(settings, url_policy=url_policy, sessions=sessions,
                                    events=events)
        self.restarts = 0
        self.spawns = 0
        self._tries = 0  # attempts begun by the loop (a start after a failure waits for one)
        # A permanent child: any end of an attempt while wanted is a restart (or a give-up).
        self._restarts_seen = RestartTracker(self.policy, RestartType.PERMANENT, rng)
        self.executable_path: str | None = None
        self.chosen_browser: str | None = None

    # -- handle API ----------------------------------------------------------

    @property
    def profile_dir(self) -> Path:
        return self.paths.profile_dir(self.settings.profile)

    def require_runtime(self) -> BrowserRuntime:
        """The live runtime, or the 503 that says why there is none."""
        if self.state == SupervisorState.DISABLED:
            raise BrowserDisabled("Browser disabled in settings")
        runtime = self.runtime
        if (runtime is not None and self.state == SupervisorState.RUNNING
                and not runtime.connection.is_closed):
            return runtime
        if self.state == SupervisorState.UNRESPONSIVE or (
                self.state == SupervisorState.RESTARTING
                and isinstance(self.last_error, BrowserUnresponsive)):
            raise BrowserUnresponsive("the browser stopped answering CDP (hung); "
                                      "it is being restarted")
        if self.state in (SupervisorState.STARTING, SupervisorState.RESTARTING):
            raise BrowserStarting("the browser is starting")
        if self.state == SupervisorState.AWAITING_EXTENSION:
            raise ExtensionNotConnected("the profile's browser extension is not connected")
        if self.state == SupervisorState.AWAITING_APPROVAL:
            raise BrowserStarting("waiting for the user to allow remote debugging",
                                  hint="the user's browser asks them: 'Allow remote debugging?'")
        if self.state == SupervisorState.FAILED and self.last_error is not None:
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
            if self.state == SupervisorState.RUNNING:
                # Relaunch with the new mode.
                await self.stop()
            self.headless = headless
        # After a failure: a new try with a whole budget, and its outcome is the
        # answer, not the failure already on record.
        failed_at = self._tries if self.state == SupervisorState.FAILED else None
        if failed_at is not None:
            self._restarts_seen.clear_history()
        self._want(True)
        # An extension profile is up once it waits for its extension (the user's move).
        while (self.state not in (SupervisorState.RUNNING, SupervisorState.FAILED,
                                  SupervisorState.AWAITING_EXTENSION)
               or self._tries == failed_at):
            await self._wait_state_change()
        if self.state == SupervisorState.FAILED and self.last_error is not None:
            raise self.last_error

    async def stop(self) -> bool:
        """Stop wanting the browser and wait until it is down. True if it was up."""
        was_up = self.state in _UP
        self._want(False)
        if self._attempt_scope is not None:
            self._set_state(SupervisorState.STOPPING)
            self._attempt_scope.cancel()
        while self.state not in _DOWN:
            await self._wait_state_change()
        if self.state == SupervisorState.FAILED:
            self._set_state(SupervisorState.STOPPED)
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
            last_crash=self.crashes.last.to_json() if self.crashes.last else None,
        )

    def nudge_liveness(self) -> None:
        """A request timed out: probe the browser now (is it hung?). Never blocks or raises.

        A no-op while nothing runs. Call it where a request's deadline expired
        (the handler's Timeout); a hang then shows within ``liveness_timeout_s``.
        """
        if self.runtime is not None:
            self.runtime.nudge_liveness()

    # -- internals -----------------------------------------------------------

    def _want(self, wanted: bool) -> None:
        self._wanted = wanted
        self._wake.set()

    def _set_state(self, state: SupervisorState) -> None:
        if state in _DOWN:  # no restore after a stop or a failure
            self.restorer.abandon()
        if state != self.state:
            log.info("browser state %s -> %s", self.state, state)
            if self.events is not None:
                error = self.last_error if state in _WITH_ERROR else None
                extra: dict[str, Any] = {} if error is None else {
                    "error": {"code": error.code, "message": error.message}}
                self.events.publish(EventType.BROWSER_STATE, state=state.value,
                                    previous=self.state.value, **extra)
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
        tracker = self._restarts_seen
        while True:
            if not self._wanted and self.state not in (SupervisorState.FAILED,
                                                       SupervisorState.STOPPED):
                self._set_state(SupervisorState.STOPPED)
            if not self._wanted:
                while not self._wanted:
                    self._wake = trio.Event()
                    await self._wake.wait()
                tracker.reset_backoff()  # a new start: earlier crashes set no delay
            was_running = self.state in (SupervisorState.RUNNING, SupervisorState.RESTARTING)
            self._tries += 1
            self._set_state(SupervisorState.RESTARTING if was_running
                            else SupervisorState.STARTING)
            began = trio.current_time()
            error = await self._attempt()
            if not self._wanted:
                self._set_state(SupervisorState.STOPPED)
                continue
            self.last_error = error
            decision = tracker.after(error, ran_for_s=trio.current_time() - began,
                                     now=trio.current_time())
            if decision.outcome == Outcome.REFUSED:
                log.error("browser start refused: %s", error.message if error else "")
                self._wanted = False
                self._set_state(SupervisorState.FAILED)
                continue
            if decision.outcome == Outcome.BUDGET:
                log.error("browser restart budget exhausted: %s", error)
                self._wanted = False
                self.last_error = BrowserGone(
                    decision.reason,
                    hint="it will not be restarted again: see stderr and the log, fix the "
                         "cause, then POST /start (browserd start)",
                    **(error.details if error else {}),
                )
                self._set_state(SupervisorState.FAILED)
                continue
            self.restarts = tracker.restarts
            self._set_state(SupervisorState.RESTARTING)
            delay = decision.delay_s
            log.warning("browser down (%s); restarting in %.2f s", error, delay)
            with trio.move_on_after(delay):
                # A stop during the backoff ends the wait at once.
                while self._wanted:
                    self._wake = trio.Event()
                    await self._wake.wait()

    async def _attempt(self) -> BrowserdError | None:
        """One one_for_all attempt; returns why it ended (None for a requested stop).

        When a browser it served went away, the crash account is built here
        (:meth:`_crashed`) and the answer is the process's own account.
        """
        self.crashes.begin()
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
                return self._crashed(inner)
            if isinstance(inner, trio.Cancelled) or not isinstance(inner, Exception):
                raise
            log.exception("unexpected error in the browser subtree")
            return self._crashed(BrowserGone(f"internal error: {inner!r}"))
        finally:
            self._attempt_scope = None
            self.runtime = None

    async def _run_launched(self) -> None:
        exe = find_executable(self.settings.executable)
        self.executable_path, self.chosen_browser = str(exe.path), exe.kind
        spec = await prepare_launch(self.settings, exe, self.profile_dir, headless=self.headless,
                                    pid_record=self._pid_record)
        self.spawns += 1
        await run_launched_browser(spec, self._pid_record,
                                   lambda process: self._serve_connection(None, process))

    async def _run_attached(self) -> None:
        if self.settings.live_user_data_dir is not None:
            await self._run_live(Path(self.settings.live_user_data_dir))
            return
        with trio.fail_after(10):
            ws_url = await browser_ws_url(self.settings.effective_cdp_url)
        await self._serve_connection(ws_url, None)

    async def _run_live(self, user_data_dir: Path) -> None:
        """The user's own browser: found by DevToolsActivePort, approved by its user.

        Never launched, never killed; no page guards (they would hold and
        judge the user's own pages and set their downloads): only pages the
        user offers and pages browserd opens are tabs. LiveBrowserNotFound
        when it is not running with remote debugging on.
        """
        ws_url = live_ws_url(user_data_dir)
        self._set_state(SupervisorState.AWAITING_APPROVAL)
        timeout = self.settings.approval_timeout_s
        try:
            await self._serve_connection(ws_url, None, handshake_timeout_s=timeout, live=True)
        except BaseException as exc:
            inner = unwrap_group(exc)
            if not isinstance(inner, BrowserGone) or (
                self.state != SupervisorState.AWAITING_APPROVAL
            ):
                raise  # connected once: a lost connection is retried
            # Never connected: not retried (each try would ask its user again).
            raise LiveBrowserNotFound(
                f"the browser using {user_data_dir} did not accept the connection within "
                f"{timeout:.0f} s ({inner.message})",
                hint="is it running with remote debugging on, and did its user click "
                     "Allow? then POST /start again") from None

    async def _serve_connection(self, ws_url: str | None, process: BrowserProcess | None, *,
                                handshake_timeout_s: float = 10.0, live: bool = False) -> None:
        # A launched browser: CDP over its pipe (the process keeps the pipe; the
        # liveness probe can abort it); an attached one: its websocket.
        pipe = AbortableTransport(process.transport) if process is not None else None
        opened = (
            open_cdp_over(pipe, "pipe", close_transport=False)
            if pipe is not None
            else open_cdp_connection(str(ws_url), handshake_timeout_s=handshake_timeout_s)
        )
        async with open_runtime(
            opened, settings=self.settings, events=self.events, process=process,
            headless=self.headless and process is not None,
            url_policy=None if live else self.url_policy,
            downloads=None if live else self.downloads, consent=live,
            commits=True, restored=self.restorer.ledger,
        ) as runtime:
            await self.serve_runtime(runtime, abortable=pipe)

    async def serve_runtime(self, runtime: BrowserRuntime, *,
                            abortable: AbortableTransport | None = None,
                            watched: bool = True) -> None:
        """Serve ``runtime`` (state ``running``) until its end; raise why (watched).

        ``runtime`` comes from :func:`~.serve.open_runtime`. Watched (a browser
        browserd launched or attached to): the liveness probe runs, and after a
        crash the tabs are restored (:meth:`TabRestorer.restore`) before the
        state is ``running``; it raises the connection's close reason
        (BrowserGone when it has none) or BrowserUnresponsive (hung), and how
        it ended is noted for the crash account. ``abortable``: the transport
        the connection runs over, so a hang fails the calls in flight with
        BROWSER_UNRESPONSIVE (else BROWSER_GONE). Not watched (the extension
        relay, whose connection comes and goes with the user's browser): no
        probe, no restore; it returns when the connection closes. Cancellation
        ends it at once.
        """
        if not watched:
            self.mark_running(runtime)
            await runtime.connection.wait_closed()
            return
        probe = LivenessProbe(runtime.connection, self.liveness,
                              on_unresponsive=self._on_unresponsive, abortable=abortable)
        runtime = attrs.evolve(runtime, liveness=probe)
        self.crashes.serving(runtime)
        await self.restorer.restore(runtime)
        self.mark_running(runtime)
        try:
            await probe.run()
            self.crashes.note("closed")
        finally:
            self.crashes.note(None)  # the first note stands
        reason = runtime.connection.close_reason
        raise reason if isinstance(reason, BrowserdError) else BrowserGone(
            "the browser connection closed")

    def _on_unresponsive(self, error: BrowserUnresponsive) -> None:
        """The probe got no answer: state unresponsive, before anything is torn down."""
        self.crashes.note("hung")
        served = self.crashes.served
        if served is not None and served.process is not None:
            served.process.mark_unresponsive()  # the stop ladder skips Browser.close
        if self.state == SupervisorState.RUNNING:  # (not over a stop in progress)
            self.last_error = error
            self._set_state(SupervisorState.UNRESPONSIVE)

    def _crashed(self, error: BrowserdError) -> BrowserdError:
        """Record the crash if this attempt's browser went away; the attempt's answer
        (the process's own account when it has one, else ``error``)."""
        crash = self.crashes.account() if self._wanted else None
        if crash is None:
            return error
        log.warning("browser crashed: %s (%d tabs)", crash.describe(), crash.tabs_affected)
        self.restorer.crashed(self.crashes.served, crash)
        if self.events is not None:
            self.events.publish(EventType.BROWSER_CRASHED, **crash.event_data())
        return crash.as_error(error)

    def mark_awaiting_extension(self) -> None:
        """Called by an extension profile's subtree while no extension is connected."""
        self.runtime = None
        self._set_state(SupervisorState.AWAITING_EXTENSION)

    def mark_running(self, runtime: BrowserRuntime | None) -> None:
        """Called by the subtree once it is ready to serve requests."""
        self.runtime = runtime
        self.last_error = None
        self._set_state(SupervisorState.RUNNING)

    @property
    def _pid_record(self) -> PidRecord:
        return PidRecord(path=self.paths.state_dir / f"{self.settings.profile}.json")
