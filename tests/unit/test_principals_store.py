"""The token store's authentication and its file: which secret is whom, minted tokens
as their records, revoked and expired ones (an ancestor's too), last use, liveness; the
tokens.json kept private, hashes only, surviving a restart, and refused when widened,
linked or garbage. A fake wall clock; no browser, no network."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from browserd.errors import (
    BrowserdError,
    ConfigError,
    TokenExpired,
    TokenNotFound,
    TokenRevoked,
    Unauthorized,
)
from browserd.principals import (
    AGENT_SCOPES,
    DEFAULT_AGENT,
    OWNER,
    Principal,
    TokenStore,
)
from tests.unit._principals_fixtures import (
    AGENT_SECRET,
    DEFAULT,
    OWNER_SECRET,
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


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "tokens.json"


def file_store(path: Path, clock: FakeClock) -> TokenStore:
    return TokenStore(path, agent_token=AGENT_SECRET, owner_token=OWNER_SECRET, clock=clock)


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
