"""What an agent reads: route answers (JSON) turned into MCP tool content.

How an answer is rendered is its route's ``render`` fact
(:class:`browserd.http.facts.Render`, declared by every MCP tool):
:func:`render_answer` renders by it, :func:`render_result` by the name of
the operation whose route declares it. A snapshot is its text (with the
page's title, URL and load state on top and a line when it was cut); find
matches are one per line; a script's value is itself (a string) or JSON;
tabs are one line each; an action is ``ok`` plus what it caused; a
screenshot is the image itself (when at most :data:`IMAGE_MAX_BYTES`) plus a
line with its ``mediaUrl`` — with a ``diff`` (``since``), a line saying what
changed and the image of just the changed region, or no image at all when
nothing changed (:func:`image_source`). Any other answer is ``key: value``
lines, nested values as compact JSON (all inside the page boundary when the
whole answer is the page's: console lines, network data, cookies, stored
state). Errors are ``CODE (status): message`` plus the hint and any details.
Everything here is plain code: no I/O.

**Provenance.** Whatever the page provided (a snapshot's text, titles, URLs,
find matches, eval values, DOM text, console lines, an action's effects) is
put between the page boundary lines of one nonce per answer
(:func:`browserd.answer_text.page_block`), so a host can tell page text from
browserd's own words.
"""

from __future__ import annotations

import base64
from functools import cache
from typing import Any

import orjson

from .. import jsontext
from ..answer_text import format_matches, new_nonce, page_block
from ..http.catalog import catalog
from ..http.facts import Render

__all__ = ["IMAGE_MAX_BYTES", "Content", "image_source", "new_nonce", "page_block",
           "render_answer", "render_error", "render_result", "rendering_of", "wants_image"]

IMAGE_MAX_BYTES = 1024 * 1024
"""A screenshot larger than this is answered by its mediaUrl only."""

Content = dict[str, Any]
"""One MCP content item as JSON: ``{type: "text", text}`` or ``{type: "image", data, mimeType}``."""

_QUIET = frozenset({"ok", "stats", "snapshotId", "untrusted"})


def _json(value: Any) -> str:
    return jsontext.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def _text(text: str) -> Content:
    return {"type": "text", "text": text}


def _lines(result: dict[str, Any], skip: frozenset[str] = _QUIET) -> str:
    out = []
    for key, value in result.items():
        if key in skip or value is None or value == {} or value == []:
            continue
        shown = value if isinstance(value, str) else _json(value)
        out.append(f"{key}: {shown}")
    return "\n".join(out) or "ok"


def _snapshot(r: dict[str, Any], nonce: str) -> str:
    head = " ".join(part for part in (
        f"Page: {r['title']}" if r.get("title") else "",
        f"({r['url']})" if r.get("url") else "",
        f"[{r['loadState']}]" if r.get("loadState") else "") if part)
    text = str(r.get("text", "")).rstrip("\n")
    if isinstance(r.get("diff"), dict):  # only what changed since baseSnapshotId
        diff = r["diff"]
        text = "\n".join([f"(changes since {r.get('baseSnapshotId')})"]
                         + [f"+ {line}" for line in diff.get("added", [])]
                         + [f"- {line}" for line in diff.get("removed", [])]
                         + [f"~ {line}" for line in diff.get("changed", [])])
    if r.get("format") == "domSnapshot" and "nodes" in r and not text:
        text = _json(r["nodes"])
    parts = [page_block("\n".join([head, text] if head else [text]), nonce)]
    if r.get("loadState") == "loading":
        parts.append("(the page was still loading)")
    if r.get("truncated"):
        parts.append(f"(truncated: {r.get('hint', 'ask for less with root')})")
    if r.get("nodes") and r.get("format") != "domSnapshot":
        parts.append(page_block("nodes: " + _json(r["nodes"]), nonce))
    return "\n".join(parts)


def _tabs(r: dict[str, Any], nonce: str) -> str:
    if not r.get("running", True):
        return "the browser is not running"
    tabs = r.get("tabs", [])
    if not tabs:
        return "no tabs"
    return page_block("\n".join(f"{'*' if t.get('isActive') else ' '} {t['targetId']}  "
                     f"{str(t.get('title', ''))!r}  {t.get('url', '')}"
                     + ("  [crashed]" if t.get("crashed") else "") for t in tabs), nonce)


def _action(r: dict[str, Any], nonce: str) -> str:
    head = "ok"
    if r.get("method"):
        head += f" ({r['method']}" + (f": {r['fallbackReason']}" if r.get("fallbackReason")
                                      else "") + ")"
    rest = _lines(r, _QUIET | {"method", "fallbackReason", "effects", "targetId"})
    effects = r.get("effects") or {}
    lines = [head] + ([page_block(rest, nonce)] if rest != "ok" else [])
    effect_lines = [f"{key}: {v if isinstance(v, str) else _json(v)}"
                    for key, v in effects.items() if v not in (None, False, [], {})]
    if effect_lines:  # URLs, titles and dialog texts: the page's
        lines.append(page_block("\n".join(effect_lines), nonce))
    return "\n".join(lines)


def _step_said(step: dict[str, Any]) -> str | None:
    """What a succeeded step has to say (the page's words): a find's matches as the find
    tool shows them (the count only when it says more than the lines), else what it
    caused (``navigated URL; dialog …``); None for nothing."""
    result = step.get("result") or {}
    head = f"{step.get('index')} {step.get('kind')}: "
    if isinstance(result.get("matches"), list):  # a find: what it read
        return head + format_matches(result, counted=False)
    effects = result.get("effects") or {}
    shown = [f"{k} {v if isinstance(v, str) else _json(v)}" for k, v in effects.items()
             if v not in (None, False, [], {})]
    return head + "; ".join(shown) if shown else None


def _act(r: dict[str, Any], nonce: str) -> str:
    """An /act batch: ``ok`` (or where it stopped, the failed step's code, message
    and hint), then in one page boundary what the steps had to say — a find's matches, what
    a step caused, the failed step's details — then the snapshot or diff when one was asked
    for. A step with nothing to say takes no line."""
    steps = [step for step in r.get("steps") or [] if isinstance(step, dict)]
    said = [line for step in steps if step.get("ok") and (line := _step_said(step))]
    failed = next((step for step in steps if not step.get("ok")), None)
    if failed is None:
        lines = ["ok"]  # (every step ran)
    else:
        error = failed.get("error") or {}
        lines = [f"stopped at step {failed.get('index')} ({failed.get('kind')}): "
                 f"{error.get('code')}: {error.get('error')}"]
        if error.get("hint"):
            lines.append(f"hint: {error['hint']}")
        details = {k: v for k, v in error.items() if k not in ("error", "code", "hint")}
        if details:
            said.append(f"{failed.get('index')} {failed.get('kind')} details: "
                        + _json(details))
    if said:
        lines.append(page_block("\n".join(said), nonce))
    if isinstance(r.get("snapshot"), dict):
        lines.append(_snapshot(r["snapshot"], nonce))
    return "\n".join(lines)


def wants_image(result: Any) -> bool:
    """True for a screenshot answer small enough to send as image content."""
    return (isinstance(result, dict) and str(result.get("mime", "")).startswith("image/")
            and isinstance(result.get("bytes"), int) and result["bytes"] <= IMAGE_MAX_BYTES)


def image_source(result: Any) -> dict[str, Any] | None:
    """The answer part whose image a screenshot's content shows: the changed region of a
    diff, nothing for a diff without change, else the screenshot itself; None when there is
    no image to send (or it is too large: :func:`wants_image`)."""
    if not isinstance(result, dict):
        return None
    diff = result.get("diff")
    source = (diff if diff.get("changed") else None) if isinstance(diff, dict) else result
    return source if wants_image(source) else None


def _diff_line(diff: dict[str, Any]) -> str:
    if not diff.get("changed"):
        return f"no change since {diff.get('since')} (tolerance {diff.get('tolerance')})"
    r = diff.get("region") or {}
    return (f"changed since {diff.get('since')}: region x={r.get('x')} y={r.get('y')} "
            f"{r.get('width')}x{r.get('height')} (CSS px), {diff.get('changedPixels')} pixels "
            f"({100 * float(diff.get('ratio') or 0):.2f}%); the image below is that region: "
            f"{diff.get('mediaUrl')}")


@cache
def _renderings() -> dict[str, Render]:
    return {name: op.route.render for name, op in catalog().items()
            if op.route.render is not None}


def rendering_of(name: str) -> Render:
    """How the answer of the operation ``name`` is rendered (its route's ``render``;
    ``fields`` for a name no tool has)."""
    return _renderings().get(name, Render.FIELDS)


def render_result(name: str, result: Any, image: bytes | None = None, *,
                  nonce: str | None = None) -> list[Content]:
    """The content of a successful call of the operation ``name`` (its route's rendering,
    :func:`render_answer`)."""
    return render_answer(rendering_of(name), result, image, nonce=nonce)


def _capture(render: Render, result: dict[str, Any], image: bytes | None) -> list[Content]:
    """A capture's line (its file, size, a diff's change) and, for an image, the image."""
    size = (f" {result['width']}x{result['height']}" if result.get("width") else "")
    line = (f"{result.get('mime')}{size}, {result.get('bytes')} bytes: "
            f"{result.get('mediaUrl')} (also at {result.get('path')})")
    if result.get("note"):
        line += f"\n{result['note']}"
    diff = result.get("diff")
    shown = result
    if isinstance(diff, dict):
        line += f"\n{_diff_line(diff)}"
        shown = diff
    if image is None and render is Render.IMAGE and shown.get("mediaUrl"):
        line += f"\n(larger than {IMAGE_MAX_BYTES} bytes: fetch it from its mediaUrl)" \
            if not wants_image(shown) else ""
    content = [_text(line)]
    if image is not None:
        content.append({"type": "image", "data": base64.b64encode(image).decode(),
                        "mimeType": shown.get("mime", "image/png")})
    return content


def render_answer(render: Render, result: Any, image: bytes | None = None, *,
                  nonce: str | None = None) -> list[Content]:
    """The content of a successful call whose route renders its answer as ``render``
    (``image``: a screenshot's bytes); page-provided text inside the boundary of
    ``nonce`` (a new one when None)."""
    nonce = nonce or new_nonce()
    if not isinstance(result, dict):
        return [_text(page_block(result if isinstance(result, str) else _json(result), nonce))]
    match render:
        case Render.SNAPSHOT:
            return [_text(_snapshot(result, nonce))]
        case Render.MATCHES:
            return [_text(page_block(format_matches(result), nonce))]
        case Render.VALUE:
            value = result.get("result")
            return [_text(page_block(value if isinstance(value, str) else _json(value),
                                     nonce))]
        case Render.TABS:
            return [_text(_tabs(result, nonce))]
        case Render.STEPS:
            return [_text(_act(result, nonce))]
        case Render.OPENED:
            return [_text("opened\n" + _tabs({"tabs": [result]}, nonce))]
        case Render.IMAGE | Render.FILE:
            return _capture(render, result, image)
        case Render.ACTION:
            text = _action({k: v for k, v in result.items() if k != "snapshot"}, nonce)
            if isinstance(result.get("snapshot"), dict):
                text += "\n" + _snapshot(result["snapshot"], nonce)
            return [_text(text)]
        case Render.TEXT:
            text = page_block(str(result.get("text", "")), nonce)
            return [_text(text + ("\n(truncated)" if result.get("truncated") else ""))]
        case Render.PAGE:
            return [_text(page_block(_lines(result), nonce))]
    return [_text(_lines(result))]


def render_error(body: dict[str, Any], status: int, *,
                 nonce: str | None = None) -> list[Content]:
    """An error answer (``{error, code, hint?, …}``) as the text of a tool error; its
    details (a dialog's text, a URL: the page's) inside the page boundary."""
    lines = [f"{body.get('code', 'INTERNAL')} ({status}): {body.get('error', '')}"]
    if body.get("hint"):
        lines.append(f"hint: {body['hint']}")
    extra = {k: v for k, v in body.items() if k not in ("error", "code", "hint")}
    if extra:
        lines.append(page_block("details: " + _json(extra), nonce or new_nonce()))
    return [_text("\n".join(lines))]
