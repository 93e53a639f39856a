"""Tokens, scopes and the grants table at their edges (no browser).

Written for the mutants of ``principals/store.py``, ``principals/scopes.py`` and
the route table's checks of what each route needs (``http/declared.py``; ``python -m
supervision.mutants --only principals-store,principals-scopes,grants``).
"""

from __future__ import annotations

import trio

from browserd.http.routes import all_routes
from browserd.http.schema import Route
from browserd.principals import OWNER, TokenStore

OWNER_SECRET = "owner-secret-0123456789abcdef"
AGENT_SECRET = "agent-secret-0123456789abcdef"


def store() -> TokenStore:
    return TokenStore(None, agent_token=AGENT_SECRET, owner_token=OWNER_SECRET,
                      clock=lambda: 1_700_000_000.0)


async def test_a_use_opened_after_its_token_was_revoked_ends_at_once() -> None:
    tokens = store()
    minted = tokens.create(OWNER, name="late")
    holder = tokens.authenticate(minted.secret)
    tokens.revoke(OWNER, "late")  # between the request's authentication and its use
    reached = False
    with tokens.open_use(holder) as scope:  # type: ignore[arg-type]
        assert scope.cancel_called
        await trio.lowlevel.checkpoint()
        reached = True
    assert not reached and scope.cancelled_caught


def test_a_secret_is_32_random_bytes_after_its_prefix() -> None:
    """docs/security.md: a secret (``bd_…``, 32 random bytes) is shown once."""
    secret = store().create(OWNER, name="x").secret
    assert secret.startswith("bd_") and len(secret) == 3 + 43


def _route(path: str, method: str) -> Route:
    (found,) = [r for r in all_routes() if r.path == path and method in r.methods]
    return found


def test_typing_a_secret_needs_the_secrets_scope_wherever_it_is_asked() -> None:
    act = _route("/act", "POST")
    assert act.more_needs({"actions": [{"kind": "type", "secret": "bank"}]}) == ("secrets",)
    assert act.more_needs({"actions": [{"kind": "upload"}, {"kind": "type", "secret": "b"}]}
                       ) == ("files", "secrets")
    assert act.more_needs({"actions": [{"kind": "type", "secret": None}]}) == ()
    typing = _route("/type", "POST")
    assert typing.more_needs({"secret": "bank"}) == ("secrets",)
    assert typing.more_needs({"secret": None, "text": "x"}) == ()
    assert typing.more_needs({"text": "x"}) == ()
    assert _route("/click", "POST").more_needs({"secret": "bank"}) == ()
    assert _route("/login", "POST").more_needs({}) == ("secrets",)
