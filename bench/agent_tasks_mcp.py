"""``python -m bench.agent_tasks_mcp [--rounds N] [--out docs/benchmarks.md]``: agent tasks.

Four tasks on generated app pages (:mod:`bench.agent_app_pages`), done by
three sides (:mod:`bench.agent_sides`): browserd (``browserd mcp`` on stdio,
against a private service) and Playwright MCP (``@playwright/mcp`` on stdio),
both driven by the official ``mcp`` Python client, and agent-browser (its
CLI, one process per call). Measured per task: **calls**, **characters the
agent reads** (the text of every tool result or CLI output, errors included,
as the model would get it) and **wall time** (median of the rounds; one
warm-up round first; rounds interleaved, the side that goes first rotating).

- ``table`` — on a reference page with a 300-row table and a 60-term
  glossary: read the definition of the term "Epoch Frame 13", then click the
  link in the Changelog cell of row ``pkg-0123`` and read the page it opens;
- ``editor`` — in a CodeMirror 5 editor pre-filled with a query, replace the
  query, press Run, read the result;
- ``spa`` — on an app that draws its UI only after a burst of fetches: right
  after navigating, click "Save settings" and read the confirmation;
- ``todo`` — on a TodoMVC-like list: add three items, mark the second done,
  read the remaining count.

Each side does what an agent would do with its tools (the ``bd_*``, ``pw_*``
and ``ab_*`` paths of :mod:`bench.agent_paths`); every answer is checked
against the same expected strings.

Playwright MCP and agent-browser are installed for the bench only, in
``bench/js``: ``PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --ignore-scripts
--prefix bench/js``. Both run Debian's Chromium, never a downloaded one.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import trio

from .agent_app_pages import AppPages
from .agent_paths import TASKS
from .agent_sides import (
    AGENT_BROWSER,
    PLAYWRIGHT_MCP,
    Reading,
    Side,
    ToolFailed,
    agent_browser_cli,
    browserd_mcp,
    package_version,
    playwright_mcp,
)
from .common import Service

__all__ = ["SIDES", "Row", "main", "report", "run", "write_section"]

SECTION = "## Agent tasks over MCP"
#: The sides, in the order the tables list them.
SIDES = {"bd": "browserd", "pw": "Playwright MCP", "ab": "agent-browser"}


@attrs.frozen(kw_only=True)
class Row:
    """One task: each side's calls in the last round, and its median time."""

    task: str
    reads: dict[str, Reading]
    ms: dict[str, float]


async def _timed(side: Side, path: Callable[[], Awaitable[str]], expect: tuple[str, ...],
                 who: str) -> tuple[Reading, float]:
    side.reading = Reading()
    t0 = time.perf_counter()
    answer = await path()
    ms = (time.perf_counter() - t0) * 1000
    missing = [e for e in expect if e not in answer]
    if missing:
        raise ToolFailed(f"{who}: the answer lacks {missing}:\n{answer[:1500]}")
    return side.reading, ms


async def _run(rounds: int, only: list[str], tmp: Path,
               trace: bool) -> tuple[list[Row], dict[str, Any]]:
    env: dict[str, Any] = {"load_start": os.getloadavg()[0]}
    rows: list[Row] = []
    service = await trio.to_thread.run_sync(Service(tmp / "home").start)
    try:
        with AppPages() as pages:
            async with browserd_mcp(service, tmp / "browserd-mcp.log") as bd, \
                    playwright_mcp(tmp, tmp / "playwright-mcp.log") as pw, \
                    agent_browser_cli(tmp) as ab:
                env["playwright_mcp"] = pw.client.server_info
                sides: dict[str, Side] = {"bd": bd, "pw": pw, "ab": ab}
                for name in only:
                    task = TASKS[name]
                    paths: dict[str, Callable[[], Awaitable[str]]] = {
                        "bd": functools.partial(task.bd, bd, pages),
                        "pw": functools.partial(task.pw, pw, pages),
                        "ab": functools.partial(task.ab, ab, pages)}
                    samples: dict[str, list[float]] = {who: [] for who in SIDES}
                    read: dict[str, Reading] = {}
                    for i in range(rounds + 1):  # round 0 warms up, untimed
                        order = list(SIDES)[i % len(SIDES):] + list(SIDES)[:i % len(SIDES)]
                        for who in order:
                            read[who], ms = await _timed(sides[who], paths[who], task.expect,
                                                         SIDES[who])
                            if i:
                                samples[who].append(ms)
                    row = Row(task=name, reads=read,
                              ms={who: statistics.median(s) for who, s in samples.items()})
                    rows.append(row)
                    print(f"[agent-tasks] {name}: " + "; ".join(
                        f"{SIDES[who]} {len(read[who].calls)} calls {read[who].chars:,} chars "
                        f"{row.ms[who]:.0f} ms" for who in SIDES), file=sys.stderr, flush=True)
                    if trace:
                        for who in SIDES:
                            print(f"  {who}: {read[who].summary(ms=True)}", file=sys.stderr)
    finally:
        await trio.to_thread.run_sync(service.stop)
    env["load_end"] = os.getloadavg()[0]
    return rows, env


def run(rounds: int, only: list[str], *, trace: bool = False
        ) -> tuple[list[Row], dict[str, Any]]:
    """The three sides, every task in ``only``; ``trace`` prints each call of the last round."""
    with tempfile.TemporaryDirectory(prefix="bd-mcp-agent-") as tmp:
        return trio.run(_run, rounds, only, Path(tmp), trace)


def _verdict(row: Row) -> str:
    calls = {who: len(row.reads[who].calls) for who in SIDES}
    chars = {who: row.reads[who].chars for who in SIDES}
    others = [who for who in SIDES if who != "bd"]
    missed = [what for what, bad in (
        ("calls", calls["bd"] >= min(calls[who] for who in others)),
        ("characters", chars["bd"] >= min(chars[who] for who in others)),
        ("time", row.ms["bd"] > 0.2 * row.ms["pw"])) if bad]
    versus = row.ms["bd"] / max(row.ms["ab"], 0.001)
    pace = f"{versus:.1f}x agent-browser's time" if versus >= 1 else \
        f"{versus:.2f}x agent-browser's time (faster)"
    return ("met" if not missed else "**missed**: " + ", ".join(missed)) + "; " + pace


def report(rows: list[Row], env: dict[str, Any], rounds: int) -> str:
    info = env.get("playwright_mcp")
    pw_version = f"Playwright MCP {package_version(PLAYWRIGHT_MCP.parent)}" + (
        f" ({info.name} {info.version})" if info else "")
    ab_version = f"agent-browser {package_version(AGENT_BROWSER)}"
    each = " / ".join(SIDES.values())
    lines = [
        SECTION, "",
        f"Generated by `python -m bench.agent_tasks_mcp --rounds {rounds}` on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: browserd through `browserd "
        f"mcp --caps core,page` (stdio) and {pw_version} (`@playwright/mcp`, stdio, headless, "
        "`--isolated`), both driven by the `mcp` Python client, and "
        f"{ab_version} (its CLI, one process per call: the npm package's native binary, "
        "headless, a session of its own, steps batched with `batch --bail`); all three on "
        "Debian's Chromium. Calls and characters: every tool result or CLI output the agent "
        "read (errors included), from the last round; times: median of "
        f"{rounds} rounds after one warm-up, rounds interleaved, the side going first "
        "rotating. Load average (1 min, 2 CPUs) at start / end: "
        f"{env['load_start']:.2f} / {env['load_end']:.2f}.", "",
        f"| task | calls ({each}) | characters ({each}) | ms ({each}) | browserd ÷ "
        "Playwright MCP time | browserd ÷ agent-browser time | goal |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        calls = " / ".join(str(len(row.reads[who].calls)) for who in SIDES)
        chars = " / ".join(f"{row.reads[who].chars:,}" for who in SIDES)
        ms = " / ".join(f"{row.ms[who]:.0f}" for who in SIDES)
        lines.append(f"| {row.task} | {calls} | {chars} | {ms} | "
                     f"{row.ms['bd'] / max(row.ms['pw'], 0.001):.2f} | "
                     f"{row.ms['bd'] / max(row.ms['ab'], 0.001):.2f} | {_verdict(row)} |")
    lines += ["", "Goal per task: browserd makes the fewest calls and reads the fewest "
              "characters of the three, and its wall time is ≤ 0.2x Playwright MCP's; the goal "
              "column also gives browserd's time against agent-browser's.", "",
              "The calls of the last round (tool or command, characters of its result):", ""]
    for row in rows:
        lines += [f"- {row.task}, {SIDES[who]}: {row.reads[who].summary()}" for who in SIDES]
    return "\n".join(lines) + "\n"


def write_section(out: Path, section: str) -> None:
    """Replace this bench's section of ``out``, or put it after the other agent tasks."""
    text = out.read_text(encoding="utf-8") if out.exists() else "# browserd benchmarks\n"
    start = text.find(SECTION + "\n")
    if start < 0:
        other = text.find("## Agent tasks (")
        start = text.find("\n## ", other + 1) + 1 if other >= 0 else 0
        end = start
        if start <= 0:
            start = end = len(text.rstrip("\n")) + 1
            text = text.rstrip("\n") + "\n\n"
    else:
        end = text.find("\n## ", start + 1) + 1 or len(text)
    out.write_text(text[:start] + section + "\n" + text[end:].lstrip("\n"), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.agent_tasks_mcp",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default=",".join(TASKS),
                        help=f"comma-separated tasks (default: {','.join(TASKS)})")
    parser.add_argument("--trace", action="store_true",
                        help="print every call of the last round (tool, characters, ms)")
    parser.add_argument("--out", type=Path, help="write the section into this Markdown file")
    args = parser.parse_args(argv)
    only = [t for t in args.only.split(",") if t]
    unknown = set(only) - set(TASKS)
    if unknown:
        parser.error(f"unknown tasks: {', '.join(sorted(unknown))}")
    rows, env = run(args.rounds, only, trace=args.trace)
    section = report(rows, env, args.rounds)
    print(section)
    if args.out:
        write_section(args.out, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
