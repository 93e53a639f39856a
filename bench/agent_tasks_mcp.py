"""``python -m bench.agent_tasks_mcp [--rounds N] [--out docs/benchmarks.md]``: MCP agent tasks.

Four tasks on generated app pages (:mod:`bench.agent_app_pages`), done over
MCP by browserd (``browserd mcp`` on stdio, against a private service) and by
Playwright MCP (``@playwright/mcp`` on stdio), both driven by the official
``mcp`` Python client. Measured per task: **calls**, **characters the agent
reads** (the text of every tool result, errors included, as the model would
get it) and **wall time** (median of the rounds; one warm-up round first;
rounds interleaved and the side that goes first alternates).

- ``table`` — on a reference page with a 300-row table and a 60-term
  glossary: read the definition of the term "Epoch Frame 13", then click the
  link in the Changelog cell of row ``pkg-0123`` and read the page it opens;
- ``editor`` — in a CodeMirror 5 editor pre-filled with a query, replace the
  query, press Run, read the result;
- ``spa`` — on an app that draws its UI only after a burst of fetches: right
  after navigating, click "Save settings" and read the confirmation;
- ``todo`` — on a TodoMVC-like list: add three items, mark the second done,
  read the remaining count.

Each side does what an agent would do with its tools (see the ``bd_*`` and
``pw_*`` functions): browserd its lean paths (``find``, act by locator,
``act`` batches, ``snapshot: "diff"`` on actions, ``snapshot {root, format:
"read"}``), Playwright MCP navigate → snapshot/find → act on refs. Where a
first try fails (a button not drawn yet), the agent reads the error and goes
on, and those calls count.

Playwright MCP is installed for the bench only, in ``bench/js``: ``npm ci
--prefix bench/js`` (with ``PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1``; it runs
Debian's Chromium, never a downloaded one).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import mcp_types as types
import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from .agent_app_pages import AppPages, definition_of, version_of
from .common import CHROMIUM, Service

__all__ = ["TASKS", "McpSide", "main", "report", "run"]

PLAYWRIGHT_MCP = Path(__file__).resolve().parent / "js" / "node_modules" / "@playwright" / \
    "mcp" / "cli.js"
INSTALL_HINT = ("Playwright MCP is missing: PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 "
                "npm ci --prefix bench/js")
TERM, TERM_INDEX = "Epoch Frame 13", 13
ROW_INDEX = 123
ROW = f"pkg-{ROW_INDEX:04d}"
NEW_QUERY = "SELECT count(*) FROM orders WHERE status = 'open';"
TODOS = ("Buy milk", "Walk the dog", "Pay rent")
SECTION = "## Agent tasks over MCP"


class ToolFailed(RuntimeError):
    """A tool call answered an error the task does not expect."""


@attrs.frozen
class Call:
    """One tool call: its name, the characters of its result, its time, whether it failed."""

    tool: str
    chars: int
    ms: float
    error: bool


@attrs.define
class Reading:
    """The calls one run of a task made."""

    calls: list[Call] = attrs.field(factory=list)

    @property
    def chars(self) -> int:
        return sum(call.chars for call in self.calls)

    def summary(self, *, ms: bool = False) -> str:
        return ", ".join(f"`{c.tool}`{' (error)' if c.error else ''} {c.chars:,}"
                         + (f" / {c.ms:.0f} ms" if ms else "") for c in self.calls)


@attrs.define
class McpSide:
    """One MCP session; :meth:`call` records every result into the current reading.

    A tool error raises :class:`ToolFailed` unless ``may_fail``; then the text
    comes back prefixed with ``ERROR``. Transport errors propagate.
    """

    client: Client
    reading: Reading = attrs.field(factory=Reading)
    defaults: dict[str, Any] = attrs.field(factory=dict)

    async def call(self, tool: str, args: dict[str, Any] | None = None, *,
                   may_fail: bool = False) -> str:
        t0 = time.perf_counter()
        result = await self.client.call_tool(tool, {**self.defaults, **(args or {})})
        text = "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))
        self.reading.calls.append(Call(tool=tool, chars=len(text), error=bool(result.is_error),
                                       ms=(time.perf_counter() - t0) * 1000))
        if result.is_error and not may_fail:
            raise ToolFailed(f"{tool} {args}: {text[:800]}")
        return ("ERROR " if result.is_error else "") + text


# -- parsing what the agent read -----------------------------------------------------------------

#: A ref and its role in browserd's snapshot text (and in the JSON of an ``act`` answer).
BD_REF = re.compile(r"\[(?P<ref>e\d+)\] (?P<role>\w+)")
#: A ref and its role in Playwright MCP's snapshot YAML.
PW_REF = re.compile(r"- (?P<role>\w+)(?: \"[^\"]*\")?[^\n]*?\[ref=(?P<ref>\w+)\]")


def _refs_before(text: str, needle: str, role: str, pattern: re.Pattern[str]) -> str:
    """The ref of the last ``role`` element written before ``needle`` in ``text``."""
    at = text.find(needle)
    if at < 0:
        raise ToolFailed(f"{needle!r} is not in what was read:\n{text[:1500]}")
    refs = [m["ref"] for m in pattern.finditer(text, 0, at) if m["role"] == role]
    if not refs:
        raise ToolFailed(f"no {role} before {needle!r}:\n{text[:1500]}")
    return refs[-1]


def _pw_parent_ref(text: str, needle: str) -> str:
    """Playwright snapshot YAML: the ref of the nearest line above ``needle``, less indented."""
    lines = text.splitlines()
    at = next((i for i, line in enumerate(lines) if needle in line), None)
    if at is None:
        raise ToolFailed(f"{needle!r} is not in what was read:\n{text[:1500]}")
    indent = len(lines[at]) - len(lines[at].lstrip())
    for line in reversed(lines[:at]):
        ref = re.search(r"\[ref=(\w+)\]", line)
        if ref and len(line) - len(line.lstrip()) < indent:
            return ref.group(1)
    raise ToolFailed(f"no parent of {needle!r}")


def _pw_ref(text: str, role: str, name: str | None = None) -> str:
    label = f' "{name}"' if name is not None else ""
    m = re.search(rf"- {role}{re.escape(label)}[^\n]*?\[ref=(\w+)\]", text)
    if not m:
        raise ToolFailed(f"no {role}{label} in:\n{text[:1500]}")
    return m.group(1)


# -- browserd's side -----------------------------------------------------------------------------


async def bd_table(bd: McpSide, pages: AppPages) -> str:
    await bd.call("navigate", {"url": pages.url("/reference.html")})
    # /find with around answers each match's row (cells between |, its link as a
    # ref) and a term's definitions, so neither needs the page read.
    row = await bd.call("find", {"role": "rowheader", "name": ROW, "exact": True,
                                 "around": True})
    term = await bd.call("find", {"role": "term", "name": TERM, "exact": True,
                                  "around": True})
    link = _refs_before(row, "notes", "link", BD_REF)
    definition = term.split(f"{TERM} | ", 1)[1]
    opened = await bd.call("click", {"ref": link, "snapshot": "full"})
    return definition + "\n" + opened


async def bd_editor(bd: McpSide, pages: AppPages) -> str:
    await bd.call("navigate", {"url": pages.url("/editor.html")})
    text = await bd.call("snapshot")
    editor = _refs_before(text, "SELECT name, email", "textbox", BD_REF)
    return await bd.call("act", {"snapshot": "diff", "actions": [
        {"kind": "click", "ref": editor},
        {"kind": "press", "key": "Control+a"},
        {"kind": "type", "text": NEW_QUERY},
        {"kind": "click", "role": "button", "name": "Run", "exact": True},
    ]})


async def bd_spa(bd: McpSide, pages: AppPages) -> str:
    await bd.call("navigate", {"url": pages.url("/spa.html")})
    button = {"role": "button", "name": "Save settings", "exact": True}
    answer = await bd.call("click", {**button, "snapshot": "full"}, may_fail=True)
    if answer.startswith("ERROR NO_MATCH"):
        # Not drawn yet. The error's hint: /find (a read, so it waits for the page to
        # settle: parsed, then DOM and responses quiet), then click its ref.
        found = await bd.call("find", button)
        ref = _refs_before(found, '"Save settings"', "button", BD_REF)
        answer = await bd.call("click", {"ref": ref, "snapshot": "full"})
    return answer


async def bd_todo(bd: McpSide, pages: AppPages) -> str:
    await bd.call("navigate", {"url": pages.url("/todo.html")})
    text = await bd.call("snapshot")
    field = _refs_before(text, "What needs to be done?", "textbox", BD_REF)
    added = await bd.call("act", {"snapshot": "diff", "actions": [
        {"kind": "type", "ref": field, "text": item, "submit": True} for item in TODOS]})
    box = _refs_before(added, TODOS[1], "checkbox", BD_REF)
    return await bd.call("click", {"ref": box, "snapshot": "diff"})


# -- Playwright MCP's side -----------------------------------------------------------------------


async def pw_table(pw: McpSide, pages: AppPages) -> str:
    await pw.call("browser_navigate", {"url": pages.url("/reference.html")})
    found = await pw.call("browser_find", {"text": ROW})
    row_text = found[found.find(f'rowheader "{ROW}"'):]
    row_text = row_text.split("- row ")[0]  # this row's lines only
    if "link " not in row_text:  # the match's row is shown cut: snapshot that row
        row = _pw_parent_ref(found, f'rowheader "{ROW}"')
        row_text = await pw.call("browser_snapshot", {"target": row})
    link = _pw_ref(row_text, "link")
    term = await pw.call("browser_find", {"text": TERM})
    definition = term[term.find(f": {TERM}"):]  # the term's line, then its definition's
    await pw.call("browser_click", {"target": link, "element": f"Changelog link of {ROW}"})
    opened = await pw.call("browser_snapshot")
    return definition + "\n" + opened


async def pw_editor(pw: McpSide, pages: AppPages) -> str:
    await pw.call("browser_navigate", {"url": pages.url("/editor.html")})
    text = await pw.call("browser_snapshot")
    line = _pw_parent_ref(text, "SELECT name, email")
    box = _pw_ref(text, "textbox")
    run_button = _pw_ref(text, "button", "Run")
    status = _pw_ref(text, "status")
    # The editor's own textarea is covered by its lines: click a line, select all, type.
    await pw.call("browser_click", {"target": line, "element": "first line of the query"})
    await pw.call("browser_press_key", {"key": "Control+a"})
    await pw.call("browser_type", {"target": box, "element": "query editor", "text": NEW_QUERY})
    await pw.call("browser_click", {"target": run_button, "element": "Run button"})
    return await pw.call("browser_snapshot", {"target": status})


async def pw_spa(pw: McpSide, pages: AppPages) -> str:
    await pw.call("browser_navigate", {"url": pages.url("/spa.html")})
    text = await pw.call("browser_snapshot")
    if '"Save settings"' not in text:
        await pw.call("browser_wait_for", {"text": "Save settings"})
        text = await pw.call("browser_snapshot")
    await pw.call("browser_click", {"target": _pw_ref(text, "button", "Save settings"),
                                    "element": "Save settings button"})
    # The status line is empty (no ref) until saved: read the form that holds it.
    return await pw.call("browser_snapshot", {"target": _pw_parent_ref(text, "- status")})


async def pw_todo(pw: McpSide, pages: AppPages) -> str:
    await pw.call("browser_navigate", {"url": pages.url("/todo.html")})
    text = await pw.call("browser_snapshot")
    field = _pw_ref(text, "textbox", "What needs to be done?")
    for item in TODOS:
        await pw.call("browser_type", {"target": field, "element": "new todo field",
                                       "text": item, "submit": True})
    text = await pw.call("browser_snapshot")
    box = _refs_before(text, TODOS[1], "checkbox", PW_REF)
    await pw.call("browser_click", {"target": box, "element": f"toggle of {TODOS[1]}"})
    return await pw.call("browser_find", {"text": "items left"})


Task = Callable[[McpSide, AppPages], Awaitable[str]]
#: task → (browserd side, Playwright MCP side, strings the answer must contain)
TASKS: dict[str, tuple[Task, Task, tuple[str, ...]]] = {
    "table": (bd_table, pw_table, (definition_of(TERM_INDEX).split(". ")[0],
                                   f"{ROW} {version_of(ROW_INDEX)} release notes")),
    "editor": (bd_editor, pw_editor, ("Result: count = 868 (orders)",)),
    "spa": (bd_spa, pw_spa, ("Settings saved for Ada.",)),
    "todo": (bd_todo, pw_todo, ("2 items left",)),
}


# -- the two servers ----------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def browserd_mcp(service: Service, log: Path) -> AsyncIterator[McpSide]:
    """``browserd mcp --caps core,page`` against ``service``, on a tab of its own."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "browserd", "mcp", "--caps", "core,page"],
        env={**os.environ, "BROWSERD_HOME": str(service.home),
             "BROWSERD_CONTROL_URL": service.base_url})
    with open(log, "a") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            side = McpSide(client)
            opened = await side.call("tabs_open", {"url": "about:blank"})
            tab = re.search(r"\b[0-9A-F]{32}\b", opened)
            if tab is None:
                raise ToolFailed(f"tabs_open: no target id in {opened!r}")
            side.defaults["targetId"] = tab.group(0)
            yield side


@contextlib.asynccontextmanager
async def playwright_mcp(workdir: Path, log: Path) -> AsyncIterator[McpSide]:
    """``@playwright/mcp`` on stdio: headless Debian Chromium, in-memory profile."""
    if not PLAYWRIGHT_MCP.is_file():
        raise SystemExit(INSTALL_HINT)
    args = [str(PLAYWRIGHT_MCP), "--headless", "--isolated", "--executable-path", CHROMIUM,
            "--viewport-size", "1280x720", "--output-dir", str(workdir / "out")]
    if os.geteuid() == 0:
        args.append("--no-sandbox")
    params = StdioServerParameters(command="node", args=args, cwd=str(workdir),
                                   env={**os.environ, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"})
    with open(log, "a") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            yield McpSide(client)


# -- running and reporting ----------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Row:
    task: str
    bd: Reading
    pw: Reading
    bd_ms: float
    pw_ms: float


async def _timed(side: McpSide, task: Task, pages: AppPages, expect: tuple[str, ...],
                 who: str) -> tuple[Reading, float]:
    side.reading = Reading()
    t0 = time.perf_counter()
    answer = await task(side, pages)
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
                    playwright_mcp(tmp, tmp / "playwright-mcp.log") as pw:
                env["playwright_mcp"] = pw.client.server_info
                for name in only:
                    bd_task, pw_task, expect = TASKS[name]
                    samples: dict[str, list[float]] = {"bd": [], "pw": []}
                    read: dict[str, Reading] = {}
                    for i in range(rounds + 1):  # round 0 warms up, untimed
                        order = [("bd", bd, bd_task), ("pw", pw, pw_task)]
                        for who, side, task in order if i % 2 else order[::-1]:
                            read[who], ms = await _timed(side, task, pages, expect, who)
                            if i:
                                samples[who].append(ms)
                    rows.append(Row(task=name, bd=read["bd"], pw=read["pw"],
                                    bd_ms=statistics.median(samples["bd"]),
                                    pw_ms=statistics.median(samples["pw"])))
                    print(f"[mcp-agent] {name}: browserd {len(read['bd'].calls)} calls "
                          f"{read['bd'].chars:,} chars {rows[-1].bd_ms:.0f} ms; Playwright MCP "
                          f"{len(read['pw'].calls)} calls {read['pw'].chars:,} chars "
                          f"{rows[-1].pw_ms:.0f} ms", file=sys.stderr, flush=True)
                    if trace:
                        for who in ("bd", "pw"):
                            print(f"  {who}: {read[who].summary(ms=True)}", file=sys.stderr)
    finally:
        await trio.to_thread.run_sync(service.stop)
    env["load_end"] = os.getloadavg()[0]
    return rows, env


def run(rounds: int, only: list[str], *, trace: bool = False
        ) -> tuple[list[Row], dict[str, Any]]:
    """Both servers, every task in ``only``; ``trace`` prints each call of the last round."""
    with tempfile.TemporaryDirectory(prefix="bd-mcp-agent-") as tmp:
        return trio.run(_run, rounds, only, Path(tmp), trace)


def _verdict(row: Row) -> str:
    missed = [what for what, bad in (("calls", len(row.bd.calls) >= len(row.pw.calls)),
                                     ("characters", row.bd.chars >= row.pw.chars),
                                     ("time", row.bd_ms > 0.2 * row.pw_ms)) if bad]
    return "met" if not missed else "**missed**: " + ", ".join(missed)


def report(rows: list[Row], env: dict[str, Any], rounds: int) -> str:
    info = env.get("playwright_mcp")
    package = json.loads((PLAYWRIGHT_MCP.parent / "package.json").read_text())["version"]
    version = f"Playwright MCP {package}" + (f" ({info.name} {info.version})" if info else "")
    lines = [
        SECTION, "",
        f"Generated by `python -m bench.agent_tasks_mcp --rounds {rounds}` on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: browserd through `browserd "
        f"mcp --caps core,page` (stdio) and {version} (`@playwright/mcp`, stdio, headless, "
        "`--isolated`, Debian's Chromium), both driven by the `mcp` Python client. Calls and "
        "characters: every tool result the agent read (its text content, errors included), "
        f"from the last round; times: median of {rounds} rounds after one warm-up, rounds "
        "interleaved, the side going first alternating. Load average (1 min, 2 CPUs) at "
        f"start / end: {env['load_start']:.2f} / {env['load_end']:.2f}.", "",
        "| task | browserd calls | Playwright MCP calls | browserd chars | Playwright MCP chars "
        "| browserd ms | Playwright MCP ms | time ratio | goal |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        lines.append(f"| {row.task} | {len(row.bd.calls)} | {len(row.pw.calls)} | "
                     f"{row.bd.chars:,} | {row.pw.chars:,} | {row.bd_ms:.0f} | {row.pw_ms:.0f} | "
                     f"{row.bd_ms / max(row.pw_ms, 0.001):.2f} | {_verdict(row)} |")
    lines += ["", "Goal per task: browserd fewer calls and fewer characters than Playwright "
              "MCP, and wall time ≤ 0.2x Playwright MCP's.", "",
              "The calls of the last round (tool, characters of its result):", ""]
    for row in rows:
        lines += [f"- {row.task}, browserd: {row.bd.summary()}",
                  f"- {row.task}, Playwright MCP: {row.pw.summary()}"]
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
