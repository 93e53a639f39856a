"""A launched browser's attempt: the profile made ready, the process run and served.

:func:`prepare_launch` does what comes before each launch (the profile
claimed, a leftover browser of a dead browserd stopped, a stale lock
cleared, the preferences written). :func:`run_launched_browser`
runs the process (:func:`~browserd.browser.process.run_browser`) beside the
caller's ``serve`` (the CDP connection, guards and tabs) in one nursery, with
the pid record written while it runs; when serving ends with an error it
first waits, bounded, for the process's own exit status, so the crash account
(:mod:`.crash`) has the process's own words.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio

from ..browser.executable import Executable
from ..browser.process import BrowserProcess, LaunchSpec, run_browser
from ..browser.profile import claim_profile, clear_stale_lock, prepare_preferences
from ..config import Settings
from .crash import EXIT_STATUS_WAIT_S
from .leftovers import PidRecord

__all__ = ["prepare_launch", "run_launched_browser"]


async def prepare_launch(settings: Settings, exe: Executable, profile_dir: Path, *,
                         headless: bool, pid_record: PidRecord) -> LaunchSpec:
    """Make ``profile_dir`` ready for launching ``exe``; the launch spec.

    Raises ProfileRefused (not a browserd profile) or ProfileInUse (a live
    browser holds it); bounded by the leftover stop's own waits.
    """
    claim_profile(profile_dir)
    await pid_record.stop_leftover(profile_dir)
    clear_stale_lock(profile_dir)
    prepare_preferences(profile_dir, name=settings.profile, color=settings.color,
                        contain_egress=bool(settings.allowed_origins))
    return LaunchSpec(
        executable=exe.path,
        profile_dir=profile_dir,
        headless=headless,
        no_sandbox=hasattr(os, "geteuid") and os.geteuid() == 0,
    )


async def run_launched_browser(spec: LaunchSpec, pid_record: PidRecord,
                               serve: Callable[[BrowserProcess], Awaitable[None]]) -> None:
    """Launch ``spec`` and ``serve`` it until either ends; both end together.

    Raises the startup error, or whatever ended serving (or the process's
    BrowserGone when it exited first). Before the process is stopped after
    serving failed, its own exit status is awaited for up to
    EXIT_STATUS_WAIT_S (not for a hung one: it will not exit by itself).
    Cancellation runs the stop ladder (shielded, bounded).
    """
    async with trio.open_nursery() as nursery:
        process: BrowserProcess = await nursery.start(run_browser, spec)
        pid_record.write(process)
        try:
            await serve(process)
        except Exception:
            # The pipe closes a moment before the exit status is known.
            await process.wait_own_exit(0 if process.unresponsive else EXIT_STATUS_WAIT_S)
            raise
        finally:
            nursery.cancel_scope.cancel()
            pid_record.clear()
