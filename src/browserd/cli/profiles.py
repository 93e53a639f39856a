"""CLI commands for profiles and sessions: ``browserd profiles`` and ``browserd sessions``.

``browserd profiles [list | create NAME [--driver --color --cdp-url --headless
--live-browser --user-data-dir --live-fallback] |
delete NAME [--keep-data]]`` and ``browserd sessions [list | create [--name --ttl] |
delete SESSION_ID]``. Each is one request to the service (see docs/api.md); the
global ``--profile`` / ``--session`` options choose whose sessions are listed.
"""

from __future__ import annotations

import argparse
from typing import Any
from urllib.parse import quote

from ..errors import BadRequest

__all__ = ["PROFILE_COMMANDS", "add_profile_commands"]


def add_profile_commands(sub: Any) -> None:
    """Add ``profiles`` and ``sessions`` to the ``browserd`` subparsers ``sub``."""
    p = sub.add_parser("profiles", help="list, create or delete profiles")
    p.add_argument("action", nargs="?", default="list", choices=("list", "create", "delete"))
    p.add_argument("name", nargs="?")
    p.add_argument("--driver", choices=("launch", "cdp", "live"))
    p.add_argument("--color")
    p.add_argument("--cdp-url")
    p.add_argument("--headless", action="store_true", default=None)
    p.add_argument("--headed", dest="headless", action="store_false")
    p.add_argument("--keep-data", action="store_true", default=None)
    p.add_argument("--live-browser", choices=("chrome", "chrome-canary", "chromium", "edge",
                                              "brave"), help="live: whose browser")
    p.add_argument("--user-data-dir", help="live: its user data directory (wins)")
    p.add_argument("--live-fallback", help="live: the profile used while it is away")
    p = sub.add_parser("sessions", help="list, create or delete sessions of a profile")
    p.add_argument("action", nargs="?", default="list", choices=("list", "create", "delete"))
    p.add_argument("session_id", nargs="?", help="delete: the session to close")
    p.add_argument("--name")
    p.add_argument("--ttl", type=float, help="idle seconds before it is closed")


def _profiles(client: Any, args: argparse.Namespace) -> Any:
    if args.action == "list":
        return client.get("/profiles")
    if not args.name:
        raise BadRequest(f"`browserd profiles {args.action}` needs a NAME")
    if args.action == "create":
        return client.post("/profiles", name=args.name, driver=args.driver, color=args.color,
                           headless=args.headless, cdpUrl=args.cdp_url,
                           liveBrowser=args.live_browser, userDataDir=args.user_data_dir,
                           liveFallback=args.live_fallback)
    return client.request("DELETE", f"/profiles/{quote(args.name, safe='')}",
                          {"keepData": args.keep_data})


def _sessions(client: Any, args: argparse.Namespace) -> Any:
    if args.action == "list":
        return client.get("/sessions")
    if args.action == "create":
        return client.post("/sessions", name=args.name, ttlS=args.ttl)
    if not args.session_id:
        raise BadRequest("`browserd sessions delete` needs a SESSION_ID")
    return client.request("DELETE", f"/sessions/{quote(args.session_id, safe='')}", {})


PROFILE_COMMANDS: dict[str, Any] = {"profiles": _profiles, "sessions": _sessions}
