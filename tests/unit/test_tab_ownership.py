"""The tab actor keeps its own state: nobody outside it assigns a tab's attributes.

A :class:`~browserd.tabs.actor.TabActor`'s state is private (``_x``); what
others may read are read-only properties, frozen views and predicates, and
what they may change goes through its ``note_*`` / ``mark_*`` methods. These
checks read the source (every module of ``src/browserd`` but the actor's own,
:data:`ACTOR_MODULES`) and the class itself, so a new public attribute or an
assignment from outside fails here.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

import browserd
from browserd.tabs.actor import TabActor

SRC = Path(browserd.__file__).parent
#: The actor and its own helpers: the only modules that write a tab's state.
ACTOR_MODULES = frozenset({"tabs/actor.py", "tabs/tabevents.py", "tabs/frames.py",
                           "tabs/feed.py", "tabs/tabview.py", "tabs/tabrun.py",
                           "tabs/workslot.py"})


def idle_actor() -> TabActor:
    """A TabActor that never ran (its connection is a stand-in: nothing is sent)."""
    connection = SimpleNamespace(session=lambda sid: SimpleNamespace(session_id=sid))
    return TabActor(cast(Any, connection), "T1")


def private_state() -> set[str]:
    """The names of a TabActor's instance attributes (its state: the slots of its classes)."""
    return {name for cls in TabActor.__mro__ for name in getattr(cls, "__slots__", ())}


def public_names() -> set[str]:
    return {name for name in dir(TabActor) if not name.startswith("_")}


def assigned_on_a_tab(tree: ast.AST, state: set[str]) -> list[ast.Attribute]:
    """The attributes ``tree`` stores on something that is (or looks like) a tab: any
    attribute of a tab-named value, and a tab's own state names on any value but self."""
    return [node for node in stores(tree) if not is_self(node.value)
            and (looks_like_a_tab(node.value) or node.attr in state)]


def outside_modules() -> list[Path]:
    return [path for path in sorted(SRC.rglob("*.py"))
            if path.relative_to(SRC).as_posix() not in ACTOR_MODULES]


def looks_like_a_tab(node: ast.expr) -> bool:
    """``tab``, ``front``, ``self._tab``, ``new_tab``, … (the names tabs go by)."""
    name = node.attr if isinstance(node, ast.Attribute) else (
        node.id if isinstance(node, ast.Name) else "")
    return "tab" in name.lower() or name in ("actor", "front")


def stores(tree: ast.AST) -> list[ast.Attribute]:
    """Every attribute that ``tree`` assigns, augments, annotates or deletes."""
    found: list[ast.Attribute] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
            found.append(node)
    return found


def is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def test_a_tab_has_no_public_state_only_read_only_properties_and_methods() -> None:
    state = private_state()
    assert state and all(name.startswith("_") for name in state), sorted(
        n for n in state if not n.startswith("_"))
    assert not hasattr(idle_actor(), "__dict__")  # its state is its slots, nothing else
    for name in public_names():
        member = inspect.getattr_static(TabActor, name)
        if isinstance(member, property):
            assert member.fset is None and member.fdel is None, f"TabActor.{name} is settable"
        else:
            assert callable(member), f"TabActor.{name} is a class attribute, not a method"
    with pytest.raises(AttributeError):
        idle_actor().url = "https://elsewhere.test/"  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        idle_actor().session = None  # type: ignore[misc,assignment]


@pytest.mark.parametrize("path", outside_modules(), ids=lambda p: p.relative_to(SRC).as_posix())
def test_no_module_outside_the_actor_assigns_or_reaches_into_a_tab(path: Path) -> None:
    state = private_state()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    wrong = [f"line {node.lineno}: assigns {ast.unparse(node)}"
             for node in assigned_on_a_tab(tree, state)]
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr in state
                and not is_self(node.value) and isinstance(node.ctx, ast.Load)):
            wrong.append(f"line {node.lineno}: reads the tab's private {ast.unparse(node)}")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("setattr", "delattr") and node.args
                and looks_like_a_tab(node.args[0])):
            wrong.append(f"line {node.lineno}: {node.func.id} on {ast.unparse(node.args[0])}")
    assert not wrong, "\n".join(wrong)


def test_the_check_sees_assignments_to_a_tab_and_to_its_state() -> None:
    state = private_state()
    tree = ast.parse("tab.url = 'x'\nfront.title += 'y'\nother._crashed = True\n"
                     "self._tab.closed = True\ndel new_tab._dialog\n"
                     "walk.text = ''\nself._crashed = False\n")
    assert [ast.unparse(n) for n in assigned_on_a_tab(tree, state)] == [
        "tab.url", "front.title", "other._crashed", "self._tab.closed", "new_tab._dialog"]
    assert {"_crashed", "_dialog", "_title"} <= state
