"""One function per operation per side.

Every timed function takes its side's context, ``n`` and ``warmup`` (plus
the operation's own arguments) and returns a :class:`Result`: wall-clock
samples in ms and an ``info`` dict (output sizes and the like).

- ``raw_*`` (:mod:`bench.ops.raw`): async, run inside the
  :class:`~bench.common.TrioWorker`; raw CDP on a Chromium the bench
  launched with browserd's flags.
- ``pw_*`` (:mod:`bench.ops.pw`): async, run inside the
  :class:`~bench.common.AsyncioWorker`; Playwright's async API driving the
  same Debian Chromium.
- ``bd_*`` (:mod:`bench.ops.bd`): synchronous, in the main thread;
  browserd's HTTP API through one keep-alive ``httpx.Client``. A route that
  answers 404 "no route" raises :class:`RouteMissing` (the table says
  "n/a (route missing)").

The records and constants all three share are in :mod:`bench.ops.records`;
this package re-exports every side's public names, so ``ops.raw_eval`` and
``from bench.ops import pw_setup`` work as before the split.

Concurrency (``*_conc``) runs ``k`` workers on ``k`` tabs for a fixed time
and reports requests per second and CPU seconds per process group; memory
(``bd_memory``, ``pw_memory``) reads /proc. Errors propagate to the caller.
"""

from __future__ import annotations

from .bd import (
    BdCtx,
    bd_aria,
    bd_close_tabs,
    bd_cold_first_tab,
    bd_cold_start,
    bd_conc,
    bd_conc_setup,
    bd_dom_text,
    bd_eval,
    bd_memory,
    bd_memory_now,
    bd_navigate,
    bd_new_tab,
    bd_process_start,
    bd_screenshot,
    call,
)
from .pw import (
    PwCtx,
    pw_aria,
    pw_cold_first_tab,
    pw_cold_start,
    pw_conc,
    pw_conc_setup,
    pw_conc_teardown,
    pw_dom_text,
    pw_eval,
    pw_launch_kwargs,
    pw_memory,
    pw_navigate,
    pw_new_tab,
    pw_process_start,
    pw_screenshot,
    pw_setup,
    pw_teardown,
)
from .raw import (
    RawCtx,
    raw_aria,
    raw_cold_first_tab,
    raw_cold_start,
    raw_conc,
    raw_conc_setup,
    raw_conc_teardown,
    raw_dom_text,
    raw_eval,
    raw_goto,
    raw_hold,
    raw_navigate,
    raw_new_tab,
    raw_screenshot,
    raw_stop,
)
from .records import (
    BIG,
    CONC_EVAL_JS,
    EVAL_JS,
    ConcResult,
    Result,
    RouteMissing,
)

__all__ = [
    "BIG",
    "CONC_EVAL_JS",
    "EVAL_JS",
    "BdCtx",
    "ConcResult",
    "PwCtx",
    "RawCtx",
    "Result",
    "RouteMissing",
    "bd_aria",
    "bd_close_tabs",
    "bd_cold_first_tab",
    "bd_cold_start",
    "bd_conc",
    "bd_conc_setup",
    "bd_dom_text",
    "bd_eval",
    "bd_memory",
    "bd_memory_now",
    "bd_navigate",
    "bd_new_tab",
    "bd_process_start",
    "bd_screenshot",
    "call",
    "pw_aria",
    "pw_cold_first_tab",
    "pw_cold_start",
    "pw_conc",
    "pw_conc_setup",
    "pw_conc_teardown",
    "pw_dom_text",
    "pw_eval",
    "pw_launch_kwargs",
    "pw_memory",
    "pw_navigate",
    "pw_new_tab",
    "pw_process_start",
    "pw_screenshot",
    "pw_setup",
    "pw_teardown",
    "raw_aria",
    "raw_cold_first_tab",
    "raw_cold_start",
    "raw_conc",
    "raw_conc_setup",
    "raw_conc_teardown",
    "raw_dom_text",
    "raw_eval",
    "raw_goto",
    "raw_hold",
    "raw_navigate",
    "raw_new_tab",
    "raw_screenshot",
    "raw_stop",
]
