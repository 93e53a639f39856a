"""The vault: secrets the person stores and agents use by name, never by value.

Entries live in ``<config>/secrets/vault.json`` (the directory 0700, the file
0600, replaced atomically): per secret its name, origin, creation time and,
encrypted with AES-256-GCM under the vault key (the secret's name bound in as
associated data, so a ciphertext cannot be moved to another name), its value
and optional username. The key comes from :mod:`.key` (the OS keyring where
there is one, else ``<config>/secrets.key``, 0600).

The person sets and deletes secrets (``PUT``/``DELETE /secrets/<name>``,
``browserd secrets``) and lists their names; an agent with the ``secrets``
scope *uses* one: :meth:`Vault.use` hands the value to the typing action only
for a page of the secret's origin (403 SECRET_ORIGIN otherwise), and every
answer, error, event and log line passes the :class:`~.redactor.Redactor`,
which knows every value. Values are never logged or answered.

Errors: SecretNotFound, SecretOrigin, BadRequest (a bad name, a too-short
value, a bad origin), ConfigError (an unreadable or undecryptable store at
start; a write that failed, after which nothing changed).
"""

from __future__ import annotations

import base64
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..errors import BadRequest, ConfigError, SecretNotFound, SecretOrigin
from ..privatefile import read_private, write_private
from ..tabs.origins import origin_of
from .redactor import MIN_SECRET_CHARS, Redactor

__all__ = ["MAX_SECRETS", "NAME_RE", "SecretRecord", "Vault"]

NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
MAX_SECRETS = 256
MAX_VALUE_CHARS = 4096


@attrs.frozen(kw_only=True)
class SecretRecord:
    """What anyone may know of a secret: never its value."""

    name: str
    origin: str | None
    has_username: bool
    created_at: float

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "origin": self.origin, "hasUsername": self.has_username,
                "createdAt": self.created_at}


@attrs.frozen(kw_only=True)
class _Entry:
    record: SecretRecord
    value: str = attrs.field(repr=False)
    username: str | None = attrs.field(repr=False, default=None)


class Vault:
    """The person's secrets of one service. Only its own methods change it."""

    def __init__(self, directory: Path | None, key: bytes | None, *,
                 redactor: Redactor | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        """``directory``: ``<config>/secrets`` (None with ``key`` None: an empty,
        memory-only vault, as for tests that need none). Loads what is stored."""
        self.redactor = redactor if redactor is not None else Redactor()
        self._directory = directory
        self._aead = AESGCM(key) if key is not None else None
        self._clock = clock
        self._entries: dict[str, _Entry] = {}
        if directory is not None:
            self._load()

    # -- the person's ---------------------------------------------------------------

    def records(self) -> list[SecretRecord]:
        return [e.record for e in self._entries.values()]

    def put(self, name: str, value: str, *, origin: str | None = None,
            username: str | None = None) -> SecretRecord:
        """Store (or replace) a secret; BadRequest for a bad name, value or origin."""
        if not NAME_RE.fullmatch(name):
            raise BadRequest(f"invalid secret name {name!r}", field="name",
                             hint="1-64 letters, digits, '.', '_' or '-'")
        if not MIN_SECRET_CHARS <= len(value) <= MAX_VALUE_CHARS or "\x00" in value:
            raise BadRequest(f"a secret's value must be {MIN_SECRET_CHARS}-{MAX_VALUE_CHARS} "
                             "characters (shorter ones could not be told from page text)",
                             field="value")
        if origin is not None:
            normal = origin_of(origin.lower())
            if normal is None or normal != origin.rstrip("/").lower():
                raise BadRequest(f"origin must be scheme://host[:port], got {origin!r}",
                                 field="origin", hint="e.g. https://accounts.example.com")
            origin = normal
        if name not in self._entries and len(self._entries) >= MAX_SECRETS:
            raise BadRequest(f"at most {MAX_SECRETS} secrets", field="name")
        record = SecretRecord(name=name, origin=origin, has_username=bool(username),
                              created_at=self._clock())
        entries = {**self._entries, name: _Entry(record=record, value=value,
                                                 username=username or None)}
        self._commit(entries)
        return record

    def delete(self, name: str) -> bool:
        if name not in self._entries:
            return False
        self._commit({k: v for k, v in self._entries.items() if k != name})
        return True

    # -- an agent's ------------------------------------------------------------------

    def use(self, name: str, *, page_url: str) -> str:
        """The value of ``name`` for typing into a page at ``page_url``.

        SecretNotFound for an unknown name; SecretOrigin when the secret is
        bound to an origin and the page is not on it.
        """
        return self._for_page(name, page_url).value

    def for_typing(self, name: str) -> tuple[str, str | None]:
        """(value, origin) of ``name`` for a typing action, which checks the origin itself
        at the moment it types (the page may move meanwhile). SecretNotFound."""
        entry = self._entries.get(name)
        if entry is None:
            raise SecretNotFound(f"no secret {name!r}")
        return entry.value, entry.record.origin

    def username_of(self, name: str) -> str | None:
        self.require(name)
        return self._entries[name].username

    def login(self, name: str, *, page_url: str) -> tuple[str | None, str]:
        """(username, value) of ``name`` for a login on ``page_url`` (as :meth:`use`)."""
        entry = self._for_page(name, page_url)
        return entry.username, entry.value

    def require(self, name: str) -> SecretRecord:
        """The record of ``name``; SecretNotFound when there is none."""
        entry = self._entries.get(name)
        if entry is None:
            raise SecretNotFound(f"no secret {name!r}")
        return entry.record

    def _for_page(self, name: str, page_url: str) -> _Entry:
        record = self.require(name)
        if record.origin is not None and origin_of(page_url) != record.origin:
            raise SecretOrigin(f"secret {name!r} is for {record.origin}, not for this page")
        return self._entries[name]

    # -- the file ----------------------------------------------------------------------

    @property
    def _file(self) -> Path | None:
        return None if self._directory is None else self._directory / "vault.json"

    def _commit(self, entries: dict[str, _Entry]) -> None:
        path = self._file
        if path is not None:
            if self._aead is None or self._directory is None:
                raise ConfigError("the vault has no key; it cannot store secrets")
            self._directory.mkdir(mode=0o700, exist_ok=True)
            write_private(path, orjson.dumps({"version": 1, "entries": [
                self._sealed(e) for e in entries.values()]}, option=orjson.OPT_INDENT_2))
        self._entries = entries
        self.redactor.update({n: e.value for n, e in entries.items()})

    def _sealed(self, entry: _Entry) -> dict[str, Any]:
        assert self._aead is not None
        nonce = os.urandom(12)
        plain = orjson.dumps({"value": entry.value, "username": entry.username})
        data = self._aead.encrypt(nonce, plain, entry.record.name.encode())
        return {"name": entry.record.name, "origin": entry.record.origin,
                "createdAt": entry.record.created_at,
                "nonce": base64.b64encode(nonce).decode(),
                "data": base64.b64encode(data).decode()}

    def _load(self) -> None:
        path = self._file
        assert path is not None
        raw = read_private(path)
        if raw is None:
            return
        if self._aead is None:
            raise ConfigError(f"{path} exists but the vault key is missing",
                              hint="restore <config>/secrets.key (or the keyring entry), or "
                                   "remove the vault to start an empty one")
        try:
            entries = {}
            for item in orjson.loads(raw)["entries"]:
                name = str(item["name"])
                plain = orjson.loads(self._aead.decrypt(base64.b64decode(item["nonce"]),
                                                        base64.b64decode(item["data"]),
                                                        name.encode()))
                record = SecretRecord(name=name, origin=item.get("origin"),
                                      has_username=bool(plain.get("username")),
                                      created_at=float(item["createdAt"]))
                entries[name] = _Entry(record=record, value=str(plain["value"]),
                                       username=plain.get("username"))
        except InvalidTag:
            raise ConfigError(f"{path} does not open with the vault key",
                              hint="the key changed; restore it, or remove the vault") from None
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"cannot read the vault {path}: {exc}") from None
        self._entries = entries
        self.redactor.update({n: e.value for n, e in entries.items()})
