"""Principals and scopes, no store: who the person and an agent are (``Principal``:
``has``, ``sees_profile``/``sees_session``, ``principal_of``), ``require`` and
``check_scopes``, and the grants table every route is checked against (the scope each
route declares, ``check_table``, ``dispatch.authorize``)."""

from __future__ import annotations

from typing import Any

import pytest

from browserd.errors import BadRequest, OwnerOnly, ScopeRequired
from browserd.http.answers import returns
from browserd.http.declared import check_table
from browserd.http.dispatch import authorize
from browserd.http.facts import LOCAL_READS, NOTHING, Cli, Render
from browserd.http.routes import all_routes
from browserd.http.schema import Route
from browserd.principals import (
    AGENT_SCOPES,
    OWNER,
    OWNER_SCOPE,
    PRINCIPAL_KEY,
    PUBLIC_SCOPE,
    SCOPES,
    Principal,
    check_scopes,
    principal_of,
    require,
)
from tests.unit._principals_fixtures import DEFAULT, agent

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
