"""Plain-text renderings of route answers shared by every text front end (CLI, MCP).

Pure functions of decoded JSON answers: no I/O, never raise on odd shapes.

**Page boundaries.** Page-provided text (titles, URLs, snapshot text, find
matches, eval values, console lines, effects) is put between
``<<page:NONCE>>`` and ``<</page:NONCE>>`` lines by :func:`page_block`, with
one random nonce per answer (:func:`new_nonce`): a page that writes text
mimicking browserd's own words cannot close the boundary, as it cannot know
the nonce. MCP answers always carry it; the CLI when asked or when its
output is not a terminal.
"""

from __future__ import annotations

import secrets
from typing import Any

__all__ = ["format_matches", "new_nonce", "page_block"]


def new_nonce() -> str:
    """A boundary nonce for one answer (random: a page cannot guess it)."""
    return secrets.token_hex(6)


def page_block(text: str, nonce: str | None) -> str:
    """``text`` between the page boundary lines of ``nonce`` (None: ``text`` as it is)."""
    return text if nonce is None else f"<<page:{nonce}>>\n{text}\n<</page:{nonce}>>"


def format_matches(r: dict[str, Any], *, counted: bool = True) -> str:
    """/find answers (matches with refs): ``[ref] role "name" placeholder="…" text "…"
    → target  (in context)`` and, asked for ``around``, an indented ``↳ row | line``
    under it (the placeholder and link target as snapshot lines show them);
    /query answers: the fields of each matching element; then the count (the one
    rendering of matches, for the CLI and for MCP) — with ``counted`` False only when
    it says more than the lines do (none matched, or not all are shown)."""
    lines = []
    for m in r.get("matches", []):
        if not isinstance(m, dict):
            continue
        if "ref" in m:
            line = f"[{m.get('ref')}] {m.get('role')}"
            if m.get("name"):
                line += f" \"{m['name']}\""
            if m.get("placeholder"):
                line += f" placeholder=\"{m['placeholder']}\""
            if m.get("text"):
                line += f" text \"{m['text']}\""
            if m.get("target"):
                line += f" \u2192 {m['target']}"
            if m.get("context"):
                line += f"  (in {m['context']})"
            if m.get("around"):
                line += f"\n  \u21b3 {m['around']}"
        else:
            line = " ".join(f"{k}={v!r}" for k, v in m.items()
                            if k != "index" and v not in (None, "", [], {}))
        lines.append(line)
    shown = len(lines)
    cut = bool(r.get("truncated")) or r.get("count", shown) > shown
    if counted or cut or not shown:
        lines.append(f"{r.get('count', shown)} match(es)" + (f", {shown} shown" if cut else ""))
    return "\n".join(lines)
