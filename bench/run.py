"""The side-by-side run: :class:`Bench` measures every operation on every side.

:class:`Bench` owns the three sides (browserd's service process, the raw-CDP
Chromium in a trio worker, Playwright in an asyncio worker) and the rows
it collects. Each operation is measured in rounds (raw, Playwright,
browserd, then again) so background noise lands on all three sides alike.
A side that fails to start, or an operation that raises, becomes an error
cell in the report; the run goes on with the rest.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import ops
from .common import AsyncioWorker, Service, TrioWorker
from .pages import SIZES, PageServer
from .results import SIDE_NAMES, SIDES, Cell, Goal, Row, fmt_cell, short_error

__all__ = ["ALL_OPS", "CONC_LEVELS", "Bench", "SideFn", "log"]

ALL_OPS = ("start", "tab", "nav", "eval", "shot", "snap", "dom", "conc", "mem")
CONC_LEVELS = (1, 2, 4, 8)
SideFn = Callable[[int, int], ops.Result]


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Bench:
    """Owns the three sides (their processes and worker threads) and the collected rows."""

    def __init__(self, args: argparse.Namespace, tmp: Path) -> None:
        self.args = args
        self.quick: bool = args.quick
        self.rounds = 1 if self.quick else 3
        self.tmp = tmp
        self.rows: list[Row] = []
        self.conc: dict[str, dict[str, dict[int, ops.ConcResult | str]]] = {}
        self.memory: dict[str, Any] = {}
        self.conditions: dict[str, str] = {}
        self.setup_errors: dict[str, str] = {}
        self.pages = PageServer()
        self.trio = TrioWorker()
        self.aio = AsyncioWorker()
        self.raw: ops.RawCtx | None = None
        self.pw: ops.PwCtx | None = None
        self.bd: ops.BdCtx | None = None

    def reps(self, full: int, quick: int) -> int:
        return quick if self.quick else full

    # setup / teardown

    def setup(self) -> None:
        self.pages.__enter__()
        out = self.tmp / "out"
        out.mkdir()
        log("starting browserd (service process)")
        svc = Service(self.tmp / "svc")
        svc.start()
        self.bd = ops.BdCtx(service=svc, client=svc.client())
        self.memory["idle"] = ops.bd_memory_now(svc)
        self.memory["idle_startup_ms"] = svc.startup_ms
        status = ops.call(self.bd.client, "GET", "/status")
        self.conditions["chromium"] = str(status.get("version") or "?")
        log("starting the raw-CDP Chromium")
        try:
            self.raw = self.trio.start_task(ops.raw_hold, self.tmp / "raw-profile",
                                            self.tmp / "raw-start-profile", out)
        except Exception as exc:
            self.setup_errors["raw"] = short_error(exc)
            log(f"raw side unavailable: {exc!r}")
        log("starting Playwright")
        try:
            self.pw = self.aio.run(ops.pw_setup(out))
        except Exception as exc:
            self.setup_errors["pw"] = short_error(exc)
            log(f"Playwright side unavailable: {exc!r}")

    def teardown(self) -> None:
        if self.pw is not None:
            self.aio.run(ops.pw_teardown(self.pw))
        if self.raw is not None:
            self.trio.run(ops.raw_stop, self.raw)
        self.trio.close()
        self.aio.close()
        if self.bd is not None:
            self.bd.client.close()
            self.bd.service.stop()
        self.pages.__exit__(None, None, None)

    # side adapters: each returns a (n, warmup) -> Result callable, or None if unavailable

    def raw_fn(self, fn: Callable[..., Any], *extra: Any) -> SideFn | None:
        if self.raw is None:
            return None
        ctx = self.raw
        return lambda n, w: self.trio.run(fn, ctx, n, w, *extra)

    def pw_fn(self, fn: Callable[..., Any], *extra: Any) -> SideFn | None:
        if self.pw is None:
            return None
        ctx = self.pw
        return lambda n, w: self.aio.run(fn(ctx, n, w, *extra))

    def bd_fn(self, fn: Callable[..., ops.Result], *extra: Any) -> SideFn | None:
        if self.bd is None:
            return None
        ctx = self.bd
        return lambda n, w: fn(ctx, n, w, *extra)

    def row(self, group: str, name: str, fns: dict[str, SideFn | None], n: int, warmup: int,
            goal: Goal | None = None, note: str = "") -> Row:
        """Measure one operation on every side, in rounds, and keep the row."""
        cells = {side: Cell() for side in SIDES}
        for side in SIDES:
            if side not in fns:
                cells[side].error = "-"
            elif fns[side] is None:
                cells[side].error = self.setup_errors.get(side, "n/a")
        per_round = max(1, math.ceil(n / self.rounds))
        for r in range(self.rounds):
            for side in SIDES:
                fn, cell = fns.get(side), cells[side]
                if fn is None or cell.error is not None:
                    continue
                try:
                    res = fn(per_round, warmup if r == 0 else 0)
                except Exception as exc:
                    cell.error = short_error(exc)
                    if not isinstance(exc, ops.RouteMissing):
                        traceback.print_exc()
                    continue
                cell.samples += res.samples
                cell.info.update(res.info)
        row = Row(group=group, name=name, cells=cells, goal=goal, note=note)
        self.rows.append(row)
        log(f"{name}: " + " | ".join(f"{SIDE_NAMES[s]} {fmt_cell(cells[s])}" for s in SIDES))
        return row

    # the operations

    def run(self, selected: list[str]) -> None:
        for op in ALL_OPS:
            if op in selected:
                log(f"== {op}")
                getattr(self, f"op_{op}")()
                if self.bd is not None and op == "start":
                    self.bd.forget_tab()

    def op_start(self) -> None:
        self.row("start", "cold start → ready (browser only)", {
            "raw": self.raw_fn(ops.raw_cold_start),
            "pw": self.pw_fn(ops.pw_cold_start),
            "bd": self.bd_fn(ops.bd_cold_start),
        }, self.reps(6, 3), 1, Goal(against="pw", limit=1.0),
            note="raw: spawn → DevTools line → websocket → Browser.getVersion; Playwright: "
                 "chromium.launch(); browserd: POST /start after POST /stop (service up)")
        self.row("start", "cold start → first tab usable", {
            "raw": self.raw_fn(ops.raw_cold_first_tab),
            "pw": self.pw_fn(ops.pw_cold_first_tab),
            "bd": self.bd_fn(ops.bd_cold_first_tab),
        }, self.reps(6, 3), 1,
            note="the cold start plus what it takes to evaluate `1+1` in a tab: raw: launch + "
                 "createTarget/attach/enable + Runtime.evaluate; Playwright: launch() + "
                 "new_page() + evaluate (launch() uses --no-startup-window, so its first page "
                 "pays for the first renderer); browserd: POST /start + POST /eval (the "
                 "startup tab is already attached)")
        home = self.tmp / "svc-start"
        self.row("start", "process start → ready", {
            "pw": lambda n, w: ops.pw_process_start(n, w),
            "bd": lambda n, w: ops.bd_process_start(home, n, w),
        }, self.reps(4, 2), 1,
            note="Playwright: a fresh Python importing Playwright until launch() returns; "
                 "browserd: spawn `browserd serve` until /healthz says browser open")

    def op_tab(self) -> None:
        self.row("tab", "new tab", {
            "raw": self.raw_fn(ops.raw_new_tab),
            "pw": self.pw_fn(ops.pw_new_tab),
            "bd": self.bd_fn(ops.bd_new_tab),
        }, self.reps(15, 5), 2, Goal(against="pw", limit=0.5),
            note="raw: createTarget+attachToTarget; Playwright: context.new_page(); "
                 "browserd: POST /tabs/open about:blank")

    def op_nav(self) -> None:
        for size, n in (("small", self.reps(15, 5)), ("1k", self.reps(12, 4)),
                        ("10k", self.reps(6, 2))):
            url = self.pages.url(size)
            self.row("nav", f"navigate {size} ({SIZES[size]} elements)", {
                "raw": self.raw_fn(ops.raw_navigate, url),
                "pw": self.pw_fn(ops.pw_navigate, url),
                "bd": self.bd_fn(ops.bd_navigate, url),
            }, n, 1)

    def op_eval(self) -> None:
        self.row("eval", "eval `1+1`", {
            "raw": self.raw_fn(ops.raw_eval),
            "pw": self.pw_fn(ops.pw_eval),
            "bd": self.bd_fn(ops.bd_eval),
        }, self.reps(200, 60), 20, Goal(against="pw", limit=2.0),
            note="browserd: HTTP round trip POST /eval; Playwright: in-process page.evaluate")

    def op_shot(self) -> None:
        url = self.pages.url("1k")
        for full, n, goal in ((False, self.reps(15, 5), Goal(against="raw", limit=1.1)),
                              (True, self.reps(6, 3), Goal(against="raw", limit=1.0))):
            self.row("shot", f"screenshot {'full page' if full else 'viewport'} (1k page)", {
                "raw": self.raw_fn(ops.raw_screenshot, url, full),
                "pw": self.pw_fn(ops.pw_screenshot, url, full),
                "bd": self.bd_fn(ops.bd_screenshot, url, full),
            }, n, 1, goal, note="raw: captureScreenshot (PNG, optimizeForSpeed) + decode + "
                                "file write")

    def op_snap(self) -> None:
        for size, n in (("small", self.reps(15, 5)), ("1k", self.reps(9, 3)),
                        ("10k", self.reps(5, 2))):
            url = self.pages.url(size)
            goal = Goal(against="pw", limit=0.5) if size != "small" else None
            full = self.row("snap", f"aria snapshot {size}", {
                "raw": self.raw_fn(ops.raw_aria, url),
                "pw": self.pw_fn(ops.pw_aria, url),
                "bd": self.bd_fn(ops.bd_aria, url, False),
            }, n, 1, goal, note="raw: Accessibility.getFullAXTree; Playwright: "
                                "locator('body').aria_snapshot(); browserd: POST /snapshot aria")
            inter = self.row("snap", f"aria snapshot {size}, interactive", {
                "bd": self.bd_fn(ops.bd_aria, url, True),
            }, n, 1, goal)
            inter.cells["raw"], inter.cells["pw"] = full.cells["raw"], full.cells["pw"]

    def op_dom(self) -> None:
        for size, n in (("1k", self.reps(12, 4)), ("10k", self.reps(6, 2))):
            url = self.pages.url(size)
            self.row("dom", f"DOM text dump {size}", {
                "raw": self.raw_fn(ops.raw_dom_text, url),
                "pw": self.pw_fn(ops.pw_dom_text, url),
                "bd": self.bd_fn(ops.bd_dom_text, url),
            }, n, 1, note="raw: Runtime.evaluate innerText; Playwright: inner_text('body'); "
                          "browserd: POST /dom format text")

    def op_conc(self) -> None:
        url = self.pages.url("1k")
        seconds = 0.8 if self.quick else 2.0
        k_max = max(CONC_LEVELS)
        tabs: dict[str, Any] = {}
        try:
            if self.raw is not None:
                tabs["raw"] = self.trio.run(ops.raw_conc_setup, self.raw, url, k_max)
            if self.pw is not None:
                tabs["pw"] = self.aio.run(ops.pw_conc_setup(self.pw, url, k_max))
            if self.bd is not None:
                tabs["bd"] = ops.bd_conc_setup(self.bd, url, k_max)
            for workload in ("eval", "snapshot"):
                table: dict[str, dict[int, ops.ConcResult | str]] = {s: {} for s in SIDES}
                for k in CONC_LEVELS:
                    for side in SIDES:
                        if side not in tabs:
                            table[side][k] = self.setup_errors.get(side, "n/a")
                            continue
                        if any(isinstance(v, str) for v in table[side].values()):
                            table[side][k] = next(v for v in table[side].values()
                                                  if isinstance(v, str))
                            continue
                        try:
                            table[side][k] = self._conc(side, tabs[side][:k], seconds, workload)
                        except Exception as exc:
                            table[side][k] = short_error(exc)
                            if not isinstance(exc, ops.RouteMissing):
                                traceback.print_exc()
                    log(f"concurrency {workload} k={k}: " + " | ".join(
                        f"{SIDE_NAMES[s]} " + (f"{v.rps:.0f} req/s" if isinstance(
                            v := table[s][k], ops.ConcResult) else str(v)) for s in SIDES))
                self.conc[workload] = table
        finally:
            if "raw" in tabs and self.raw is not None:
                self.trio.run(ops.raw_conc_teardown, self.raw, tabs["raw"])
            if "pw" in tabs and self.pw is not None:
                self.aio.run(ops.pw_conc_teardown(self.pw, tabs["pw"]))
            if "bd" in tabs and self.bd is not None:
                ops.bd_close_tabs(self.bd, tabs["bd"])

    def _conc(self, side: str, tabs: list[Any], seconds: float, workload: str) -> ops.ConcResult:
        if side == "raw":
            assert self.raw is not None
            return self.trio.run(ops.raw_conc, self.raw, tabs, seconds, workload)
        if side == "pw":
            assert self.pw is not None
            return self.aio.run(ops.pw_conc(self.pw, tabs, seconds, workload))
        assert self.bd is not None
        return self.trio.run(ops.bd_conc, self.bd.service, tabs, seconds, workload)

    def op_mem(self) -> None:
        count = self.reps(50, 20)
        url = self.pages.url("small")
        self.memory["tabs"] = count
        if self.bd is not None:
            try:
                self.memory["bd"] = ops.bd_memory(self.bd, url, count)
            except Exception as exc:
                self.memory["bd_error"] = short_error(exc)
        if self.pw is not None:
            try:
                self.memory["pw"] = self.aio.run(ops.pw_memory(self.pw, url, count))
            except Exception as exc:
                self.memory["pw_error"] = short_error(exc)
        log(f"memory: {self.memory}")
