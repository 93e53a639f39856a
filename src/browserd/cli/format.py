"""Human-readable output of the ``browserd`` CLI: one formatter per answer shape.

:func:`human` picks the formatter from the answer's keys (status, tabs,
snapshots, captures, action effects, history moves, scrolls, find, query
and DOM reads, console lines, downloads, liveness, handoffs, waits, saved
files; profiles, sessions, cookies, storage and emulation in
:mod:`browserd.cli.format_state`); anything else is printed as ``key: value``
lines (:func:`browserd.cli.format_state.format_fields`), never as JSON.
``--json`` bypasses all of this. Page content is printed as data, never
interpreted; the service's hints in an answer (a cut snapshot's) are
rewritten by ``words`` (route mentions as commands: :mod:`browserd.cli.hints`).

With a ``nonce``, what the page provided (tab titles and URLs, snapshot and
DOM text, find matches, eval values, console lines, network data, effects)
is printed between the page boundary lines of that nonce
(:func:`browserd.answer_text.page_block`), browserd's own words outside it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from ..answer_text import format_matches, page_block
from .format_state import format_fields, format_state
from .network import format_network

__all__ = ["PageText", "human"]


def _format_capture(result: dict[str, Any]) -> str:
    """A capture's file; with ``diff`` (``--since``), a line of what changed and the file of
    the changed region."""
    diff = result.get("diff")
    if not isinstance(diff, dict):
        return str(result["path"])
    if not diff.get("changed"):
        return f"{result['path']}\nno change since {diff.get('since')}"
    r = diff.get("region") or {}
    return (f"{result['path']}\nchanged: x={r.get('x')} y={r.get('y')} "
            f"{r.get('width')}x{r.get('height')} (CSS px), {diff.get('changedPixels')} px "
            f"({100 * float(diff.get('ratio') or 0):.2f}%)\n{diff.get('path')}")


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


def _format_tabs(r: dict[str, Any], nonce: str | None = None) -> str:
    if not r.get("running"):
        return "browser not running"
    if not r["tabs"]:
        return "no tabs"
    return page_block("\n".join(
        f"{'*' if t['isActive'] else ' '} {t['targetId']}  {t['title'][:50]!r}  {t['url']}"
        + ("  [crashed]" if t.get("crashed") else "") for t in r["tabs"]), nonce)


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
                         f"(browserd download {download.get('id')} --out FILE)")
    for block in effects.get("blocked") or []:
        if isinstance(block, dict):
            lines.append(f"blocked: {block.get('url')} ({block.get('reason')})")
    return lines


def _effects_block(effects: dict[str, Any], nonce: str | None) -> list[str]:
    """The effect lines (URLs, dialog texts, file names: the page's) inside the boundary."""
    lines = _format_effects(effects)
    return [page_block("\n".join(lines), nonce)] if lines else []


def _format_action(r: dict[str, Any], nonce: str | None = None) -> str:
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
    page = []
    if isinstance(r.get("selected"), list):  # the options' values: the page's words
        page.append(page_block("selected: " + ", ".join(map(str, r["selected"])), nonce))
    return "\n".join([*lines, *page, *_effects_block(r.get("effects") or {}, nonce)])


def _format_page(r: dict[str, Any], nonce: str | None = None) -> str:
    """/navigate and history answers: ``targetId  'title'  url  [status]  (loadState)``,
    then the effects beyond the navigation itself (downloads, blocks, a dialog)."""
    status = f"  [{r['status']}]" if r.get("status") else ""
    state = f"  ({r['loadState']})" if r.get("loadState") not in (None, "load") else ""
    effects = {k: v for k, v in (r.get("effects") or {}).items() if k != "navigated"}
    page = f"{r['targetId']}  {str(r['title'])[:50]!r}  {r['url']}"
    tail = (status + state).strip()
    head = ([page + status + state] if nonce is None
            else [page_block(page, nonce), *([tail] if tail else [])])
    return "\n".join([*head, *_effects_block(effects, nonce)])


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


def _format_snapshot(r: dict[str, Any], nonce: str | None = None,
                     words: Callable[[str], str] = str) -> str:
    """aria / read text (read: title, URL and load state first); a cut or still-loading
    answer ends with a line saying so."""
    if r.get("format") == "domSnapshot":
        return page_block(_format_dom_snapshot(r), nonce)
    text = str(r.get("text", "")).rstrip("\n")
    if isinstance(r.get("diff"), dict):  # only what changed since baseSnapshotId
        diff = r["diff"]
        text = "\n".join([f"+ {line}" for line in diff.get("added", [])]
                         + [f"- {line}" for line in diff.get("removed", [])]
                         + [f"~ {line}" for line in diff.get("changed", [])])
        text = f"(changes since {r.get('baseSnapshotId')})\n" + page_block(text, nonce)
    elif r.get("format") == "read":
        text = page_block(f"{r.get('title', '')}\n{r.get('url', '')}", nonce) \
            + f"  [{r.get('loadState', '')}]\n\n" + page_block(text, nonce)
    else:
        text = page_block(text, nonce)
    if r.get("loadState") == "loading":
        text += "\n… (the page was still loading)"
    if r.get("truncated"):
        text += f"\n… (truncated: {words(str(r.get('hint', '')))})"
    return text


def _format_scroll(r: dict[str, Any]) -> str:
    edge = " (top)" if r.get("atTop") else " (bottom)" if r.get("atBottom") else ""
    how = str(r.get("method", ""))
    if r.get("fallbackReason"):
        how += f": {r['fallbackReason']}"
    return f"{r.get('scroller', 'page')} at x={r['scrollX']:g} y={r['scrollY']:g}{edge}  [{how}]"


def _format_console(r: dict[str, Any], nonce: str | None = None) -> str:
    lines = [f"{m.get('level', 'log'):5} {m.get('text', '')}" for m in r.get("messages", [])]
    return page_block("\n".join(lines), nonce) if lines else "no console messages"


def _format_steps(r: dict[str, Any], nonce: str | None = None) -> str:
    lines = []
    for step in r.get("steps", []):
        head = f"{step.get('index')}: {step.get('kind')} "
        if step.get("ok"):
            result = step.get("result") or {}
            if isinstance(result.get("matches"), list):  # a find: what it read
                lines.append(head + "ok\n" + page_block(format_matches(result), nonce))
                continue
            effects = _format_effects(result.get("effects") or {})
            lines.append(head + "ok" + ("; " + page_block("; ".join(effects), nonce)
                                        if effects else ""))
        else:
            error = step.get("error") or {}
            lines.append(head + f"failed: {error.get('error')} [{error.get('code')}]")
    return "\n".join(lines)


def _format_service(r: dict[str, Any]) -> str | None:
    """Liveness, handoffs, waits and files written (``--out``), or None."""
    if set(r) - {"proof"} == {"ok", "browser"}:
        return f"{'ok' if r['ok'] else 'not ok'} (browser {r['browser']})"
    if isinstance(r.get("handoff"), dict) and "targetId" in r:
        return (f"tab {r['targetId']} handed to a person: {r['handoff'].get('reason')!r}; "
                "agent input on it waits until they click Done (browserd wait --handoff)")
    if "ended" in r and "targetId" in r:
        return (f"handoff of tab {r['targetId']} withdrawn" if r["ended"]
                else f"tab {r['targetId']} had no handoff")
    if "waitedMs" in r and set(r) - {"untrusted"} <= {"ok", "targetId", "waitedMs"}:
        return f"ok (after {r['waitedMs']} ms)"
    if set(r) == {"path", "bytes"}:
        return f"wrote {r['bytes']} bytes to {r['path']}"
    return None


_PAGE_DATA = frozenset({"cookies", "origins", "items", "elements", "requests", "untrusted"})
"""Keys of answers whose fallback rendering is the page's data."""


class PageText(str):
    """A command's text that holds what a page provided: printed between the boundary
    lines (a plain ``str`` is the command's own words)."""

    __slots__ = ()


def human(result: Any, nonce: str | None = None, words: Callable[[str], str] = str) -> str:
    """``result`` (a decoded answer) as text for a person; with ``nonce``, the page's
    parts between that nonce's boundary lines; ``words`` rewrites the service's hints
    (default: as they are)."""
    if isinstance(result, PageText):
        return page_block(str(result), nonce)
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        network = format_network(result)
        if network is not None:
            return page_block(network, nonce)
        service = _format_service(result)
        if service is not None:
            return service
        state = format_state(result)
        if state is not None:
            page = bool(result.get("cookies") or result.get("items"))
            return page_block(state, nonce) if page else state
        if "state" in result and "controlUrl" in result:
            return _format_status(result)
        if isinstance(result.get("tabs"), list) and "running" in result:
            return _format_tabs(result, nonce)
        if "snapshotId" in result:
            return _format_snapshot(result, nonce, words)
        if "path" in result and "mediaUrl" in result:
            return _format_capture(result)
        if "scrollY" in result and "atBottom" in result:
            return _format_scroll(result)
        if "steps" in result and isinstance(result["steps"], list):
            return _format_steps(result, nonce)
        if isinstance(result.get("messages"), list):
            return _format_console(result, nonce)
        if isinstance(result.get("matches"), list):
            return page_block(format_matches(result), nonce)
        if "html" in result or ("text" in result and "format" in result):
            return page_block(str(result.get("html", result.get("text", ""))).rstrip("\n"),
                              nonce)
        if "result" in result and "url" in result:
            value = result["result"]
            return page_block(value if isinstance(value, str) else orjson.dumps(value).decode(),
                              nonce)
        if "isActive" in result and "targetId" in result:
            return _format_tabs({"running": True, "tabs": [result]}, nonce)
        if "title" in result and "url" in result and "targetId" in result:
            return _format_page(result, nonce)
        if "effects" in result:
            return _format_action(result, nonce)
        if isinstance(result.get("downloads"), list):
            text = _format_downloads(result)
            return page_block(text, nonce) if result["downloads"] else text
        if "stopped" in result:
            return "stopped" if result["stopped"] else "the browser was not running"
        if set(result) == {"ok", "targetId"}:
            return f"ok {result['targetId']}"
        text = format_fields(result)
        return page_block(text, nonce) if _PAGE_DATA & set(result) else text
    return format_fields(result)
