"""The paths the agent takes through each task of :mod:`bench.agent_tasks_mcp`, per side.

Each side does what an agent would do with its tools:

- browserd (``bd_*``): its lean paths — one ``act`` batch per task (a
  navigation and the steps after it, where nothing needs a look in between),
  acting by locator (``within`` a table row where the row names the target),
  ``find`` steps for what the task reads (``around`` for a term's
  definitions), and the page read in the batch's own answer (``snapshot:
  "full"``) where the task reads a whole page;
- Playwright MCP (``pw_*``): navigate → snapshot/find → act on refs, then
  read again (its actions do not answer the page);
- agent-browser (``ab_*``): its CLI as its core skill teaches
  (``agent-browser skills get core``) — ``snapshot -i`` refs, ``find role``
  locators, ``read`` for a page's text, ``find … text`` for one element, and
  ``batch`` for steps that need no look in between (one call). Its ``diff
  snapshot`` is not used: in 0.41.2 it keeps no baseline between CLI calls
  and answers the whole tree as added lines.

No side evaluates JavaScript. Where a first try fails (a button not drawn
yet), the agent reads the error and goes on, and those calls count.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

import attrs

from .agent_app_pages import AppPages, definition_of, version_of
from .agent_sides import CliSide, McpSide, ToolFailed

__all__ = ["NEW_QUERY", "ROW", "TASKS", "TERM", "TODOS", "TaskPaths"]

TERM, TERM_INDEX = "Epoch Frame 13", 13
ROW_INDEX = 123
ROW = f"pkg-{ROW_INDEX:04d}"
NEW_QUERY = "SELECT count(*) FROM orders WHERE status = 'open';"
TODOS = ("Buy milk", "Walk the dog", "Pay rent")

# -- parsing what the agent read -----------------------------------------------------------------

#: A ref and its role in browserd's snapshot text (and in the JSON of an ``act`` answer).
BD_REF = re.compile(r"\[(?P<ref>e\d+)\] (?P<role>\w+)")
#: A ref and its role in Playwright MCP's snapshot YAML.
PW_REF = re.compile(r"- (?P<role>\w+)(?: \"[^\"]*\")?[^\n]*?\[ref=(?P<ref>\w+)\]")
#: A ref and its role in agent-browser's snapshot (``- checkbox [checked=false, ref=e12]``).
AB_REF = re.compile(r"- (?P<role>\w+)(?: \"[^\"]*\")?[^\n]*?[\[ ]ref=(?P<ref>e\d+)\]")


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


def _ref_of(text: str, pattern: re.Pattern[str], role: str, name: str | None = None) -> str:
    """The ref of the first ``role`` element (named ``name``, when given) in a snapshot."""
    for m in pattern.finditer(text):
        if m["role"] == role and (name is None or f'{role} "{name}"' in m.group(0)):
            return m["ref"]
    raise ToolFailed(f"no {role} {name or ''} in:\n{text[:1500]}")


def _found(pattern: str, text: str) -> str:
    """The first group of ``pattern`` in ``text``: what the agent picks out of a read."""
    m = re.search(pattern, text)
    if m is None:
        raise ToolFailed(f"{pattern!r} is not in what was read:\n{text[:1500]}")
    return m.group(1)


# -- browserd ------------------------------------------------------------------------------------


async def bd_table(bd: McpSide, pages: AppPages) -> str:
    # One batch: the term's definition by find with around (its term | definitions line),
    # then the link in the row of ROW (a locator within the row), the page it opens read
    # in the answer.
    answer = await bd.call("act", {"snapshot": "full", "actions": [
        {"kind": "navigate", "url": pages.url("/reference.html")},
        {"kind": "find", "role": "term", "name": TERM, "exact": True, "around": True},
        {"kind": "click", "role": "link", "within": {"role": "row", "name": ROW}},
    ]})
    return answer.split(f"{TERM} | ", 1)[1]


async def bd_editor(bd: McpSide, pages: AppPages) -> str:
    # One batch: nothing needs a look in between (the editor is the page's only textbox,
    # Run its button by name); a find step reads the result line.
    return await bd.call("act", {"actions": [
        {"kind": "navigate", "url": pages.url("/editor.html")},
        {"kind": "click", "role": "textbox"},
        {"kind": "press", "key": "Control+a"},
        {"kind": "type", "text": NEW_QUERY},
        {"kind": "click", "role": "button", "name": "Run", "exact": True},
        {"kind": "find", "role": "status"},
    ]})


async def bd_spa(bd: McpSide, pages: AppPages) -> str:
    # A locator that matches nothing yet waits for the page to draw (its fetches, then a
    # quiet DOM) before it is tried again: navigate, click and read the status in one batch.
    return await bd.call("act", {"actions": [
        {"kind": "navigate", "url": pages.url("/spa.html")},
        {"kind": "click", "role": "button", "name": "Save settings", "exact": True},
        {"kind": "find", "role": "status"},
    ]})


async def bd_todo(bd: McpSide, pages: AppPages) -> str:
    # The new-todo field by its placeholder, the second toggle by position (toggles have
    # no name, as in TodoMVC): one batch, the count read by a find step.
    return await bd.call("act", {"actions": [
        {"kind": "navigate", "url": pages.url("/todo.html")},
        *({"kind": "type", "role": "textbox", "name": "What needs to be done?",
           "text": item, "submit": True} for item in TODOS),
        {"kind": "click", "role": "checkbox", "nth": 1},
        {"kind": "find", "text": "items left"},
    ]})


# -- Playwright MCP ------------------------------------------------------------------------------


async def pw_table(pw: McpSide, pages: AppPages) -> str:
    await pw.call("browser_navigate", {"url": pages.url("/reference.html")})
    found = await pw.call("browser_find", {"text": ROW})
    row_text = found[found.find(f'rowheader "{ROW}"'):]
    row_text = row_text.split("- row ")[0]  # this row's lines only
    if "link " not in row_text:  # the match's row is shown cut: snapshot that row
        row = _pw_parent_ref(found, f'rowheader "{ROW}"')
        row_text = await pw.call("browser_snapshot", {"target": row})
    link = _ref_of(row_text, PW_REF, "link")
    term = await pw.call("browser_find", {"text": TERM})
    definition = term[term.find(f": {TERM}"):]  # the term's line, then its definition's
    await pw.call("browser_click", {"target": link, "element": f"Changelog link of {ROW}"})
    opened = await pw.call("browser_snapshot")
    return definition + "\n" + opened


async def pw_editor(pw: McpSide, pages: AppPages) -> str:
    await pw.call("browser_navigate", {"url": pages.url("/editor.html")})
    text = await pw.call("browser_snapshot")
    line = _pw_parent_ref(text, "SELECT name, email")
    box = _ref_of(text, PW_REF, "textbox")
    run_button = _ref_of(text, PW_REF, "button", "Run")
    status = _ref_of(text, PW_REF, "status")
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
    await pw.call("browser_click", {"target": _ref_of(text, PW_REF, "button", "Save settings"),
                                    "element": "Save settings button"})
    # The status line is empty (no ref) until saved: read the form that holds it.
    return await pw.call("browser_snapshot", {"target": _pw_parent_ref(text, "- status")})


async def pw_todo(pw: McpSide, pages: AppPages) -> str:
    await pw.call("browser_navigate", {"url": pages.url("/todo.html")})
    text = await pw.call("browser_snapshot")
    field = _ref_of(text, PW_REF, "textbox", "What needs to be done?")
    for item in TODOS:
        await pw.call("browser_type", {"target": field, "element": "new todo field",
                                       "text": item, "submit": True})
    text = await pw.call("browser_snapshot")
    box = _refs_before(text, TODOS[1], "checkbox", PW_REF)
    await pw.call("browser_click", {"target": box, "element": f"toggle of {TODOS[1]}"})
    return await pw.call("browser_find", {"text": "items left"})


# -- agent-browser -------------------------------------------------------------------------------


async def ab_table(ab: CliSide, pages: AppPages) -> str:
    # Nothing reads around a match (find's actions answer the match's own text; table
    # rows have no name), so the agent reads the page as text: `read` renders the
    # table's rows (cells run together) and the glossary's terms and definitions.
    text = await ab.batch(["open", pages.url("/reference.html")], ["read"])
    # The row's line ends with its Changelog link, "<version> notes".
    link = _found(rf"{re.escape(ROW)}[^\n]*?(\d+\.\d+\.\d+ notes)", text)
    definition = _found(rf"{re.escape(TERM)}\s*(.+?\.)", text)
    opened = await ab.batch(["find", "role", "link", "click", "--name", link, "--exact"],
                            ["read"])
    return definition + "\n" + opened


async def ab_editor(ab: CliSide, pages: AppPages) -> str:
    text = await ab.batch(["open", pages.url("/editor.html")], ["snapshot", "-i"])
    editor = _ref_of(text, AB_REF, "textbox")
    run_button = _ref_of(text, AB_REF, "button", "Run")
    # The editor's textarea is covered by its lines (a click on it fails "covered by
    # <pre.CodeMirror-line>"): focus it, as the skill says for custom inputs.
    return await ab.batch(["focus", f"@{editor}"], ["press", "Control+a"],
                          ["keyboard", "type", NEW_QUERY], ["click", f"@{run_button}"],
                          ["find", "role", "status", "text"])


async def ab_spa(ab: CliSide, pages: AppPages) -> str:
    click = ["find", "role", "button", "click", "--name", "Save settings", "--exact"]
    status = ["find", "role", "status", "text"]
    answer = await ab.batch(["open", pages.url("/spa.html")], click, status, may_fail=True)
    if answer.startswith("ERROR"):
        # "No element found": not drawn yet. Wait for its text, then click and read.
        answer = await ab.batch(["wait", "--text", "Save settings"], click, status)
    return answer


async def ab_todo(ab: CliSide, pages: AppPages) -> str:
    text = await ab.batch(["open", pages.url("/todo.html")], ["snapshot", "-i"])
    field = _ref_of(text, AB_REF, "textbox", "What needs to be done?")
    steps = [step for item in TODOS for step in (["fill", f"@{field}", item], ["press", "Enter"])]
    # The toggles have no name: the full snapshot shows each one's label after it.
    added = await ab.batch(*steps, ["snapshot"])
    box = _refs_before(added, TODOS[1], "checkbox", AB_REF)
    return await ab.batch(["click", f"@{box}"], ["find", "text", "items left", "text"])


# -- the tasks -----------------------------------------------------------------------------------

McpPath = Callable[[McpSide, AppPages], Awaitable[str]]
CliPath = Callable[[CliSide, AppPages], Awaitable[str]]


@attrs.frozen(kw_only=True)
class TaskPaths:
    """One task: each side's path, and strings its answer must contain."""

    bd: McpPath
    pw: McpPath
    ab: CliPath
    expect: tuple[str, ...]


TASKS: dict[str, TaskPaths] = {
    "table": TaskPaths(bd=bd_table, pw=pw_table, ab=ab_table,
                       expect=(definition_of(TERM_INDEX).split(". ")[0],
                               f"{ROW} {version_of(ROW_INDEX)} release notes")),
    "editor": TaskPaths(bd=bd_editor, pw=pw_editor, ab=ab_editor,
                        expect=("Result: count = 868 (orders)",)),
    "spa": TaskPaths(bd=bd_spa, pw=pw_spa, ab=ab_spa, expect=("Settings saved for Ada.",)),
    "todo": TaskPaths(bd=bd_todo, pw=pw_todo, ab=ab_todo, expect=("2 items left",)),
}
