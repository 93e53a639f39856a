"""Human-readable output of the ``browserd`` CLI: one formatter per answer shape.

:func:`human` picks the formatter from the answer's keys (status, tabs,
snapshots, captures, action effects, history moves, scrolls, find, query
and DOM reads, console lines, downloads); anything else is printed as
indented JSON. ``--json`` bypasses all of this. Page content is printed as data, never interpreted.
"""

from __future__ import annotations

from typing import Any

import orjson

from .answer_text import format_matches
from .cli_network import format_network

__all__ = ["human"]


def _format_status(s: dict[str, Any]) -> str:
    lines = [f"state: {s['state']}" + (f" (pid {s['pid']})" if s.get("pid") else ""),
             f"browser: {s.get('version') or '-'}  {s.get('executablePath') or ''}",
             f"profile: {s['profile']} {s['color']}  {s.get('userDataDir') or ''}",
             f"control: {s['controlUrl']}  cdp: {s['cdpUrl']}  headless: {s['headless']}",
             f"restarts: {s['restarts']}  uptime: {s.get('uptimeS') or 0}s"]
    if s.get("lastError"):
        err = s["lastError"]
        lines.append(f"last error: {err.get('error')} [{err.get('code')}]")
        if err.get("stderr"):
            lines.append("stderr tail:\n  " + "\n  ".join(str(err["stderr"]).splitlines()[-10:]))
    return "\n".join(lines)


def _format_tabs(r: dict[str, Any]) -> str:
    if not r.get("running"):
        return "browser not running"
    if not r["tabs"]:
        return "no tabs"
    return "\n".join(
        f"{'*' if t['isActive'] else ' '} {t['targetId']}  {t['title'][:50]!r}  {t['url']}"
        + ("  [crashed]" if t.get("crashed") else "") for t in r["tabs"])


def _format_effects(effects: dict[str, Any]) -> list[str]:
    lines = []
    if effects.get("navigated"):
        lines.append(f"navigated: {effects['navigated']}")
    if effects.get("navigationPending"):
        lines.append(f"navigation pending: {effects['navigationPending']}")
    if effects.get("newTabs"):
        lines.append("new tabs: " + " ".join(map(str, effects["newTabs"])))
    dialog = effects.get("dialog")
    if isinstance(dialog, dict):
        lines.append(f"dialog open: {dialog.get('type')} {str(dialog.get('message'))[:200]!r}")
    chooser = effects.get("fileChooser")
    if isinstance(chooser, dict):
        lines.append("file chooser open" + (" (multiple)" if chooser.get("multiple") else "")
                     + ": answer it with `browserd upload FILE…`")
    for download in effects.get("downloads") or []:
        if isinstance(download, dict):
            lines.append(f"download: {download.get('suggestedFilename')!r} "
                         f"(id {download.get('id')}, GET /downloads)")
    for block in effects.get("blocked") or []:
        if isinstance(block, dict):
            lines.append(f"blocked: {block.get('url')} ({block.get('reason')})")
    return lines


def _format_action(r: dict[str, Any]) -> str:
    """click/type/press answers: ``ok`` (+ how), then one line per effect."""
    head = "ok"
    if r.get("method"):
        how = str(r["method"])
        if r.get("fallbackReason"):
            how += f": {r['fallbackReason']}"
        head += f" ({how})"
    lines = [head]
    if isinstance(r.get("files"), list):
        lines.append("uploaded: " + (", ".join(map(str, r["files"])) or "(no files)"))
    if r.get("native"):
        lines.append("native drag-and-drop")
    return "\n".join([*lines, *_format_effects(r.get("effects") or {})])


def _format_page(r: dict[str, Any]) -> str:
    """/navigate and history answers: ``targetId  'title'  url  [status]  (loadState)``,
    then the effects beyond the navigation itself (downloads, blocks, a dialog)."""
    status = f"  [{r['status']}]" if r.get("status") else ""
    state = f"  ({r['loadState']})" if r.get("loadState") not in (None, "load") else ""
    effects = {k: v for k, v in (r.get("effects") or {}).items() if k != "navigated"}
    return "\n".join([f"{r['targetId']}  {str(r['title'])[:50]!r}  {r['url']}{status}{state}",
                      *_format_effects(effects)])


def _format_downloads(r: dict[str, Any]) -> str:
    lines = []
    for d in r["downloads"]:
        if not isinstance(d, dict):
            continue
        size = d.get("totalBytes") or d.get("receivedBytes")
        lines.append(f"{d.get('id')}  {d.get('state')}  {d.get('suggestedFilename')!r}"
                     + (f"  {size} bytes" if size else "") + f"  {d.get('url', '')}")
    return "\n".join(lines) or "no downloads"


def _format_dom_snapshot(r: dict[str, Any]) -> str:
    lines = []
    for n in r.get("nodes", []):
        extra = "".join(f" {k}={n[k]!r}" for k in ("role", "name", "text", "href", "value")
                        if n.get(k) not in (None, ""))
        lines.append(f"{'  ' * int(n.get('depth') or 0)}[{n.get('ref')}] {n.get('tag')}{extra}")
    if r.get("truncated"):
        lines.append("… (truncated)")
    return "\n".join(lines)


def _format_snapshot(r: dict[str, Any]) -> str:
    """aria / read text (read: title, URL and load state first); a cut or still-loading
    answer ends with a line saying so."""
    if r.get("format") == "domSnapshot":
        return _format_dom_snapshot(r)
    text = str(r.get("text", "")).rstrip("\n")
    if r.get("format") == "read":
        text = f"{r.get('title', '')}\n{r.get('url', '')}  [{r.get('loadState', '')}]\n\n{text}"
    if r.get("loadState") == "loading":
        text += "\n… (the page was still loading)"
    if r.get("truncated"):
        text += f"\n… (truncated: {r.get('hint', '')})"
    return text


def _format_scroll(r: dict[str, Any]) -> str:
    edge = " (top)" if r.get("atTop") else " (bottom)" if r.get("atBottom") else ""
    how = str(r.get("method", ""))
    if r.get("fallbackReason"):
        how += f": {r['fallbackReason']}"
    return f"{r.get('scroller', 'page')} at x={r['scrollX']:g} y={r['scrollY']:g}{edge}  [{how}]"


def _format_console(r: dict[str, Any]) -> str:
    lines = [f"{m.get('level', 'log'):5} {m.get('text', '')}" for m in r.get("messages", [])]
    return "\n".join(lines) or "no console messages"


def _format_steps(r: dict[str, Any]) -> str:
    lines = []
    for step in r.get("steps", []):
        head = f"{step.get('index')}: {step.get('kind')} "
        if step.get("ok"):
            result = step.get("result") or {}
            effects = _format_effects(result.get("effects") or {})
            lines.append(head + "ok" + ("; " + "; ".join(effects) if effects else ""))
        else:
            error = step.get("error") or {}
            lines.append(head + f"failed: {error.get('error')} [{error.get('code')}]")
    return "\n".join(lines)


def human(result: Any) -> str:
    """``result`` (a decoded answer) as text for a person."""
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        network = format_network(result)
        if network is not None:
            return network
        if "state" in result and "controlUrl" in result:
            return _format_status(result)
        if isinstance(result.get("tabs"), list) and "running" in result:
            return _format_tabs(result)
        if "snapshotId" in result:
            return _format_snapshot(result)
        if "path" in result and "mediaUrl" in result:
            return str(result["path"])
        if "scrollY" in result and "atBottom" in result:
            return _format_scroll(result)
        if "steps" in result and isinstance(result["steps"], list):
            return _format_steps(result)
        if isinstance(result.get("messages"), list):
            return _format_console(result)
        if isinstance(result.get("matches"), list):
            return format_matches(result)
        if "html" in result or ("text" in result and "format" in result):
            return str(result.get("html", result.get("text", ""))).rstrip("\n")
        if "result" in result and "url" in result:
            value = result["result"]
            return value if isinstance(value, str) else orjson.dumps(value).decode()
        if "isActive" in result and "targetId" in result:
            return _format_tabs({"running": True, "tabs": [result]})
        if "title" in result and "url" in result and "targetId" in result:
            return _format_page(result)
        if "effects" in result:
            return _format_action(result)
        if isinstance(result.get("downloads"), list):
            return _format_downloads(result)
        if "stopped" in result:
            return "stopped" if result["stopped"] else "the browser was not running"
        if set(result) == {"ok", "targetId"}:
            return f"ok {result['targetId']}"
    return orjson.dumps(result, option=orjson.OPT_INDENT_2).decode()
