"""Pure parts of cookies, web storage origins, storage state and emulation (no browser)."""

from __future__ import annotations

from typing import Any

import pytest

from browserd.errors import BadRequest
from browserd.http.routes.emulation import emulation_changes, emulation_routes
from browserd.http.schema import UNSET, Field, parse_args
from browserd.state import cookies
from browserd.state.storage_state import parse_state
from browserd.state.webstorage import normalize_origin, origin_of_url
from browserd.tabs import emulation
from browserd.tabs.state import NO_EMULATION, Viewport


def test_a_valid_cookie_becomes_a_cdp_param() -> None:
    assert cookies.validate_cookie({"name": "a", "value": "b", "domain": ".x.test"}, "c") == \
        {"name": "a", "value": "b", "domain": ".x.test", "path": "/"}
    param = cookies.validate_cookie({"name": "a", "value": "b", "url": "https://x.test/p",
                                     "expires": -1, "sameSite": "lax", "secure": True}, "c")
    assert param == {"name": "a", "value": "b", "url": "https://x.test/p", "secure": True,
                     "sameSite": "Lax"}


@pytest.mark.parametrize(("cookie", "field"), [
    ({"name": "", "value": "b", "domain": "x.test"}, "c.name"),
    ({"name": "a", "value": 3, "domain": "x.test"}, "c.value"),
    ({"name": "a", "value": "b", "domain": "x test"}, "c.domain"),
    ({"name": "a", "value": "b", "domain": "x.test", "path": "p"}, "c.path"),
    ({"name": "a", "value": "b", "domain": "x.test", "expires": -5}, "c.expires"),
    ({"name": "a", "value": "b", "domain": "x.test", "expires": True}, "c.expires"),
    ({"name": "a", "value": "b", "domain": "x.test", "httpOnly": "yes"}, "c.httpOnly"),
    ({"name": "__Host-a", "value": "b", "domain": ".x.test", "secure": True}, "c.name"),
    ({"name": "__Secure-a", "value": "b", "domain": "x.test"}, "c.secure"),
    ({"name": "a", "value": "b", "domain": "x.test", "partitionKey": "https://y.test"},
     "c.partitionKey"),
    ({"name": "a", "value": "b", "domain": "x.test", "size": 2}, "c.size"),
])
def test_an_invalid_cookie_names_its_field(cookie: dict[str, Any], field: str) -> None:
    with pytest.raises(BadRequest) as caught:
        cookies.validate_cookie(cookie, "c")
    assert caught.value.details["field"] == field


def test_exported_fields_are_accepted_on_import() -> None:
    exported = {"name": "a", "value": "b", "domain": "x.test", "path": "/", "expires": -1,
                "size": 2, "session": True, "priority": "Medium", "httpOnly": False,
                "secure": False, "sameSite": "Lax", "sourceScheme": "Secure",
                "sourcePort": 443}
    assert cookies.validate_cookie(exported, "c", lenient=True)["name"] == "a"


def test_url_matching_follows_domain_path_and_secure() -> None:
    host_only = {"domain": "www.x.test", "path": "/app", "secure": False}
    domain = {"domain": ".x.test", "path": "/", "secure": True}
    assert cookies.applies_to_url(host_only, "http://www.x.test/app/page")
    assert cookies.applies_to_url(host_only, "http://www.x.test/app")
    assert not cookies.applies_to_url(host_only, "http://www.x.test/apple")
    assert not cookies.applies_to_url(host_only, "http://sub.www.x.test/app")
    assert cookies.applies_to_url(domain, "https://a.b.x.test/")
    assert not cookies.applies_to_url(domain, "http://a.x.test/")
    assert cookies.applies_to_url({**domain, "domain": "localhost"}, "http://localhost/")
    assert not cookies.applies_to_url(domain, "https://notx.test/")
    assert cookies.domain_matches(".x.test", "x.test")
    assert cookies.domain_matches("a.x.test", "x.test")
    assert not cookies.domain_matches("ax.test", "x.test")


def test_to_json_is_playwrights_shape() -> None:
    cdp = {"name": "a", "value": "b", "domain": "x.test", "path": "/", "expires": 1.5e9,
           "size": 2, "httpOnly": True, "secure": False, "session": False}
    assert cookies.to_json(cdp) == {"name": "a", "value": "b", "domain": "x.test", "path": "/",
                                    "expires": 1.5e9, "httpOnly": True, "secure": False,
                                    "sameSite": "Lax"}
    assert cookies.to_json({**cdp, "session": True})["expires"] == -1


@pytest.mark.parametrize(("text", "origin"), [
    ("https://Example.com", "https://example.com"),
    ("https://example.com:443/", "https://example.com"),
    ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
    ("http://[::1]:81", "http://[::1]:81"),
])
def test_origins_are_normalised(text: str, origin: str) -> None:
    assert normalize_origin(text) == origin


@pytest.mark.parametrize("text", ["example.com", "file:///x", "https://a.test/path",
                                  "https://u:p@a.test", "https://a.test?q", "", "https://"])
def test_not_an_origin(text: str) -> None:
    with pytest.raises(BadRequest):
        normalize_origin(text)


def test_origin_of_url() -> None:
    assert origin_of_url("https://a.test/x?y#z") == "https://a.test"
    assert origin_of_url("about:blank") is None
    assert origin_of_url("data:text/html,x") is None


def test_state_merges_duplicate_origins_and_refuses_bad_items() -> None:
    state = parse_state({"cookies": [], "origins": [
        {"origin": "https://a.test", "localStorage": [{"name": "k", "value": "1"}]},
        {"origin": "https://a.test/", "localStorage": [{"name": "j", "value": "2"}]}]})
    assert [(o.origin, o.local_storage) for o in state.origins] == \
        [("https://a.test", (("k", "1"), ("j", "2")))]
    assert state.item_count == 2
    with pytest.raises(BadRequest):
        parse_state({"cookies": {}, "origins": []})
    with pytest.raises(BadRequest):
        parse_state([])


def _post_emulate(body: dict[str, Any]) -> dict[str, Any]:
    """The changes a POST /emulate with ``body`` asks for (the route table's checks first)."""
    post = next(r for r in emulation_routes() if r.methods == ("POST",))
    return emulation_changes(parse_args(post.fields, query={}, body=body))


def test_emulation_merge_keeps_clears_and_sets() -> None:
    start = emulation.updated(NO_EMULATION, _post_emulate({
        "locale": "de_DE", "colorScheme": "dark", "viewport": {"width": 10, "height": 20}}))
    assert (start.locale, start.color_scheme) == ("de-DE", "dark")
    assert start.viewport == Viewport(width=10, height=20)
    after = emulation.updated(start, _post_emulate({"colorScheme": None, "offline": True}))
    assert (after.locale, after.color_scheme, after.offline) == ("de-DE", None, True)
    assert emulation.updated(after, _post_emulate({"offline": None})).offline is False
    assert after.to_json()["viewport"] == {"width": 10, "height": 20, "deviceScaleFactor": 1.0,
                                           "mobile": False}


def test_an_absent_emulation_field_is_no_change() -> None:
    assert _post_emulate({}) == {}
    assert _post_emulate({"targetId": "abcd", "cpuThrottling": 4}) == {"cpu_throttling": 4.0}
    with pytest.raises(ValueError):
        emulation.updated(NO_EMULATION, {"colorScheme": "dark"})  # attribute names only


@pytest.mark.parametrize("given", [
    {"timezone": "Nowhere/Special"}, {"locale": "english please"},
    {"viewport": {"width": 10}}, {"viewport": {"width": 10, "height": 10, "mobile": 1}},
    {"geolocation": {"latitude": 0, "longitude": 181}}, {"network": {"latencyMs": -1}},
    {"userAgent": "bad\nagent"}, {"colorScheme": "sepia"}, {"cpuThrottling": 50},
])
def test_emulation_values_are_checked(given: dict[str, Any]) -> None:
    with pytest.raises(BadRequest):
        _post_emulate(given)


def test_a_nullable_field_tells_null_from_absent() -> None:
    fields = (Field(name="a", type="string", nullable=True),
              Field(name="b", type="string", default="x"))
    assert parse_args(fields, query={}, body={}) == {"a": UNSET, "b": "x"}
    assert parse_args(fields, query={}, body={"a": None, "b": None}) == {"a": None, "b": "x"}
    assert parse_args(fields, query={}, body={"a": "v"})["a"] == "v"


def test_partitioned_cookies_are_shown_but_never_imported_unpartitioned() -> None:
    cdp = {"name": "a", "value": "b", "domain": "x.test", "path": "/", "session": True,
           "partitionKey": {"topLevelSite": "https://top.test", "hasCrossSiteAncestor": False}}
    assert cookies.to_json(cdp)["partitionKey"] == "https://top.test"
    plain = {"name": "p", "value": "1", "domain": "x.test"}
    state = parse_state({"cookies": [cookies.to_json(cdp), plain], "origins": []})
    assert [c["name"] for c in state.cookies] == ["p"] and state.partitioned == 1
