"""``browserd ui``: a one-time login link for the ops page, printed (and opened on a desktop).

Asks the service for a code (``POST /ui-codes``, with the *owner token*:
the ops page is the person's, and an agent's token is 403 OWNER_ONLY there;
sent only after the client has verified the listener) and prints
``http://127.0.0.1:PORT/ui/login?code=…``: valid once, for 60 seconds.
Where there is a display (macOS, Windows, ``DISPLAY``/``WAYLAND_DISPLAY``)
the link is also opened in the default browser unless ``--no-open``.
"""

from __future__ import annotations

import argparse
import os
import sys
import webbrowser
from typing import Any

from ..config import default_headless
from .offer import as_owner

__all__ = ["UI_COMMANDS", "add_ui_command", "open_ui"]


def add_ui_command(sub: Any) -> None:
    """Add ``ui`` to the ``browserd`` subparsers ``sub``."""
    p = sub.add_parser("ui", help="print (and on a desktop open) a one-time ops page link")
    p.add_argument("--no-open", action="store_true", help="print the link only")


def open_ui(client: Any, args: argparse.Namespace) -> Any:
    """Get a login link; open it where there is a display. Returns what to print."""
    answer = as_owner(client).post("/ui-codes")
    if args.json:
        return answer
    url = str(answer["url"])
    opened = False
    if not args.no_open and not default_headless(os.environ):
        try:
            opened = webbrowser.open(url)
        except webbrowser.Error:
            opened = False
    ttl = int(answer.get("expiresInS") or 60)
    print(f"ops page login (works once, within {ttl} s"
          + ("; opened in your browser" if opened else "") + "):", file=sys.stderr)
    return url


UI_COMMANDS = {"ui": open_ui}
