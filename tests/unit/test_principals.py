"""Principals: the person vs agents, scopes, the token store (minting, delegation,
revocation, expiry, persistence), open uses cancelled on revocation, and the grants
table every route is checked against. No browser, no network: a fake wall clock and
trio's autojump clock."""

from __future__ import annotations

import hashlib
import json
import math
import os
import stat
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from browserd.errors import (
    BadRequest,
    BrowserdError,
    ConfigError,
    Conflict,
    OwnerOnly,
    ScopeExceedsParent,
    ScopeRequired,
    TokenExpired,
    TokenNotFound,
    TokenRevoked,
    Unauthorized,
)
from browserd.http.answers import returns
from browserd.http.declared import check_table
from browserd.http.dispatch import authorize
from browserd.http.facts import LOCAL_READS, NOTHING, Cli, Render
from browserd.http.routes import all_routes
from browserd.http.schema import Route
from browserd.principals import (
    AGENT_SCOPES,
    DEFAULT_AGENT,
    OWNER,
    OWNER_SCOPE,
    PRINCIPAL_KEY,
    PUBLIC_SCOPE,
    SCOPES,
    Minted,
    Principal,
    TokenStore,
    check_scopes,
    principal_of,
    require,
)
from browserd.principals.store import MAX_TOKENS

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


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "tokens.json"


def file_store(path: Path, clock: FakeClock) -> TokenStore:
    return TokenStore(path, agent_token=AGENT_SECRET, owner_token=OWNER_SECRET, clock=clock)


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


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def rewrite(path: Path, edit: Any) -> None:
    """Edit tokens.json in place (keeping its 0600 mode), as a hand or a bug might."""
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    os.chmod(path, 0o600)


def by_name(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in data["tokens"] if t["name"] == name)


# -- scopes.py: Principal ------------------------------------------------------------


def test_the_scope_vocabulary() -> None:
    assert frozenset(SCOPES) == AGENT_SCOPES
    assert {"read", "act", "eval", "files", "state", "network", "cdp", "profiles",
            "delegate"} <= AGENT_SCOPES  # new scopes may join; none of these may go
    assert OWNER_SCOPE not in AGENT_SCOPES and PUBLIC_SCOPE not in AGENT_SCOPES
    assert OWNER.kind == "owner" and OWNER.is_owner and OWNER.scopes == frozenset()
    assert not DEFAULT.is_owner and DEFAULT.scopes == AGENT_SCOPES


def test_has_public_scope_for_everyone() -> None:
    assert OWNER.has(PUBLIC_SCOPE)
    assert agent(set()).has(PUBLIC_SCOPE)


def test_has_owner_scope_only_for_the_person() -> None:
    assert OWNER.has(OWNER_SCOPE)
    assert not DEFAULT.has(OWNER_SCOPE)  # every agent scope is still not the person's
    assert not agent(AGENT_SCOPES | {OWNER_SCOPE}).has(OWNER_SCOPE)


def test_has_agent_scope_only_when_held() -> None:
    reader = agent({"read"})
    assert reader.has("read")
    assert not reader.has("act")
    assert not reader.has("eval")


def test_has_is_false_for_the_person_on_agent_scopes_even_with_scopes() -> None:
    assert not OWNER.has("read")
    # An owner record carrying scopes still has no agent authority.
    assert not Principal(kind="owner", name="owner", scopes=AGENT_SCOPES).has("read")


def test_sees_profile() -> None:
    assert agent().sees_profile("anything")
    limited = agent(profiles=frozenset({"work"}))
    assert limited.sees_profile("work")
    assert not limited.sees_profile("home")
    assert not agent(profiles=frozenset()).sees_profile("work")


def test_sees_session() -> None:
    anywhere = agent()
    assert anywhere.sees_session(None) and anywhere.sees_session("s1")
    bound = agent(sessions=frozenset({"s1", "s2"}))
    assert bound.sees_session("s1") and bound.sees_session("s2")
    assert not bound.sees_session("s3")
    assert not bound.sees_session(None)  # a session-bound token: not the default context


def test_default_session() -> None:
    assert agent().default_session() is None
    assert agent(sessions=frozenset({"only"})).default_session() == "only"
    assert agent(sessions=frozenset({"a", "b"})).default_session() is None
    assert agent(sessions=frozenset()).default_session() is None


def test_principal_of() -> None:
    someone = agent()
    assert principal_of({PRINCIPAL_KEY: someone}) is someone
    assert principal_of({PRINCIPAL_KEY: "not a principal"}) is None
    assert principal_of({}) is None
    assert principal_of(None) is None


# -- scopes.py: require, check_scopes ------------------------------------------------


def test_require_passes_when_held() -> None:
    require(agent({"read"}), "read", what="GET /x")
    require(OWNER, OWNER_SCOPE, what="POST /tabs/offer")
    require(OWNER, PUBLIC_SCOPE, what="GET /tokens")
    require(agent(set()), PUBLIC_SCOPE, what="GET /tokens")


def test_require_owner_scope_is_owner_only_for_an_agent() -> None:
    with pytest.raises(OwnerOnly) as info:
        require(DEFAULT, OWNER_SCOPE, what="POST /tabs/offer")
    assert type(info.value) is OwnerOnly
    assert "POST /tabs/offer" in info.value.message


def test_require_missing_agent_scope_is_scope_required() -> None:
    with pytest.raises(ScopeRequired) as info:
        require(agent({"read"}, name="reader"), "eval", what="POST /eval")
    assert type(info.value) is ScopeRequired
    assert info.value.details == {"scope": "eval"}
    assert "'eval'" in info.value.message and "'reader'" in info.value.message
    assert info.value.to_dict()["code"] == "SCOPE_REQUIRED"


def test_require_the_person_on_an_agent_scope_is_scope_required() -> None:
    with pytest.raises(ScopeRequired) as info:
        require(OWNER, "read", what="GET /snapshot")
    assert type(info.value) is ScopeRequired
    assert info.value.details == {"scope": "read"}
    assert "agent token" in info.value.hint
    assert "owner token" in info.value.message


def test_check_scopes_accepts_known() -> None:
    assert check_scopes(["read", "act", "read"]) == frozenset({"read", "act"})
    assert isinstance(check_scopes(["read"]), frozenset)
    assert check_scopes([]) == frozenset()
    assert check_scopes(AGENT_SCOPES) == AGENT_SCOPES


@pytest.mark.parametrize("bad", [["owner"], ["any"], ["read", "sudo"], ["READ"], [""]])
def test_check_scopes_rejects_unknown(bad: list[str]) -> None:
    with pytest.raises(BadRequest) as info:
        check_scopes(bad)
    assert info.value.details == {"field": "scopes"}
    unknown = sorted(set(bad) - AGENT_SCOPES)
    assert ", ".join(unknown) in info.value.message
    assert "read" in info.value.hint  # lists the known ones


def test_check_scopes_names_the_field_and_every_unknown_sorted() -> None:
    with pytest.raises(BadRequest) as info:
        check_scopes(["zeta", "read", "alpha"], field="grant")
    assert info.value.details == {"field": "grant"}
    assert "alpha, zeta" in info.value.message


# -- store.py: authentication -------------------------------------------------------


def test_owner_secret_is_the_person(store: TokenStore) -> None:
    assert store.authenticate(OWNER_SECRET) is OWNER


def test_default_secret_is_the_default_agent(store: TokenStore) -> None:
    found = principal(store, AGENT_SECRET)
    assert found == Principal(kind="agent", name=DEFAULT_AGENT)
    assert found.scopes == AGENT_SCOPES and found.profiles is None and found.sessions is None
    assert not found.is_owner


def test_no_owner_token_means_no_person(clock: FakeClock) -> None:
    store = TokenStore(None, agent_token=AGENT_SECRET, owner_token=None, clock=clock)
    assert type(store.authenticate(OWNER_SECRET)) is Unauthorized
    assert principal(store, AGENT_SECRET).name == DEFAULT_AGENT


@pytest.mark.parametrize("secret", ["", "nope", OWNER_SECRET + "x", AGENT_SECRET[:-1],
                                    "bd_" + "A" * 43])
def test_unknown_secret_is_unauthorized(store: TokenStore, secret: str) -> None:
    store.create(OWNER, name="minted")
    found = store.authenticate(secret)
    assert type(found) is Unauthorized
    assert found.code == "UNAUTHORIZED"


def test_a_stored_hash_is_not_a_credential(store: TokenStore) -> None:
    minted = store.create(OWNER, name="minted")
    assert type(store.authenticate(minted.record.digest)) is Unauthorized


def test_minted_token_authenticates_as_its_record(store: TokenStore, clock: FakeClock) -> None:
    minted = store.create(OWNER, name="worker", scopes=frozenset({"read", "act"}),
                          profiles=frozenset({"work"}), sessions=frozenset({"s1"}),
                          expires_in_s=600)
    found = principal(store, minted.secret)
    assert found == Principal(kind="agent", name="worker", scopes=frozenset({"read", "act"}),
                              profiles=frozenset({"work"}), sessions=frozenset({"s1"}),
                              parent=None, expires_at=T0 + 600)


def test_minted_by_owner_defaults(store: TokenStore) -> None:
    minted = store.create(OWNER, name="plain")
    rec = minted.record
    assert rec.scopes == AGENT_SCOPES
    assert rec.profiles is None and rec.sessions is None
    assert rec.parent is None and rec.expires_at is None
    assert rec.created_at == T0 and rec.revoked_at is None and rec.last_used_at is None


def test_minted_secret_is_fresh_and_only_its_hash_is_kept(store: TokenStore) -> None:
    a = store.create(OWNER, name="a")
    b = store.create(OWNER, name="b")
    assert a.secret.startswith("bd_") and len(a.secret) > 40
    assert a.secret != b.secret
    assert a.record.digest == hashlib.sha256(a.secret.encode()).hexdigest()
    assert a.secret not in repr(a) and a.secret not in repr(a.record)
    assert a.record.digest not in repr(a.record)
    public = json.dumps(a.record.to_json())
    assert a.secret not in public and a.record.digest not in public
    assert a.record.stored()["sha256"] == a.record.digest


def test_revoked_token_is_token_revoked(store: TokenStore) -> None:
    minted = store.create(OWNER, name="gone")
    store.revoke(OWNER, "gone")
    found = store.authenticate(minted.secret)
    assert type(found) is TokenRevoked
    assert "'gone'" in found.message and "ancestor" not in found.message


def test_revoking_the_parent_revokes_the_child(store: TokenStore) -> None:
    parent, _ = mint(store, OWNER, "parent")
    _, child = mint(store, parent, "child")
    store.revoke(OWNER, "parent")
    assert type(store.authenticate(child.secret)) is TokenRevoked


def test_an_ancestor_revoked_is_named(path: Path, clock: FakeClock) -> None:
    store = file_store(path, clock)
    parent, p = mint(store, OWNER, "parent")
    kid, k = mint(store, parent, "kid")
    _, g = mint(store, kid, "grandkid")
    # Only the root carries revokedAt (a file edited by hand, or a child minted by a
    # stale principal): its descendants are refused all the same, naming it.
    rewrite(path, lambda data: by_name(data, "parent").update(revokedAt=T0))
    reloaded = file_store(path, clock)
    for secret, name in ((k.secret, "kid"), (g.secret, "grandkid")):
        found = reloaded.authenticate(secret)
        assert type(found) is TokenRevoked
        assert f"token {name!r}" in found.message
        assert "ancestor 'parent'" in found.message
    assert "ancestor" not in reloaded.authenticate(p.secret).message
    assert not reloaded.is_live(kid)


def test_an_ancestor_expired_refuses_its_descendants(path: Path, clock: FakeClock) -> None:
    store = file_store(path, clock)
    parent, _ = mint(store, OWNER, "parent")
    _, k = mint(store, parent, "kid")
    rewrite(path, lambda data: by_name(data, "parent").update(expiresAt=T0 + 10))
    reloaded = file_store(path, clock)
    assert isinstance(reloaded.authenticate(k.secret), Principal)
    clock.advance(10)
    assert type(reloaded.authenticate(k.secret)) is TokenExpired


def test_expiry_is_exact(store: TokenStore, clock: FakeClock) -> None:
    minted = store.create(OWNER, name="brief", expires_in_s=100)
    assert minted.record.expires_at == T0 + 100
    clock.advance(99.999)
    assert isinstance(store.authenticate(minted.secret), Principal)
    clock.now = T0 + 100
    found = store.authenticate(minted.secret)
    assert type(found) is TokenExpired and "'brief'" in found.message
    clock.advance(1e6)
    assert type(store.authenticate(minted.secret)) is TokenExpired


def test_no_expiry_never_expires(store: TokenStore, clock: FakeClock) -> None:
    minted = store.create(OWNER, name="forever")
    clock.advance(1e9)
    assert isinstance(store.authenticate(minted.secret), Principal)


def test_last_used_is_recorded_coarsely(store: TokenStore, clock: FakeClock) -> None:
    minted = store.create(OWNER, name="used")
    assert record(store, "used").last_used_at is None
    clock.advance(5)
    principal(store, minted.secret)
    assert record(store, "used").last_used_at == T0 + 5
    clock.advance(60)  # exactly the resolution: not rewritten
    principal(store, minted.secret)
    assert record(store, "used").last_used_at == T0 + 5
    clock.advance(0.5)
    principal(store, minted.secret)
    assert record(store, "used").last_used_at == T0 + 65.5


def test_a_refused_token_is_not_marked_used(store: TokenStore) -> None:
    minted = store.create(OWNER, name="used")
    store.revoke(OWNER, "used")
    store.authenticate(minted.secret)
    assert record(store, "used").last_used_at is None


def test_is_live(store: TokenStore, clock: FakeClock) -> None:
    assert store.is_live(OWNER) and store.is_live(DEFAULT)
    live, _ = mint(store, OWNER, "live")
    brief, _ = mint(store, OWNER, "brief", expires_in_s=10)
    gone, _ = mint(store, OWNER, "gone")
    assert store.is_live(live) and store.is_live(brief) and store.is_live(gone)
    store.revoke(OWNER, "gone")
    assert not store.is_live(gone)
    clock.advance(10)
    assert not store.is_live(brief)
    assert store.is_live(live)
    assert not store.is_live(agent(name="ghost"))  # no such token


def test_a_parent_cycle_in_the_file_does_not_hang(path: Path, clock: FakeClock) -> None:
    store = file_store(path, clock)
    a, ma = mint(store, OWNER, "a")
    mint(store, OWNER, "b")
    c, _ = mint(store, OWNER, "c")  # outside the cycle
    rewrite(path, lambda data: (by_name(data, "a").update(parent="b"),
                                by_name(data, "b").update(parent="a")))
    reloaded = file_store(path, clock)
    assert isinstance(reloaded.authenticate(ma.secret), Principal | BrowserdError)
    assert names(reloaded.visible_to(a)) <= {"a", "b"}
    assert names(reloaded.visible_to(c)) == {"c"}  # walks the a-b cycle, looking for c
    with pytest.raises(TokenNotFound):
        reloaded.revoke(c, "a")
    reloaded.is_live(a)


# -- store.py: minting ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["a", "Z", "0", "agent-1", "a.b_c-D9", "x" * 64, "Default",
                                  "owners"])
def test_valid_names(store: TokenStore, name: str) -> None:
    assert store.create(OWNER, name=name).record.name == name


@pytest.mark.parametrize("name", ["", "-a", ".a", "_a", "a b", "a/b", "a:b", "é", "a\n",
                                  "x" * 65, "default", "owner"])
def test_invalid_names(store: TokenStore, name: str) -> None:
    with pytest.raises(BadRequest) as info:
        store.create(OWNER, name=name)
    assert type(info.value) is BadRequest
    assert info.value.details == {"field": "name"}
    assert store.visible_to(OWNER) == []


def test_a_name_in_use_is_a_conflict(store: TokenStore) -> None:
    first = store.create(OWNER, name="dup")
    with pytest.raises(Conflict) as info:
        store.create(OWNER, name="dup", scopes=frozenset({"read"}))
    assert info.value.details == {"field": "name"}
    assert names(store.visible_to(OWNER)) == {"dup"}
    assert principal(store, first.secret).scopes == AGENT_SCOPES  # the first is intact
    parent, _ = mint(store, OWNER, "parent")
    with pytest.raises(Conflict):
        store.create(parent, name="dup")


def test_at_most_max_tokens(store: TokenStore) -> None:
    assert MAX_TOKENS == 1000
    for i in range(1000):
        store.create(OWNER, name=f"t{i}")
    assert len(store.visible_to(OWNER)) == 1000
    with pytest.raises(Conflict) as info:
        store.create(OWNER, name="one-more")
    assert "1000" in info.value.message
    assert len(store.visible_to(OWNER)) == 1000


def test_unknown_scope_is_refused(store: TokenStore) -> None:
    with pytest.raises(BadRequest) as info:
        store.create(OWNER, name="x", scopes=frozenset({"read", "root"}))
    assert info.value.details == {"field": "scopes"}
    assert store.visible_to(OWNER) == []


def test_owner_mints_with_given_grant(store: TokenStore) -> None:
    rec = store.create(OWNER, name="x", scopes=frozenset({"eval"}),
                       profiles=frozenset({"p"}), sessions=frozenset({"s"}),
                       expires_in_s=5).record
    assert (rec.scopes, rec.profiles, rec.sessions, rec.expires_at) == (
        {"eval"}, {"p"}, {"s"}, T0 + 5)


def test_empty_scopes_mean_no_scopes(store: TokenStore) -> None:
    """An empty scope list is a token with no scopes, never one with all of them."""
    nothing, _ = mint(store, OWNER, "nothing", scopes=frozenset())
    assert nothing.scopes == frozenset()
    assert not nothing.has("read")


def test_agent_without_delegate_cannot_mint(store: TokenStore) -> None:
    reader, _ = mint(store, OWNER, "reader", scopes=AGENT_SCOPES - {"delegate"})
    with pytest.raises(ScopeExceedsParent) as info:
        store.create(reader, name="child", scopes=frozenset({"read"}))
    assert info.value.details == {"scope": "delegate"}
    assert names(store.visible_to(OWNER)) == {"reader"}


def test_a_child_inherits_its_parents_grant(store: TokenStore, clock: FakeClock) -> None:
    parent, _ = mint(store, OWNER, "parent", scopes=frozenset({"read", "act", "delegate"}),
                     profiles=frozenset({"work"}), sessions=frozenset({"s1"}),
                     expires_in_s=1000)
    clock.advance(100)
    child, minted = mint(store, parent, "child")
    assert child == Principal(kind="agent", name="child",
                              scopes=frozenset({"read", "act", "delegate"}),
                              profiles=frozenset({"work"}), sessions=frozenset({"s1"}),
                              parent="parent", expires_at=T0 + 1000)
    assert minted.record.created_at == T0 + 100


def test_a_child_of_an_unlimited_parent_is_unlimited_by_default(store: TokenStore) -> None:
    child, _ = mint(store, DEFAULT, "child")
    assert child.parent == DEFAULT_AGENT
    assert child.scopes == AGENT_SCOPES
    assert child.profiles is None and child.sessions is None and child.expires_at is None


def test_a_child_may_narrow(store: TokenStore, clock: FakeClock) -> None:
    parent, _ = mint(store, OWNER, "parent", scopes=frozenset({"read", "act", "delegate"}),
                     profiles=frozenset({"work", "home"}), sessions=frozenset({"s1", "s2"}),
                     expires_in_s=1000)
    child, _ = mint(store, parent, "child", scopes=frozenset({"read"}),
                    profiles=frozenset({"work"}), sessions=frozenset({"s2"}), expires_in_s=10)
    assert (child.scopes, child.profiles, child.sessions, child.expires_at) == (
        {"read"}, {"work"}, {"s2"}, T0 + 10)


def test_a_child_may_equal_its_parent(store: TokenStore) -> None:
    grant = {"scopes": frozenset({"read", "delegate"}), "profiles": frozenset({"work"}),
             "sessions": frozenset({"s1"})}
    parent, _ = mint(store, OWNER, "parent", expires_in_s=50, **grant)
    child, _ = mint(store, parent, "child", expires_in_s=50, **grant)
    assert child.expires_at == parent.expires_at == T0 + 50
    assert (child.scopes, child.profiles, child.sessions) == tuple(grant.values())


def test_an_unlimited_parent_lets_a_child_choose(store: TokenStore) -> None:
    child, _ = mint(store, DEFAULT, "child", profiles=frozenset({"any-profile"}),
                    sessions=frozenset({"any-session"}), expires_in_s=30)
    assert child.profiles == {"any-profile"} and child.sessions == {"any-session"}
    assert child.expires_at == T0 + 30


def test_a_childs_scopes_must_be_a_subset(store: TokenStore) -> None:
    parent, _ = mint(store, OWNER, "parent", scopes=frozenset({"read", "delegate"}))
    with pytest.raises(ScopeExceedsParent) as info:
        store.create(parent, name="child", scopes=frozenset({"read", "eval", "cdp"}))
    assert info.value.details == {"field": "scopes"}
    assert "cdp, eval" in info.value.message
    assert names(store.visible_to(OWNER)) == {"parent"}


def test_a_child_with_empty_scopes_gets_none_not_more_than_its_parent(
        store: TokenStore) -> None:
    parent, _ = mint(store, OWNER, "parent", scopes=frozenset({"read", "delegate"}))
    child, _ = mint(store, parent, "child", scopes=frozenset())
    assert child.scopes == frozenset()
    assert not child.has("eval") and not child.has("read")


def test_a_childs_profiles_must_be_a_subset(store: TokenStore) -> None:
    parent, _ = mint(store, OWNER, "parent", profiles=frozenset({"work"}))
    with pytest.raises(ScopeExceedsParent) as info:
        store.create(parent, name="child", profiles=frozenset({"work", "home"}))
    assert info.value.details == {"field": "profiles"}
    assert names(store.visible_to(OWNER)) == {"parent"}


def test_a_childs_sessions_must_be_a_subset(store: TokenStore) -> None:
    parent, _ = mint(store, OWNER, "parent", sessions=frozenset({"s1"}))
    with pytest.raises(ScopeExceedsParent) as info:
        store.create(parent, name="child", sessions=frozenset({"s2"}))
    assert info.value.details == {"field": "sessions"}
    assert names(store.visible_to(OWNER)) == {"parent"}


def test_a_child_cannot_outlive_its_parent(store: TokenStore, clock: FakeClock) -> None:
    parent, _ = mint(store, OWNER, "parent", expires_in_s=100)
    clock.advance(40)
    with pytest.raises(ScopeExceedsParent) as info:
        store.create(parent, name="child", expires_in_s=60.5)
    assert info.value.details == {"field": "expiresInS"}
    assert names(store.visible_to(OWNER)) == {"parent"}
    child, _ = mint(store, parent, "child", expires_in_s=60)  # exactly the parent's end
    assert child.expires_at == T0 + 100


def test_an_expiring_child_of_a_forever_parent(store: TokenStore) -> None:
    parent, _ = mint(store, OWNER, "parent")
    child, _ = mint(store, parent, "child", expires_in_s=7)
    assert child.expires_at == T0 + 7


def test_a_grandchild_is_bounded_by_its_parent(store: TokenStore) -> None:
    top, _ = mint(store, OWNER, "top", scopes=frozenset({"read", "act", "delegate"}))
    mid, _ = mint(store, top, "mid", scopes=frozenset({"read", "delegate"}))
    with pytest.raises(ScopeExceedsParent):
        store.create(mid, name="low", scopes=frozenset({"act"}))
    low, _ = mint(store, mid, "low")
    assert low.parent == "mid" and low.scopes == {"read", "delegate"}


# -- store.py: visibility and revocation ---------------------------------------------


@pytest.fixture
def family(store: TokenStore) -> dict[str, Principal]:
    """parent → (kid → grandkid), parent → sibling; unrelated; default → dchild."""
    parent, _ = mint(store, OWNER, "parent")
    kid, _ = mint(store, parent, "kid")
    grandkid, _ = mint(store, kid, "grandkid")
    sibling, _ = mint(store, parent, "sibling")
    unrelated, _ = mint(store, OWNER, "unrelated")
    dchild, _ = mint(store, DEFAULT, "dchild")
    return {"parent": parent, "kid": kid, "grandkid": grandkid, "sibling": sibling,
            "unrelated": unrelated, "dchild": dchild}


def test_the_person_sees_every_token(store: TokenStore, family: dict[str, Principal]) -> None:
    store.revoke(OWNER, "unrelated")
    assert names(store.visible_to(OWNER)) == set(family)


def test_an_agent_sees_itself_and_its_descendants(
        store: TokenStore, family: dict[str, Principal]) -> None:
    assert names(store.visible_to(family["parent"])) == {"parent", "kid", "grandkid",
                                                         "sibling"}
    assert names(store.visible_to(family["kid"])) == {"kid", "grandkid"}
    assert names(store.visible_to(family["grandkid"])) == {"grandkid"}
    assert names(store.visible_to(family["sibling"])) == {"sibling"}
    assert names(store.visible_to(DEFAULT)) == {"dchild"}


def test_revoke_cascades_to_descendants_only(
        store: TokenStore, clock: FakeClock, family: dict[str, Principal]) -> None:
    clock.advance(3)
    assert sorted(store.revoke(OWNER, "kid")) == ["grandkid", "kid"]
    assert record(store, "kid").revoked_at == T0 + 3
    assert record(store, "grandkid").revoked_at == T0 + 3
    for name in ("parent", "sibling", "unrelated", "dchild"):
        assert record(store, name).revoked_at is None
        assert store.is_live(family[name])


def test_revoking_again_revokes_nothing_new(
        store: TokenStore, clock: FakeClock, family: dict[str, Principal]) -> None:
    store.revoke(OWNER, "kid")
    clock.advance(50)
    assert sorted(store.revoke(OWNER, "parent")) == ["parent", "sibling"]
    assert store.revoke(OWNER, "parent") == []
    assert record(store, "kid").revoked_at == T0  # the first revocation's time stays
    assert record(store, "parent").revoked_at == T0 + 50


def test_an_agent_revokes_its_descendants(
        store: TokenStore, family: dict[str, Principal]) -> None:
    assert sorted(store.revoke(family["parent"], "kid")) == ["grandkid", "kid"]
    assert store.revoke(DEFAULT, "dchild") == ["dchild"]
    assert store.is_live(family["parent"]) and store.is_live(family["sibling"])


@pytest.mark.parametrize(("who", "target"), [
    ("kid", "kid"),  # itself
    ("kid", "parent"),  # its parent
    ("grandkid", "parent"),  # an ancestor
    ("kid", "sibling"),  # a sibling of its own
    ("sibling", "grandkid"),  # a sibling's child
    ("parent", "unrelated"),
    ("parent", "dchild"),
    ("parent", "nonexistent"),
])
def test_an_agent_cannot_revoke_others(
        store: TokenStore, family: dict[str, Principal], who: str, target: str) -> None:
    with pytest.raises(TokenNotFound):
        store.revoke(family[who], target)
    assert all(store.is_live(p) for p in family.values())


def test_the_default_agent_cannot_revoke_owner_minted(
        store: TokenStore, family: dict[str, Principal]) -> None:
    with pytest.raises(TokenNotFound):
        store.revoke(DEFAULT, "parent")
    assert store.is_live(family["parent"])


def test_the_person_revokes_any_but_an_unknown(store: TokenStore,
                                               family: dict[str, Principal]) -> None:
    with pytest.raises(TokenNotFound):
        store.revoke(OWNER, "nonexistent")
    assert store.revoke(OWNER, "dchild") == ["dchild"]


@pytest.mark.parametrize("who", [OWNER, DEFAULT, agent(name="x")])
def test_nobody_revokes_the_default_token(store: TokenStore, who: Principal) -> None:
    with pytest.raises(OwnerOnly):
        store.revoke(who, DEFAULT_AGENT)
    assert principal(store, AGENT_SECRET).name == DEFAULT_AGENT


# -- store.py: open uses -------------------------------------------------------------


async def _hold(store: TokenStore, who: Principal, scopes: dict[str, trio.CancelScope],
                done: dict[str, bool], *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    with store.open_use(who) as scope:
        scopes[who.name] = scope
        task_status.started()
        await trio.sleep_forever()
    done[who.name] = scope.cancelled_caught


async def test_open_use_is_counted_while_open(store: TokenStore) -> None:
    worker, _ = mint(store, OWNER, "worker")
    assert store.open_uses("worker") == 0
    with store.open_use(worker) as one:
        assert store.open_uses("worker") == 1
        with store.open_use(worker) as two:
            assert one is not two
            assert store.open_uses("worker") == 2
        assert store.open_uses("worker") == 1
    assert store.open_uses("worker") == 0


async def test_open_use_is_forgotten_after_an_error(store: TokenStore) -> None:
    worker, _ = mint(store, OWNER, "worker")
    with pytest.raises(RuntimeError), store.open_use(worker):
        raise RuntimeError("handler failed")
    assert store.open_uses("worker") == 0


async def test_revoke_cancels_the_tokens_and_its_descendants_uses(
        store: TokenStore, family: dict[str, Principal]) -> None:
    scopes: dict[str, trio.CancelScope] = {}
    done: dict[str, bool] = {}
    async with trio.open_nursery() as nursery:
        for name in ("parent", "kid", "grandkid", "sibling", "unrelated", "dchild"):
            await nursery.start(_hold, store, family[name], scopes, done)
        await nursery.start(_hold, store, OWNER, scopes, done)
        await nursery.start(_hold, store, DEFAULT, scopes, done)
        assert store.open_uses("kid") == 1
        store.revoke(OWNER, "kid")
        await trio.testing.wait_all_tasks_blocked()
        assert done == {"kid": True, "grandkid": True}
        assert store.open_uses("kid") == 0 and store.open_uses("grandkid") == 0
        for name in ("parent", "sibling", "unrelated", "dchild", "owner", "default"):
            assert not scopes[name].cancel_called, name
        assert store.open_uses("parent") == 1
        store.revoke(OWNER, "parent")
        await trio.testing.wait_all_tasks_blocked()
        assert done == {"kid": True, "grandkid": True, "parent": True, "sibling": True}
        assert not scopes["unrelated"].cancel_called
        nursery.cancel_scope.cancel()


async def test_an_agents_revocation_cancels_uses(store: TokenStore,
                                                 family: dict[str, Principal]) -> None:
    scopes: dict[str, trio.CancelScope] = {}
    done: dict[str, bool] = {}
    async with trio.open_nursery() as nursery:
        await nursery.start(_hold, store, family["grandkid"], scopes, done)
        store.revoke(family["parent"], "kid")
        await trio.testing.wait_all_tasks_blocked()
        assert done == {"grandkid": True}
        nursery.cancel_scope.cancel()


async def test_revoking_again_cancels_a_late_use(store: TokenStore) -> None:
    """A use opened by a stale principal after revocation is still closed by the next one."""
    late, _ = mint(store, OWNER, "late")
    store.revoke(OWNER, "late")
    scopes: dict[str, trio.CancelScope] = {}
    done: dict[str, bool] = {}
    async with trio.open_nursery() as nursery:
        await nursery.start(_hold, store, late, scopes, done)
        assert store.revoke(OWNER, "late") == []
        await trio.testing.wait_all_tasks_blocked()
        assert done == {"late": True}


async def test_the_person_and_default_uses_are_not_the_stores(store: TokenStore) -> None:
    for who in (OWNER, DEFAULT):
        with store.open_use(who) as scope:
            assert store.open_uses(who.name) == 0
            assert scope.deadline == math.inf
            assert not scope.cancel_called


async def test_open_use_deadline_is_the_tokens_expiry(
        store: TokenStore, clock: FakeClock, autojump_clock: trio.testing.MockClock) -> None:
    brief, _ = mint(store, OWNER, "brief", expires_in_s=100)
    forever, _ = mint(store, OWNER, "forever")
    clock.advance(70)
    with store.open_use(forever) as scope:
        assert scope.deadline == math.inf
    start = trio.current_time()
    with store.open_use(brief) as scope:
        assert scope.deadline == pytest.approx(start + 30)
        await trio.sleep_forever()
    assert scope.cancelled_caught
    assert trio.current_time() - start == pytest.approx(30)
    assert store.open_uses("brief") == 0


async def test_open_use_of_an_expired_principal_ends_at_once(
        store: TokenStore, clock: FakeClock, autojump_clock: trio.testing.MockClock) -> None:
    brief, _ = mint(store, OWNER, "brief", expires_in_s=10)
    clock.advance(25)
    start = trio.current_time()
    with store.open_use(brief) as scope:
        assert scope.deadline == start  # never in the past
        await trio.sleep_forever()
    assert scope.cancelled_caught
    assert trio.current_time() == start


async def test_an_ancestors_expiry_is_inherited_by_the_use(
        store: TokenStore, clock: FakeClock, autojump_clock: trio.testing.MockClock) -> None:
    parent, _ = mint(store, OWNER, "parent", expires_in_s=40)
    child, _ = mint(store, parent, "child")
    start = trio.current_time()
    with store.open_use(child) as scope:
        await trio.sleep_forever()
    assert scope.cancelled_caught
    assert trio.current_time() - start == pytest.approx(40)


# -- store.py: the file ----------------------------------------------------------------


def test_no_file_until_the_first_token(path: Path, clock: FakeClock) -> None:
    store = file_store(path, clock)
    assert store.visible_to(OWNER) == []
    assert not path.exists()
    store.create(OWNER, name="first")
    assert path.exists()


def test_the_file_is_private_and_holds_hashes_only(path: Path, clock: FakeClock) -> None:
    store = file_store(path, clock)
    a = store.create(OWNER, name="a")
    b = store.create(OWNER, name="b", scopes=frozenset({"read"}))
    store.revoke(OWNER, "a")
    assert mode(path) == 0o600
    text = path.read_text()
    assert a.secret not in text and b.secret not in text
    data = json.loads(text)
    assert data["version"] == 1
    assert {t["name"]: t["sha256"] for t in data["tokens"]} == {
        "a": hashlib.sha256(a.secret.encode()).hexdigest(),
        "b": hashlib.sha256(b.secret.encode()).hexdigest()}
    assert all("token" not in t and "secret" not in t for t in data["tokens"])
    assert [p.name for p in path.parent.iterdir()] == ["tokens.json"]  # no temp files left


def test_tokens_survive_a_restart(path: Path, clock: FakeClock) -> None:
    store = file_store(path, clock)
    parent, p = mint(store, OWNER, "parent", scopes=frozenset({"read", "act", "delegate"}),
                     profiles=frozenset({"work", "home"}), sessions=frozenset({"s1"}),
                     expires_in_s=1000)
    kid, k = mint(store, parent, "kid", scopes=frozenset({"read"}), profiles=frozenset())
    _, g = mint(store, OWNER, "gone")
    _, plain = mint(store, OWNER, "plain")
    clock.advance(2)
    store.revoke(OWNER, "gone")
    before = {r.name: r.to_json() for r in store.visible_to(OWNER)}

    reloaded = file_store(path, clock)
    assert {r.name: r.to_json() for r in reloaded.visible_to(OWNER)} == before
    assert before["kid"]["parent"] == "parent" and before["kid"]["profiles"] == []
    assert before["plain"]["profiles"] is None and before["plain"]["sessions"] is None
    assert principal(reloaded, p.secret) == parent
    assert principal(reloaded, k.secret) == kid
    assert principal(reloaded, plain.secret).scopes == AGENT_SCOPES
    assert type(reloaded.authenticate(g.secret)) is TokenRevoked
    assert names(reloaded.visible_to(parent)) == {"parent", "kid"}
    assert reloaded.authenticate(OWNER_SECRET) is OWNER
    assert type(reloaded.authenticate("bd_unknown")) is Unauthorized
    clock.advance(1000)
    assert type(reloaded.authenticate(p.secret)) is TokenExpired


def test_a_failed_write_changes_nothing(tmp_path: Path, clock: FakeClock) -> None:
    store = file_store(tmp_path / "missing-dir" / "tokens.json", clock)
    with pytest.raises(ConfigError):
        store.create(OWNER, name="x")
    assert store.visible_to(OWNER) == []


def test_a_failed_revoke_revokes_nothing(path: Path, clock: FakeClock,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    store = file_store(path, clock)
    worker, minted = mint(store, OWNER, "worker")

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(ConfigError):
        store.revoke(OWNER, "worker")
    assert [p.name for p in path.parent.iterdir()] == ["tokens.json"]  # temp file removed
    monkeypatch.undo()
    assert store.is_live(worker)
    assert isinstance(store.authenticate(minted.secret), Principal)
    assert isinstance(file_store(path, clock).authenticate(minted.secret), Principal)


@pytest.mark.parametrize("wide", [0o644, 0o640, 0o604, 0o660, 0o700])
def test_a_widened_file_is_refused(path: Path, clock: FakeClock, wide: int) -> None:
    file_store(path, clock).create(OWNER, name="x")
    os.chmod(path, wide)
    if wide & 0o077:
        with pytest.raises(ConfigError) as info:
            file_store(path, clock)
        assert str(path) in info.value.message
        assert f"chmod 600 {path}" in info.value.hint
    else:  # owner bits only: fine
        assert names(file_store(path, clock).visible_to(OWNER)) == {"x"}


def test_a_symlinked_file_is_refused(tmp_path: Path, clock: FakeClock) -> None:
    real = tmp_path / "real.json"
    file_store(real, clock).create(OWNER, name="x")
    link = tmp_path / "tokens.json"
    link.symlink_to(real)
    with pytest.raises(ConfigError):
        file_store(link, clock)


def test_a_directory_is_refused(path: Path, clock: FakeClock) -> None:
    path.mkdir(mode=0o700)
    with pytest.raises(ConfigError):
        file_store(path, clock)


@pytest.mark.parametrize("content", [
    b"not json", b"", b"{", b"[]", b"null", b'"tokens"', b"{}", b'{"tokens": 5}',
    b'{"tokens": [5]}', b'{"tokens": [{"name": "x"}]}',
    b'{"tokens": [{"name": "x", "sha256": "ab", "scopes": 5, "createdAt": 1}]}',
    b'{"tokens": [{"name": "x", "sha256": "ab", "scopes": [], "createdAt": "soon"}]}',
])
def test_garbage_is_a_config_error(path: Path, clock: FakeClock, content: bytes) -> None:
    path.write_bytes(content)
    os.chmod(path, 0o600)
    with pytest.raises(ConfigError) as info:
        file_store(path, clock)
    assert str(path) in info.value.message


def test_unknown_scopes_in_the_file_are_dropped(path: Path, clock: FakeClock) -> None:
    store = file_store(path, clock)
    _, minted = mint(store, OWNER, "x", scopes=frozenset({"read"}))
    rewrite(path, lambda data: by_name(data, "x").update(scopes=["read", "owner", "sudo"]))
    found = principal(file_store(path, clock), minted.secret)
    assert found.scopes == {"read"}


# -- the scope each route declares, and dispatch.authorize ------------------------------


def _route(path: str, method: str) -> Route:
    found = [r for r in all_routes() if r.path == path and method in r.methods]
    assert len(found) == 1, (path, method)
    return found[0]


def _declared(path: str, *methods: str, **facts: Any) -> Route:
    """A route with every fact declared (``facts`` override them)."""
    async def handler(system: Any, args: dict[str, Any]) -> None:
        return None

    declared: dict[str, Any] = dict(
        name=path.strip("/").replace("-", "_") or "x", group="service", hints=LOCAL_READS,
        needs="read", answer=returns("Status"), blocked_by=NOTHING, cli=Cli(),
        render=Render.FIELDS)
    return Route(path=path, methods=methods, handler=handler, **{**declared, **facts})


def test_every_route_needs_something_known() -> None:
    routes = all_routes()
    assert routes
    for route in routes:
        assert route.needs, route.path
        if route.auth:
            assert route.needs in AGENT_SCOPES | {OWNER_SCOPE, PUBLIC_SCOPE}, route.path
        else:
            assert route.needs == "none", route.path


@pytest.mark.parametrize(("path", "method", "needs"), [
    ("/tabs/offer", "POST", OWNER_SCOPE),
    ("/tabs/offerable", "GET", OWNER_SCOPE),
    ("/ui-codes", "POST", OWNER_SCOPE),
    ("/eval", "POST", "eval"),
    ("/upload", "POST", "files"),
    ("/act", "POST", "act"),
    ("/snapshot", "GET", "read"),
    ("/cookies", "GET", "state"),
    ("/network/har", "POST", "network"),
    ("/profiles", "POST", "profiles"),
    ("/tokens", "GET", PUBLIC_SCOPE),
    ("/tokens", "POST", PUBLIC_SCOPE),
    ("/tokens/<name>", "DELETE", PUBLIC_SCOPE),
])
def test_route_needs(path: str, method: str, needs: str) -> None:
    assert _route(path, method).needs == needs


def test_only_the_persons_routes_need_owner() -> None:
    owner_routes = {r.path for r in all_routes() if r.needs == OWNER_SCOPE}
    assert {"/tabs/offer", "/tabs/offerable", "/ui-codes"} <= owner_routes
    assert owner_routes <= {"/tabs/offer", "/tabs/offerable", "/ui-codes", "/tabs/requests",
                            "/tabs/requests/<requestId>", "/secrets", "/secrets/<name>",
                            "/confirmations", "/confirmations/<id>"}
    assert all(r.group == "none" for r in all_routes() if r.needs == OWNER_SCOPE), \
        "the person's routes are never an agent's tool"


def test_a_route_without_its_scope_is_refused() -> None:
    check_table([_declared("/brand-new", "GET")])
    with pytest.raises(ValueError, match="GET /brand-new: needs"):
        check_table([_declared("/brand-new", "GET", needs="")])


@pytest.mark.parametrize(("facts", "why"), [
    ({"needs": "sudo"}, "no scope"),
    ({"needs": "none"}, "without the token"),  # only a route without the token needs none
    ({"needs": OWNER_SCOPE}, "cannot be a tool"),  # the person's: no group but none
])
def test_a_route_needing_what_it_may_not_is_refused(facts: dict[str, Any], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        check_table([_declared("/brand-new", "GET", **facts)])


def test_a_route_without_the_token_needs_none() -> None:
    check_table([_declared("/open", "GET", auth=False, needs="none", group="none")])
    with pytest.raises(ValueError, match="without the token"):
        check_table([_declared("/open", "GET", auth=False, group="none")])


def test_extra_needs_of_an_upload_in_act() -> None:
    act = _route("/act", "POST")
    assert act.more_needs({"actions": [{"kind": "click"}, {"kind": "upload"}]}) == ("files",)
    assert act.more_needs({"actions": [{"kind": "click"}, {"kind": "type"}]}) == ()
    assert act.more_needs({"actions": []}) == ()
    assert act.more_needs({"actions": None}) == ()
    assert act.more_needs({}) == ()
    assert act.more_needs({"actions": ["upload", 5]}) == ()
    assert _route("/click", "POST").more_needs({"actions": [{"kind": "upload"}]}) == ()


def test_giving_local_files_needs_the_files_scope_on_every_route_that_takes_them() -> None:
    """A click that fills the file chooser and a drop of files upload as /upload does."""
    for path in ("/click", "/drag"):
        assert _route(path, "POST").more_needs({"files": ["a.txt"]}) == ("files",), path
        assert _route(path, "POST").more_needs({"files": None}) == (), path
    act = _route("/act", "POST")
    assert act.more_needs({"actions": [{"kind": "click", "files": ["a.txt"]}]}) == ("files",)
    assert act.more_needs({"actions": [{"kind": "drag", "files": ["a"], "to": {}}]}) == (
        "files",)
    assert act.more_needs({"actions": [{"kind": "click", "ref": "e1"}]}) == ()


def test_authorize_checks_the_routes_scope() -> None:
    snapshot = _route("/snapshot", "GET")
    authorize(agent({"read"}), snapshot, {}, what="GET /snapshot")
    with pytest.raises(ScopeRequired) as info:
        authorize(agent({"act"}), snapshot, {}, what="GET /snapshot")
    assert info.value.details == {"scope": "read"}
    with pytest.raises(ScopeRequired):
        authorize(OWNER, _route("/eval", "POST"), {}, what="POST /eval")


def test_authorize_checks_owner_routes() -> None:
    offer = _route("/tabs/offer", "POST")
    authorize(OWNER, offer, {}, what="POST /tabs/offer")
    with pytest.raises(OwnerOnly):
        authorize(DEFAULT, offer, {}, what="POST /tabs/offer")


def test_authorize_public_routes() -> None:
    tokens = _route("/tokens", "GET")
    authorize(OWNER, tokens, {}, what="GET /tokens")
    authorize(agent(set()), tokens, {}, what="GET /tokens")


def test_authorize_checks_what_the_arguments_add() -> None:
    act = _route("/act", "POST")
    upload = {"actions": [{"kind": "upload"}]}
    authorize(agent({"act"}), act, {"actions": [{"kind": "click"}]}, what="POST /act")
    with pytest.raises(ScopeRequired) as info:
        authorize(agent({"act"}), act, upload, what="POST /act")
    assert info.value.details == {"scope": "files"}
    with pytest.raises(ScopeRequired) as info:
        authorize(agent({"files"}), act, upload, what="POST /act")
    assert info.value.details == {"scope": "act"}
    authorize(agent({"act", "files"}), act, upload, what="POST /act")


def test_a_limited_token_subscribes_to_its_own_profiles_events_only() -> None:
    from browserd.errors import ProfileNotFound
    from browserd.principals import Principal

    one = Principal(kind="agent", name="a", profiles=frozenset({"work"}))
    assert one.events_profile(None) == "work" and one.events_profile("work") == "work"
    with pytest.raises(ProfileNotFound):
        one.events_profile("clawd")
    two = Principal(kind="agent", name="b", profiles=frozenset({"work", "home"}))
    with pytest.raises(BadRequest):
        two.events_profile(None)
    assert Principal(kind="agent", name="c").events_profile(None) is None
