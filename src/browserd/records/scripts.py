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
Plain code: no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..snapshot.roles import ARIA_ROLES
from .model import Call, Step, Target
from .replay import SKIPPED_WAITS

__all__ = ["LANGS", "PLAYWRIGHT_ROLES", "locator_expression", "script"]

LANGS = ("python", "typescript")

#: The roles Playwright's ``get_by_role`` accepts (all but three the walker may report).
PLAYWRIGHT_ROLES = ARIA_ROLES - {"image", "mark", "tooltip"}

_CODE_RE = re.compile(r"[^A-Z0-9_]")
_HISTORY = {"back": ("go_back", "goBack"), "forward": ("go_forward", "goForward"),
            "reload": ("reload", "reload")}


def _lit(value: Any) -> str:
    """``value`` as a literal both languages read (JSON, ASCII only)."""
    return json.dumps(value, ensure_ascii=True)


def _name_is_whole(name: str) -> bool:
    return bool(name) and not name.endswith("…")


def locator_expression(target: Target, lang: str) -> str | None:
    """The Playwright locator for ``target`` (``page.get_by_role(...)``), or None."""
    py = lang == "python"
    role = target.role if target.role in PLAYWRIGHT_ROLES else None
    name = target.name
    if role is not None and name:
        whole = _name_is_whole(name)
        shown = name if whole else name[:-1]
        exact = whole and target.exact
        if py:
            expr = f"page.get_by_role({_lit(role)}, name={_lit(shown)}"
            expr += ", exact=True)" if exact else ")"
        else:
            expr = f"page.getByRole({_lit(role)}, {{ name: {_lit(shown)}"
            expr += ", exact: true })" if exact else " })"
    elif target.selector:
        expr = f"page.locator({_lit(target.selector)})"
    elif target.text:
        expr = f"page.{'get_by_text' if py else 'getByText'}({_lit(target.text)})"
    elif role is not None:
        expr = f"page.{'get_by_role' if py else 'getByRole'}({_lit(role)})"
    else:
        return None
    if target.nth is not None and target.ref is None:
        expr += f".nth({int(target.nth)})"
    return expr


def _secret_env(name: str) -> str:
    return "BROWSERD_SECRET_" + re.sub(r"[^A-Za-z0-9]", "_", name).upper()


class _Writer:
    """The lines of one script in one language."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.py = lang == "python"
        self.lines: list[str] = []

    def stmt(self, code: str) -> None:
        self.lines.append(code if self.py else f"await {code};")

    def comment(self, text: str) -> None:
        self.lines.append(("# " if self.py else "// ") + text)

    def m(self, py_name: str, ts_name: str) -> str:
        return py_name if self.py else ts_name

    def kw(self, **values: Any) -> str:
        """Options as Python keywords or one TypeScript object (JSON literals)."""
        given = {k: v for k, v in values.items() if v is not None}
        if not given:
            return ""
        if self.py:
            return ", ".join(f"{_snake(k)}={_py_value(v)}" for k, v in given.items())
        return "{ " + ", ".join(f"{k}: {_lit(v)}" for k, v in given.items()) + " }"


def _snake(name: str) -> str:
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def _py_value(value: Any) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    return _lit(value)


def _text_expr(w: _Writer, args: dict[str, Any]) -> str:
    secret = args.get("secret")
    if isinstance(secret, str):
        env = _lit(_secret_env(secret))
        return f"os.environ[{env}]" if w.py else f"process.env[{env}]!"
    return _lit(str(args.get("text") or ""))


def _emit(w: _Writer, call: Call, index: int) -> None:
    """The statements that repeat one recorded action."""
    args = dict(call.args)
    kind = call.kind
    target = call.targets.get("element")
    loc = locator_expression(target, w.lang) if target is not None else None
    if kind == "navigate":
        w.stmt(f"page.goto({_lit(args.get('url'))})")
    elif kind in _HISTORY:
        w.stmt(f"page.{_HISTORY[kind][0 if w.py else 1]}()")
    elif kind == "click" and loc is not None:
        count, button = int(args.get("clickCount") or 1), args.get("button") or "left"
        opts = w.kw(button=None if button == "left" else button,
                    clickCount=None if count == 1 else count,
                    modifiers=list(args["modifiers"]) if args.get("modifiers") else None)
        w.stmt(f"{loc}.click({opts})")
    elif kind == "type":
        text = _text_expr(w, args)
        if loc is not None:
            method = "fill" if args.get("clear") or args.get("secret") else w.m(
                "press_sequentially", "pressSequentially")
            w.stmt(f"{loc}.{method}({text})")
        else:
            w.stmt(f"page.keyboard.type({text})")
        if args.get("submit"):
            w.stmt(f"{loc}.press(\"Enter\")" if loc else "page.keyboard.press(\"Enter\")")
    elif kind == "press":
        mods = [m for m in args.get("modifiers") or () if isinstance(m, str)]
        w.stmt(f"page.keyboard.press({_lit('+'.join([*mods, str(args.get('key'))]))})")
    elif kind == "hover" and loc is not None:
        w.stmt(f"{loc}.hover()")
    elif kind == "select" and loc is not None:
        values = _lit(list(args.get("values") or ()))
        w.stmt(f"{loc}.{w.m('select_option', 'selectOption')}({values})")
    elif kind == "upload" and loc is not None:
        files = _lit(list(args.get("files") or ()))
        w.stmt(f"{loc}.{w.m('set_input_files', 'setInputFiles')}({files})")
    elif kind == "drag" and "from" in call.targets and "to" in call.targets:
        source = locator_expression(call.targets["from"], w.lang)
        dest = locator_expression(call.targets["to"], w.lang)
        if source and dest:
            w.stmt(f"{source}.{w.m('drag_to', 'dragTo')}({dest})")
        else:
            w.comment(f"step {index}: drag: its elements have no locator")
    elif kind == "scroll":
        _emit_scroll(w, args, loc)
    elif kind == "wait":
        _emit_wait(w, args, index)
    elif kind == "mouse":
        _emit_mouse(w, args)
    elif kind == "keyboard":
        action, key = args.get("action"), args.get("key")
        if action == "insertText":
            inserted = _lit(args.get("text") or "")
            w.stmt(f"page.keyboard.{w.m('insert_text', 'insertText')}({inserted})")
        else:
            w.stmt(f"page.keyboard.{action}({_lit(key)})")
    elif kind == "dialog":
        pass  # answered by the handler set before the step that opened it
    else:
        w.comment(f"step {index}: {_lit(kind)} has no element to act on")


def _emit_scroll(w: _Writer, args: dict[str, Any], loc: str | None) -> None:
    to = args.get("to")
    if to == "intoView" and loc is not None:
        w.stmt(f"{loc}.{w.m('scroll_into_view_if_needed', 'scrollIntoViewIfNeeded')}()")
    elif to in ("top", "bottom"):
        js = "window.scrollTo(0, 0)" if to == "top" else \
            "window.scrollTo(0, document.documentElement.scrollHeight)"
        w.stmt(f"page.evaluate({_lit(js)})")
    else:
        if loc is not None:
            w.stmt(f"{loc}.hover()")
        w.stmt(f"page.mouse.wheel({float(args.get('dx') or 0)}, {float(args.get('dy') or 0)})")


def _emit_wait(w: _Writer, args: dict[str, Any], index: int) -> None:
    if any(args.get(k) for k in SKIPPED_WAITS):
        w.comment(f"step {index}: a wait only browserd can do is left out")
    elif args.get("selector") is not None:
        w.stmt(f"page.locator({_lit(args['selector'])}).first.{w.m('wait_for', 'waitFor')}()")
    elif args.get("text") is not None:
        w.stmt(f"page.{w.m('get_by_text', 'getByText')}({_lit(args['text'])}).first."
               f"{w.m('wait_for', 'waitFor')}()")
    elif args.get("textGone") is not None:
        opts = "state=\"hidden\"" if w.py else "{ state: \"hidden\" }"
        w.stmt(f"page.{w.m('get_by_text', 'getByText')}({_lit(args['textGone'])}).first."
               f"{w.m('wait_for', 'waitFor')}({opts})")
    elif args.get("url") is not None:
        w.stmt(f"page.{w.m('wait_for_url', 'waitForURL')}({_lit(args['url'])})")
    elif args.get("loadState") is not None:
        state = _lit(args["loadState"])
        w.stmt(f"page.{w.m('wait_for_load_state', 'waitForLoadState')}({state})")


def _emit_mouse(w: _Writer, args: dict[str, Any]) -> None:
    x, y = float(args.get("x") or 0), float(args.get("y") or 0)
    action = args.get("action")
    if action == "wheel":
        w.stmt(f"page.mouse.move({x}, {y})")
        w.stmt(f"page.mouse.wheel({float(args.get('deltaX') or 0)}, "
               f"{float(args.get('deltaY') or 0)})")
    elif action == "click":
        w.stmt(f"page.mouse.click({x}, {y})")
    elif action == "move":
        w.stmt(f"page.mouse.move({x}, {y})")
    else:
        w.stmt(f"page.mouse.move({x}, {y})")
        w.stmt(f"page.mouse.{action}()")


def _dialog_handler(w: _Writer, call: Call) -> None:
    accept = bool(call.args.get("accept"))
    prompt = call.args.get("promptText")
    answer = ("accept" + (f"({_lit(prompt)})" if prompt is not None else "()")) if accept \
        else "dismiss()"
    if w.py:
        w.lines.append(f"page.once(\"dialog\", lambda dialog: dialog.{answer})")
    else:
        w.lines.append(f"page.once(\"dialog\", (dialog) => dialog.{answer});")


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
    w = _Writer(lang)
    planned = list(_calls(steps))
    for i, (index, call, why) in enumerate(planned):
        if why is not None or call is None:
            w.comment(why or "")
            continue
        following = next((c for _, c, _w in planned[i + 1:] if c is not None), None)
        if following is not None and following.kind == "dialog":
            _dialog_handler(w, following)
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
