"""``browserd extension install | pair | unpair``: set up the extension driver (local only).

- ``install [--dest DIR]`` copies the extension shipped in the package to
  ``<data>/extension/`` (or DIR) and prints the three clicks that load it
  (Developer mode → Load unpacked → that folder).
- ``pair`` prints a one-time pairing code for the profile (the global
  ``--profile``, else the default profile), valid for 10 minutes; the
  extension's options page exchanges it for its relay token.
- ``unpair`` forgets the profile's relay token (the extension is refused
  from then on, until paired again).

None of them talks to the service: they work on files under browserd's
config and data directories (see docs/extension.md). Errors: BadRequest for
a bad profile name; OSError (printed by the CLI's caller) for file trouble.
"""

from __future__ import annotations

import argparse
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

from ..paths import Paths

__all__ = ["EXTENSION_COMMANDS", "add_extension_commands", "extension_source", "install"]

_SHIPPED = frozenset({".json", ".js", ".html", ".css", ".png", ".svg"})


def add_extension_commands(sub: Any) -> None:
    """Add ``extension`` to the ``browserd`` subparsers ``sub``."""
    p = sub.add_parser("extension", help="install or pair the browserd browser extension")
    p.add_argument("action", choices=("install", "pair", "unpair"))
    p.add_argument("--dest", help="install: the folder to copy the extension to "
                                  "(default <data>/extension)")


def extension_source() -> Path:
    """The extension's folder inside the installed package."""
    return Path(str(resources.files("browserd") / "extension"))


def install(dest: Path) -> Path:
    """Copy the extension's files into ``dest`` (created; old files replaced); ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for path in sorted(extension_source().iterdir()):
        if path.is_file() and path.suffix in _SHIPPED:
            shutil.copyfile(path, dest / path.name)
    return dest


def _default_profile() -> str:
    from ..config import load_settings

    return load_settings(Paths.resolve()).profile


def _extension(client: Any, args: argparse.Namespace) -> Any:
    paths = Paths.resolve()
    if args.action == "install":
        dest = install(Path(args.dest).expanduser().absolute() if args.dest
                       else paths.data_dir / "extension")
        if args.json:
            return {"ok": True, "path": str(dest)}
        return (f"browserd extension copied to {dest}\n"
                "Load it in Chrome (once):\n"
                "  1. open chrome://extensions and switch on Developer mode (top right)\n"
                "  2. click Load unpacked\n"
                f"  3. choose the folder {dest}\n"
                "Then run `browserd extension pair` and paste the code into the extension's "
                "options page.")
    # Imported here: the relay package brings trio and the service's door along,
    # which no other command needs (every CLI call would pay for it).
    from ..relay.pairing import CODE_TTL_S, PairingStore

    profile = args.profile or _default_profile()
    store = PairingStore(paths.config_dir)
    if args.action == "unpair":
        removed = store.unpair(profile)
        return {"ok": True, "profile": profile, "unpaired": removed} if args.json else (
            f"profile {profile}: " + ("relay token removed" if removed else "was not paired"))
    code = store.new_code(profile)
    if args.json:
        return {"code": code.code, "profile": profile, "expiresInS": int(CODE_TTL_S)}
    return (f"pairing code for profile {profile} (works once, within "
            f"{int(CODE_TTL_S // 60)} minutes):\n  {code.code}\n"
            "Paste it into the browserd extension's options page (right-click its icon → "
            "Options).")


EXTENSION_COMMANDS: dict[str, Any] = {"extension": _extension}
