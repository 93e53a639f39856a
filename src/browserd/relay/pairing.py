"""Pairing the browserd extension with a profile: one-time codes and relay tokens.

``browserd extension pair`` calls :meth:`PairingStore.new_code`: a one-time
code (``ABCD-EFGH``, 8 characters from 31 unambiguous ones) valid for
:data:`CODE_TTL_S` for one profile. The extension's options page sends it
to ``POST /relay/pair``; :meth:`PairingStore.exchange` checks it (single
use: the pending file is claimed by an atomic rename before anything else)
and hands back a new relay token for that profile, recording the
extension's id (from the request's ``Origin``) beside it. Pairing again
replaces the profile's token, so an old extension install stops working.

On disk, under ``<config>/relay/`` (directory 0700, files 0600, each
written to a temporary file and renamed into place):

- ``<profile>.code``: ``{"codeSha256", "profile", "expiresAt"}`` — the
  code itself is never stored;
- ``<profile>.json``: ``{"tokenSha256", "extensionId", "pairedAt"}`` — the
  relay token itself is never stored either: it lives in the extension's
  ``chrome.storage.local`` only.

Brute force: wrong codes never revoke a pending one (any local user can
send them: revoking would let anyone block pairing). The door paces every
check across connections and closes a connection after a few wrong codes
(:mod:`browserd.relay.throttle`); the store only counts them
(``failed_exchanges``). Expiry uses wall-clock time (the CLI and the service
are different processes).

A relay token is bound to the extension it was given to: :meth:`lookup`
with ``extension_id`` finds it only for that id.

Errors: :class:`~browserd.errors.PairingFailed` for a wrong, used or expired
code; :class:`~browserd.errors.BadRequest` for a bad profile name;
``OSError`` from the file system propagates. Nothing here blocks on the
network; file operations are small and synchronous.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import time
from collections.abc import Callable
from pathlib import Path

import attrs

from ..errors import BadRequest, PairingFailed
from ..paths import ensure_private_dir

__all__ = ["CODE_TTL_S", "EXTENSION_ID_RE", "PairedExtension", "PairingCode", "PairingStore",
           "normalise_code"]

CODE_TTL_S = 600.0
EXTENSION_ID_RE = re.compile(r"[a-p]{32}")
"""A Chrome extension id: 32 letters a-p."""
_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
_CODE_CHARS = 8
_PROFILE_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,31}")


@attrs.frozen(kw_only=True)
class PairingCode:
    """A code to show the user (``code``) and when it stops working (wall clock)."""

    code: str
    profile: str
    expires_at: float


@attrs.frozen(kw_only=True)
class PairedExtension:
    """Which profile a relay token belongs to, and the extension it was given to."""

    profile: str
    extension_id: str
    paired_at: float


def normalise_code(text: str) -> str:
    """``text`` as the store compares it: upper case, without spaces and dashes."""
    return re.sub(r"[\s-]", "", text).upper()


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class PairingStore:
    """The pairing files of one browserd config directory (module docstring)."""

    def __init__(self, config_dir: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.directory = config_dir / "relay"
        self._clock = clock
        self.failed_exchanges = 0

    # -- codes -----------------------------------------------------------------

    def new_code(self, profile: str) -> PairingCode:
        """A fresh one-time code for ``profile`` (replaces any pending one)."""
        _check_profile(profile)
        raw = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(_CODE_CHARS))
        expires = self._clock() + CODE_TTL_S
        self._write(f"{profile}.code", {"codeSha256": _sha256(raw), "profile": profile,
                                        "expiresAt": expires})
        return PairingCode(code=f"{raw[:4]}-{raw[4:]}", profile=profile, expires_at=expires)

    def exchange(self, code: str, extension_id: str) -> tuple[PairedExtension, str]:
        """Trade a pending ``code`` for a new relay token of its profile.

        Returns the pairing record and the token (shown to the extension
        once, stored here only as a hash). Raises PairingFailed for an
        unknown, expired or already used code (and counts the failure in
        ``failed_exchanges``; no pending code is touched), BadRequest for
        an extension id that is not one.
        """
        if not EXTENSION_ID_RE.fullmatch(extension_id):
            raise BadRequest("pairing needs the extension's chrome-extension:// origin")
        wanted = _sha256(normalise_code(code))
        for path in self._pending_files():
            record = _read_json(path)
            if record is None or not hmac.compare_digest(str(record.get("codeSha256", "")),
                                                         wanted):
                continue
            claimed = path.with_suffix(".claimed")
            try:
                os.rename(path, claimed)  # single use: only one exchange wins the rename
            except FileNotFoundError:
                break
            claimed.unlink(missing_ok=True)
            expires = record.get("expiresAt")
            profile = str(record.get("profile", ""))
            if not isinstance(expires, (int, float)) or expires < self._clock() or not (
                    _PROFILE_RE.fullmatch(profile)):
                break
            token = secrets.token_urlsafe(32)
            paired = PairedExtension(profile=profile, extension_id=extension_id,
                                     paired_at=self._clock())
            self._write(f"{profile}.json", {"tokenSha256": _sha256(token),
                                            "extensionId": extension_id,
                                            "pairedAt": paired.paired_at})
            return paired, token
        self.failed_exchanges += 1
        raise PairingFailed("this pairing code is wrong, used or expired",
                            hint="run `browserd extension pair` for a new code")

    def revoke_codes(self) -> int:
        """Delete every pending code; how many there were (never called for wrong codes)."""
        count = 0
        for path in self._pending_files():
            path.unlink(missing_ok=True)
            count += 1
        return count

    # -- tokens ----------------------------------------------------------------

    def lookup(self, token: str, *, extension_id: str | None = None) -> PairedExtension | None:
        """The pairing whose relay token is ``token`` (constant-time compare), or None.

        With ``extension_id``, also None unless the token was paired with
        that extension (a token replayed from another extension is no token).
        """
        if not token:
            return None
        wanted = _sha256(token)
        found: PairedExtension | None = None
        for path in sorted(self.directory.glob("*.json")) if self.directory.is_dir() else []:
            record = _read_json(path)
            if record is None:
                continue
            if hmac.compare_digest(str(record.get("tokenSha256", "")), wanted):
                found = PairedExtension(profile=path.stem,
                                        extension_id=str(record.get("extensionId", "")),
                                        paired_at=_number(record.get("pairedAt")))
        if found is not None and extension_id is not None and found.extension_id != extension_id:
            return None  # extension ids are public: a plain compare
        return found

    def paired_extension_ids(self) -> frozenset[str]:
        """The ids of every paired extension (the relay's Origin allow-list)."""
        ids: set[str] = set()
        for path in self.directory.glob("*.json") if self.directory.is_dir() else []:
            record = _read_json(path)
            if record is not None and EXTENSION_ID_RE.fullmatch(str(record.get("extensionId"))):
                ids.add(str(record["extensionId"]))
        return frozenset(ids)

    def unpair(self, profile: str) -> bool:
        """Forget ``profile``'s relay token; True when there was one."""
        _check_profile(profile)
        path = self.directory / f"{profile}.json"
        existed = path.exists()
        path.unlink(missing_ok=True)
        return existed

    # -- files -----------------------------------------------------------------

    def _pending_files(self) -> list[Path]:
        return sorted(self.directory.glob("*.code")) if self.directory.is_dir() else []

    def _write(self, name: str, record: dict[str, object]) -> None:
        """Write ``record`` as ``name`` (0600, via a temporary file and a rename)."""
        ensure_private_dir(self.directory.parent)  # browserd's config dir: 0700 as the token's
        self.directory.mkdir(exist_ok=True, mode=0o700)
        os.chmod(self.directory, 0o700)  # an existing directory is narrowed, never widened
        temp = self.directory / f".{name}.{secrets.token_hex(4)}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w") as out:
                json.dump(record, out)
            os.replace(temp, self.directory / name)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise


def _check_profile(profile: str) -> None:
    if not _PROFILE_RE.fullmatch(profile):
        raise BadRequest(f"{profile!r} is not a profile name", field="profile")


def _number(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) else 0.0


def _read_json(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
