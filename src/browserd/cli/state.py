"""CLI commands for cookies, web storage, storage state and emulation.

``browserd cookies [list|set|delete]``, ``browserd storage get|set|delete``,
``browserd state save|load FILE`` and ``browserd emulate``. Each is one
request to the service (see docs/api.md); a saved state file holds live
session cookies, so it is written owner-only (0600).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import orjson

from ..errors import BadRequest

__all__ = ["STATE_COMMANDS", "add_state_commands"]


def add_state_commands(sub: Any) -> None:
    """Add the commands to the ``browserd`` subparsers ``sub``."""
    p = sub.add_parser("cookies", help="list, set or delete cookies")
    actions = p.add_subparsers(dest="cookies_action")
    for parser in (p, actions.add_parser("list", help="list cookies (the default)")):
        parser.add_argument("--url", help="those the browser would send to this URL")
        parser.add_argument("--domain", help="those of this domain and its subdomains")
        parser.add_argument("--name")
    s = actions.add_parser("set", help="set one cookie")
    s.add_argument("name")
    s.add_argument("value")
    where = s.add_mutually_exclusive_group(required=True)
    where.add_argument("--url")
    where.add_argument("--domain")
    s.add_argument("--path")
    s.add_argument("--expires", type=float, help="seconds since the epoch")
    s.add_argument("--secure", action="store_true", default=None)
    s.add_argument("--http-only", action="store_true", default=None)
    s.add_argument("--same-site", choices=("Strict", "Lax", "None"))
    d = actions.add_parser("delete", help="delete cookies matching every filter")
    d.add_argument("--name")
    d.add_argument("--domain")
    d.add_argument("--url")
    d.add_argument("--all", action="store_true", default=None, help="every cookie")

    p = sub.add_parser("storage", help="localStorage / sessionStorage of an origin")
    p.add_argument("action", choices=("get", "set", "delete"))
    p.add_argument("entries", nargs="*", help="set: KEY=VALUE …; delete: KEY … (none: all)")
    p.add_argument("--kind", choices=("local", "session"), default="local")
    p.add_argument("--origin", help="default: the tab's")
    p.add_argument("--target")

    p = sub.add_parser("state", help="save or load storage state (cookies + localStorage)")
    p.add_argument("action", choices=("save", "load"))
    p.add_argument("file", type=Path)
    p.add_argument("--origin", action="append", dest="origins",
                   help="save: also this origin's localStorage (repeatable)")

    p = sub.add_parser("emulate", help="emulate device, locale, timezone, … for a tab")
    p.add_argument("--viewport", help="WIDTHxHEIGHT")
    p.add_argument("--scale", type=float, help="device scale factor (with --viewport)")
    p.add_argument("--mobile", action="store_true", default=None)
    p.add_argument("--user-agent")
    p.add_argument("--locale")
    p.add_argument("--timezone")
    p.add_argument("--geolocation", help="LAT,LON[,ACCURACY]")
    p.add_argument("--color-scheme", choices=("light", "dark"))
    p.add_argument("--reduced-motion", choices=("reduce", "no-preference"))
    p.add_argument("--offline", action="store_true", default=None)
    p.add_argument("--online", dest="offline", action="store_false")
    p.add_argument("--cpu", type=float, help="CPU slowdown, 1 to 20")
    p.add_argument("--network", help="LATENCY_MS,DOWN_KBPS,UP_KBPS")
    p.add_argument("--reset", action="store_true", help="clear every emulation of the tab")
    p.add_argument("--target")


def _numbers(text: str, what: str, count: tuple[int, ...]) -> list[float]:
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise BadRequest(f"{what} must be comma-separated numbers") from None
    if len(values) not in count:
        raise BadRequest(f"{what} takes {' or '.join(map(str, count))} numbers")
    return values


def _cookies(c: Any, a: argparse.Namespace) -> Any:
    action = a.cookies_action or "list"
    if action == "list":
        return c.get("/cookies", url=a.url, domain=a.domain, name=a.name)
    if action == "set":
        cookie = {k: v for k, v in {
            "name": a.name, "value": a.value, "url": a.url, "domain": a.domain,
            "path": a.path, "expires": a.expires, "secure": a.secure,
            "httpOnly": a.http_only, "sameSite": a.same_site}.items() if v is not None}
        return c.post("/cookies", cookies=[cookie])
    return c.request("DELETE", "/cookies", {"name": a.name, "domain": a.domain,
                                            "url": a.url, "all": a.all})


def _storage(c: Any, a: argparse.Namespace) -> Any:
    common = {"kind": a.kind, "origin": a.origin, "targetId": a.target}
    if a.action == "get":
        return c.get("/storage", **common)
    if a.action == "set":
        if not a.entries or any("=" not in e for e in a.entries):
            raise BadRequest("storage set takes KEY=VALUE arguments")
        items = dict(e.split("=", 1) for e in a.entries)
        return c.post("/storage", items=items, **common)
    return c.request("DELETE", "/storage", {**common, "keys": a.entries or None})


def _state(c: Any, a: argparse.Namespace) -> Any:
    path: Path = a.file
    if a.action == "save":
        state = c.get("/state", origins=",".join(a.origins) if a.origins else None)
        tmp = path.with_name(path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(orjson.dumps(state, option=orjson.OPT_INDENT_2))
        os.replace(tmp, path)
        return (f"saved {len(state['cookies'])} cookies and the localStorage of "
                f"{len(state['origins'])} origins to {path}")
    try:
        state = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise BadRequest(f"cannot read a state from {path}: {exc}") from None
    r = c.post("/state", state=state)
    return (f"loaded {r['cookies']} cookies and {r['items']} localStorage items of "
            f"{r['origins']} origins" + (f"; not set: {len(r['cookiesNotSet'])} cookies"
                                         if r.get("cookiesNotSet") else ""))


def _emulate(c: Any, a: argparse.Namespace) -> Any:
    if a.reset:
        return c.request("DELETE", "/emulate", {"targetId": a.target})
    body: dict[str, Any] = {"targetId": a.target, "userAgent": a.user_agent,
                            "locale": a.locale, "timezone": a.timezone,
                            "colorScheme": a.color_scheme, "reducedMotion": a.reduced_motion,
                            "offline": a.offline, "cpuThrottling": a.cpu}
    if a.viewport:
        try:
            width, height = (int(v) for v in a.viewport.lower().split("x"))
        except ValueError:
            raise BadRequest("--viewport takes WIDTHxHEIGHT, e.g. 390x844") from None
        body["viewport"] = {"width": width, "height": height, "mobile": bool(a.mobile),
                            **({"deviceScaleFactor": a.scale} if a.scale else {})}
    if a.geolocation:
        values = _numbers(a.geolocation, "--geolocation", (2, 3))
        body["geolocation"] = dict(zip(("latitude", "longitude", "accuracy"), values,
                                       strict=False))
    if a.network:
        values = _numbers(a.network, "--network", (3,))
        body["network"] = dict(zip(("latencyMs", "downloadKbps", "uploadKbps"), values,
                                   strict=True))
    if all(v is None for k, v in body.items() if k != "targetId"):
        return c.get("/emulate", targetId=a.target)
    return c.post("/emulate", **body)


STATE_COMMANDS = {"cookies": _cookies, "storage": _storage, "state": _state,
                  "emulate": _emulate}
