"""The table of fault drills and the runner: :data:`DRILLS`, :data:`FAST`, :func:`run_drill`.

Each drill starts browserd on a real Chromium, injects one fault and checks
recovery and the invariants. The drills live by what they break:
process_drills.py (the browser's and the service's processes, and the CDP link:
F1-F3, F11, F12, F16, F17), page_drills.py (a page or the load on its tabs: F7-F9,
F14, F15, F18), disk_drills.py (the profile on disk and the disk: F4-F6, F10,
F13), profiles_drill.py (P1, one of several profiles killed) and neighbour.py
(S11, the hostile neighbour); what they work with is drill.py.

:func:`run_drill` runs one drill with a hard deadline and always cleans up:
services it started are killed, and any process left on its (private,
temporary) profiles is killed too. A drill may end SKIP only if its
:class:`DrillSpec` declares why it can be impossible here (``may_skip``); any
other skip is a failure.
"""

from __future__ import annotations

import shutil
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path

import attrs
import trio

from .disk_drills import f4, f5, f6, f10, f13
from .drill import Drill, DrillResult, DrillSkipped
from .neighbour import hostile_neighbour
from .page_drills import f7, f8, f9, f14, f15, f18
from .process_drills import f1, f2, f3, f11, f12, f16, f17
from .profiles_drill import profile_kill

DRILL_DEADLINE_S = 150.0


@attrs.frozen(kw_only=True)
class DrillSpec:
    key: str
    title: str
    expectation: str
    fn: Callable[[Drill], Awaitable[None]]
    fast: bool
    #: Why this drill can be impossible on some machines. Only a drill that
    #: declares it may end SKIP; any other DrillSkipped is a FAIL.
    may_skip: str | None = None


DRILLS: dict[str, DrillSpec] = {s.key: s for s in [
    DrillSpec(key="F1", title="kill -9 the browser, requests in flight", fast=True, fn=f1,
              expectation="in-flight calls 502 BROWSER_GONE < 2 s; relaunch on the same "
                          "profile; /tabs works; no orphans"),
    DrillSpec(key="F2", title="kill -9 the service", fast=False, fn=f2,
              expectation="the browser exits by itself (pipe lifeline); a new start on the "
                          "same profile and port succeeds"),
    DrillSpec(key="F3", title="SIGTERM to the service", fast=True, fn=f3,
              expectation="exit 0; Browser.close first; no Singleton*; exit_type Normal"),
    DrillSpec(key="F4", title="persistent cookie, graceful restart", fast=False, fn=f4,
              expectation="cookie via CDP after restart and on disk after close; another "
                          "profile does not see it"),
    DrillSpec(key="F5", title="stale SingletonLock (this host, dead pid)", fast=True, fn=f5,
              expectation="start succeeds, same profile"),
    DrillSpec(key="F6", title="profile in use by a live process", fast=False, fn=f6,
              expectation="refused: 'profile in use by pid N'; deletes nothing, kills nothing"),
    DrillSpec(key="F7", title="renderer crash in tab A", fast=True, fn=f7,
              expectation="calls on A fail < 2 s TARGET_CRASHED; B works; A marked crashed; "
                          "A reloads or closes"),
    DrillSpec(key="F8", title="hung renderer", fast=True, fn=f8,
              expectation="504 within the deadline; /healthz and other tab answer while it "
                          "hangs (< 0.5 s); tab recovers"),
    DrillSpec(key="F9", title="alert()/confirm() open", fast=True, fn=f9,
              expectation="409 DIALOG_OPEN, no hang; /dialog resolves it"),
    DrillSpec(key="F10", title="SingletonLock of another host", fast=False, fn=f10,
              expectation="lock left in place; actionable error in /status"),
    DrillSpec(key="F11", title="executable exits at once", fast=True, fn=f11,
              expectation="exponential backoff, then failed with stderr tail; bounded spawns; "
                          "flat memory"),
    DrillSpec(key="F12", title="CDP websocket drops (attach mode)", fast=False, fn=f12,
              expectation="pending calls fail at once; reconnect; one subscription; the "
                          "browser is never killed"),
    DrillSpec(key="F13", title="disk full while saving a screenshot", fast=False, fn=f13,
              expectation="507, nothing partial, earlier files intact, still serving",
              may_skip="it mounts a 2 MiB tmpfs, which needs root (or CAP_SYS_ADMIN)"),
    DrillSpec(key="F14", title="the last tab is closed", fast=True, fn=f14,
              expectation="browser stays up (or restarts); /tabs [] then /tabs/open works"),
    DrillSpec(key="F15", title="overload: 50 concurrent calls", fast=False, fn=f15,
              expectation="excess 429/503 quickly; nothing else breaks; RSS bounded"),
    DrillSpec(key="F16", title="hung browser (SIGSTOP on its process group)", fast=True,
              fn=f16, expectation="/healthz unresponsive within interval + timeout; in-flight "
                                  "and new calls 503 BROWSER_UNRESPONSIVE fast; the group "
                                  "SIGKILLed; restarted (lastCrash hung); works after"),
    DrillSpec(key="F17", title="kill -9 the browser under agent tabs in two sessions",
              fast=True, fn=f17,
              expectation="restarted; all 5 tabs reopened at their URLs in their sessions "
                          "(restoredFrom); each old id 409 TAB_RESTORED with the new id and "
                          "lastCrash (signal 9, stderr tail), 404 in the other session"),
    DrillSpec(key="F18", title="a page floods events while it loads", fast=True, fn=f18,
              expectation="the tab answers /eval and /snapshot after 200,000 console lines "
                          "and 500 fetches (60,000 in the fast run); drops counted; never "
                          "BROWSER_GONE or broken"),
    DrillSpec(key="P1", title="kill -9 one profile's browser under load", fast=True,
              fn=profile_kill,
              expectation="it restarts with a new pid; the other profiles serve every request "
                          "(no error) and keep their browsers"),
    DrillSpec(key="S11", title="hostile neighbour: another OS user on the CDP port", fast=True,
              fn=hostile_neighbour,
              expectation="401 on every gateway/control probe without the token; no process "
                          "of the browser group listens on TCP"),
]}

FAST = tuple(k for k, s in DRILLS.items() if s.fast)


async def run_drill(key: str, *, fast: bool = True, keep: bool = False,
                    judge_latency: bool = True) -> DrillResult:
    """Run one drill with a hard deadline; never raises for a drill failure.

    ``judge_latency=False`` (pytest) records latency limits as notes instead
    of failing on them (:meth:`Drill.within`).

    The drill's temporary directory is removed when it passes (kept on
    failure, or with ``keep``). Cancellation cleans up the same way.
    """
    spec = DRILLS[key]
    workdir = Path(tempfile.mkdtemp(prefix=f"browserd-drill-{key}-"))
    drill = Drill(key, workdir, fast=fast, judge_latency=judge_latency)
    outcome = "PASS"
    start = time.perf_counter()
    try:
        with trio.fail_after(DRILL_DEADLINE_S):
            await spec.fn(drill)
    except DrillSkipped as exc:
        if spec.may_skip is None:
            drill.failures.append(f"skipped, but the drill declares no reason it may: {exc}")
        else:
            outcome = "SKIP"
            drill.note(f"{exc} (declared: {spec.may_skip})")
    except trio.TooSlowError:
        drill.failures.append(f"timed out: {traceback.format_exc(limit=-3)}")
    except Exception as exc:
        drill.failures.append(f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-4)}")
    finally:
        await drill.cleanup()
    if drill.failures:
        outcome = "FAIL"
    kept = keep or outcome == "FAIL"
    if not kept:
        shutil.rmtree(workdir, ignore_errors=True)
    return DrillResult(
        key=key, title=spec.title, expectation=spec.expectation, outcome=outcome,
        figures=dict(drill.figures), failures=tuple(drill.failures), notes=tuple(drill.notes),
        seconds=time.perf_counter() - start, workdir=str(workdir) if kept else None,
    )


__all__ = ["DRILLS", "DRILL_DEADLINE_S", "FAST", "DrillSpec", "run_drill"]
