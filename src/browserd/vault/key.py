"""The vault's key: in the OS keyring where there is one, else ``<config>/secrets.key``.

The keyring (macOS Keychain, the Secret Service on a Linux desktop) is asked
in a worker thread under a deadline (:data:`KEYRING_DEADLINE_S`): a keyring
that is absent, locked or slow is not waited for, and the key file is used
instead — created 0600 like the token file (same checks, same atomic
creation: :func:`browserd.token.load_or_create_token`). Either way the key
is 32 bytes derived (SHA-256) from 32 random bytes; it never leaves the
service and is never logged. ``vault_key = "file"`` skips the keyring.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from pathlib import Path

import trio

from ..token import load_or_create_token

__all__ = ["KEYRING_DEADLINE_S", "KEYRING_SERVICE", "load_vault_key"]

log = logging.getLogger(__name__)

KEYRING_DEADLINE_S = 3.0
KEYRING_SERVICE = "browserd-vault"


def _derive(material: str) -> bytes:
    return hashlib.sha256(material.encode("ascii")).digest()


def _from_keyring(account: str) -> str | None:
    """The key material in the OS keyring (made there if missing), or None (no keyring)."""
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        return None
    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 0) <= 0:
        return None
    try:
        material: str | None = keyring.get_password(KEYRING_SERVICE, account)
        if material is None:
            material = secrets.token_urlsafe(32)
            keyring.set_password(KEYRING_SERVICE, account, material)
        return material
    except Exception as exc:  # any backend failure: fall back to the file
        log.info("the OS keyring did not answer (%s); using the key file", type(exc).__name__)
        return None


async def load_vault_key(config_dir: Path, *, use_keyring: bool = True) -> bytes:
    """The vault key: from the keyring (bounded), else ``config_dir/secrets.key``.

    Raises ConfigError when the key file is not private or cannot be made.
    Cancellation abandons a keyring call still in flight.
    """
    if use_keyring:
        material = None
        with trio.move_on_after(KEYRING_DEADLINE_S):
            material = await trio.to_thread.run_sync(_from_keyring, str(config_dir),
                                                     abandon_on_cancel=True)
        if material:
            return _derive(material)
    return _derive(load_or_create_token(config_dir / "secrets.key"))
