"""The in-page snapshot walker's source and the pure-Python text around it.

``WALKER_SOURCE`` is ``text.js`` (the text helpers: names from content, link
targets, placeholders) followed by the walker (``walker.js`` and the files
``_WALKER_PARTS`` lists after it, joined into one function): an expression
that, evaluated in a CDP isolated world (``Page.createIsolatedWorld`` +
``Runtime.evaluate`` with its ``contextId``), defines ``globalThis.__browserd``.
Re-evaluating it keeps the world's ref maps. The ``*_call`` functions build
the ``Runtime.evaluate`` expressions for its entry points; every argument goes
through :func:`js_literal` (which the other page modules use too), so no
caller-supplied string is ever pasted into JavaScript unescaped.

Nothing here does I/O; nothing here can be cancelled half-way.
"""

from __future__ import annotations

import importlib.resources
import json
from typing import Any

import attrs

from browserd import jsontext as decoding
from browserd.errors import BadRequest, BrowserdError

__all__ = [
    "DESCRIBE_FUNCTION", "WALKER_SOURCE", "SnapshotOptions", "cap_text", "decode_reply",
    "dom_snapshot_call", "find_by_text_call", "js_literal", "read_view_call", "resolve_call",
    "snapshot_call", "splice_frame_text",
]

#: The walker's files, in the order they are joined into one function body:
#: ``walker.js`` (the version check) first, ``install.js`` (which publishes the
#: entry points once every declaration before it has run) last.
_WALKER_PARTS: tuple[str, ...] = (
    "walker.js", "tree.js", "roles.js", "names.js", "states.js", "refs.js", "lines.js",
    "find.js", "around.js", "reading.js", "dom.js", "install.js",
)


def _page_source(name: str) -> str:
    return importlib.resources.files("browserd.snapshot").joinpath(name).read_text("utf-8")


WALKER_SOURCE: str = "\n".join((
    _page_source("text.js"),
    "(() => {",
    *(_page_source(name) for name in _WALKER_PARTS),
    "})()",
))
"""The walker, to be evaluated once per isolated world (returns "installed" or "present").

``text.js`` and then the ``_WALKER_PARTS`` inside one arrow function, so
that they share one scope and define nothing global but ``__browserd``,
``__browserdState`` and ``__browserdText``. Read once, at import."""

DESCRIBE_FUNCTION = "function () { return globalThis.__browserd.describe(this); }"
"""For ``Runtime.callFunctionOn`` on an element objectId from the isolated world
(``returnByValue: true``): yields ``{role, name}``."""


def _non_negative(_inst: object, attribute: attrs.Attribute[Any], value: int | None) -> None:
    if value is not None and value < 0:
        raise BadRequest(f"{attribute.name} must not be negative", field=attribute.name)


def _positive(_inst: object, attribute: attrs.Attribute[Any], value: int | None) -> None:
    if value is not None and value < 1:
        raise BadRequest(f"{attribute.name} must be at least 1", field=attribute.name)


@attrs.frozen(kw_only=True)
class SnapshotOptions:
    """What ``__browserd.snapshot`` is asked for.

    ``next_ref`` is the tab's ref counter (new refs are ``e<next_ref>``,
    ``e<next_ref+1>``, …; the reply's ``nextRef`` is the new counter).
    ``max_chars`` caps the text at a line boundary, ``limit`` caps the number
    of ref'd nodes; either sets ``truncated``. ``root_ref`` / ``root_selector``
    scope the snapshot to one element (at most one of them). ``text_budget`` is
    the visible-text budget of the read view. ``line_chars`` is the longest
    name or text line shown (``None``: the walker's default, 300; 0: whole).

    Raises :class:`browserd.errors.BadRequest` on out-of-range values.
    """

    next_ref: int = attrs.field(default=1, validator=_positive)
    interactive: bool = False
    max_chars: int | None = attrs.field(default=None, validator=_non_negative)
    limit: int | None = attrs.field(default=None, validator=_positive)
    root_ref: str | None = None
    root_selector: str | None = None
    text_budget: int = attrs.field(default=4000, validator=_non_negative)
    line_chars: int | None = attrs.field(default=None, validator=_non_negative)

    def __attrs_post_init__(self) -> None:
        if self.root_ref is not None and self.root_selector is not None:
            raise BadRequest("give either a root ref or a root selector, not both")

    def to_js(self) -> dict[str, Any]:
        """The options object as the walker spells it (camelCase)."""
        return {
            "nextRef": self.next_ref,
            "interactive": self.interactive,
            "maxChars": self.max_chars,
            "limit": self.limit,
            "rootRef": self.root_ref,
            "rootSelector": self.root_selector,
            "textBudget": self.text_budget,
            "lineChars": self.line_chars,
        }


@attrs.frozen(kw_only=True)
class FindOptions:
    """What ``__browserd.find`` is asked for (see :func:`find_call`).

    At least one of ``role``, ``name`` and ``text`` must be given (else
    :class:`browserd.errors.BadRequest`); ``limit`` is at least 1.
    """

    next_ref: int = attrs.field(default=1, validator=_positive)
    role: str | None = None
    name: str | None = None
    text: str | None = None
    exact: bool = False
    limit: int = attrs.field(default=20, validator=_positive)
    line_chars: int | None = attrs.field(default=None, validator=_non_negative)
    root_ref: str | None = None
    root_selector: str | None = None
    around: bool = False

    def __attrs_post_init__(self) -> None:
        if not (self.role or self.name or self.text):
            raise BadRequest("give at least one of role, name or text", field="name",
                             hint='e.g. {"role": "link", "name": "Download"}')
        if self.root_ref is not None and self.root_selector is not None:
            raise BadRequest("give either a root ref or a root selector, not both")

    def to_js(self) -> dict[str, Any]:
        """The options object as the walker spells it (camelCase)."""
        return {
            "nextRef": self.next_ref, "role": self.role, "name": self.name, "text": self.text,
            "exact": self.exact, "limit": self.limit, "lineChars": self.line_chars,
            "rootRef": self.root_ref, "rootSelector": self.root_selector,
            "around": self.around,
        }


def find_call(opts: FindOptions) -> str:
    """The expression for ``__browserd.find`` (``returnByValue: true``); a JSON string.

    Decoded: ``{matches: [{ref, role, name, text?, placeholder?, href?, target?,
    context?, around?}], count, truncated,
    nodes, nextRef, stats: {elements, ms}}`` or ``{error: {...}}`` as for
    :func:`snapshot_call`. The match is done in the page, case-insensitively,
    on substrings unless ``exact``; no page text is matched in Python.
    """
    return f"JSON.stringify(globalThis.__browserd.find({js_literal(opts.to_js())}))"


def js_literal(value: Any) -> str:
    """A JavaScript literal for ``value``, safe to embed in an expression.

    JSON is valid JavaScript (ES2019+); ``ensure_ascii`` also escapes
    U+2028/9 and lone surrogates, so untrusted strings cannot break out.
    Raises ValueError for NaN or infinity, TypeError for non-JSON values.
    """
    return json.dumps(value, ensure_ascii=True, allow_nan=False)


def snapshot_call(opts: SnapshotOptions) -> str:
    """The expression for ``Runtime.evaluate`` (``returnByValue: true``).

    Its value is a JSON *string* (decode it with :func:`decode_reply`): the
    walker's result crosses the protocol as one string, which is several
    times cheaper for Chromium than serialising thousands of small objects.
    Decoded: ``{text, nodes, nextRef, truncated, frames, stats}`` or, when the
    scope cannot be found, ``{error: {code, ...}}`` with code ``STALE_REF``
    (with ``reason``), ``NO_MATCH`` or ``BAD_SELECTOR``.
    """
    return f"JSON.stringify(globalThis.__browserd.snapshot({js_literal(opts.to_js())}))"


def read_view_call(opts: SnapshotOptions) -> str:
    """The read view's expression; decoded: ``{title, url, text, truncated}``."""
    return f"JSON.stringify(globalThis.__browserd.readView({js_literal(opts.to_js())}))"


def dom_snapshot_call(opts: SnapshotOptions) -> str:
    """The bounded DOM walk's expression; decoded: ``{nodes, truncated, nextRef}``.

    ``opts.limit`` defaults to 2000 nodes in the walker when ``None``.
    """
    return f"JSON.stringify(globalThis.__browserd.domSnapshot({js_literal(opts.to_js())}))"


def decode_reply(value: Any) -> dict[str, Any]:
    """Decode the value of a ``*_call`` evaluation into its dict.

    Raises :class:`browserd.errors.BrowserdError` if it is not a JSON object
    (the walker is missing or was replaced, e.g. the world was torn down).
    """
    if isinstance(value, str):
        try:
            value = decoding.loads(value)
        except decoding.UndecodableMessage as exc:
            raise BrowserdError("snapshot walker returned malformed JSON") from exc
    if not isinstance(value, dict):
        raise BrowserdError(f"snapshot walker returned {type(value).__name__}, not an object")
    return value


def resolve_call(ref: str, expect_role: str | None, expect_name: str | None) -> str:
    """The expression that resolves a ref (``returnByValue: false``).

    Its value is the element itself (a RemoteObject with ``subtype: "node"``
    and an ``objectId``) when the ref is live and its role and name still
    equal the expected ones (``None``: those recorded at its last snapshot);
    otherwise a JSON *string* such as ``{"stale":"detached"}``,
    ``{"stale":"changed","role":…,"name":…}`` or ``{"stale":"unknown"}``,
    which comes back by value even without ``returnByValue``.
    """
    args = ", ".join(js_literal(a) for a in (ref, expect_role, expect_name))
    return (
        f"(() => {{ const r = globalThis.__browserd.resolve({args}); "
        "return r && r.nodeType === 1 ? r : JSON.stringify(r); })()"
    )


def find_by_text_call(text: str) -> str:
    """The expression for ``findByText`` (``returnByValue: false``): element or null."""
    return f"globalThis.__browserd.findByText({js_literal(text)})"


def cap_text(text: str, max_chars: int | None) -> tuple[str, bool]:
    """Cut ``text`` to at most ``max_chars`` characters at a line boundary.

    Returns ``(text, truncated)``. Whole lines are kept (with their newline);
    a first line longer than the cap leaves an empty text. ``None`` is no cap.
    Raises ValueError for a negative cap.
    """
    if max_chars is None or len(text) <= max_chars:
        return text, False
    if max_chars < 0:
        raise ValueError("max_chars must not be negative")
    cut = text.rfind("\n", 0, max_chars)
    return (text[: cut + 1] if cut >= 0 else ""), True


def splice_frame_text(parent_text: str, frame_ref: str, child_text: str, depth: int) -> str:
    """Insert a frame's own snapshot text after its ``[frame_ref] iframe`` line.

    ``depth`` is the iframe line's depth; the child's lines are indented by
    ``depth + 1`` levels (two spaces each) on top of their own indentation.
    If the iframe's line is not in ``parent_text`` (cut by ``maxChars``, or a
    different document) the parent text is returned unchanged. Raises
    ValueError for a negative depth.
    """
    if depth < 0:
        raise ValueError("depth must not be negative")
    child_lines = [line for line in child_text.splitlines() if line.strip()]
    if not child_lines:
        return parent_text
    lines = parent_text.splitlines(keepends=True)
    marker = f"[{frame_ref}] "
    for i, line in enumerate(lines):
        if line.lstrip(" ").startswith(marker):
            pad = "  " * (depth + 1)
            inserted = "".join(f"{pad}{child}\n" for child in child_lines)
            head = "".join(lines[: i + 1])
            if not head.endswith("\n"):
                head += "\n"
            tail = "".join(lines[i + 1 :])
            return head + inserted + tail
    return parent_text
