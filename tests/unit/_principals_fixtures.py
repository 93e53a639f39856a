"""What the token-store tests share (tests/unit/test_principals*.py): the two
configured secrets, a fake wall clock and a store on it (fixtures), and the helpers
that mint, authenticate and look tokens up.

The fixtures are imported by name into each test module (and listed in its
``__all__``), as pytest finds fixtures in the module that uses them.
"""

from __future__ import annotations

from typing import Any

import pytest

from browserd.principals import (
    AGENT_SCOPES,
    DEFAULT_AGENT,
    OWNER,
    Minted,
    Principal,
    TokenStore,
)

__all__ = [
    "AGENT_SECRET",
    "DEFAULT",
    "OWNER_SECRET",
    "T0",
    "FakeClock",
    "agent",
    "clock",
    "mint",
    "names",
    "principal",
    "record",
    "store",
]

OWNER_SECRET = "owner-secret-0123456789abcdef"
AGENT_SECRET = "agent-secret-0123456789abcdef"
T0 = 1_700_000_000.0
DEFAULT = Principal(kind="agent", name=DEFAULT_AGENT)


class FakeClock:
    """A wall clock the test moves by hand."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(clock: FakeClock) -> TokenStore:
    return TokenStore(None, agent_token=AGENT_SECRET, owner_token=OWNER_SECRET, clock=clock)


def principal(store: TokenStore, secret: str) -> Principal:
    found = store.authenticate(secret)
    assert isinstance(found, Principal), found
    return found


def mint(store: TokenStore, by: Principal, name: str, **kwargs: Any) -> tuple[Principal, Minted]:
    minted = store.create(by, name=name, **kwargs)
    return principal(store, minted.secret), minted


def agent(scopes: set[str] | frozenset[str] = AGENT_SCOPES, **kwargs: Any) -> Principal:
    return Principal(kind="agent", name=kwargs.pop("name", "someone"),
                     scopes=frozenset(scopes), **kwargs)


def names(records: list[Any]) -> set[str]:
    return {r.name for r in records}


def record(store: TokenStore, name: str) -> Any:
    found = [r for r in store.visible_to(OWNER) if r.name == name]
    assert len(found) == 1
    return found[0]
