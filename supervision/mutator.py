"""The mutations themselves: one AST change at a time, counted and applied by number.

:class:`Mutator` walks a module (or only the functions a target names) and
numbers every mutation point: comparisons flipped, ``and``/``or`` swapped,
``not`` dropped, numbers and booleans changed, arithmetic swapped, statement
calls, ``raise`` and return values removed (docstrings, f-strings and log calls
are left alone). :func:`count_mutants` counts the points; :func:`mutate`
returns the source of one mutant and what it changed.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Sequence

_COMPARE_SWAPS: dict[type[ast.cmpop], tuple[type[ast.cmpop], ...]] = {
    ast.Eq: (ast.NotEq,), ast.NotEq: (ast.Eq,),
    ast.Lt: (ast.LtE, ast.GtE), ast.LtE: (ast.Lt, ast.Gt),
    ast.Gt: (ast.GtE, ast.LtE), ast.GtE: (ast.Gt, ast.Lt),
    ast.In: (ast.NotIn,), ast.NotIn: (ast.In,),
    ast.Is: (ast.IsNot,), ast.IsNot: (ast.Is,),
}
_BINOP_SWAPS: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult, ast.BitOr: ast.BitAnd, ast.BitAnd: ast.BitOr,
}
_LOGGERS = {"log", "logger", "logging"}


def _is_log_call(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id in _LOGGERS)


def _is_docstring(node: ast.stmt) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


class Mutator(ast.NodeTransformer):
    """Applies mutation number ``target`` (or, with -1, only counts the points)."""

    def __init__(self, target: int, functions: Sequence[str] | None) -> None:
        self.target = target
        self.functions = set(functions) if functions is not None else None
        self.count = 0
        self.description: str | None = None
        self._scope: list[str] = []

    # -- where mutation is allowed -------------------------------------------------------------

    def _active(self) -> bool:
        if self.functions is None:
            return True
        qualified = ".".join(self._scope)
        return any(qualified == f or qualified.startswith(f + ".") for f in self.functions)

    def _hit(self, node: ast.AST, what: str) -> bool:
        if not self._active():
            return False
        index = self.count
        self.count += 1
        if index == self.target:
            self.description = f"line {getattr(node, 'lineno', '?')}: {what}"
            return True
        return False

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> ast.AST:
        self._scope.append(node.name)
        body = node.body[1:] if node.body and _is_docstring(node.body[0]) else node.body
        head = node.body[: len(node.body) - len(body)]
        node.body = head + [self.visit(stmt) for stmt in body]
        node.body = [stmt for stmt in node.body if stmt is not None]
        self._scope.pop()
        return node  # decorators, arguments and annotations are left alone

    visit_FunctionDef = _scoped
    visit_AsyncFunctionDef = _scoped
    visit_ClassDef = _scoped

    def visit_Module(self, node: ast.Module) -> ast.AST:
        body = node.body[1:] if node.body and _is_docstring(node.body[0]) else node.body
        head = node.body[: len(node.body) - len(body)]
        node.body = head + [self.visit(stmt) for stmt in body]
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if node.value is not None:
            node.value = self.visit(node.value)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if _is_log_call(node):
            return node
        return self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        return node  # message text: changes there are noise

    # -- the operators -------------------------------------------------------------------------

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        for i, op in enumerate(node.ops):
            for replacement in _COMPARE_SWAPS.get(type(op), ()):
                if self._hit(node, f"{type(op).__name__} -> {replacement.__name__}"):
                    node.ops[i] = replacement()
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        if self._hit(node, f"{type(node.op).__name__} -> "
                           f"{'Or' if isinstance(node.op, ast.And) else 'And'}"):
            node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not) and self._hit(node, "not x -> x"):
            return node.operand
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        swap = _BINOP_SWAPS.get(type(node.op))
        if swap is not None and self._hit(node, f"{type(node.op).__name__} -> {swap.__name__}"):
            node.op = swap()
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        swap = _BINOP_SWAPS.get(type(node.op))
        if swap is not None and self._hit(node, f"{type(node.op).__name__}= -> "
                                                f"{swap.__name__}="):
            node.op = swap()
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        value = node.value
        if isinstance(value, bool):
            if self._hit(node, f"{value} -> {not value}"):
                return ast.copy_location(ast.Constant(not value), node)
        elif isinstance(value, int | float):
            if self._hit(node, f"{value!r} -> {value + 1!r}"):
                return ast.copy_location(ast.Constant(value + 1), node)
            if value != 0 and self._hit(node, f"{value!r} -> 0"):
                return ast.copy_location(ast.Constant(type(value)(0)), node)
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
        if _is_log_call(node.value):
            return node
        self.generic_visit(node)
        call = node.value.value if isinstance(node.value, ast.Await) else node.value
        if isinstance(call, ast.Call) and self._hit(
                node, f"call removed: {ast.unparse(call)[:60]}"):
            return ast.copy_location(ast.Pass(), node)
        return node

    def visit_Return(self, node: ast.Return) -> ast.AST:
        self.generic_visit(node)
        if node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None
        ) and self._hit(node, f"return {ast.unparse(node.value)[:50]} -> return None"):
            node.value = ast.Constant(None)
        return node

    def visit_Raise(self, node: ast.Raise) -> ast.AST:
        self.generic_visit(node)
        if node.exc is not None and self._hit(node, f"raise removed: "
                                                    f"{ast.unparse(node.exc)[:50]}"):
            return ast.copy_location(ast.Pass(), node)
        return node


def count_mutants(source: str, functions: Sequence[str] | None) -> int:
    counter = Mutator(-1, functions)
    counter.visit(ast.parse(source))
    return counter.count


def mutate(source: str, index: int, functions: Sequence[str] | None) -> tuple[str, str]:
    """The source of mutant ``index`` and a description of the change."""
    mutator = Mutator(index, functions)
    tree = mutator.visit(copy.deepcopy(ast.parse(source)))
    ast.fix_missing_locations(tree)
    assert mutator.description is not None
    return ast.unparse(tree), mutator.description


__all__ = ["Mutator", "count_mutants", "mutate"]
