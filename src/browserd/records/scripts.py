"""A record as a Playwright script (Python sync API or TypeScript) that repeats its actions.

Elements are found the way a person would name them, never by ref (refs
die with the page): ``get_by_role(role, name=…, exact=True)`` when the step
knows a role Playwright has and a name, else the CSS selector the call gave,
else the text, else the role alone. Navigations are ``goto``; a JavaScript
dialog a step answered is answered by a handler set before the step that
opened it. A step that failed when recorded is left out (a comment says
which); so is what a script cannot do the same way (waits for a handoff,
a download or a person's answer). A vault secret is read from the
environment (``BROWSERD_SECRET_<NAME>``), never written into the script.

Every value from the page or the agent is written as a JSON string literal
(valid in Python and TypeScript, ASCII only), and comments carry nothing
but step numbers and error codes, so no recorded text can become code.
How each kind is written is its own (:data:`browserd.tabs.actions.kinds.RECORDINGS`,
with :mod:`browserd.records.playwright`'s writer). Plain code: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..tabs.actions.kinds import RECORDINGS
from .model import Call, Step
from .playwright import PLAYWRIGHT_ROLES, Writer, locator_expression

__all__ = ["LANGS", "PLAYWRIGHT_ROLES", "locator_expression", "script"]

LANGS = ("python", "typescript")

_CODE_RE = re.compile(r"[^A-Z0-9_]")


def _emit(w: Writer, call: Call, index: int) -> None:
    """The statements that repeat one recorded action (its kind's own way of writing it)."""
    recording = RECORDINGS.get(call.kind)
    if recording is None:
        w.no_element(call, index)
        return
    target = call.targets.get("element")
    loc = locator_expression(target, w.lang) if target is not None else None
    recording.script(w, call, loc, index)


def _calls(steps: Sequence[Step]) -> Iterable[tuple[int, Call | None, str | None]]:
    """(step index, call, why it is left out) for every action, in order."""
    for step in steps:
        if not step.ok:
            code = _CODE_RE.sub("", str((step.error or {}).get("code") or "ERROR"))[:40]
            yield step.index, None, f"step {step.index} failed when recorded ({code}): left out"
            continue
        for call in step.calls():
            yield step.index, call, None


def script(steps: Sequence[Step], lang: str, *, record_id: str = "") -> str:
    """The whole script (a ``run(page)`` function and a main that launches Chromium)."""
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}")
    w = Writer(lang)
    planned = list(_calls(steps))
    for i, (index, call, why) in enumerate(planned):
        if why is not None or call is None:
            w.comment(why or "")
            continue
        following = next((c for _, c, _w in planned[i + 1:] if c is not None), None)
        ahead = RECORDINGS.get(following.kind) if following is not None else None
        if following is not None and ahead is not None and ahead.script_ahead is not None:
            ahead.script_ahead(w, following)  # (a dialog's handler, before what opens it)
        _emit(w, call, index)
    body = w.lines or ["pass" if w.py else "// no actions"]
    ident = re.sub(r"[^a-z0-9-]", "", record_id)
    if w.py:
        return "\n".join([
            f'"""Repeats browserd record {ident} with Playwright (generated)."""',
            "import os",
            "",
            "from playwright.sync_api import Page, sync_playwright",
            "",
            "",
            "def run(page: Page) -> None:",
            *("    " + line for line in body),
            "",
            "",
            'if __name__ == "__main__":',
            "    with sync_playwright() as p:",
            "        browser = p.chromium.launch(",
            '            executable_path=os.environ.get("CHROMIUM") or None)',
            "        page = browser.new_page()",
            "        run(page)",
            "        browser.close()",
            ""])
    return "\n".join([
        f"// Repeats browserd record {ident} with Playwright (generated).",
        'import { chromium, type Page } from "playwright";',
        "",
        "export async function run(page: Page): Promise<void> {",
        *("  " + line for line in body),
        "}",
        "",
        "async function main(): Promise<void> {",
        "  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM });",
        "  const page = await browser.newPage();",
        "  await run(page);",
        "  await browser.close();",
        "}",
        "",
        "if (require.main === module) {",
        "  main().catch((error) => { console.error(error); process.exit(1); });",
        "}",
        ""])
