"""``python -m bench [--quick] [--only start,tab,...] [--out docs/benchmarks.md]``

Runs raw CDP, Playwright and browserd side by side on the same Debian
Chromium and writes a Markdown report. Every ratio comes from the same run:
each operation is measured in rounds (raw, Playwright, browserd, then again),
so background noise lands on all three sides alike; figures are medians
after warm-up.

Operations (``--only`` keys): start, tab, nav, eval, shot, snap, dom, conc, mem.

``--profile OP[,OP]`` instead hammers one browserd operation while py-spy
samples the service process and prints its hot spots (needs ``py-spy``).
"""

from __future__ import annotations

import argparse
import collections
import datetime
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import attrs

from . import ops
from .common import AsyncioWorker, Service, Stats, TrioWorker, remove_dir, temp_dir
from .pages import SIZES, PageServer

ALL_OPS = ("start", "tab", "nav", "eval", "shot", "snap", "dom", "conc", "mem")
SIDES = ("raw", "pw", "bd")
SIDE_NAMES = {"raw": "raw CDP", "pw": "Playwright", "bd": "browserd"}
CONC_LEVELS = (1, 2, 4, 8)
SideFn = Callable[[int, int], ops.Result]


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# -- results -----------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Goal:
    """browserd's median must be at most ``limit`` x the ``against`` side's median."""

    against: str
    limit: float

    @property
    def text(self) -> str:
        return f"≤ {self.limit:g}x {SIDE_NAMES[self.against]}"

    def judge(self, ratio: float | None) -> tuple[str, bool | None]:
        if ratio is None or math.isnan(ratio):
            return f"{self.text}: not measured", None
        if ratio <= self.limit:
            return f"{self.text}: met", True
        return f"{self.text}: **missed by {100 * (ratio / self.limit - 1):.0f}%**", False


@attrs.define
class Cell:
    samples: list[float] = attrs.field(factory=list)
    info: dict[str, Any] = attrs.field(factory=dict)
    error: str | None = None

    @property
    def stats(self) -> Stats | None:
        return Stats.of(self.samples) if self.samples and self.error is None else None


@attrs.define
class Row:
    group: str
    name: str
    cells: dict[str, Cell]
    goal: Goal | None = None
    note: str = ""

    def ratio(self, other: str) -> float | None:
        mine, theirs = self.cells["bd"].stats, self.cells[other].stats
        if mine is None or theirs is None or theirs.median <= 0:
            return None
        return mine.median / theirs.median


def fmt_ms(x: float) -> str:
    if x < 10:
        return f"{x:.2f}"
    if x < 100:
        return f"{x:.1f}"
    return f"{x:.0f}"


def fmt_cell(cell: Cell) -> str:
    if cell.error:
        return cell.error
    st = cell.stats
    if st is None:
        return "n/a"
    return f"{fmt_ms(st.median)} ({fmt_ms(st.p10)}-{fmt_ms(st.p90)})"


def fmt_ratio(r: float | None) -> str:
    return "-" if r is None else f"{r:.2f}x"


def short_error(exc: BaseException) -> str:
    if isinstance(exc, ops.RouteMissing):
        return "n/a (route missing)"
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ").replace("|", "/")
    return f"error: {text[:160]}"


# -- the run -----------------------------------------------------------------------------------


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


# -- the report ----------------------------------------------------------------------------------


def _mb(kb: int | None) -> str:
    return "-" if not kb else f"{kb / 1024:.1f} MB"


def render(bench: Bench, meta: dict[str, str]) -> str:
    out: list[str] = ["# browserd benchmarks", ""]
    out.append("Generated by `python -m bench` (bench/). Raw CDP (trio-websocket), Playwright for "
               "Python (async API) and browserd (HTTP API through one keep-alive httpx client) "
               "drive the same Debian Chromium, headless, 1280x720. Times are medians in ms "
               "(p10-p90 in brackets) after warm-up; each operation runs in "
               f"{bench.rounds} interleaved round(s) of raw → Playwright → browserd so "
               "background noise hits all sides alike. Ratios are browserd ÷ the other side, "
               "from the same run.")
    out.append("")
    out.append("## Run conditions")
    out.append("")
    for key, value in meta.items():
        out.append(f"- {key}: {value}")
    out.append("")
    missed: list[str] = []

    if bench.rows:
        out += ["## Latency", "",
                "| operation | raw CDP | Playwright | browserd | ÷ raw | ÷ Playwright | goal |",
                "|---|---|---|---|---|---|---|"]
        for row in bench.rows:
            goal_text = ""
            if row.goal is not None:
                goal_text, ok = row.goal.judge(row.ratio(row.goal.against))
                if ok is False:
                    missed.append(f"{row.name}: {goal_text} "
                                  f"({fmt_ratio(row.ratio(row.goal.against))})")
            out.append(f"| {row.name} | {fmt_cell(row.cells['raw'])} | "
                       f"{fmt_cell(row.cells['pw'])} | {fmt_cell(row.cells['bd'])} | "
                       f"{fmt_ratio(row.ratio('raw'))} | {fmt_ratio(row.ratio('pw'))} | "
                       f"{goal_text} |")
        out.append("")
        notes = [f"- *{row.name}*: {row.note}" for row in bench.rows if row.note]
        if notes:
            out += ["What each side does:", "", *notes, ""]
        shots = [r for r in bench.rows if r.group == "shot"]
        if shots:
            out.append("Screenshot sizes (bytes): " + "; ".join(
                f"{r.name}: " + ", ".join(f"{SIDE_NAMES[s]} {r.cells[s].info.get('bytes', '-')}"
                                          for s in SIDES) for r in shots) + ".")
            out.append("")

    snaps = [r for r in bench.rows if r.group == "snap" and not r.name.endswith("interactive")]
    if snaps:
        out += ["## Snapshot output size (characters)", "",
                "| page | raw AX tree JSON | Playwright aria_snapshot() | browserd aria text | "
                "browserd interactive text | interactive ÷ Playwright | goal |",
                "|---|---|---|---|---|---|---|"]
        by_name = {r.name: r for r in bench.rows}
        for row in snaps:
            size = row.name.rsplit(" ", 1)[1]
            inter = by_name.get(row.name + ", interactive")

            def chars(cell: Cell | None) -> int | None:
                if cell is None or cell.error:
                    return None
                value = cell.info.get("chars")
                return int(value) if value is not None else None

            raw_c, pw_c, bd_c = (chars(row.cells[s]) for s in SIDES)
            in_c = chars(inter.cells["bd"]) if inter else None
            ratio = in_c / pw_c if in_c is not None and pw_c else None
            goal_text = ""
            if size != "small":
                goal = Goal(against="pw", limit=0.5)
                goal_text, ok = goal.judge(ratio)
                if ok is False:
                    missed.append(f"interactive text size {size}: {goal_text} "
                                  f"({fmt_ratio(ratio)})")

            def show(v: int | None, cell: Cell | None) -> str:
                if v is not None:
                    return f"{v:,}"
                return cell.error if cell is not None and cell.error else "-"

            out.append(f"| {size} | {show(raw_c, row.cells['raw'])} | "
                       f"{show(pw_c, row.cells['pw'])} | {show(bd_c, row.cells['bd'])} | "
                       f"{show(in_c, inter.cells['bd'] if inter else None)} | "
                       f"{fmt_ratio(ratio)} | {goal_text} |")
        out.append("")

    if bench.conc:
        out += ["## Concurrency (1k-element page, one tab per worker)", "",
                "Each of k workers loops requests on its own tab for a fixed time. CPU is "
                "utime+stime from /proc before/after: browserd's service process, all Chromium "
                "processes of its profile, and the client (this bench process; for Playwright "
                "also its node driver). Service share = service ÷ (service + Chromium).", ""]
        for workload, table in bench.conc.items():
            what = ("eval `document.querySelectorAll('a').length`" if workload == "eval" else
                    "snapshot (raw: getFullAXTree; Playwright: aria_snapshot(); browserd: "
                    "POST /snapshot aria interactive)")
            out += [f"### {workload}: {what}", "",
                    "| busy tabs | raw req/s | Playwright req/s | browserd req/s | ÷ raw | "
                    "÷ Playwright | browserd service CPU ms/req | its Chromium CPU ms/req | "
                    "service share | raw client CPU ms/req | Playwright client CPU ms/req | "
                    "goal |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
            for k in CONC_LEVELS:
                vals = {s: table[s].get(k, "-") for s in SIDES}

                def rps(v: Any) -> str:
                    if not isinstance(v, ops.ConcResult):
                        return str(v)
                    return f"{v.rps:.1f}" if v.rps < 10 else f"{v.rps:.0f}"

                def ratio_to(v: Any, bd: Any) -> str:
                    if isinstance(v, ops.ConcResult) and isinstance(bd, ops.ConcResult) and v.rps:
                        return f"{bd.rps / v.rps:.2f}x"
                    return "-"

                bd = vals["bd"]
                svc_ms = chr_ms = share = "-"
                goal_text = ""
                if isinstance(bd, ops.ConcResult):
                    s_ms = bd.cpu_ms_per_request("service")
                    c_ms = bd.cpu_ms_per_request("chromium")
                    svc_ms, chr_ms = f"{s_ms:.2f}", f"{c_ms:.2f}"
                    total = bd.cpu["service"] + bd.cpu["chromium"]
                    share = f"{100 * bd.cpu['service'] / total:.0f}%" if total else "-"
                    if s_ms < c_ms:
                        goal_text = "service < Chromium: met"
                    else:
                        goal_text = (f"service < Chromium: **missed** (service "
                                     f"{s_ms / c_ms:.2f}x Chromium)" if c_ms else "-")
                        missed.append(f"concurrency {workload} k={k}: service CPU/request "
                                      f"{s_ms:.2f} ms ≥ Chromium's {c_ms:.2f} ms")

                def client(v: Any) -> str:
                    if isinstance(v, ops.ConcResult):
                        return f"{v.cpu_ms_per_request('client'):.2f}"
                    return "-"

                out.append(f"| {k} | {rps(vals['raw'])} | {rps(vals['pw'])} | {rps(bd)} | "
                           f"{ratio_to(vals['raw'], bd)} | {ratio_to(vals['pw'], bd)} | "
                           f"{svc_ms} | {chr_ms} | {share} | {client(vals['raw'])} | "
                           f"{client(vals['pw'])} | {goal_text} |")
            out.append("")

    mem = bench.memory
    if "idle" in mem:
        tabs = mem.get("tabs")
        out += ["## Memory", "",
                "| | browserd service RSS | service PSS | its Chromium PSS (all processes) | "
                "Playwright driver (node) RSS | driver PSS | goal |",
                "|---|---|---|---|---|---|---|"]
        idle = mem["idle"]
        out.append(f"| idle (service just started, 1 tab) | {_mb(idle['rss_kb'])} | "
                   f"{_mb(idle['pss_kb'])} | {_mb(idle['chromium_pss_kb'])} | "
                   f"{_mb(mem.get('pw', {}).get('idle_rss_kb'))} | "
                   f"{_mb(mem.get('pw', {}).get('idle_pss_kb'))} | |")
        if "bd" in mem or "pw" in mem:
            bd = mem.get("bd", {})
            pw = mem.get("pw", {})
            rss = bd.get("rss_kb")
            goal_text = ""
            if rss:
                if rss <= 80 * 1024:
                    goal_text = "service RSS ≤ 80 MB: met"
                else:
                    goal_text = (f"service RSS ≤ 80 MB: **missed by "
                                 f"{100 * (rss / (80 * 1024) - 1):.0f}%**")
                    missed.append(f"service RSS with {tabs} tabs: {_mb(rss)} > 80 MB")
            bd_rss = _mb(rss) if rss else mem.get("bd_error", "-")
            out.append(f"| {tabs} tabs open (small page) | {bd_rss} | "
                       f"{_mb(bd.get('pss_kb'))} | {_mb(bd.get('chromium_pss_kb'))} | "
                       f"{_mb(pw.get('tabs_rss_kb'))} | {_mb(pw.get('tabs_pss_kb'))} | "
                       f"{goal_text} |")
            if bd.get("after_close"):
                after = bd["after_close"]
                out.append(f"| after closing them | {_mb(after['rss_kb'])} | "
                           f"{_mb(after['pss_kb'])} | {_mb(after['chromium_pss_kb'])} | | | |")
        out.append("")
        if "open_s" in mem.get("bd", {}):
            out.append(f"Opening {tabs} tabs through browserd took "
                       f"{mem['bd']['open_s']:.1f} s; Playwright's Chromium with {tabs} pages: "
                       f"{_mb(mem.get('pw', {}).get('chromium_pss_kb'))} PSS.")
            out.append("")

    out += ["## Goals", ""]
    if missed:
        out.append("Missed in this run:")
        out.append("")
        out += [f"- {m}" for m in missed]
    else:
        out.append("All measured goals were met in this run.")
    out.append("")
    if bench.args.note:
        out += ["## Notes", "", bench.args.note, ""]
    return "\n".join(out)


# -- profiling -----------------------------------------------------------------------------------


def _collapse(path: Path) -> tuple[collections.Counter[str], collections.Counter[str], int]:
    """Self and inclusive sample counts per function from py-spy's raw (collapsed) output."""
    own: collections.Counter[str] = collections.Counter()
    incl: collections.Counter[str] = collections.Counter()
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count_s = line.rpartition(" ")
        if not stack or not count_s.isdigit():
            continue
        count = int(count_s)
        total += count
        frames = [re.sub(r":\d+\)$", ")", f) for f in stack.split(";")]
        own[frames[-1]] += count
        for frame in set(frames):
            incl[frame] += count
    return own, incl, total


def profile_main(args: argparse.Namespace) -> int:
    """Hammer browserd operations while py-spy records the service; print hot spots."""
    targets = [t.strip() for t in args.profile.split(",") if t.strip()]
    tmp = temp_dir("browserd-bench-prof-")
    svc = Service(tmp / "svc")
    try:
        with PageServer() as pages:
            svc.start()
            client = svc.client()
            ctx = ops.BdCtx(service=svc, client=client)
            trio_worker = TrioWorker()
            for target in targets:
                work = _profile_work(target, ctx, pages, trio_worker)
                raw_out = Path(f"/tmp/bench-profile-{target}.txt")
                svg_out = Path(f"/tmp/bench-profile-{target}.svg")
                stop = threading.Event()
                done = [0]

                def loop(work: Callable[[], object] = work, stop: threading.Event = stop,
                         done: list[int] = done) -> None:
                    while not stop.is_set():
                        work()
                        done[0] += 1

                work()  # warm-up (and page load)
                thread = threading.Thread(target=loop, daemon=True)
                thread.start()
                for fmt, dest in (("raw", raw_out), ("flamegraph", svg_out)):
                    subprocess.run([_py_spy(), "record", "--pid", str(svc.pid), "--duration",
                                    str(args.duration), "--nonblocking", "--format", fmt,
                                    "-o", str(dest)], check=True, capture_output=True)
                stop.set()
                thread.join()
                own, incl, total = _collapse(raw_out)
                print(f"\n## {target}: {done[0]} requests, {total} samples "
                      f"(raw: {raw_out}, flamegraph: {svg_out})")
                print("self share (top 12):")
                for frame, count in own.most_common(12):
                    print(f"  {100 * count / total:5.1f}%  {frame}")
                print("inclusive share, browserd frames (top 15):")
                mine = [(f, c) for f, c in incl.items() if "browserd" in f]
                for frame, count in sorted(mine, key=lambda fc: -fc[1])[:15]:
                    print(f"  {100 * count / total:5.1f}%  {frame}")
            trio_worker.close()
            client.close()
    finally:
        svc.stop()
        remove_dir(tmp)
    return 0


def _py_spy() -> str:
    beside = Path(sys.executable).parent / "py-spy"
    found = str(beside) if beside.exists() else shutil.which("py-spy")
    if found is None:
        raise SystemExit("py-spy not found: pip install py-spy")
    return found


def _profile_work(target: str, ctx: ops.BdCtx, pages: PageServer,
                  trio_worker: TrioWorker) -> Callable[[], object]:
    c = ctx.client
    if target == "eval":
        return lambda: ops.bd_eval(ctx, 1, 0)
    if target in ("snap1k", "snap10k", "inter1k", "inter10k"):
        size = target[-3:] if target.endswith("10k") else "1k"
        ctx.goto(pages.url(size))
        interactive = target.startswith("inter")
        return lambda: ops.call(c, "POST", "/snapshot", json={
            "targetId": ctx.tab, "format": "aria", "interactive": interactive,
            "maxChars": ops.BIG})
    if target in ("shot", "full"):
        ctx.goto(pages.url("1k"))
        return lambda: ops.call(c, "POST", "/screenshot", json={
            "targetId": ctx.tab, "fullPage": target == "full"})
    if target == "start":
        return lambda: (ops.call(c, "POST", "/stop"), ops.call(c, "POST", "/start", json={}))
    if target == "tab":
        return lambda: ops.bd_new_tab(ctx, 1, 0)
    if target.startswith("nav"):
        size = target[3:] or "1k"
        return lambda: ctx.goto(pages.url(size))
    if target == "dom10k":
        ctx.goto(pages.url("10k"))
        return lambda: ops.call(c, "POST", "/dom", json={
            "targetId": ctx.tab, "format": "text", "maxChars": ops.BIG})
    if target.startswith("conc"):
        tabs = ops.bd_conc_setup(ctx, pages.url("1k"), 8)
        workload = "snapshot" if target == "concsnap" else "eval"
        return lambda: trio_worker.run(ops.bd_conc, ctx.service, tabs, 1.0, workload)
    raise SystemExit(f"unknown profile target {target!r} (eval, snap1k, snap10k, inter1k, "
                     "inter10k, shot, full, start, tab, nav1k, nav10k, dom10k, conc, concsnap)")


# -- entry ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, one round")
    parser.add_argument("--only", default="", help="comma list of: " + ",".join(ALL_OPS))
    parser.add_argument("--out", default="docs/benchmarks.md", help="the report to write")
    parser.add_argument("--note", default="", help="a paragraph added to the report")
    parser.add_argument("--profile", default="", help="profile browserd on these operations")
    parser.add_argument("--duration", type=int, default=10, help="seconds per profile")
    args = parser.parse_args(argv)
    if args.profile:
        return profile_main(args)
    selected = [o.strip() for o in args.only.split(",") if o.strip()] or list(ALL_OPS)
    unknown = set(selected) - set(ALL_OPS)
    if unknown:
        parser.error(f"unknown operations {sorted(unknown)}; choose from {','.join(ALL_OPS)}")
    started, load0 = time.time(), os.getloadavg()
    tmp = temp_dir("browserd-bench-")
    bench = Bench(args, tmp)
    try:
        bench.setup()
        bench.run(selected)
    finally:
        bench.teardown()
        remove_dir(tmp)
    load1 = os.getloadavg()
    meta = {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "CPUs": str(os.cpu_count()),
        "CPU model": _cpu_model(),
        "Chromium": bench.conditions.get("chromium", "?"),
        "Playwright": version("playwright"),
        "Python": platform.python_version(),
        "OS": platform.platform(),
        "mode": ("quick" if args.quick else "full") + f", operations: {','.join(selected)}",
        "load average (1 min) at start / end": f"{load0[0]:.2f} / {load1[0]:.2f}",
        "wall time": f"{time.time() - started:.0f} s",
    }
    text = render(bench, meta)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    log(f"wrote {out} ({meta['wall time']})")
    print(text)
    return 0


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


if __name__ == "__main__":
    sys.exit(main())
