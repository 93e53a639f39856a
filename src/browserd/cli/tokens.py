"""``browserd tokens create|list|revoke``: the person's agent tokens.

Every action speaks as the person (the owner token, read from
``<config>/owner-token``): ``create NAME [--scope S …] [--profile P …]
[--session ID … | --new-session] [--expires 8h]`` prints the new token once
(it is stored only as a hash), ``list`` shows names, scopes and expiry (never
secrets), ``revoke NAME`` revokes it and its descendants and closes their
connections.
"""

from __future__ import annotations

import argparse
import re
import time
from typing import Any

from ..errors import BadRequest
from .offer import as_owner

__all__ = ["TOKEN_COMMANDS", "add_token_commands", "parse_duration"]

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> float:
    """``90``, ``90s``, ``15m``, ``8h``, ``7d`` as seconds; BadRequest otherwise."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*", text)
    if match is None or float(match.group(1)) <= 0:
        raise BadRequest(f"not a duration: {text!r}", field="expires",
                         hint="a number with s, m, h or d: 90s, 15m, 8h, 7d")
    return float(match.group(1)) * _UNITS[match.group(2) or "s"]


def add_token_commands(sub: Any) -> None:
    """Add ``tokens`` to the ``browserd`` subparsers ``sub``."""
    p = sub.add_parser("tokens", help="the person's agent tokens: create, list, revoke")
    actions = p.add_subparsers(dest="tokens_action", required=True)
    create = actions.add_parser("create", help="mint a token (printed once)")
    create.add_argument("name")
    create.add_argument("--scope", action="append", dest="scopes",
                        help="a scope (repeat): read, act, eval, files, state, network, cdp, "
                             "profiles, delegate (default: all)")
    create.add_argument("--profile", action="append", dest="token_profiles",
                        help="a profile it sees (repeat; default: all)")
    bound = create.add_mutually_exclusive_group()
    bound.add_argument("--session", action="append", dest="token_sessions",
                       help="a session it works in (repeat)")
    bound.add_argument("--new-session", action="store_true",
                       help="make a session of its own and bind it")
    create.add_argument("--expires", help="lifetime: 90s, 15m, 8h, 7d (default: never)")
    actions.add_parser("list", help="the tokens, without secrets")
    revoke = actions.add_parser("revoke", help="revoke a token and its descendants")
    revoke.add_argument("name")


def _tokens(client: Any, args: argparse.Namespace) -> Any:
    owner = as_owner(client)
    action = args.tokens_action
    if action == "create":
        body: dict[str, Any] = {"name": args.name, "newSession": bool(args.new_session)}
        for key, value in (("scopes", args.scopes), ("profiles", args.token_profiles),
                           ("sessions", args.token_sessions)):
            if value:
                body[key] = [v for item in value for v in item.split(",") if v]
        if args.expires:
            body["expiresInS"] = parse_duration(args.expires)
        answer = owner.post("/tokens", **body)
        if args.json:
            return answer
        return (f"{answer['token']}\n# token {answer['name']!r}: {', '.join(answer['scopes'])}"
                + (f"; expires {_when(answer['expiresAt'])}" if answer.get("expiresAt") else "")
                + "\n# shown once: store it now (browserd keeps only its hash)")
    if action == "revoke":
        return owner.request("DELETE", f"/tokens/{args.name}")
    listing = owner.get("/tokens")
    if args.json:
        return listing
    lines = []
    for t in listing["tokens"]:
        state = ("revoked" if t.get("revokedAt") else
                 f"expires {_when(t['expiresAt'])}" if t.get("expiresAt") else "no expiry")
        lines.append(f"{t['name']}  [{', '.join(t['scopes'])}]  {state}"
                     + (f"  parent={t['parent']}" if t.get("parent") else "")
                     + (f"  sessions={','.join(t['sessions'])}" if t.get("sessions") else ""))
    return "\n".join(lines) or "no minted tokens (the default agent token: `browserd token`)"


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at))


TOKEN_COMMANDS = {"tokens": _tokens}
