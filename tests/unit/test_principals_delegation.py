"""Delegation in the token store: minting (names, the cap, the grant an owner gives),
children bounded by their parents, who sees and who may revoke which tokens, and the
open uses a revocation (or an expiry) cancels. A fake wall clock and trio's autojump
clock; no browser, no network."""

from __future__ import annotations

import math
from typing import Any

import pytest
import trio
import trio.testing

from browserd.errors import BadRequest, Conflict, OwnerOnly, ScopeExceedsParent, TokenNotFound
from browserd.principals import (
    AGENT_SCOPES,
    DEFAULT_AGENT,
    OWNER,
    Principal,
    TokenStore,
)
from browserd.principals.store import MAX_TOKENS
from tests.unit._principals_fixtures import (
    AGENT_SECRET,
    DEFAULT,
    T0,
    FakeClock,
    agent,
    clock,
    mint,
    names,
    principal,
    record,
    store,
)

__all__ = ["clock", "store"]


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
