"""Egress containment without a browser: the origin patterns, the policy and its
narrowing, the settings, the ledger the network ring reads, and the guard's CDP
choreography against a scripted peer (what is sent, in which order, what is answered)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, cast

import pytest
import trio

from browserd.browser.profile import prepare_preferences
from browserd.config import load_settings
from browserd.egress import (
    EGRESS,
    FETCH_ALL,
    INTERNAL,
    LEDGER_KEPT,
    EgressPolicy,
    EgressScopes,
    blocked_reason,
    note_blocked,
    parse_origin_pattern,
    url_origin,
)
from browserd.errors import BadRequest, ConfigError
from browserd.paths import Paths
from browserd.profiles.sessions import SessionTable, session_egress
from browserd.profilespec import ProfileOrigin, build_spec, parse_profile_table
from browserd.supervisor.runtime import BrowserRuntime
from browserd.tabs.capture_gate import CaptureGate
from browserd.tabs.contain import NO_UNHELD_APIS, Containment
from browserd.tabs.navguard import NavGuard
from browserd.tabs.netlog import NetworkLog
from browserd.urlpolicy import UrlPolicy
from tests.fakecdp import FakeCdpPeer, Refuse, connected, running_browser
from tests.integration.helpers import poll

# -- patterns -----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "canonical"), [
    ("https://*.example.com", "https://*.example.com"),
    ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
    ("HTTPS://Example.COM", "https://example.com"),  # case
    ("http://example.com:80", "http://example.com"),  # the default port is no port
    ("https://example.com:443/", "https://example.com"),
    ("https://example.com:*", "https://example.com:*"),
    ("http://[::1]:8080", "http://[::1]:8080"),
    ("http://[0:0:0::1]", "http://[::1]"),
    ("https://xn--bcher-kva.example", "https://xn--bcher-kva.example"),
])
def test_valid_patterns_have_one_spelling(text: str, canonical: str) -> None:
    assert parse_origin_pattern(text).text == canonical


@pytest.mark.parametrize(("text", "problem"), [
    ("ftp://example.com", "http:// or https://"),
    ("wss://example.com", "judged by the http: and https: patterns"),
    ("example.com", "http:// or https://"),
    ("https://", "only scheme://host"),
    ("https://example.com/path", "no user, path"),
    ("https://user@example.com", "no user, path"),
    ("https://example.com?q=1", "no user, path"),
    ("https://example.com#f", "no user, path"),
    ("https://*", "is not a host name"),
    ("https://*.127.0.0.1", "not an IP address"),
    ("https://1.2.3", "looks like an IP address"),
    ("https://example.com:0", "the port must be"),
    ("https://example.com:65536", "the port must be"),
    ("https://example.com:x", "the port must be"),
    ("http://[::1", "bad IPv6"),
    ("http://[zz::1]", "not an IPv6 address"),
    ("https://bücher.example", "xn-- form"),
    ("https://exa mple.com", "no user, path"),
])
def test_invalid_patterns_say_what_is_wrong(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=re.escape(problem)):
        parse_origin_pattern(text)


def test_non_strings_and_huge_patterns_are_refused() -> None:
    for value in (None, 80, "", "https://" + "a" * 400):
        with pytest.raises(ValueError):
            parse_origin_pattern(value)


POLICY = EgressPolicy.parse(["https://*.example.com", "http://127.0.0.1:8080",
                             "https://plain.test", "http://[::1]:9000", "http://any.test:*"])


@pytest.mark.parametrize(("url", "allowed"), [
    # scheme mismatch (and ws/wss judged as http/https)
    ("https://127.0.0.1:8080/", False), ("http://plain.test/", False),
    ("ws://127.0.0.1:8080/socket", True), ("wss://a.example.com/s", True),
    ("ws://a.example.com/s", False),
    # port mismatch, default ports, port wildcard
    ("http://127.0.0.1:8080/x", True), ("http://127.0.0.1:8081/x", False),
    ("http://127.0.0.1/x", False), ("https://plain.test:443/a", True),
    ("https://plain.test:8443/a", False), ("http://any.test/", True),
    ("http://any.test:1/", True), ("https://any.test/", False),
    # subdomain wildcard, at any depth, never the apex or a look-alike
    ("https://a.example.com/", True), ("https://a.b.example.com/", True),
    ("https://example.com/", False), ("https://badexample.com/", False),
    ("https://example.com.evil.test/", False), ("https://a.example.com.evil.test/", False),
    # no wildcard: exactly that host
    ("https://sub.plain.test/", False),
    # IPv6 literals compare as addresses
    ("http://[::1]:9000/", True), ("http://[0::1]:9000/", True), ("http://[::2]:9000/", False),
    ("http://[::1]:9001/", False),
    # case, a trailing dot, userinfo
    ("HTTPS://A.EXAMPLE.COM/", True), ("https://plain.test./", True),
    ("http://127.0.0.1:8080@evil.test/", False), ("http://evil.test@127.0.0.1:8080/", True),
    # another host, another IP spelling of an allowed one (fail closed)
    ("https://evil.test/", False), ("http://2130706433:8080/", False),
])
def test_the_verdict_allows_exactly_the_listed_origins(url: str, allowed: bool) -> None:
    assert POLICY.verdict(url) == (None if allowed else EGRESS)


@pytest.mark.parametrize("url", ["about:blank", "data:text/html,<b>x</b>",
                                 "blob:http://127.0.0.1:8080/1f0e", "javascript:void(0)",
                                 "chrome-error://chromewebdata/"])
def test_urls_that_never_reach_the_network_are_not_judged(url: str) -> None:
    assert url_origin(url) == INTERNAL and POLICY.verdict(url) is None


@pytest.mark.parametrize("url", [
    "http://", "http:///x", "http://a b/", "http://[zz]/", "http://h:99999/", "http:x",
    "noscheme", "http://" + "a" * 5000 + ".example.com/",  # an authority past 4096
    "https://" + "a" * 4090 + ".example.com",
])
def test_unreadable_urls_are_refused_not_guessed(url: str) -> None:
    assert POLICY.verdict(url) == EGRESS


def test_a_huge_path_is_judged_by_its_origin() -> None:
    assert POLICY.verdict("http://127.0.0.1:8080/" + "x" * 2_000_000) is None


def test_a_session_can_only_narrow() -> None:
    narrowed = POLICY.narrowed(["https://a.example.com", "https://*.b.example.com",
                                "http://any.test:81", "http://127.0.0.1:8080"])
    assert narrowed.verdict("https://x.b.example.com/") is None
    assert narrowed.verdict("https://c.example.com/") == EGRESS
    for wider in ("https://example.com", "https://*.example.com:*", "http://127.0.0.1:*",
                  "http://a.example.com", "https://plain.test:444", "http://[::1]:*",
                  "https://*.plain.test"):
        with pytest.raises(ValueError, match="only narrow"):
            POLICY.narrowed([wider])
    assert POLICY.narrowed(["https://*.example.com"]).to_json() == ["https://*.example.com"]


def test_policies_are_bounded_and_never_empty() -> None:
    with pytest.raises(ValueError, match="empty"):
        EgressPolicy.parse([])
    with pytest.raises(ValueError, match="at most"):
        EgressPolicy.parse([f"http://h{i}.test" for i in range(101)])
    assert EgressPolicy.parse(["http://a.test", "http://A.test:80"]).to_json() == [
        "http://a.test"]


def test_websocket_rules_let_the_allowed_origins_through_first() -> None:
    rules = POLICY.websocket_rules()["matchedNetworkConditions"]
    assert [(r["urlPattern"], r["offline"]) for r in rules] == [
        ("wss://*.example.com/*", False), ("ws://127.0.0.1:8080/*", False),
        ("wss://plain.test/*", False), ("ws://[::1]:9000/*", False),
        ("ws://any.test:*/*", False), ("ws://*:*/*", True), ("wss://*:*/*", True)]


def test_scopes_give_a_context_its_own_policy() -> None:
    mine = EgressPolicy.parse(["https://a.example.com"])
    scopes = EgressScopes(POLICY)
    scopes.set_context("C1", mine)
    assert scopes.policy_for("C1") is mine and scopes.policy_for("C2") is POLICY
    assert scopes.policy_for(None) is POLICY
    scopes.drop_context("C1")
    assert scopes.policy_for("C1") is POLICY
    assert EgressScopes().policy_for("C1") is None


def test_the_ledger_remembers_recent_blocks_only() -> None:
    note_blocked("first")
    note_blocked(None)  # no id: nothing to remember
    assert blocked_reason("first") == EGRESS and blocked_reason("never") is None
    for i in range(LEDGER_KEPT):
        note_blocked(f"r{i}")
    assert blocked_reason("first") is None and blocked_reason(f"r{LEDGER_KEPT - 1}") == EGRESS


# -- the network ring ---------------------------------------------------------------------


def test_the_ring_labels_egress_blocks_and_keeps_websockets() -> None:
    ring = NetworkLog()
    note_blocked("7.1")
    note_blocked("ws-blocked")
    ring.feed([
        ("Network.requestWillBeSent", {"requestId": "7.1", "type": "Image", "timestamp": 1.0,
                                       "request": {"url": "http://evil.test/p.png"}}),
        ("Network.loadingFailed", {"requestId": "7.1", "timestamp": 1.1,
                                   "errorText": "net::ERR_BLOCKED_BY_CLIENT.Inspector",
                                   "blockedReason": "inspector"}),
        ("Network.requestWillBeSent", {"requestId": "7.2", "type": "Image", "timestamp": 1.0,
                                       "request": {"url": "http://ads.test/p.png"}}),
        ("Network.loadingFailed", {"requestId": "7.2", "timestamp": 1.1,
                                   "blockedReason": "inspector"}),
        ("Network.webSocketCreated", {"requestId": "ws-blocked", "url": "ws://evil.test/s"}),
        ("Network.webSocketFrameError", {"requestId": "ws-blocked", "timestamp": 2.0,
                                         "errorMessage": "net::ERR_INTERNET_DISCONNECTED"}),
        ("Network.webSocketClosed", {"requestId": "ws-blocked", "timestamp": 2.0}),
        ("Network.webSocketCreated", {"requestId": "ws-open", "url": "ws://ok.test/s"}),
        ("Network.webSocketWillSendHandshakeRequest", {
            "requestId": "ws-open", "timestamp": 3.0, "request": {"headers": {"A": "b"}}}),
        ("Network.webSocketHandshakeResponseReceived", {
            "requestId": "ws-open", "timestamp": 3.1, "response": {"status": 101}}),
    ])
    egress, inspector, ws_blocked, ws_open = ring.entries()
    assert (egress.blocked_reason, egress.failed) == ("egress", True)
    assert inspector.blocked_reason == "inspector"  # /network/block's own blocks stay so
    assert ws_blocked.summary() | {"startedAt": 0} == {
        "id": 3, "method": "GET", "url": "ws://evil.test/s", "resourceType": "websocket",
        "status": None, "mimeType": None, "fromCache": False, "startedAt": 0,
        "durationMs": 0.0, "encodedBytes": None, "failed": True,
        "errorText": "net::ERR_INTERNET_DISCONNECTED", "blockedReason": "egress"}
    assert ws_open.status == 101 and not ws_open.finished and not ws_open.failed
    assert dict(ws_open.request_headers) == {"A": "b"}
    assert [e.id for e in ring.query(resource_type="websocket")] == [3, 4]


# -- settings, profiles, preferences ------------------------------------------------------


def test_the_setting_reads_a_list_and_names_a_bad_entry(tmp_path: Path) -> None:
    paths = Paths.resolve({"BROWSERD_HOME": str(tmp_path / "home")})
    env = {"BROWSERD_ALLOWED_ORIGINS": "http://127.0.0.1:8080, https://*.example.com"}
    assert load_settings(paths, environ=env).allowed_origins == (
        "http://127.0.0.1:8080", "https://*.example.com")
    assert load_settings(paths, environ={}).allowed_origins == ()
    with pytest.raises(ConfigError, match=r"allowed_origins.*ftp"):
        load_settings(paths, environ={"BROWSERD_ALLOWED_ORIGINS": "ftp://x"})


def test_a_profile_table_may_contain_its_pages() -> None:
    spec = parse_profile_table("work", {"allowed_origins": ["https://*.example.com"]},
                               source="config.toml")
    assert spec.allowed_origins == ("https://*.example.com",)
    assert spec.to_record()["allowed_origins"] == ["https://*.example.com"]
    again = build_spec("work", spec.to_record(), origin=ProfileOrigin.API, where="x")
    assert again.allowed_origins == spec.allowed_origins
    with pytest.raises(ConfigError, match="allowed_origins"):
        parse_profile_table("w", {"allowed_origins": ["nope"]}, source="config.toml")
    with pytest.raises(ConfigError, match="list of origin patterns"):
        parse_profile_table("w", {"allowed_origins": "https://a.test"}, source="config.toml")
    with pytest.raises(BadRequest, match="page guards"):
        build_spec("mine", {"driver": "live", "allowed_origins": ["https://a.test"]},
                   origin=ProfileOrigin.API, where="x")


def test_preferences_contain_webrtc_and_prediction_only_while_contained(tmp_path: Path) -> None:
    prefs_path = tmp_path / "Default" / "Preferences"
    prepare_preferences(tmp_path, name="p", color="#112233", contain_egress=True)
    prefs = json.loads(prefs_path.read_text())
    assert prefs["webrtc"]["ip_handling_policy"] == "disable_non_proxied_udp"
    assert prefs["net"]["network_prediction_options"] == 2
    prepare_preferences(tmp_path, name="p", color="#112233")
    prefs = json.loads(prefs_path.read_text())
    assert "ip_handling_policy" not in prefs["webrtc"]
    assert "network_prediction_options" not in prefs["net"]


# -- sessions -----------------------------------------------------------------------------


class _Guard:
    def __init__(self, default: EgressPolicy | None) -> None:
        self.egress = EgressScopes(default)


def _rt(guard: _Guard | None) -> BrowserRuntime:
    """A runtime whose page guard is ``guard`` and nothing else (session_egress reads only
    that)."""
    return BrowserRuntime(connection=cast(Any, None), registry=cast(Any, None), process=None,
                          version="", user_agent="", started_at=0.0,
                          captures=CaptureGate.with_capacity(1), navguard=cast(Any, guard))


def test_a_sessions_list_is_checked_against_its_profiles() -> None:
    assert session_egress(_rt(_Guard(None)), None) is None
    assert session_egress(_rt(_Guard(None)), ["https://a.test"]) == EgressPolicy.parse(
        ["https://a.test"])
    contained = _rt(_Guard(POLICY))
    assert session_egress(contained, ["https://x.example.com"]) is not None
    with pytest.raises(BadRequest, match="only narrow") as caught:
        session_egress(contained, ["https://evil.test"])
    assert caught.value.details == {"field": "allowedOrigins"}
    with pytest.raises(BadRequest, match="use an http"):
        session_egress(contained, ["ftp://x"])
    with pytest.raises(BadRequest, match="no page guards"):
        session_egress(_rt(None), ["https://a.test"])


async def test_a_sessions_policy_is_its_contexts_until_it_closes() -> None:
    guard = _Guard(None)
    table = SessionTable(max_sessions=4)
    async with running_browser(navguard=guard) as browser:
        runtime = browser.runtime
        session = await table.create(runtime, name=None, ttl_s=60,
                                     allowed_origins=["https://a.test"])
        assert guard.egress.policy_for(session.context_id) == session.egress
        assert session.to_json(idle_s=0, tabs=0)["allowedOrigins"] == ["https://a.test"]
        plain = await table.create(runtime, name=None, ttl_s=60)
        assert guard.egress.policy_for(plain.context_id) is None
        assert "allowedOrigins" not in plain.to_json(idle_s=0, tabs=0)
        await table.close(session.session_id, runtime)
        assert guard.egress.policy_for(session.context_id) is None


# -- the guard's choreography (a scripted peer, no browser) ---------------------------------


def _on(peer: FakeCdpPeer, session: str) -> list[str]:
    return [m["method"] for m in peer.received if m.get("sessionId") == session]


def _params(peer: FakeCdpPeer, session: str, method: str) -> list[dict[str, Any]]:
    return [m.get("params", {}) for m in peer.received
            if m.get("sessionId") == session and m["method"] == method]


async def _until(predicate: Any) -> None:
    await poll(predicate, every=0.01, within=5)


RUN = "Runtime.runIfWaitingForDebugger"
CONTAINED_SET_UP = ["Fetch.enable", "Network.enable", "Network.emulateNetworkConditionsByRule",
                    "Page.enable", "Page.addScriptToEvaluateOnNewDocument",
                    "Target.setAutoAttach", RUN]


async def _attach(peer: FakeCdpPeer, session: str, target: str, kind: str,
                  context: str = "C1", parent: str | None = None) -> None:
    await peer.emit("Target.attachedToTarget", {
        "sessionId": session, "waitingForDebugger": True,
        "targetInfo": {"targetId": target, "type": kind, "browserContextId": context}},
        session_id=parent)


async def test_a_contained_page_is_set_up_then_resumed_and_its_requests_judged() -> None:
    peer = FakeCdpPeer()
    scopes = EgressScopes()
    scopes.set_context("C1", POLICY)
    async with connected(peer) as conn, trio.open_nursery() as nursery:
        guard: NavGuard = await nursery.start(NavGuard(
            conn, UrlPolicy(blocked_ports=frozenset()), egress=scopes, contain=Containment).run)
        await _attach(peer, "P1", "T1", "page")
        await _attach(peer, "P2", "T2", "page", context="C2")  # not contained
        await _until(lambda: RUN in _on(peer, "P1") and RUN in _on(peer, "P2"))
        assert _on(peer, "P1") == CONTAINED_SET_UP
        assert _params(peer, "P1", "Fetch.enable") == [{"patterns": list(FETCH_ALL)}]
        assert _params(peer, "P1", "Page.addScriptToEvaluateOnNewDocument") == [
            {"source": NO_UNHELD_APIS, "runImmediately": True}]
        assert _params(peer, "P1", "Network.emulateNetworkConditionsByRule") == [
            POLICY.websocket_rules()]
        assert _on(peer, "P2") == ["Fetch.enable", RUN]
        assert _params(peer, "P2", "Fetch.enable")[0]["patterns"][0]["resourceType"] == (
            "Document")

        for n, url, kind in ((1, "http://evil.test/a.png?k=v", "Image"),
                             (2, "http://evil.test/a.png?k=w", "Image"),  # a repeat
                             (3, "http://127.0.0.1:8080/ok.js", "Script"),
                             (4, "data:text/plain,hi", "Fetch")):
            await peer.emit("Fetch.requestPaused", {
                "requestId": f"R{n}", "networkId": f"net-{n}", "frameId": "T1",
                "resourceType": kind, "request": {"url": url}}, session_id="P1")
        await peer.emit("Network.webSocketCreated", {"requestId": "ws-1",
                                                     "url": "wss://evil.test/s?x"}, "P1")
        await peer.emit("Network.webSocketCreated", {"requestId": "ws-2",
                                                     "url": "wss://a.example.com/s"}, "P1")
        await _until(lambda: len(_params(peer, "P1", "Fetch.failRequest"))
                     + len(_params(peer, "P1", "Fetch.continueRequest")) == 4)
        assert sorted(p["requestId"] for p in _params(peer, "P1", "Fetch.failRequest")) == [
            "R1", "R2"]
        assert blocked_reason("net-1") == EGRESS and blocked_reason("net-3") is None
        assert blocked_reason("ws-1") == EGRESS and blocked_reason("ws-2") is None
        blocks = [b.to_json() for b in guard.blocks_since(0, target_id="T1")]
        assert blocks == [
            {"url": "http://evil.test/a.png", "reason": "egress", "resourceType": "image"},
            {"url": "wss://evil.test/s", "reason": "egress", "resourceType": "websocket"}]
        nursery.cancel_scope.cancel()


async def test_children_are_contained_before_they_run_and_a_refusal_keeps_one_held() -> None:
    peer = FakeCdpPeer()
    peer.on("Fetch.enable", lambda p, s: Refuse("gone") if s == "F2" else {})
    async with connected(peer) as conn, trio.open_nursery() as nursery:
        await nursery.start(NavGuard(conn, UrlPolicy(blocked_ports=frozenset()),
                                     egress=EgressScopes(POLICY), contain=Containment).run)
        await _attach(peer, "P1", "T1", "page")
        await _until(lambda: RUN in _on(peer, "P1"))
        await _attach(peer, "F1", "I1", "iframe", parent="P1")
        await _attach(peer, "W1", "K1", "worker", parent="P1")
        await _attach(peer, "S1", "V1", "service_worker", parent="P1")
        await _attach(peer, "F2", "I2", "iframe", parent="P1")
        await _attach(peer, "F3", "I3", "iframe", parent="F1")  # a frame's own frame
        await _until(lambda: all(RUN in _on(peer, s) for s in ("F1", "W1", "S1", "F3"))
                     and "Fetch.enable" in _on(peer, "F2"))
        assert _on(peer, "F1") == CONTAINED_SET_UP == _on(peer, "F3")
        assert _on(peer, "W1") == ["Network.enable", "Network.emulateNetworkConditionsByRule",
                                   "Target.setAutoAttach", RUN]
        # Chromium answers nothing on a held service worker: resumed first.
        assert _on(peer, "S1")[:2] == [RUN, "Fetch.enable"]
        await trio.sleep(0.1)
        assert RUN not in _on(peer, "F2")  # never contained: never runs
        await peer.emit("Fetch.requestPaused", {
            "requestId": "C1", "networkId": "net-c1", "frameId": "I1", "resourceType": "XHR",
            "request": {"url": "https://elsewhere.test/x"}}, session_id="F1")
        await _until(lambda: _params(peer, "F1", "Fetch.failRequest"))
        assert blocked_reason("net-c1") == EGRESS
        nursery.cancel_scope.cancel()
