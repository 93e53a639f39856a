"""``browserd offer``: the user offers one of their own pages to the agent (live profiles).

``browserd [--profile P] offer`` lists the user's pages that can be offered
(id, title, URL: what the pages themselves say); ``browserd offer TARGET_ID``
offers one. Both read the *owner token* (``<config>/owner-token``, 0600):
run them as the user who runs browserd. The agent's token cannot offer.
``browserd release TARGET_ID`` (a generated command) ends control again.

Agents' tab requests: ``browserd offer --requests`` lists the pending ones
(the agent's reason and URL are its own words); ``browserd offer --approve
REQUEST_ID TARGET_ID`` gives that page to the requesting token alone,
``browserd offer --deny REQUEST_ID`` refuses.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import BadRequest, ConfigError
from ..paths import Paths

__all__ = ["OFFER_COMMANDS", "add_offer_commands", "as_owner", "read_owner_token"]


def add_offer_commands(sub: Any) -> None:
    """Add ``offer`` to the ``browserd`` subparsers ``sub``."""
    p = sub.add_parser("offer", help="list your pages, or offer one to the agent (live profiles)")
    p.add_argument("target_id", nargs="?", help="the page to offer (default: list them)")
    p.add_argument("--requests", action="store_true", help="list agents' pending tab requests")
    p.add_argument("--approve", metavar="REQUEST_ID",
                   help="approve a tab request with the page TARGET_ID")
    p.add_argument("--deny", metavar="REQUEST_ID", help="deny a tab request")


def read_owner_token(paths: Paths | None = None) -> str:
    """The person's token from ``<config>/owner-token``; ConfigError when unreadable."""
    path = (paths or Paths.resolve()).owner_token_file
    try:
        return path.read_text().strip()
    except OSError as exc:
        raise ConfigError(f"cannot read the owner token at {path}: {exc.strerror or exc}",
                          hint="run this as the user who runs browserd (the person's "
                               "commands read the owner token)") from None


def as_owner(client: Any) -> Any:
    """``client`` speaking as the person (the owner token; only after it verified the listener)."""
    return client.as_owner(read_owner_token())


def _offer(client: Any, args: argparse.Namespace) -> Any:
    owner = as_owner(client)
    if args.approve or args.deny:
        if args.approve and not args.target_id:
            raise BadRequest("--approve needs the page: browserd offer --approve REQ TARGET_ID",
                             field="targetId")
        body: dict[str, Any] = ({"approve": args.target_id} if args.approve
                                else {"deny": True})
        return owner.post(f"/tabs/requests/{args.approve or args.deny}", **body)
    if args.requests:
        pending = owner.get("/tabs/requests", pending="true")
        if args.json:
            return pending
        # The agent's reason and URL are its words (repr: no control characters).
        return "\n".join(f"{r['requestId']}  token={r['token']}  {r['reason']!r}"
                         + (f"  {r['url']!r}" if r.get("url") else "")
                         for r in pending["requests"]) or "no pending tab request"
    if args.target_id:
        return owner.post("/tabs/offer", targetId=args.target_id)
    listing = owner.get("/tabs/offerable")
    if args.json:
        return listing
    # One line per page; titles and URLs are the pages' own words (repr: no control chars).
    lines = [f"{p['targetId']}  {p['title']!r}  {p['url']!r}" for p in listing["pages"]]
    return "\n".join(lines) or "no page of yours is open (or all are offered)"


OFFER_COMMANDS: dict[str, Any] = {"offer": _offer}
