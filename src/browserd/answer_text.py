"""Plain-text renderings of route answers shared by every text front end (CLI, MCP).

Pure functions of decoded JSON answers: no I/O, never raise on odd shapes.
"""

from __future__ import annotations

from typing import Any

__all__ = ["format_matches"]


def format_matches(r: dict[str, Any]) -> str:
    """/find answers (matches with refs): ``[ref] role "name" text "…"  (in context)``;
    /query answers: the fields of each matching element; then the count (the one
    rendering of matches, for the CLI and for MCP)."""
    lines = []
    for m in r.get("matches", []):
        if not isinstance(m, dict):
            continue
        if "ref" in m:
            line = f"[{m.get('ref')}] {m.get('role')}"
            if m.get("name"):
                line += f" \"{m['name']}\""
            if m.get("text"):
                line += f" text \"{m['text']}\""
            if m.get("context"):
                line += f"  (in {m['context']})"
        else:
            line = " ".join(f"{k}={v!r}" for k, v in m.items()
                            if k != "index" and v not in (None, "", [], {}))
        lines.append(line)
    shown = len(lines)
    lines.append(f"{r.get('count', shown)} match(es)"
                 + (f", {shown} shown" if r.get("truncated") or r.get("count", shown) > shown
                    else ""))
    return "\n".join(lines)
