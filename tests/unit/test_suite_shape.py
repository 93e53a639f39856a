"""The suite's own shape: every integration file that drives Chromium says so, so that
``pytest -m "not chromium"`` is browser-free."""

from __future__ import annotations

import ast
from pathlib import Path

INTEGRATION = Path(__file__).resolve().parents[1] / "integration"
#: Fixtures and helpers that start or reach a real browser.
BROWSER_NAMES = frozenset({"service", "api", "tab", "start_service", "private", "fuzzed"})


def _marks_chromium(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            return "chromium" in ast.unparse(node.value)
    return False


def _unmarked_browser_tests(tree: ast.Module) -> list[str]:
    """The tests of ``tree`` that reach a browser (a browser fixture, or a fixture of the
    file that calls ``start_service``) without the chromium mark on them or the module."""
    if _marks_chromium(tree):
        return []
    functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    names = set(BROWSER_NAMES)
    for fn in functions:
        if not fn.name.startswith("test") and any(
                isinstance(n, ast.Name) and n.id == "start_service" for n in ast.walk(fn)):
            names.add(fn.name)
    return [fn.name for fn in functions if fn.name.startswith("test")
            and names & {a.arg for a in fn.args.args}
            and not any("chromium" in ast.unparse(d) for d in fn.decorator_list)]


def test_every_integration_test_that_drives_chromium_carries_the_marker() -> None:
    unmarked = []
    for path in sorted(INTEGRATION.glob("test_*.py")):
        unmarked += [f"{path.name}::{name}"
                     for name in _unmarked_browser_tests(ast.parse(path.read_text()))]
    assert not unmarked, f"mark these chromium (or the module's pytestmark): {unmarked}"


def test_the_check_sees_a_file_without_the_marker() -> None:
    bare = ast.parse("async def test_x(api):\n    pass\n")
    marked = ast.parse("import pytest\npytestmark = pytest.mark.chromium\n"
                       "async def test_x(tab):\n    pass\n")
    own = ast.parse("def svc():\n    start_service()\n\n"
                    "def test_z(svc):\n    pass\n\n"
                    "@pytest.mark.chromium\ndef test_w(svc):\n    pass\n")
    assert _unmarked_browser_tests(bare) == ["test_x"]
    assert _unmarked_browser_tests(marked) == []
    assert _unmarked_browser_tests(own) == ["test_z"]
    assert _unmarked_browser_tests(ast.parse("def test_y(tmp_path):\n    pass\n")) == []


# -- one fake CDP seam ---------------------------------------------------------------------

TESTS = Path(__file__).resolve().parents[1]
#: Stand-ins for a *tab* (``TabActor.send``), not for a connection: the tests they serve
#: need what no peer gives (a page function evaluated by Node.js's V8, a forged reply).
TAB_STAND_INS = {
    "unit/test_eval_mutants.py": {"NodeTab", "ScriptedTab", "Echo", "TwoKeys"},
    "unit/test_restore.py": {"FakeTab"},
}


def _cdp_speakers(tree: ast.Module) -> list[str]:
    """Classes of ``tree`` (at any depth) with a ``send(self, method, …)``: they answer CDP
    commands by method name, as a connection does."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if (isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "send"
                    and [a.arg for a in item.args.args[:2]] == ["self", "method"]):
                found.append(node.name)
    return found


def test_no_test_module_defines_a_fake_cdp_connection_of_its_own() -> None:
    """``tests/fakecdp.py``'s FakeCdpPeer is the one fake CDP seam: a test that needs a
    browser that is not there scripts the peer (or extends it), not a class of its own."""
    own = {}
    for path in sorted(TESTS.rglob("*.py")):
        name = path.relative_to(TESTS).as_posix()
        if name == "fakecdp.py":
            continue
        classes = set(_cdp_speakers(ast.parse(path.read_text()))) - TAB_STAND_INS.get(name, set())
        if classes:
            own[name] = sorted(classes)
    assert not own, f"use tests/fakecdp.py's FakeCdpPeer instead of: {own}"


def test_the_tab_stand_ins_listed_still_exist() -> None:
    for name, classes in TAB_STAND_INS.items():
        assert set(_cdp_speakers(ast.parse((TESTS / name).read_text()))) == classes, name


def test_the_check_sees_a_fake_connection() -> None:
    fake = ast.parse("class Conn:\n    async def send(self, method, params=None):\n"
                     "        return {}\n")
    nested = ast.parse("def test_x():\n    class C:\n        def send(self, method):\n"
                       "            pass\n")
    other = ast.parse("class Ws:\n    async def send(self, data):\n        pass\n")
    assert _cdp_speakers(fake) == ["Conn"] and _cdp_speakers(nested) == ["C"]
    assert _cdp_speakers(other) == []
