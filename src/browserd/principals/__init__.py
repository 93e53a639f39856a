"""Principals: the person, agents and delegated agents; their tokens and scopes."""

from .scopes import (
    AGENT_SCOPES,
    OWNER,
    OWNER_SCOPE,
    PUBLIC_SCOPE,
    SCOPES,
    Principal,
    check_scopes,
    require,
)
from .store import DEFAULT_AGENT, Minted, TokenRecord, TokenStore

__all__ = ["AGENT_SCOPES", "DEFAULT_AGENT", "OWNER", "OWNER_SCOPE", "PRINCIPAL_KEY",
           "PUBLIC_SCOPE", "SCOPES", "Minted", "Principal", "TokenRecord", "TokenStore",
           "check_scopes", "principal_of", "require"]

#: Where the Guard leaves the request's principal in the ASGI scope.
PRINCIPAL_KEY = "browserd.principal"


def principal_of(scope: object) -> Principal | None:
    """The principal the Guard left in an ASGI ``scope`` (None: none, or no scope)."""
    found = scope.get(PRINCIPAL_KEY) if isinstance(scope, dict) else None
    return found if isinstance(found, Principal) else None
