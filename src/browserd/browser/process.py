"""BrowserProcess: launch Chromium, know when it is ready, stop it in bounded steps.

Shape of :func:`trio.run_process`: :func:`run_browser` is started with
``nursery.start``, hands back the live :class:`BrowserProcess` once CDP is
ready, returns (by raising :class:`~browserd.errors.BrowserGone`) when the
browser exits on its own, and on cancellation runs the stop ladder:
``Browser.close`` over the pipe → SIGTERM to the process group → SIGKILL to
the group → reap, each step bounded, all shielded. A browser marked
unresponsive (hung: :meth:`BrowserProcess.mark_unresponsive`) skips
``Browser.close``, which it could not answer.

The process's own account of its end — :attr:`BrowserProcess.own_exit`, the
exit status it had *before* browserd asked it to stop, and its stderr tail —
is kept on the handle, so the supervisor can tell a crash (killed by a
signal, exited) from a browser it stopped itself, whichever side noticed
first (the pipe usually closes a moment before the exit status is known:
:meth:`BrowserProcess.wait_own_exit` bridges that).

No TCP port: Chromium gets ``--remote-debugging-pipe`` only, so nothing but
browserd can drive it (a DevTools TCP port takes no credentials: any local
user could). CDP runs over that pipe (:class:`~browserd.cdp.PipeTransport`,
owned by the process; the connection borrows it). Ready = the pipe answers
``Browser.getVersion`` within READY_TIMEOUT_S.

Lifeline: if browserd dies (even by SIGKILL) the kernel closes our ends of
the pipe and Chromium exits by itself within ~25 ms, so no browser outlives
its supervisor.
"""

from __future__ import annotations

import collections
import fcntl
import logging
import os
import signal
import subprocess
import time
from pathlib import Path

import attrs
import orjson
import trio

from ..cdp.transport import PipeTransport
from ..errors import BrowserGone, ProfileInUse, StartupError
from .profile import user_data_dir_arg

log = logging.getLogger(__name__)

READY_TIMEOUT_S = 20.0
CLOSE_WAIT_S = 3.0
TERM_WAIT_S = 2.0
KILL_WAIT_S = 2.0
#: After the browser's own exit, how long its stderr reader may still read
#: (its last words) before it is stopped; a leftover child holding stderr
#: open cannot hold the end up longer.
STDERR_DRAIN_S = 0.25
STOP_BUDGET_S = CLOSE_WAIT_S + TERM_WAIT_S + KILL_WAIT_S + 1.0
_PROFILE_IN_USE_EXIT = 21
#: Ids of the two commands this module sends itself; the connection's own
#: ids count up from 1 and never reach them.
_READY_ID = 2_000_000_001
_CLOSE_ID = 2_000_000_002


@attrs.frozen(kw_only=True)
class LaunchSpec:
    """Everything that goes into one launch. Nothing here comes from an HTTP request."""

    executable: Path
    profile_dir: Path
    headless: bool
    window_size: tuple[int, int] = (1280, 720)
    no_sandbox: bool = False


def build_argv(spec: LaunchSpec) -> list[str]:
    """The full command line: a quiet agent browser on its own profile, CDP on the pipe only."""
    width, height = spec.window_size
    argv = [
        str(spec.executable),
        user_data_dir_arg(spec.profile_dir),
        "--remote-debugging-pipe",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-breakpad",
        "--disable-crash-reporter",
        "--disable-features=Translate,MediaRouter,OptimizationHints,DialMediaRouteProvider",
        "--disable-session-crashed-bubble",
        "--hide-crash-restore-bubble",
        "--password-store=basic",
        "--use-mock-keychain",
        # Crashpad cannot be switched off on Linux; keep its database in our
        # profile rather than the user's ~/.config/chromium.
        f"--crash-dumps-dir={spec.profile_dir / 'Crash Reports'}",
        "--keep-alive-for-test",
        f"--window-size={width},{height}",
    ]
    if spec.no_sandbox:
        argv.append("--no-sandbox")
    if spec.headless:
        argv += ["--headless=new", "--disable-gpu"]
    # No window at start: CDP is ready ~90 ms sooner; the first tab is
    # opened on demand (in a new window), as Playwright does.
    argv.append("--no-startup-window")
    return argv


class BrowserProcess:
    """Handle to a launched, ready browser. Only its own tasks change its state.

    ``transport`` is the CDP pipe; the CdpConnection borrows it (and must not
    close it), the stop ladder sends ``Browser.close`` through it and closes it.
    """

    def __init__(self, proc: trio.Process, spec: LaunchSpec, transport: PipeTransport) -> None:
        self._proc = proc
        self.spec = spec
        self.pid: int = proc.pid
        self.started_at = time.time()
        self.transport = transport
        self.version: dict[str, object] = {}
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=40)
        #: The exit status it ended with by itself, before any stop step (None:
        #: still running, or ended by browserd's stop ladder).
        self.own_exit: int | None = None
        #: Hung (the supervisor's liveness probe got no answer): the ladder skips Browser.close.
        self.unresponsive = False
        self._stopping = False
        self._stderr_done = trio.Event()

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode

    def mark_unresponsive(self) -> None:
        """It stopped answering CDP: the stop ladder goes straight to the signals."""
        self.unresponsive = True

    def note_exit(self) -> int | None:
        """The exit status if it has ended (recorded as its own if no stop step ran yet)."""
        code = self._proc.returncode
        if code is not None and self.own_exit is None and not self._stopping:
            self.own_exit = code
        return code

    async def wait_own_exit(self, grace_s: float) -> int | None:
        """Its exit status if it ends by itself within ``grace_s`` (0: just look), else None.

        Bounded; cancellation ends the wait (nothing else changes). Recorded in
        :attr:`own_exit` when it is the process's own (no stop step ran yet);
        then its stderr reader gets up to STDERR_DRAIN_S to read its last lines.
        """
        if self._proc.returncode is None and grace_s > 0:
            with trio.move_on_after(grace_s):
                await self._proc.wait()
        self.note_exit()
        if self.own_exit is not None:
            with trio.move_on_after(STDERR_DRAIN_S):  # its last words, if it said any
                await self._stderr_done.wait()
        return self.own_exit

    def stderr_text(self, lines: int = 20) -> str:
        return "\n".join(list(self.stderr_tail)[-lines:])

    async def _read_stderr(self) -> None:
        assert self._proc.stderr is not None
        buf = b""
        try:
            while True:
                chunk = await self._proc.stderr.receive_some(65536)
                if not chunk:
                    break
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    self._note_line(line)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            if buf:
                self._note_line(buf)
            self._stderr_done.set()

    def _note_line(self, line: bytes) -> None:
        text = line.decode(errors="replace").rstrip()
        if (text and not text.startswith("[")) or "ERROR" in text or "FATAL" in text:
            self.stderr_tail.append(text[:500])

    async def _wait_ready(self) -> None:
        """Ask ``Browser.getVersion`` over the pipe and wait for its reply.

        Messages before it (there are none on a fresh browser) are skipped.
        Raises ProfileInUse (exit code 21: another browser holds the profile)
        or StartupError when the pipe closes first. The caller bounds it.
        """
        try:
            await self.transport.send(
                orjson.dumps({"id": _READY_ID, "method": "Browser.getVersion"}))
            while True:
                message = orjson.loads(await self.transport.receive())
                if isinstance(message, dict) and message.get("id") == _READY_ID:
                    result = message.get("result")
                    self.version = result if isinstance(result, dict) else {}
                    return
        except (BrowserGone, orjson.JSONDecodeError):
            pass
        with trio.move_on_after(1.0):
            await self._proc.wait()
        code = self._proc.returncode
        if code == _PROFILE_IN_USE_EXIT:
            raise ProfileInUse(
                f"profile {self.spec.profile_dir} is in use by another browser process",
                stderr=self.stderr_text(),
            )
        raise StartupError(
            f"the browser exited before CDP was ready (exit code {code})",
            stderr=self.stderr_text(),
        )

    async def wait(self) -> int:
        return await self._proc.wait()

    def _signal_group(self, sig: int) -> bool:
        try:
            os.killpg(self.pid, sig)
            return True
        except ProcessLookupError:
            return False
        except PermissionError:
            return False

    async def stop(self) -> str:
        """The stop ladder. Bounded (≈ STOP_BUDGET_S), idempotent, never raises.

        Returns the step that ended the browser: "exited", "close", "sigterm"
        or "sigkill". Leftover members of the process group (renderers whose
        parent died) are killed too; the browser's own session is ours alone.
        While waiting, the pipe is drained so a browser writing its last
        events never blocks on a full pipe. An unresponsive browser gets no
        ``Browser.close`` (it could not answer it). SIGKILL is followed by
        SIGCONT, so a stopped (SIGSTOP) group is killed and reaped too; a
        stopped group's SIGTERM stays pending, so it waits out TERM_WAIT_S.
        """
        step = "exited"
        self.note_exit()
        self._stopping = True
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self.transport.drain)
                if self._proc.returncode is None and not self.unresponsive:
                    step = "close"
                    await self._send_close()
                    with trio.move_on_after(CLOSE_WAIT_S):
                        await self._proc.wait()
                if self._proc.returncode is None:
                    step = "sigterm"
                    self._signal_group(signal.SIGTERM)
                    with trio.move_on_after(TERM_WAIT_S):
                        await self._proc.wait()
                if self._proc.returncode is None:
                    step = "sigkill"
                    self._signal_group(signal.SIGKILL)
                    self._signal_group(signal.SIGCONT)
                    with trio.move_on_after(KILL_WAIT_S):
                        await self._proc.wait()
                nursery.cancel_scope.cancel()
            # Renderers/zygotes orphaned by a crash stay in our group: end them.
            self._signal_group(signal.SIGKILL)
            await self.transport.aclose()
        return step

    async def _send_close(self) -> None:
        """Ask Chromium to close through the pipe (flushes cookies). Never raises."""
        try:
            await self.transport.send(orjson.dumps({"id": _CLOSE_ID, "method": "Browser.close"}))
        except BrowserGone:
            pass


def _above_4(fd: int) -> int:
    """``fd`` itself if it is above 4, else a close-on-exec copy above 4 (``fd`` is closed)."""
    if fd > 4:
        return fd
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 5)
    os.close(fd)
    return high


async def _spawn(spec: LaunchSpec) -> BrowserProcess:
    # fd 3: Chromium reads commands; fd 4: Chromium writes replies. The child's
    # ends are first moved above 4, so placing one can never clobber the other
    # (nor be a no-op dup2 that leaves it close-on-exec).
    child_in, ours_write = os.pipe()
    ours_read, child_out = os.pipe()
    child_in, child_out = _above_4(child_in), _above_4(child_out)

    def place_pipes() -> None:  # runs in the child, between fork and exec
        os.dup2(child_in, 3)
        os.dup2(child_out, 4)

    try:
        proc = await trio.lowlevel.open_process(
            build_argv(spec),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=place_pipes,
            pass_fds=(3, 4),
            cwd=str(spec.profile_dir),
        )
    except OSError as exc:
        for fd in (child_in, ours_write, ours_read, child_out):
            os.close(fd)
        raise StartupError(f"cannot run {spec.executable}: {exc}") from None
    os.close(child_in)
    os.close(child_out)
    return BrowserProcess(proc, spec, PipeTransport(ours_write, ours_read))


async def run_browser(
    spec: LaunchSpec, *, task_status: trio.TaskStatus[BrowserProcess] = trio.TASK_STATUS_IGNORED
) -> None:
    """Launch and supervise one browser process.

    ``task_status.started(process)`` once CDP answers over the pipe. Raises
    StartupError / ProfileInUse if it never gets ready, and
    BrowserGone when it exits on its own. Cancellation runs the stop ladder
    (shielded, bounded) before returning.
    """
    process = await _spawn(spec)
    log.info("launched browser pid %d (CDP over the pipe)", process.pid)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(process._read_stderr)
            try:
                with trio.fail_after(READY_TIMEOUT_S):
                    await process._wait_ready()
            except trio.TooSlowError:
                raise StartupError(
                    f"the browser did not answer CDP within {READY_TIMEOUT_S:.0f} s",
                    stderr=process.stderr_text(),
                ) from None
            task_status.started(process)
            code = await process.wait()
            await process.wait_own_exit(0)  # recorded as its own; its last stderr lines read
            nursery.cancel_scope.cancel()
        raise BrowserGone(
            f"the browser exited unexpectedly (code {code})", stderr=process.stderr_text()
        )
    finally:
        step = await process.stop()
        log.info("browser pid %d stopped (%s)", process.pid, step)
        if process._proc.stderr is not None:  # its reader has ended with the nursery
            with trio.CancelScope(shield=True):
                await process._proc.stderr.aclose()


__all__ = ["CLOSE_WAIT_S", "KILL_WAIT_S", "READY_TIMEOUT_S", "STDERR_DRAIN_S", "STOP_BUDGET_S",
           "TERM_WAIT_S", "BrowserProcess", "LaunchSpec", "build_argv", "run_browser"]
