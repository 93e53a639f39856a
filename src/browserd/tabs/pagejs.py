"""The page-side functions of ``tabs/``: read once from ``tabs/js/*.js``, called by name.

Every piece of JavaScript that ``tabs/`` and ``tabs/actions/`` run in a page
(outside the snapshot walker, which is :mod:`browserd.snapshot`'s) is a
named, documented function in ``tabs/js/``, in the file named after the
module that runs it (``editors.js`` for ``tabs/actions/editors.py``). The
files are read once, at import, through :mod:`importlib.resources` (they are
package data), and :func:`page_function` hands out a function by its name.

The files follow one simple layout, checked here so a malformed file fails
at import (and so in the unit tests), never in a page:

- top-level lines are blank, ``//`` comments, a ``/** … */`` doc comment, or
  a function: ``function name(params) {`` at the start of a line, ending at
  the next line that is exactly ``}``;
- every function has a doc comment right above it, and its name is unique
  across all the files.

The files share one namespace: a function may call any other top-level
function by name. :class:`PageFunction` carries its ``declaration``, one
self-contained function expression that declares the helpers it reaches
(found by name, transitively) inside itself, so it can be sent alone as a
``Runtime.callFunctionOn`` ``functionDeclaration`` (``this`` is the element)
or called in a ``Runtime.evaluate`` expression (:meth:`PageFunction.call`).
Nothing is added to the page's or the world's globals.

Nothing here does I/O after import; nothing here can be cancelled half-way.
"""

from __future__ import annotations

import importlib.resources
import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from ..snapshot import js_literal

__all__ = ["PAGE_FUNCTIONS", "PageFunction", "page_function", "parse_page_functions"]

_PACKAGE = "browserd.tabs"
_FOLDER = "js"
_START = re.compile(r"^function ([A-Za-z_$][\w$]*)\(")


@attrs.frozen(kw_only=True)
class PageFunction:
    """One named page function and what it needs to run on its own."""

    name: str
    file: str  # the file it is written in (``editors.js``)
    doc: str  # its doc comment, without the comment markers
    source: str  # its declaration as written
    declaration: str  # a self-contained function expression (its helpers declared inside)

    def call(self, *args: Any) -> str:
        """A ``Runtime.evaluate`` expression calling it with ``args`` (JSON values).

        Each argument goes through :func:`~browserd.snapshot.js_literal`, so no
        caller-supplied string is pasted into the page unescaped. Raises
        TypeError / ValueError for a value JSON cannot carry.
        """
        return f"({self.declaration})({', '.join(js_literal(a) for a in args)})"


def _doc_text(lines: list[str]) -> str:
    text = []
    for line in lines:
        line = line.strip()
        line = line.removeprefix("/**").removesuffix("*/").strip()
        line = line.removeprefix("*").strip() if line.startswith("*") else line
        if line:
            text.append(line)
    return " ".join(text)


def _read_file(file: str, text: str) -> list[PageFunction]:
    """The functions of one file, in order (each declared as written, without its
    helpers yet); ValueError when it breaks the layout."""
    found: list[PageFunction] = []
    lines = text.splitlines()
    doc: list[str] | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        where = f"{file}:{i + 1}"
        if line.startswith("/**"):
            if doc is not None:
                raise ValueError(f"{where}: a doc comment with no function after it")
            doc = []
            while True:
                doc.append(lines[i])
                if "*/" in lines[i]:
                    break
                i += 1
                if i == len(lines):
                    raise ValueError(f"{where}: the doc comment never ends")
            i += 1
            continue
        match = _START.match(line)
        if match:
            if not doc or not _doc_text(doc):
                raise ValueError(f"{where}: function {match[1]} has no doc comment above it")
            end = i
            while end < len(lines) and lines[end] != "}":
                end += 1
            if end == len(lines):
                raise ValueError(f"{where}: function {match[1]} never ends (a line '}}')")
            source = "\n".join(lines[i:end + 1])
            found.append(PageFunction(name=match[1], file=file, doc=_doc_text(doc),
                                      source=source, declaration=source))
            doc = None
            i = end + 1
            continue
        if doc is not None and line.strip():
            raise ValueError(f"{where}: a doc comment must sit right above its function")
        if line.strip() and not line.startswith("//"):
            raise ValueError(f"{where}: only functions, comments and blank lines at top level")
        i += 1
    if doc is not None:
        raise ValueError(f"{file}: a doc comment with no function after it")
    return found


def _uses(written: PageFunction, names: Iterable[str]) -> list[str]:
    """The other functions ``written`` names in its body (not as a property: ``.name``)."""
    body = written.source.split("\n", 1)[1] if "\n" in written.source else ""
    return [name for name in names if name != written.name
            and re.search(rf"(?<![\w$.]){re.escape(name)}(?![\w$])", body)]


def _declaration(written: PageFunction, table: Mapping[str, PageFunction]) -> str:
    """``written`` as one function expression that declares what it reaches inside itself."""
    needed: list[str] = []
    todo = _uses(written, table)
    while todo:
        name = todo.pop(0)
        if name in needed:
            continue
        needed.append(name)
        todo += [n for n in _uses(table[name], table) if n != written.name]
    if not needed:
        return written.source
    helpers = "\n".join(table[name].source for name in sorted(needed))
    return (f"function {written.name}(...args) {{\n{helpers}\n{written.source}\n"
            f"return {written.name}.apply(this, args);\n}}")


def parse_page_functions(files: Mapping[str, str]) -> dict[str, PageFunction]:
    """The page functions of ``files`` (file name → its text), by name.

    Raises ValueError when a file breaks the layout in the module docstring
    or two functions share a name.
    """
    table: dict[str, PageFunction] = {}
    for file, text in sorted(files.items()):
        for written in _read_file(file, text):
            if written.name in table:
                raise ValueError(f"{file}: function {written.name} is also in "
                                 f"{table[written.name].file}")
            table[written.name] = written
    return {name: attrs.evolve(written, declaration=_declaration(written, table))
            for name, written in table.items()}


def _load() -> dict[str, PageFunction]:
    folder = importlib.resources.files(_PACKAGE).joinpath(_FOLDER)
    return parse_page_functions({entry.name: entry.read_text("utf-8")
                                 for entry in folder.iterdir() if entry.name.endswith(".js")})


PAGE_FUNCTIONS: Mapping[str, PageFunction] = _load()
"""Every page function of ``tabs/js/``, by name; read once, at import."""


def page_function(name: str) -> PageFunction:
    """The page function called ``name``; KeyError (at the caller's import) if there is none."""
    return PAGE_FUNCTIONS[name]
