"""CLI commands for the tab's network: ``browserd network [show ID | block | headers | har]``.

``browserd network`` lists the tab's recent requests (``GET /network``);
``show ID`` prints one request's headers, post data and body;
``block PATTERN…`` and ``headers 'Name: value'…`` replace the tab's blocked
patterns / extra headers (none given: clear them); ``har`` writes a HAR file
into the media store and prints its path. Each is one request to the
service (see docs/api.md).
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import BadRequest

__all__ = ["NETWORK_COMMANDS", "add_network_commands", "format_network"]


def add_network_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``network`` and its actions to the ``browserd`` subparsers ``sub``.

    ``sub.add_parser`` gives the command the ``common`` options already; the
    actions (``show``, ``block``…) are given them here.
    """
    p = sub.add_parser("network", help="the tab's recent requests (see the sub-commands)")
    p.add_argument("--url", help="only URLs containing this")
    p.add_argument("--type", help="only this resource type (document, xhr, fetch, image…)")
    p.add_argument("--status", type=int)
    p.add_argument("--failed", action="store_true", default=None)
    p.add_argument("--limit", type=int)
    p.add_argument("--clear", action="store_true", default=None)
    p.add_argument("--target")
    actions = p.add_subparsers(dest="network_action")
    show = actions.add_parser("show", parents=[common], help="one request: headers and body")
    show.add_argument("id")
    show.add_argument("--max-bytes", type=int)
    block = actions.add_parser("block", parents=[common],
                               help="block URL patterns (none: clear), e.g. '*://*:*/*.png'")
    block.add_argument("patterns", nargs="*")
    headers = actions.add_parser("headers", parents=[common],
                                 help="extra headers on every request, 'Name: value' (none: clear)")
    headers.add_argument("headers", nargs="*")
    har = actions.add_parser("har", parents=[common], help="export a HAR file; prints its path")
    har.add_argument("--bodies", action="store_true", default=None)
    for action in (show, block, headers, har):
        action.add_argument("--target", dest="action_target")


def _network(c: Any, a: argparse.Namespace) -> Any:
    target = getattr(a, "action_target", None) or a.target
    action = a.network_action
    if action == "show":
        return c.get(f"/network/{a.id}", targetId=target, maxBytes=a.max_bytes)
    if action == "block":
        return c.post("/network/block", patterns=a.patterns, targetId=target)
    if action == "headers":
        pairs = {}
        for item in a.headers:
            name, sep, value = item.partition(":")
            if not sep:
                raise BadRequest(f"{name[:40]!r}: give headers as 'Name: value'")
            pairs[name.strip()] = value.strip()
        return c.post("/network/headers", headers=pairs, targetId=target)
    if action == "har":
        return c.post("/network/har", bodies=a.bodies, targetId=target)
    return c.get("/network", urlContains=a.url, resourceType=a.type, status=a.status,
                 failed=a.failed, limit=a.limit, clear=a.clear, targetId=target)


NETWORK_COMMANDS = {"network": _network}


def _format_list(r: dict[str, Any]) -> str:
    lines = []
    for q in r["requests"]:
        status = "FAIL" if q["failed"] else ("…" if q.get("pending") else str(q["status"]))
        ms = f"{q['durationMs']:.0f}ms" if q.get("durationMs") is not None else "-"
        tail = f"  {q['errorText']}" if q.get("errorText") else ""
        lines.append(f"{q['id']:>5} {status:>4} {q['method']:<6} {q['resourceType']:<10} "
                     f"{ms:>7}  {q['url'][:160]}{tail}")
    if not lines:
        lines.append("no requests recorded")
    if r.get("dropped"):
        lines.append(f"({r['dropped']} older requests dropped)")
    if r.get("note"):
        lines.append(f"note: {r['note']}")
    return "\n".join(lines)


def _format_request(r: dict[str, Any]) -> str:
    lines = [f"{r['method']} {r['url']}",
             f"status: {r.get('status')} {r.get('statusText') or ''}  type: {r['resourceType']}"
             f"  mime: {r.get('mimeType')}"]
    if r.get("errorText"):
        lines.append(f"error: {r['errorText']}")
    lines += ["request headers:", *(f"  {k}: {v}" for k, v in r["requestHeaders"].items())]
    if r.get("postData") is not None:
        lines += ["post data:", str(r["postData"])]
    lines += ["response headers:", *(f"  {k}: {v}" for k, v in r["responseHeaders"].items())]
    if r.get("body") is None:
        lines.append(f"body: unavailable ({r.get('bodyUnavailable')})")
    elif r.get("bodyEncoding") == "base64":
        lines.append(f"body: {r['bodyBytes']} bytes of binary (base64; use --json)")
    else:
        cut = "  (truncated)" if r.get("bodyTruncated") else ""
        lines += [f"body ({r['bodyBytes']} bytes){cut}:", str(r["body"])]
    return "\n".join(lines)


def format_network(result: dict[str, Any]) -> str | None:
    """The human text of a network answer, or None when ``result`` is not one."""
    if isinstance(result.get("requests"), list) and "dropped" in result:
        return _format_list(result)
    if "requestHeaders" in result and "responseHeaders" in result:
        return _format_request(result)
    if "blocked" in result and "extraHeaders" in result:
        return (f"blocked: {' '.join(result['blocked']) or '-'}\n"
                f"extra headers: {' '.join(result['extraHeaders']) or '-'}")
    return None
