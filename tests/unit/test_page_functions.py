"""The page functions of ``tabs/js/``: their layout, their linking, and that no Python
module of ``tabs/`` carries JavaScript of its own any more.

What the functions do in a page is tested against a real Chromium, through the API
(``tests/integration/test_input.py``, ``test_editors.py``, …) and one by one in
``tests/integration/test_walker_pagejs.py``; here only plain code (and Node.js's V8 parsing
each declaration, when Node is there).
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from browserd.tabs.pagejs import PAGE_FUNCTIONS, page_function, parse_page_functions

SRC = Path(__file__).resolve().parents[2] / "src" / "browserd"
NODE = shutil.which("node")

#: Python modules that may still hold JavaScript in a string, and why.
JAVASCRIPT_ALLOWED = {
    "records/scripts.py": "writes Playwright scripts for people to run, not page code",
    "tabs/actions/kinds/moves.py": "writes a scroll step of a Playwright script",
    "tabs/actions/kinds/page.py": "writes a dialog step of a Playwright script",
    "snapshot/script.py": "joins the walker's files and builds the calls into it",
    "tabs/pagejs.py": "the loader itself",
}
_JAVASCRIPT = re.compile(r"=>|\bfunction\s*[\w$]*\s*\(|\bdocument\.\w|\bglobalThis\b"
                         r"|requestAnimationFrame|\bwindow\.\w+\(")


def _code_strings(tree: ast.Module) -> list[ast.Constant]:
    """The string constants of ``tree`` that are not docstrings (a bare string statement)."""
    bare = {id(n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    return [n for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str) and id(n) not in bare]


def _inline_javascript(text: str) -> list[int]:
    """The lines of a Python module's strings that look like JavaScript."""
    return [n.lineno for n in _code_strings(ast.parse(text)) if _JAVASCRIPT.search(n.value)]


def test_no_python_module_carries_page_javascript_of_its_own() -> None:
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel not in JAVASCRIPT_ALLOWED and (lines := _inline_javascript(path.read_text())):
            found[rel] = lines
    assert not found, f"move this JavaScript into a tabs/js/ page function: {found}"


def test_the_check_sees_inline_javascript() -> None:
    assert _inline_javascript('X = "function (a) { return a; }"\n') == [1]
    assert _inline_javascript('X = ("(() => {"\n     "})()")\n') == [1]
    assert _inline_javascript('X = "document.readyState"\n') == [1]
    assert _inline_javascript('"""A docstring: document.title, () => 1."""\n') == []
    assert _inline_javascript('X = "the User-Agent header and navigator.userAgent"\n') == []


def test_every_page_function_is_documented_and_named_like_its_entry() -> None:
    assert len(PAGE_FUNCTIONS) >= 30
    for name, function in PAGE_FUNCTIONS.items():
        assert function.name == name
        assert function.doc and len(function.doc) > 20, name
        assert function.source.startswith(f"function {name}("), name
        assert function.declaration.startswith(f"function {name}("), name


def test_every_page_function_is_used() -> None:
    """Each is named by a Python module of tabs/ or reached from another function."""
    python = "\n".join(p.read_text() for p in (SRC / "tabs").rglob("*.py"))
    called = set(re.findall(r'page_function\("(\w+)"\)', python))
    reached = {name for f in PAGE_FUNCTIONS.values() if f.name in called
               for name in PAGE_FUNCTIONS if name != f.name
               and f"function {name}(" in f.declaration}
    assert called <= set(PAGE_FUNCTIONS)
    assert set(PAGE_FUNCTIONS) - called - reached == set()


def test_a_function_without_helpers_is_sent_as_written() -> None:
    assert page_function("clickElement").declaration == page_function("clickElement").source


def test_a_function_declares_the_helpers_it_reaches_inside_itself() -> None:
    question = page_function("editorQuestion").declaration
    # editorQuestion → findEditor → editorKinds, editingHost; deepActiveElement from
    # element.js: another file of the same namespace.
    for helper in ("findEditor", "editorKinds", "editingHost", "deepActiveElement",
                   "takesText", "editorText", "centreCover", "platformOf"):
        assert f"function {helper}(" in question, helper
    assert "function focusedElement(" not in question
    assert question.rstrip().endswith("return editorQuestion.apply(this, args);\n}")


def test_call_passes_arguments_as_json_literals() -> None:
    expression = page_function("waitCondition").call("text", '</script>"\u2028')
    assert expression.startswith("(function waitCondition(")
    assert expression.endswith(r')("text", "</script>\"\u2028")')
    with pytest.raises(ValueError):
        page_function("waitCondition").call("text", float("nan"))


DOC = "/**\n * Does a thing.\n */\n"


@pytest.mark.parametrize(("files", "message"), [
    ({"a.js": "function f() {\n}\n"}, "no doc comment"),
    ({"a.js": "/** */\nfunction f() {\n}\n"}, "no doc comment"),
    ({"a.js": DOC + "const x = 1;\nfunction f() {\n}\n"}, "right above its function"),
    ({"a.js": "const x = 1;\n"}, "only functions, comments and blank lines"),
    ({"a.js": DOC + "function f() {\n  return 1;\n"}, "never ends"),
    ({"a.js": DOC}, "no function after it"),
    ({"a.js": "/**\n * never closed\n"}, "never ends"),
    ({"a.js": DOC + "function f() {\n}\n", "b.js": DOC + "function f() {\n}\n"},
     "also in a.js"),
])
def test_a_file_that_breaks_the_layout_fails_at_load(files: dict[str, str],
                                                     message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_page_functions(files)


def test_helpers_are_found_by_name_transitively_but_not_as_properties() -> None:
    parsed = parse_page_functions({
        "a.js": "// a header\n\n" + DOC + "function entry(x) {\n  return one(x) + o.two;\n}\n"
                + DOC + "function one(x) {\n  return three(x);\n}\n",
        "b.js": DOC + "function two() {\n}\n" + DOC + "function three(x) {\n  return x;\n}\n",
    })
    declaration = parsed["entry"].declaration
    assert "function one(" in declaration and "function three(" in declaration
    assert "function two(" not in declaration
    assert parsed["entry"].doc == "Does a thing."
    assert parsed["two"].declaration == parsed["two"].source


@pytest.mark.skipif(NODE is None, reason="needs Node.js (the machine's V8)")
def test_every_declaration_and_call_parses_in_v8() -> None:
    sources = {name: f.declaration for name, f in PAGE_FUNCTIONS.items()}
    check = ("const d = JSON.parse(require('fs').readFileSync(0, 'utf8')); const bad = [];"
             "for (const [n, s] of Object.entries(d)) { try { const f = (0, eval)('(' + s + ')');"
             " if (f.name !== n) bad.push(n); } catch (e) { bad.push(n + ': ' + e.message); } }"
             "process.stdout.write(JSON.stringify(bad));")
    assert NODE is not None
    done = subprocess.run([NODE, "-e", check], input=json.dumps(sources).encode(),
                          capture_output=True, timeout=60, check=True)
    assert json.loads(done.stdout) == []


@pytest.mark.skipif(NODE is None, reason="needs Node.js (the machine's V8)")
def test_the_size_bound_counts_utf8_bytes_in_v8() -> None:
    """utf8Bytes and boundedValue, reached through boundedEval's own declaration."""
    expression = page_function("boundedEval").call("'é€😀'.repeat(2)", 100, "m", False)
    big = page_function("boundedEval").call("'€'.repeat(40)", 100, "m", False)
    script = f"process.stdout.write(JSON.stringify([{expression}, {big}]))"
    assert NODE is not None
    done = subprocess.run([NODE, "-e", script], capture_output=True, timeout=60, check=True)
    # é is 2 bytes, € 3, 😀 4 (a surrogate pair): 20 bytes with the quotes fit. forty €
    # do not, and the count stops once past the bound: 1 quote + 34 * 3 = 103.
    assert json.loads(done.stdout) == ["é€😀é€😀", {"m": 103}]
