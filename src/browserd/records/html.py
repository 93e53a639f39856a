"""A record as one self-contained HTML page a person can read (and keep, or mail).

Inline CSS, screenshots as ``data:`` URLs, no script, and a Content Security
Policy that allows nothing else (no fetch, no script, no frame), so the page
works offline and the recorded page content cannot act in it. Everything
that came from the page or the agent (titles, names, URLs, console lines,
arguments) is HTML-escaped. Plain code: no I/O.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from .model import Call, RecordInfo, Step, Target

__all__ = ["record_html"]

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#222;background:#fafafa}
h1{font-size:1.3rem}table{border-collapse:collapse}td,th{padding:.2rem .5rem;text-align:left}
.step{background:#fff;border:1px solid #ddd;border-radius:6px;margin:1rem 0;padding:.8rem}
.step.failed{border-color:#c33}.kind{font-weight:600}.ok{color:#283}.err{color:#c33}
.shots{display:flex;gap:.8rem;margin:.5rem 0}.shots figure{margin:0}
.shots img{max-width:320px;border:1px solid #ccc}figcaption{font-size:12px;color:#666}
code,pre{font:12px ui-monospace,monospace;background:#f1f1f1;padding:.1rem .3rem}
pre{white-space:pre-wrap;word-break:break-all;padding:.4rem}
.meta{color:#555;font-size:13px}
"""
_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


def _when(ts: float | None) -> str:
    if ts is None:
        return "—"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts))


def _target_text(target: Target) -> str:
    parts = []
    if target.role:
        parts.append(escape(target.role))
    if target.name is not None:
        parts.append(f"&ldquo;{escape(target.name)}&rdquo;")
    if target.ref:
        parts.append(f"<code>{escape(target.ref)}</code>")
    if target.selector:
        parts.append(f"selector <code>{escape(target.selector)}</code>")
    if target.text:
        parts.append(f"text &ldquo;{escape(target.text)}&rdquo;")
    if target.within is not None:
        parts.append(f"within {_target_text(target.within)}")
    return " ".join(parts)


def _call_html(call: Call) -> str:
    targets = "".join(f"<tr><th>{escape(field)}</th><td>{_target_text(t)}</td></tr>"
                      for field, t in call.targets.items())
    args = escape(json.dumps(dict(call.args), ensure_ascii=False, indent=1))
    return (f"<div><span class=kind>{escape(call.kind)}</span>"
            f"<table>{targets}</table><pre>{args}</pre></div>")


def _shot_html(step: Step, which: str, shots: Mapping[str, bytes]) -> str:
    shot = step.before if which == "before" else step.after
    if shot is None or shot.name not in shots:
        return ""
    data = base64.b64encode(shots[shot.name]).decode("ascii")
    return (f"<figure><img alt=\"{which}\" width={int(shot.width)} height={int(shot.height)} "
            f"src=\"data:image/jpeg;base64,{data}\"><figcaption>{which}</figcaption></figure>")


def _list(items: Sequence[Mapping[str, Any]], title: str, fmt: Any) -> str:
    if not items:
        return ""
    rows = "".join(f"<li>{fmt(item)}</li>" for item in items)
    return f"<div class=err>{escape(title)}<ul>{rows}</ul></div>"


def _step_html(step: Step, shots: Mapping[str, bytes]) -> str:
    status = ("<span class=ok>ok</span>" if step.ok else
              f"<span class=err>{escape(str((step.error or {}).get('code')))}: "
              f"{escape(str((step.error or {}).get('message') or ''))}</span>")
    calls = "".join(_call_html(c) for c in step.calls())
    effects = ("" if not step.effects else
               f"<div>effects <pre>{escape(json.dumps(dict(step.effects), ensure_ascii=False))}"
               "</pre></div>")
    console = _list(step.console, "console errors",
                    lambda c: escape(str(c.get("text") or "")))
    failed = _list(step.failed_requests, "failed requests",
                   lambda r: escape(f"{r.get('method')} {r.get('url')} "
                                    f"{r.get('status') or r.get('errorText') or ''}"))
    return (f"<section class=\"step{'' if step.ok else ' failed'}\" id=step-{step.index}>"
            f"<div class=meta>#{step.index} · {escape(_when(step.started_at))} · "
            f"{step.duration_ms:g} ms · {status}</div>{calls}{effects}"
            f"<div class=meta>then at {escape(step.url or '')} "
            f"&ldquo;{escape(step.title or '')}&rdquo;</div>"
            f"<div class=shots>{_shot_html(step, 'before', shots)}"
            f"{_shot_html(step, 'after', shots)}</div>{console}{failed}</section>")


def record_html(info: RecordInfo, steps: Sequence[Step], shots: Mapping[str, bytes]) -> str:
    """The page for ``info`` and its ``steps``; ``shots`` maps shot names to their bytes."""
    title = f"browserd record {info.id}"
    head = (f"<tr><th>profile</th><td>{escape(info.profile)}</td></tr>"
            f"<tr><th>session</th><td>{escape(info.session or '—')}</td></tr>"
            f"<tr><th>tab</th><td>{escape(info.target_id or 'every tab')}</td></tr>"
            f"<tr><th>started</th><td>{escape(_when(info.started_at))}</td></tr>"
            f"<tr><th>stopped</th><td>{escape(_when(info.stopped_at))}</td></tr>"
            f"<tr><th>steps</th><td>{len(steps)}"
            f"{' (truncated)' if info.truncated else ''}</td></tr>")
    body = "".join(_step_html(s, shots) for s in steps) or "<p>No steps were recorded.</p>"
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{_CSP}\">"
            f"<title>{escape(title)}</title><style>{_CSS}</style></head>"
            f"<body><h1>{escape(title)}</h1><table class=meta>{head}</table>{body}"
            "</body></html>\n")
