"""``python -m bench.agent_tasks [--rounds N] [--out docs/benchmarks.md]``: agent tasks.

Three tasks as an agent does them, on generated pages (:mod:`bench.agent_pages`),
for browserd and Playwright in the same run (rounds interleaved). Measured
per task: the **characters the agent reads** (every answer body browserd
returns, as sent; for Playwright the ``aria_snapshot()`` texts it reads — its
actions return nothing to read) and the **wall time** (median of the rounds).

- ``follow`` — on a 2,000-link index, find the link ``mod_1234``, follow it,
  read the module page's main text;
- ``definition`` — on a long reference page (300 ``<dl>`` entries with
  ``<pre>`` examples), read the entry of ``osx.func_123``: its signature,
  description and example (browserd: one ``/find`` by text, whose matches
  carry their text; Playwright: the ``<dl>`` that holds the signature);
- ``form`` — fill a sign-up form (two fields, a select, a checkbox), submit,
  read the confirmation.

browserd takes its leanest documented path: ``/find`` to locate, then
``/snapshot`` with ``root`` (``format: "read"`` where a read view fits),
``/act`` for the form, whose fields come from an interactive snapshot of the
``form`` (the region Playwright's side reads too). Where the service lacks a
route or format (``/find``, ``format: "read"``), the task falls back (a
whole-page snapshot searched on the client) and the report says so — a
fallback is not the lean path.
Playwright (``executable_path`` = Debian's Chromium; never ``playwright
install``) reads ``aria_snapshot()`` of a located region.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import httpx

from .agent_pages import AgentPages
from .common import CHROMIUM, Service

TARGET_MODULE = 1234
TARGET_FUNC = 123
REF_LINE = re.compile(r'\[(e\d+)\] (\w+) "((?:[^"\\]|\\.)*)"')


@attrs.define
class Reading:
    """What one run of a task read, and how."""

    chars: int = 0
    calls: int = 0
    notes: list[str] = attrs.field(factory=list)
    answer: str = ""


class Browserd:
    """browserd's side: one keep-alive client, the service's capabilities read once."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        spec = client.get("/openapi.json").json()
        paths = spec.get("paths", {})
        self.has_find = "/find" in paths
        snap = paths.get("/snapshot", {}).get("post", {})
        body = snap.get("requestBody", {}).get("content", {}).get("application/json", {})
        formats = body.get("schema", {}).get("properties", {}).get("format", {}).get("enum", [])
        self.has_read = "read" in (formats or [])
        self.target = ""

    def call(self, reading: Reading, path: str, **body: Any) -> dict[str, Any]:
        r = self.client.post(path, json={"targetId": self.target, **body})
        reading.chars += len(r.text)
        reading.calls += 1
        if r.status_code != 200:
            raise RuntimeError(f"{path} -> {r.status_code}: {r.text[:300]}")
        data: dict[str, Any] = r.json()
        return data

    def open(self, url: str) -> None:
        r = self.client.post("/tabs/open", json={"url": url})
        r.raise_for_status()
        self.target = r.json()["targetId"]

    def close(self) -> None:
        self.client.post("/tabs/close", json={"targetId": self.target})

    def find(self, reading: Reading, *, role: str, name: str | None = None,
             text: str | None = None) -> str:
        """The ref of the first element with ``role`` whose name (or text) has the words."""
        if self.has_find:
            query = {k: v for k, v in (("name", name), ("text", text)) if v is not None}
            data = self.call(reading, "/find", role=role, limit=3, **query)
            if data.get("matches"):
                return str(data["matches"][0]["ref"])
            raise RuntimeError(f"/find found no {role} {name or text!r}")
        reading.notes.append("no /find: whole-page snapshot searched on the client")
        data = self.call(reading, "/snapshot", interactive=role in ("link", "button"))
        want = (name or text or "").lower()
        for ref, line_role, line_name in REF_LINE.findall(str(data.get("text", ""))):
            if line_role == role and want in line_name.lower():
                return str(ref)
        raise RuntimeError(f"no {role} {want!r} in the snapshot")

    def read(self, reading: Reading, root: str) -> str:
        if self.has_read:
            data = self.call(reading, "/snapshot", format="read", root=root)
        else:
            reading.notes.append('no format "read": aria snapshot of the region')
            data = self.call(reading, "/snapshot", root=root)
        return str(data.get("text", ""))


def bd_follow(bd: Browserd, pages: AgentPages) -> Reading:
    reading = Reading()
    bd.call(reading, "/navigate", url=pages.url("/index.html"))
    ref = bd.find(reading, role="link", name=f"mod_{TARGET_MODULE:04d}")
    bd.call(reading, "/click", ref=ref)
    reading.answer = bd.read(reading, "main")
    return reading


def bd_definition(bd: Browserd, pages: AgentPages) -> Reading:
    reading = Reading()
    bd.call(reading, "/navigate", url=pages.url("/docs.html"))
    if bd.has_find:
        # One search: the entry's term (signature), the paragraphs and the example
        # that name it each come back with their text.
        data = bd.call(reading, "/find", text=f"func_{TARGET_FUNC}", limit=10)
        reading.answer = "\n".join(f"{m.get('role')} {m.get('name', '')} {m.get('text', '')}"
                                   for m in data.get("matches", []))
        return reading
    else:
        reading.notes.append("no /find: the whole page's snapshot read")
        data = bd.call(reading, "/snapshot")
    reading.answer = str(data.get("text", ""))
    return reading


def bd_form(bd: Browserd, pages: AgentPages) -> Reading:
    reading = Reading()
    bd.call(reading, "/navigate", url=pages.url("/form.html"))
    text = str(bd.call(reading, "/snapshot", interactive=True, root="form").get("text", ""))
    refs = {(role, name): ref for ref, role, name in REF_LINE.findall(text)}

    def ref(role: str, start: str) -> str:
        return next(r for (ro, na), r in refs.items() if ro == role and na.startswith(start))

    bd.call(reading, "/act", actions=[
        {"kind": "type", "ref": ref("textbox", "Full name"), "text": "Ada Lovelace"},
        {"kind": "type", "ref": ref("textbox", "Email"), "text": "ada@example.com"},
        {"kind": "select", "ref": ref("combobox", "Plan"), "values": ["Team"]},
        {"kind": "click", "ref": ref("checkbox", "I accept")},
        {"kind": "click", "ref": ref("button", "Create account")},
        {"kind": "wait", "selector": "#result"},
    ])
    reading.answer = bd.read(reading, "main")
    return reading


def pw_follow(page: Any, pages: AgentPages) -> Reading:
    reading = Reading()
    page.goto(pages.url("/index.html"), wait_until="domcontentloaded")
    link = page.get_by_role("link", name=f"mod_{TARGET_MODULE:04d}", exact=True)
    reading.chars += len(link.aria_snapshot())
    link.click()
    page.wait_for_url(f"**/mod/{TARGET_MODULE}.html", wait_until="domcontentloaded")
    reading.answer = page.locator("main").aria_snapshot()
    reading.chars += len(reading.answer)
    return reading


def pw_definition(page: Any, pages: AgentPages) -> Reading:
    reading = Reading()
    page.goto(pages.url("/docs.html"), wait_until="domcontentloaded")
    entry = page.locator("dl", has=page.get_by_text(f"osx.func_{TARGET_FUNC}(", exact=False))
    reading.answer = entry.aria_snapshot()
    reading.chars += len(reading.answer)
    return reading


def pw_form(page: Any, pages: AgentPages) -> Reading:
    reading = Reading()
    page.goto(pages.url("/form.html"), wait_until="domcontentloaded")
    reading.chars += len(page.locator("form").aria_snapshot())
    page.get_by_label("Full name").fill("Ada Lovelace")
    page.get_by_label("Email").fill("ada@example.com")
    page.get_by_label("Plan").select_option(label="Team")
    page.get_by_label("I accept the terms").check()
    page.get_by_role("button", name="Create account").click()
    page.locator("#result").wait_for()
    reading.answer = page.locator("main").aria_snapshot()
    reading.chars += len(reading.answer)
    return reading


#: task → (browserd side, Playwright side, a string the answer must contain)
TASKS: dict[str, tuple[Callable[[Browserd, AgentPages], Reading],
                       Callable[[Any, AgentPages], Reading], str]] = {
    "follow": (bd_follow, pw_follow, f"mod_{TARGET_MODULE:04d} provides"),
    "definition": (bd_definition, pw_definition, f"func_{TARGET_FUNC}('"),
    "form": (bd_form, pw_form, "Thanks, Ada Lovelace: your team account is ready."),
}


@attrs.frozen(kw_only=True)
class Row:
    task: str
    bd_chars: int
    pw_chars: int
    bd_ms: float
    pw_ms: float
    bd_calls: int
    notes: tuple[str, ...]


def _timed(fn: Callable[[], Reading], expect: str, who: str) -> tuple[Reading, float]:
    t0 = time.perf_counter()
    reading = fn()
    ms = (time.perf_counter() - t0) * 1000
    if expect not in reading.answer:
        raise RuntimeError(f"{who}: the answer lacks {expect!r}:\n{reading.answer[:600]}")
    return reading, ms


def run(rounds: int) -> tuple[list[Row], dict[str, Any]]:
    from playwright.sync_api import sync_playwright

    rows: list[Row] = []
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bd-agent-") as tmp, AgentPages() as pages:
        service = Service(Path(tmp) / "home").start()
        try:
            with service.client() as client, sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True)
                page = browser.new_page(viewport={"width": 1280, "height": 720})
                bd = Browserd(client)
                bd.open("about:blank")
                env = {"find": bd.has_find, "read": bd.has_read,
                       "playwright": browser.version}
                for name, (bd_fn, pw_fn, expect) in TASKS.items():
                    bd_ms: list[float] = []
                    pw_ms: list[float] = []
                    bd_read = pw_read = Reading()
                    for _ in range(rounds + 1):  # the first round warms up, untimed
                        bd_read, ms_b = _timed(lambda f=bd_fn: f(bd, pages),
                                               expect, "browserd")
                        pw_read, ms_p = _timed(lambda f=pw_fn: f(page, pages),
                                               expect, "Playwright")
                        bd_ms.append(ms_b)
                        pw_ms.append(ms_p)
                    rows.append(Row(task=name, bd_chars=bd_read.chars, pw_chars=pw_read.chars,
                                    bd_ms=statistics.median(bd_ms[1:]),
                                    pw_ms=statistics.median(pw_ms[1:]),
                                    bd_calls=bd_read.calls,
                                    notes=tuple(dict.fromkeys(bd_read.notes))))
                    print(f"[agent] {rows[-1]}", file=sys.stderr, flush=True)
                bd.close()
                browser.close()
        finally:
            service.stop()
    env["load"] = (load_start, os.getloadavg()[0])
    return rows, env


def report(rows: list[Row], env: dict[str, Any], rounds: int) -> str:
    lines = [
        "## Agent tasks (characters read, wall time)",
        "",
        f"Generated by `python -m bench.agent_tasks --rounds {rounds}` on "
        f"{time.strftime('%Y-%m-%d')}: each task as an agent does it, browserd (its leanest "
        "documented path: `/find`, then `/snapshot` with `root`/`format: \"read\"`, `/act`) "
        "and Playwright (`aria_snapshot()` of a located region), same run, rounds interleaved; "
        "times are medians after one warm-up round. Characters: every answer body browserd "
        "returned (as sent); for Playwright the aria snapshots read (its actions return "
        f"nothing). Service capabilities this run: `/find` {'yes' if env['find'] else 'no'}, "
        f"`format: \"read\"` {'yes' if env['read'] else 'no'}. Load average (1 min, "
        f"2 CPUs) at start / end: {env['load'][0]:.2f} / {env['load'][1]:.2f}.",
        "",
        "| task | browserd chars | Playwright chars | ratio | browserd ms | Playwright ms | "
        "ratio | browserd calls |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row.task} | {row.bd_chars:,} | {row.pw_chars:,} | "
            f"{row.bd_chars / max(row.pw_chars, 1):.2f} | {row.bd_ms:.0f} | {row.pw_ms:.0f} | "
            f"{row.bd_ms / max(row.pw_ms, 0.001):.2f} | {row.bd_calls} |")
    notes = [f"- {row.task}: {note}" for row in rows for note in row.notes]
    if notes:
        lines += ["", "Fallbacks (not the lean path; a route or format was missing):", *notes]
    lines += ["", "Goals: browserd's characters at most half of Playwright's and its wall "
              "time at most half, on every task."]
    missed = [f"{row.task} ({'characters' if row.bd_chars > row.pw_chars / 2 else ''}"
              f"{' and ' if row.bd_chars > row.pw_chars / 2 and row.bd_ms > row.pw_ms / 2 else ''}"
              f"{'time' if row.bd_ms > row.pw_ms / 2 else ''})"
              for row in rows if row.bd_chars > row.pw_chars / 2 or row.bd_ms > row.pw_ms / 2]
    lines.append("Missed this run: " + ", ".join(missed) + "." if missed else
                 "Met on every task this run.")
    return "\n".join(lines) + "\n"


def write_section(out: Path, section: str) -> None:
    """Replace (or append) the agent-task section of ``out``."""
    text = out.read_text(encoding="utf-8") if out.exists() else "# browserd benchmarks\n"
    start = text.find("## Agent tasks")
    if start >= 0:
        end = text.find("\n## ", start + 1)
        text = text[:start] + section + ("" if end < 0 else text[end + 1:])
    else:
        text = text.rstrip("\n") + "\n\n" + section
    out.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.agent_tasks", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, help="write the section into this Markdown file")
    args = parser.parse_args(argv)
    rows, env = run(args.rounds)
    section = report(rows, env, args.rounds)
    print(section)
    if args.out:
        write_section(args.out, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
