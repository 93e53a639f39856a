"""``browserd secrets set|list|delete``: the person's vault (the owner token).

``set NAME [--origin https://…] [--username U]`` reads the value from standard
input (a terminal is asked without echo; a pipe is read to its end, one
trailing newline dropped), never from an argument, which other users could
see in the process list. ``list`` shows names and origins, never values.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from ..errors import BadRequest
from .offer import as_owner

__all__ = ["SECRET_COMMANDS", "add_secret_commands", "read_secret_value"]


def add_secret_commands(sub: Any) -> None:
    """Add ``secrets`` to the ``browserd`` subparsers ``sub``."""
    p = sub.add_parser("secrets", help="the person's vault: set, list, delete secrets")
    actions = p.add_subparsers(dest="secrets_action", required=True)
    put = actions.add_parser("set", help="store a secret (its value from stdin)")
    put.add_argument("name")
    put.add_argument("--origin", help="scheme://host[:port]: typed only on that origin")
    put.add_argument("--username", help="the login name `/login` types with it")
    actions.add_parser("list", help="the secrets' names and origins (never values)")
    delete = actions.add_parser("delete", help="delete a secret")
    delete.add_argument("name")


def read_secret_value(stream: Any = None) -> str:
    """The value from ``stream`` (stdin): asked without echo on a terminal, else read whole."""
    stream = stream if stream is not None else sys.stdin
    if stream.isatty():
        value = getpass.getpass("value (not shown): ")
    else:
        value = stream.read()
        value = value[:-1] if value.endswith("\n") else value
    if not value:
        raise BadRequest("no value on standard input", field="value",
                         hint="echo -n VALUE | browserd secrets set NAME, or type it when asked")
    return value


def _secrets(client: Any, args: argparse.Namespace) -> Any:
    owner = as_owner(client)
    action = args.secrets_action
    if action == "set":
        body = {"value": read_secret_value(), "origin": args.origin, "username": args.username}
        answer = owner.request("PUT", f"/secrets/{args.name}", body)
        return answer if args.json else (
            f"stored {answer['name']!r}" + (f" for {answer['origin']}" if answer["origin"] else
                                            " (any origin)"))
    if action == "delete":
        return owner.request("DELETE", f"/secrets/{args.name}")
    listing = owner.get("/secrets")
    if args.json:
        return listing
    return "\n".join(f"{s['name']}  {s['origin'] or '(any origin)'}"
                     + ("  +username" if s["hasUsername"] else "")
                     for s in listing["secrets"]) or "the vault is empty"


SECRET_COMMANDS = {"secrets": _secrets}
