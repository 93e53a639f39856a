"""The error hierarchy: the classes match the tree drawn in the module docstring."""

from __future__ import annotations

import re

import attrs
import pytest

from browserd import errors
from browserd.errors import (
    BadRequest,
    BrowserdError,
    CdpError,
    NotFound,
    StaleRef,
    TabBusy,
    TabNotFound,
    Unauthorized,
    unwrap_group,
)


@attrs.frozen(kw_only=True)
class DocEntry:
    name: str
    status: int
    code: str
    parent: str | None


_LINE = re.compile(r"^(?P<indent>[ │├└─]*?)(?P<name>[A-Z]\w*)\s+(?P<status>\d{3})\s+"
                   r"(?P<code>[A-Z][A-Z_]+)(?:\s+\(.*\))?\s*$")  # an optional "(note)"


def doc_tree() -> dict[str, DocEntry]:
    """Parse the ``Tree::`` block of the errors module docstring."""
    doc = errors.__doc__ or ""
    block = doc.split("Tree::", 1)[1]
    entries: dict[str, DocEntry] = {}
    stack: list[str] = []  # names by depth
    base_indent: int | None = None
    for line in block.splitlines():
        if not line.strip():
            if entries:
                break
            continue
        m = _LINE.match(line)
        assert m, f"unparseable tree line: {line!r}"
        column = m.start("name")  # each level moves the name 4 columns right
        if base_indent is None:
            base_indent = column
        offset = column - base_indent
        assert offset % 4 == 0, f"misaligned tree line: {line!r}"
        depth = offset // 4
        assert depth <= len(stack), f"tree line too deep: {line!r}"
        del stack[depth:]
        parent = stack[-1] if stack else None
        assert m["name"] not in entries, f"{m['name']} drawn twice"
        entries[m["name"]] = DocEntry(name=m["name"], status=int(m["status"]), code=m["code"],
                                      parent=parent)
        stack.append(m["name"])
    return entries


def all_classes() -> dict[str, type[BrowserdError]]:
    """Every BrowserdError class of the errors module (wrappers elsewhere, e.g. the
    client's ClientError, are not part of the hierarchy the service answers with)."""
    out: dict[str, type[BrowserdError]] = {}
    todo: list[type[BrowserdError]] = [BrowserdError]
    while todo:
        cls = todo.pop()
        if cls.__module__.startswith(errors.__name__ + "."):
            out[cls.__name__] = cls
        todo.extend(cls.__subclasses__())
    return out


def test_doc_tree_parses() -> None:
    tree = doc_tree()
    assert tree["BrowserdError"].parent is None
    assert tree["BadUrl"].parent == "BadRequest"
    assert tree["ConfigError"].parent == "StartupError"
    assert tree["StartupError"].parent == "BrowserdError"
    assert len(tree) > 30  # the whole drawing, not just its first lines


def test_every_class_is_in_the_tree_and_nothing_else() -> None:
    assert set(doc_tree()) == set(all_classes())


@pytest.mark.parametrize("name", sorted(all_classes()))
def test_class_matches_its_tree_line(name: str) -> None:
    cls = all_classes()[name]
    entry = doc_tree()[name]
    assert (cls.status, cls.code) == (entry.status, entry.code)
    if entry.parent is None:
        assert cls is BrowserdError
    else:
        assert cls.__bases__ == (all_classes()[entry.parent],)


def test_status_and_code_are_unique() -> None:
    classes = list(all_classes().values())
    pairs = [(c.status, c.code) for c in classes]
    assert len(set(pairs)) == len(pairs)
    codes = [c.code for c in classes]
    assert len(set(codes)) == len(codes), "a code must name one class"
    for cls in classes:
        # (202: an action held for the person is answered through the same shape)
        held = cls.code == "CONFIRMATION_REQUIRED" and cls.status == 202
        assert (held or 400 <= cls.status <= 599) and re.fullmatch(r"[A-Z][A-Z_]*", cls.code)


def test_every_class_is_exported_from_the_module() -> None:
    for name, cls in all_classes().items():
        assert getattr(errors, name) is cls


# -- to_dict ---------------------------------------------------------------------


def test_to_dict_minimal() -> None:
    exc = BadRequest("bad thing")
    assert exc.to_dict() == {"error": "bad thing", "code": "BAD_REQUEST"}
    assert str(exc) == exc.message == "bad thing"
    assert exc.status == 400


def test_to_dict_with_hint_and_details() -> None:
    exc = BadRequest("no", hint="do this", field="url")
    assert exc.to_dict() == {"error": "no", "code": "BAD_REQUEST", "hint": "do this",
                             "field": "url"}
    assert list(exc.to_dict())[:3] == ["error", "code", "hint"]


def test_default_hint_and_explicit_empty_hint() -> None:
    assert TabNotFound("gone").to_dict()["hint"] == TabNotFound.default_hint != ""
    assert "hint" not in TabNotFound("gone", hint="").to_dict()
    assert Unauthorized("who").hint == Unauthorized.default_hint


def test_details_cannot_replace_error_code_or_hint() -> None:
    body = NotFound("real", hint="real hint", code="FAKE", error="fake", status=200).to_dict()
    assert (body["error"], body["code"], body["hint"]) == ("real", "NOT_FOUND", "real hint")
    assert body["status"] == 200  # an ordinary detail is still passed through


def test_cdp_error() -> None:
    exc = CdpError("No node with given id", cdp_code=-32000, method="DOM.focus")
    assert exc.to_dict() == {"error": "No node with given id", "code": "CDP_ERROR",
                             "method": "DOM.focus"}
    assert (exc.cdp_code, exc.method, exc.status) == (-32000, "DOM.focus", 502)


# -- unwrap_group ----------------------------------------------------------------


def test_plain_exception_is_itself() -> None:
    exc = ValueError("x")
    assert unwrap_group(exc) is exc


def test_single_exception_group() -> None:
    inner = ValueError("x")
    assert unwrap_group(ExceptionGroup("g", [inner])) is inner


def test_single_nested_several_levels() -> None:
    inner = TabBusy("busy")
    group = ExceptionGroup("a", [ExceptionGroup("b", [ExceptionGroup("c", [inner])])])
    assert unwrap_group(group) is inner


def test_single_base_exception_is_not_swallowed() -> None:
    inner = KeyboardInterrupt()
    assert unwrap_group(BaseExceptionGroup("g", [inner])) is inner


def test_several_first_browserd_error_wins() -> None:
    first, second = TabBusy("busy"), StaleRef("stale")
    group = ExceptionGroup("g", [ValueError("a"), first, KeyError("b"), second])
    assert unwrap_group(group) is first


def test_several_nested_first_in_depth_first_order() -> None:
    deep, later = StaleRef("deep"), TabBusy("later")
    group = ExceptionGroup("g", [
        ValueError("a"),
        ExceptionGroup("h", [KeyError("b"), ExceptionGroup("i", [deep, OSError()])]),
        later,
    ])
    assert unwrap_group(group) is deep


def test_several_without_browserd_error_is_the_group() -> None:
    group = ExceptionGroup("g", [ValueError("a"), KeyError("b")])
    assert unwrap_group(group) is group


def test_single_wrapping_several_yields_the_inner_group() -> None:
    inner = ExceptionGroup("inner", [ValueError("a"), KeyError("b")])
    assert unwrap_group(ExceptionGroup("outer", [inner])) is inner
