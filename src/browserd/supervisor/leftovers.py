"""The pid record: proving a leftover browser is ours before stopping it (F2).

A running attempt writes ``<state_dir>/<profile>.json`` (our browser's pid,
profile, executable, and our own pid); a clean end removes it. A restarted
browserd stops a leftover browser of a previous instance **only** after
proving it is ours (see :meth:`PidRecord.leftover_pid`).
"""

from __future__ import annotations

import json
import logging
import os
import signal
from pathlib import Path

import attrs
import trio

from ..browser.process import BrowserProcess
from ..browser.profile import on_profile, pid_alive, process_argv, read_lock

__all__ = ["LEFTOVER_WAIT_S", "PidRecord"]

log = logging.getLogger(__name__)

LEFTOVER_WAIT_S = 2.0
"""How long to wait for a leftover browser after each of SIGTERM and SIGKILL."""


@attrs.frozen(kw_only=True)
class PidRecord:
    """The pid record file of one profile."""

    path: Path

    def write(self, process: BrowserProcess) -> None:
        """Record ``process`` (atomically: a temporary file, then a rename)."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        record = {"pid": process.pid, "profileDir": str(process.spec.profile_dir),
                  "executable": str(process.spec.executable), "startedAt": process.started_at,
                  "servicePid": os.getpid()}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(record))
        os.replace(tmp, self.path)

    def clear(self) -> None:
        """Remove the record (absent is fine)."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass

    async def stop_leftover(self, profile_dir: Path) -> None:
        """Kill a browser a previous browserd launched on this profile, if provably ours.

        See :meth:`leftover_pid` for the proof. SIGTERM then SIGKILL to its
        process group, each followed by a wait of up to :data:`LEFTOVER_WAIT_S`.
        Never raises; cancellation ends the wait (the signal already sent stays sent).
        """
        pid = self.leftover_pid(profile_dir)
        if pid is None:
            return
        log.warning("stopping leftover browser pid %d of a previous browserd", pid)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(pid, sig)
            except OSError:
                return
            with trio.move_on_after(LEFTOVER_WAIT_S):
                while pid_alive(pid):  # noqa: ASYNC110 - no event tells us a non-child died
                    await trio.sleep(0.02)
            if not pid_alive(pid):
                return

    def leftover_pid(self, profile_dir: Path) -> int | None:
        """The pid of a leftover browser that is provably ours, or None.

        Proof: our pid record names the pid, the profile lock names the same
        pid, and its command line carries our --user-data-dir. A browser whose
        browserd (``servicePid`` in the record) is still alive belongs to that
        other browserd and is left alone: the lock check then refuses with
        "profile in use by pid N" (F6).
        """
        try:
            record = json.loads(self.path.read_text())
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
    if not argv:
        # No /proc (macOS), or an empty command line (a process in the middle of its
        # exec shows none for a moment): we cannot tell, so assume the worst, touch nothing.
        return True
    return any("browserd" in arg for arg in argv)
