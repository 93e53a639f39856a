"""``browserd confirm``: the person answers agent actions held for confirmation.

``browserd confirm`` lists the pending ones (kind, summary: the page's and
the agent's words, shown as data), ``browserd confirm ID --approve`` lets the
agent's waiting call run it, ``--deny`` refuses it (the agent gets 403
DENIED). It speaks as the person (the owner token).
"""

from __future__ import annotations

import argparse
from typing import Any

from .offer import as_owner

__all__ = ["CONFIRM_COMMANDS", "add_confirm_commands"]


def add_confirm_commands(sub: Any) -> None:
    """Add ``confirm`` to the ``browserd`` subparsers ``sub``."""
    p = sub.add_parser("confirm", help="list agent actions held for you, or answer one")
    p.add_argument("confirmation_id", nargs="?", help="the held action to answer")
    answer = p.add_mutually_exclusive_group()
    answer.add_argument("--approve", action="store_true", help="let it run")
    answer.add_argument("--deny", action="store_true", help="refuse it")


def _confirm(client: Any, args: argparse.Namespace) -> Any:
    owner = as_owner(client)
    if args.confirmation_id:
        body = {"approve": True} if args.approve else {"deny": True} if args.deny else None
        if body is None:
            return owner.get("/confirmations")  # nothing to answer with: show them
        return owner.post(f"/confirmations/{args.confirmation_id}", **body)
    listing = owner.get("/confirmations", pending="true")
    if args.json:
        return listing
    # The summary quotes the page (an element's name): repr keeps control characters out.
    return "\n".join(f"{h['id']}  {h['kind']}  {h['summary']!r}  token={h['token']}"
                     for h in listing["confirmations"]) or "nothing waits for you"


CONFIRM_COMMANDS = {"confirm": _confirm}
