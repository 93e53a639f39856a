"""The token store: who a bearer token is, minted tokens, delegation and revocation.

Credentials, by kind:

- the **owner token** (``<config>/owner-token``, 0600): the person;
- the **default agent token** (``<config>/token``, 0600): the agent ``default``
  with every agent scope, every profile and any session;
- **minted tokens**, kept in ``<config>/tokens.json`` (0600, replaced
  atomically) as SHA-256 hashes with ``{name, scopes, profiles, sessions,
  parent, createdAt, expiresAt, lastUsedAt, revokedAt}``. A token's secret
  is returned once, by :meth:`TokenStore.create`, and never stored.

A child may hold no more than its parent: a subset of the scopes, profiles
and sessions, an expiry no later (:class:`~browserd.errors.ScopeExceedsParent`).
Revoking a token revokes its descendants; a revoked or expired token is
answered 401 TOKEN_REVOKED / TOKEN_EXPIRED (not a plain 401: the holder learns
why). Every open connection of a token (``/ws``, ``/events``, ``/mcp``, the CDP
gateway) runs inside a cancel scope the store holds (:meth:`TokenStore.open_use`);
revocation cancels those scopes at once.

Bookkeeping is plain code over a wall clock given at construction; the only
I/O is reading and replacing ``tokens.json``, small and bounded. Errors:
:class:`~browserd.errors.ConfigError` for an unreadable or widened file at
start; BadRequest, ScopeExceedsParent, Conflict, TokenNotFound, OwnerOnly for
bad requests. Nothing here logs a secret.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import orjson
import trio

from ..errors import (
    BadRequest,
    BrowserdError,
    ConfigError,
    Conflict,
    OwnerOnly,
    ScopeExceedsParent,
    TokenExpired,
    TokenNotFound,
    TokenRevoked,
    Unauthorized,
)
from ..privatefile import read_private, write_private
from ..token import tokens_equal
from .scopes import AGENT_SCOPES, OWNER, Principal, check_scopes

__all__ = ["DEFAULT_AGENT", "MAX_TOKENS", "NAME_RE", "Minted", "TokenRecord", "TokenStore"]

DEFAULT_AGENT = "default"
MAX_TOKENS = 1000
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_LAST_USED_RESOLUTION_S = 60.0


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@attrs.frozen(kw_only=True)
class TokenRecord:
    """One minted token as stored (its hash, never its secret)."""

    name: str
    digest: str = attrs.field(repr=False)
    scopes: frozenset[str]
    profiles: frozenset[str] | None = None
    sessions: frozenset[str] | None = None
    parent: str | None = None
    created_at: float
    expires_at: float | None = None
    last_used_at: float | None = None
    revoked_at: float | None = None

    def principal(self) -> Principal:
        return Principal(kind="agent", name=self.name, scopes=self.scopes,
                         profiles=self.profiles, sessions=self.sessions, parent=self.parent,
                         expires_at=self.expires_at)

    def to_json(self) -> dict[str, Any]:
        """The public view (``GET /tokens``): never the secret or its hash."""
        return {"name": self.name, "scopes": sorted(self.scopes),
                "profiles": None if self.profiles is None else sorted(self.profiles),
                "sessions": None if self.sessions is None else sorted(self.sessions),
                "parent": self.parent, "createdAt": self.created_at,
                "expiresAt": self.expires_at, "lastUsedAt": self.last_used_at,
                "revokedAt": self.revoked_at}

    def stored(self) -> dict[str, Any]:
        return {**self.to_json(), "sha256": self.digest}

    @classmethod
    def load(cls, raw: dict[str, Any]) -> TokenRecord:
        def opt(key: str) -> frozenset[str] | None:
            value = raw.get(key)
            return None if value is None else frozenset(str(v) for v in value)

        return cls(name=str(raw["name"]), digest=str(raw["sha256"]),
                   scopes=frozenset(raw["scopes"]) & AGENT_SCOPES, profiles=opt("profiles"),
                   sessions=opt("sessions"), parent=raw.get("parent"),
                   created_at=float(raw["createdAt"]),
                   expires_at=_opt_float(raw.get("expiresAt")),
                   last_used_at=_opt_float(raw.get("lastUsedAt")),
                   revoked_at=_opt_float(raw.get("revokedAt")))


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


@attrs.frozen(kw_only=True)
class Minted:
    """What :meth:`TokenStore.create` answers: the record and the secret (shown once)."""

    record: TokenRecord
    secret: str = attrs.field(repr=False)


class TokenStore:
    """Every credential of one service; only its own methods change it."""

    def __init__(self, path: Path | None, *, agent_token: str, owner_token: str | None,
                 clock: Callable[[], float] = time.time) -> None:
        """``path``: ``tokens.json`` (None: minted tokens live in memory only, for tests)."""
        self._path = path
        self._agent_token = agent_token
        self._owner_token = owner_token
        self._clock = clock
        self._records: dict[str, TokenRecord] = {}  # by name
        self._by_digest: dict[str, str] = {}
        self._uses: dict[str, set[trio.CancelScope]] = {}
        if path is not None:
            self._load(path)

    # -- authentication ---------------------------------------------------------

    def authenticate(self, secret: str) -> Principal | BrowserdError:
        """The principal ``secret`` stands for, or the error to refuse it with.

        Unauthorized for an unknown secret, TokenRevoked / TokenExpired for a
        minted token (or one whose ancestor was) that no longer opens anything.
        """
        if self._owner_token is not None and tokens_equal(secret, self._owner_token):
            return OWNER
        if tokens_equal(secret, self._agent_token):
            return Principal(kind="agent", name=DEFAULT_AGENT)
        name = self._by_digest.get(_hash(secret))
        if name is None:
            return Unauthorized("missing or invalid bearer token")
        record = self._records[name]
        refusal = self._refusal(record)
        if refusal is not None:
            return refusal
        now = self._clock()
        if record.last_used_at is None or now - record.last_used_at > _LAST_USED_RESOLUTION_S:
            self._records[name] = attrs.evolve(record, last_used_at=now)
        return record.principal()

    def _refusal(self, record: TokenRecord) -> BrowserdError | None:
        now = self._clock()
        seen: set[str] = set()
        current: TokenRecord | None = record
        while current is not None and current.name not in seen:
            seen.add(current.name)
            if current.revoked_at is not None:
                who = "" if current is record else f" (its ancestor {current.name!r} was)"
                return TokenRevoked(f"token {record.name!r} was revoked{who}")
            if current.expires_at is not None and now >= current.expires_at:
                return TokenExpired(f"token {record.name!r} has expired")
            current = self._records.get(current.parent) if current.parent else None
        return None

    def is_live(self, principal: Principal) -> bool:
        """False once ``principal``'s token (or an ancestor) is revoked or expired."""
        if principal.is_owner or principal.name == DEFAULT_AGENT:
            return True
        record = self._records.get(principal.name)
        return record is not None and self._refusal(record) is None

    @contextlib.contextmanager
    def open_use(self, principal: Principal) -> Iterator[trio.CancelScope]:
        """A cancel scope for one request or connection of ``principal``.

        Revoking the token (or an ancestor) cancels it; so does the token's
        expiry (the scope's deadline). The person's and the default token's
        uses are never cancelled by the store.
        """
        scope = trio.CancelScope()
        if principal.is_owner or principal.name == DEFAULT_AGENT:
            with scope:
                yield scope
            return
        if principal.expires_at is not None:
            scope.deadline = trio.current_time() + max(0.0, principal.expires_at - self._clock())
        if not self.is_live(principal):
            scope.cancel()  # revoked between its authentication and this use
        uses = self._uses.setdefault(principal.name, set())
        uses.add(scope)
        try:
            with scope:
                yield scope
        finally:
            uses.discard(scope)
            if not uses:
                self._uses.pop(principal.name, None)

    def open_uses(self, name: str) -> int:
        return len(self._uses.get(name, ()))

    # -- minting and revoking ------------------------------------------------------

    def visible_to(self, principal: Principal) -> list[TokenRecord]:
        """The tokens ``principal`` may see: the person all; an agent itself and descendants."""
        if principal.is_owner:
            return list(self._records.values())
        return [r for r in self._records.values()
                if r.name == principal.name or self._descends(r.name, principal.name)]

    def create(self, by: Principal, *, name: str, scopes: frozenset[str] | None = None,
               profiles: frozenset[str] | None = None, sessions: frozenset[str] | None = None,
               expires_in_s: float | None = None) -> Minted:
        """Mint a token named ``name`` for ``by`` (the person, or an agent with ``delegate``).

        A child's scopes, profiles and sessions default to its parent's and must
        be a subset; its expiry is no later than its parent's (ScopeExceedsParent).
        Raises BadRequest for a bad name or scope, Conflict for a name in use by
        a live token (a revoked one's record is replaced), ScopeExceedsParent for
        an agent without ``delegate`` or beyond its own grant; ConfigError when
        the file cannot be written (nothing changes then).
        """
        if not NAME_RE.fullmatch(name) or name in (DEFAULT_AGENT, OWNER.name):
            raise BadRequest(f"invalid token name {name!r}", field="name",
                             hint="1-64 letters, digits, '.', '_' or '-'; not 'default'/'owner'")
        old = self._records.get(name)
        if old is not None and old.revoked_at is None:
            raise Conflict(f"a token named {name!r} exists", field="name",
                           hint="revoke it first (a revoked name can be minted again), or "
                                "choose another name")
        if sum(r.revoked_at is None for r in self._records.values()) >= MAX_TOKENS:
            raise Conflict(f"at most {MAX_TOKENS} live tokens; revoke some first")
        if scopes is not None:
            scopes = check_scopes(scopes)
        now = self._clock()
        expires_at = None if expires_in_s is None else now + expires_in_s
        parent: str | None = None
        if not by.is_owner:
            if not by.has("delegate"):
                raise ScopeExceedsParent(
                    f"token {by.name!r} has no 'delegate' scope: it cannot mint tokens",
                    scope="delegate")
            parent = by.name
            scopes, profiles, sessions, expires_at = _within_parent(
                by, scopes, profiles, sessions, expires_at)
        record = TokenRecord(name=name, digest="",
                             scopes=AGENT_SCOPES if scopes is None else scopes,
                             profiles=profiles, sessions=sessions, parent=parent,
                             created_at=now, expires_at=expires_at)
        secret = "bd_" + secrets.token_urlsafe(32)
        record = attrs.evolve(record, digest=_hash(secret))
        self._commit({**self._records, name: record})
        return Minted(record=record, secret=secret)

    def revoke(self, by: Principal, name: str) -> list[str]:
        """Revoke ``name`` and its descendants; the names revoked (already revoked: none).

        The person may revoke any minted token, an agent only its descendants.
        Their open uses are cancelled at once. TokenNotFound for a name ``by``
        cannot see; OwnerOnly for the default token (rotate it instead).
        """
        if name == DEFAULT_AGENT:
            raise OwnerOnly("the default agent token is not revoked but rotated",
                            hint="`browserd token --rotate` (the person's)")
        record = self._records.get(name)
        if record is None or not (by.is_owner or self._descends(name, by.name)):
            raise TokenNotFound(f"no token {name!r}")
        now = self._clock()
        names = [n for n in self._records if n == name or self._descends(n, name)]
        fresh = [n for n in names if self._records[n].revoked_at is None]
        records = dict(self._records)
        for n in fresh:
            records[n] = attrs.evolve(records[n], revoked_at=now)
        self._commit(records)
        for n in names:
            for scope in list(self._uses.get(n, ())):
                scope.cancel()
        return fresh

    def _descends(self, name: str, ancestor: str) -> bool:
        """True when ``name`` is a (strict) descendant of ``ancestor``."""
        seen: set[str] = set()
        parent = self._records[name].parent if name in self._records else None
        while parent is not None and parent not in seen:
            if parent == ancestor:
                return True
            seen.add(parent)
            parent = self._records[parent].parent if parent in self._records else None
        return False

    # -- the file --------------------------------------------------------------------

    def _commit(self, records: dict[str, TokenRecord]) -> None:
        if self._path is not None:
            write_private(self._path, orjson.dumps({"version": 1, "tokens": [
                r.stored() for r in records.values()]}, option=orjson.OPT_INDENT_2))
        self._records = records
        self._by_digest = {r.digest: r.name for r in records.values()}

    def _load(self, path: Path) -> None:
        raw = read_private(path)
        if raw is None:
            return
        try:
            data = orjson.loads(raw)
            records = [TokenRecord.load(raw) for raw in data["tokens"]]
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"cannot read the token store {path}: {exc}",
                              hint="fix or remove it (every minted token is then gone)") from None
        self._records = {r.name: r for r in records}
        self._by_digest = {r.digest: r.name for r in records}


def _within_parent(by: Principal, scopes: frozenset[str] | None,
                   profiles: frozenset[str] | None, sessions: frozenset[str] | None,
                   expires_at: float | None) -> tuple[frozenset[str], frozenset[str] | None,
                                                      frozenset[str] | None, float | None]:
    """A child's grant, defaulted from and checked against its parent ``by``."""
    scopes = by.scopes if scopes is None else scopes
    if not scopes <= by.scopes:
        raise ScopeExceedsParent(
            f"scopes {', '.join(sorted(scopes - by.scopes))} exceed token {by.name!r}'s",
            field="scopes")
    if profiles is None:
        profiles = by.profiles
    elif by.profiles is not None and not profiles <= by.profiles:
        raise ScopeExceedsParent("profiles outside the parent token's", field="profiles")
    if sessions is None:
        sessions = by.sessions
    elif by.sessions is not None and not sessions <= by.sessions:
        raise ScopeExceedsParent("sessions outside the parent token's", field="sessions")
    if by.expires_at is not None:
        if expires_at is not None and expires_at > by.expires_at:
            raise ScopeExceedsParent("a child token cannot outlive its parent",
                                     field="expiresInS")
        expires_at = by.expires_at if expires_at is None else expires_at
    return scopes, profiles, sessions, expires_at
