"""Who is asking: the person or an agent, and what an agent's token may do.

Two kinds of principal, never confused:

- the **person** (:data:`OWNER`) holds the owner credential (the 0600
  ``owner-token`` file, or an ops-page session made from it). Only the
  person logs into the ops page, ends a handoff as done, sends live-view
  input, offers tabs and answers tab requests, and mints or revokes tokens
  other than an agent's own children. None of these is a scope: no agent
  token can be given them.
- **agents** hold tokens with :data:`SCOPES`, the profiles and sessions they
  may see (None: all), an expiry and, when delegated, a parent.

A :class:`Principal` is a frozen record; checks are plain functions of it,
with no I/O, so every lane (HTTP, ``/ws``, MCP, the CDP gateway) asks the
same questions of the same record.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import attrs

from ..errors import BadRequest, OwnerOnly, ProfileNotFound, ScopeRequired

__all__ = ["AGENT_SCOPES", "OWNER", "OWNER_SCOPE", "PUBLIC_SCOPE", "SCOPES", "Principal",
           "check_scopes", "require"]

#: Every scope an agent token can hold, with what it opens (docs/security.md).
SCOPES: dict[str, str] = {
    "read": "status, tabs, snapshot, find, query, dom, console, screenshot, pdf, media, "
            "downloads list",
    "act": "navigate, history, scroll, input, dialogs, tabs open/close/focus, wait, "
           "emulation, handoff request/cancel, tab requests",
    "eval": "JavaScript evaluation (/eval)",
    "files": "uploads and download bodies",
    "state": "cookies, storage, storage state",
    "network": "network bodies, blocking, headers, HAR",
    "cdp": "the CDP gateway",
    "profiles": "profiles, sessions, start/stop",
    "delegate": "minting child tokens (a subset of one's own)",
    "secrets": "typing the person's vault secrets by name (never reading them)",
}
AGENT_SCOPES = frozenset(SCOPES)
#: A route's ``scope`` for the person's own routes (never an agent's).
OWNER_SCOPE = "owner"
#: A route's ``scope`` for routes any authenticated principal may call (the handler decides).
PUBLIC_SCOPE = "any"


@attrs.frozen(kw_only=True)
class Principal:
    """The person or one agent token, as a request's gate found it.

    ``profiles``/``sessions``: what the token sees (None: every profile, any
    session or none). ``token_id``: the stored hash's short name (never the
    secret). ``expires_at``: wall-clock seconds, or None for no expiry.
    """

    kind: Literal["owner", "agent"]
    name: str
    scopes: frozenset[str] = AGENT_SCOPES
    profiles: frozenset[str] | None = None
    sessions: frozenset[str] | None = None
    parent: str | None = None
    expires_at: float | None = None

    @property
    def is_owner(self) -> bool:
        return self.kind == "owner"

    def has(self, scope: str) -> bool:
        """True when this principal may do what ``scope`` stands for.

        The person has every agent scope's *authority* only on the person's
        own routes; for agent routes the person's credential is not a token
        (the owner token opens the owner's routes only), so ``has`` is False
        for the person on agent scopes.
        """
        if scope == PUBLIC_SCOPE:
            return True
        if scope == OWNER_SCOPE:
            return self.is_owner
        return not self.is_owner and scope in self.scopes

    def sees_profile(self, profile: str) -> bool:
        return self.profiles is None or profile in self.profiles

    def sees_session(self, session: str | None) -> bool:
        """May this token work in ``session`` (None: the profile's default context)?"""
        if self.sessions is None:
            return True
        return session is not None and session in self.sessions

    def events_profile(self, asked: str | None) -> str | None:
        """The profile an event subscription of this principal covers (None: every one).

        A token limited to some profiles sees only their events: its one
        profile when it asks for none; ProfileNotFound for one outside them;
        BadRequest when it has several and names none.
        """
        if self.profiles is None:
            return asked
        if asked is not None:
            if asked not in self.profiles:
                raise ProfileNotFound(f"no profile {asked!r}")
            return asked
        if len(self.profiles) == 1:
            return next(iter(self.profiles))
        raise BadRequest("this token sees several profiles: name one to subscribe to",
                         field="profile")

    def default_session(self) -> str | None:
        """The session a request without one works in: the token's only session, if one."""
        if self.sessions is not None and len(self.sessions) == 1:
            return next(iter(self.sessions))
        return None


#: The person (the owner token or an ops-page session).
OWNER = Principal(kind="owner", name="owner", scopes=frozenset())


def require(principal: Principal, scope: str, *, what: str) -> None:
    """Raise OwnerOnly / ScopeRequired unless ``principal`` may do ``what`` (needs ``scope``)."""
    if principal.has(scope):
        return
    if scope == OWNER_SCOPE:
        raise OwnerOnly(f"{what} is the person's to do; an agent's token cannot")
    if principal.is_owner:
        raise ScopeRequired(
            f"{what} is an agent's call; the owner token opens the person's routes only",
            scope=scope, hint="use an agent token (`browserd token`)")
    raise ScopeRequired(f"{what} needs the {scope!r} scope, which token "
                        f"{principal.name!r} does not have", scope=scope)


def check_scopes(scopes: Iterable[str], *, field: str = "scopes") -> frozenset[str]:
    """``scopes`` as a set of known agent scopes; BadRequest naming an unknown one."""
    out = frozenset(scopes)
    unknown = sorted(out - AGENT_SCOPES)
    if unknown:
        raise BadRequest(f"unknown scope(s): {', '.join(unknown)}", field=field,
                         hint="known: " + ", ".join(sorted(AGENT_SCOPES)))
    return out
