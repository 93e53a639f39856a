"""The network ring, HAR building, header checks and the CDP sinks/pre-filter, as plain code."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from browserd.cdp.protocol import CdpEvent, Protocol, Subscription
from browserd.errors import BadRequest
from browserd.tabs.har import body_for_har, build_har
from browserd.tabs.netlog import HEADERS_CAP, URL_CAP, NetworkControls, NetworkLog
from browserd.tabs.network import check_headers


def sent(rid: str, url: str, *, ts: float = 1.0, method: str = "GET", kind: str = "Fetch",
         post: str | None = None, redirect: dict[str, Any] | None = None,
         headers: dict[str, str] | None = None) -> tuple[str, dict[str, Any]]:
    request: dict[str, Any] = {"url": url, "method": method, "headers": headers or {}}
    if post is not None:
        request |= {"postData": post, "hasPostData": True}
    params: dict[str, Any] = {"requestId": rid, "request": request, "timestamp": ts,
                              "wallTime": 1_700_000_000.0 + ts, "type": kind}
    if redirect is not None:
        params["redirectResponse"] = redirect
    return "Network.requestWillBeSent", params


def response(rid: str, status: int = 200, mime: str = "text/plain",
             headers: dict[str, str] | None = None) -> tuple[str, dict[str, Any]]:
    return "Network.responseReceived", {"requestId": rid, "type": "Fetch", "response": {
        "url": "", "status": status, "statusText": "OK", "mimeType": mime,
        "headers": headers or {}, "protocol": "http/1.1", "remoteIPAddress": "127.0.0.1",
        "remotePort": 80, "timing": {"requestTime": 1.0, "dnsStart": -1, "dnsEnd": -1,
                                     "connectStart": 0.5, "connectEnd": 1.5, "sslStart": -1,
                                     "sslEnd": -1, "sendStart": 2.0, "sendEnd": 2.5,
                                     "receiveHeadersEnd": 10.0}}}


def finished(rid: str, ts: float = 1.05, size: int = 321) -> tuple[str, dict[str, Any]]:
    return "Network.loadingFinished", {"requestId": rid, "timestamp": ts,
                                       "encodedDataLength": size}


def failed(rid: str, text: str = "net::ERR_CONNECTION_REFUSED",
           blocked: str | None = None) -> tuple[str, dict[str, Any]]:
    params: dict[str, Any] = {"requestId": rid, "timestamp": 1.2, "errorText": text,
                              "canceled": False}
    if blocked:
        params["blockedReason"] = blocked
    return "Network.loadingFailed", params


def test_a_request_is_followed_from_sent_to_finished() -> None:
    ring = NetworkLog()
    ring.feed([sent("r1", "http://a.test/x?q=1", post="a=1", method="POST",
                    headers={"Authorization": "Bearer SECRET"}),
               response("r1", mime="application/json"),
               ("Network.requestServedFromCache", {"requestId": "r1"}),
               finished("r1")])
    (entry,) = ring.entries()
    assert entry.summary() == {
        "id": 1, "method": "POST", "url": "http://a.test/x?q=1", "resourceType": "fetch",
        "status": 200, "mimeType": "application/json", "fromCache": True,
        "startedAt": 1_700_000_001.0, "durationMs": 50.0, "encodedBytes": 321, "failed": False}
    assert entry.post_data == "a=1" and entry.remote_address == "127.0.0.1:80"
    # Header values (secrets) never show in a repr, so never in a log line by accident.
    assert "SECRET" not in repr(entry) and "SECRET" not in repr(ring.controls)


def test_pending_and_failed_and_blocked_requests() -> None:
    ring = NetworkLog()
    ring.feed([sent("a", "http://a.test/1"), sent("b", "http://a.test/2"),
               failed("b"), sent("c", "http://a.test/3.png", kind="Image"),
               failed("c", text="", blocked="inspector")])
    a, b, c = (e.summary() for e in ring.entries())
    assert a["pending"] is True and a["durationMs"] is None and a["status"] is None
    assert b["failed"] is True and b["errorText"] == "net::ERR_CONNECTION_REFUSED"
    assert "pending" not in b
    assert c["errorText"] == "blocked (inspector)" and c["blockedReason"] == "inspector"
    assert [e.id for e in ring.query(failed=True)] == [2, 3]
    assert [e.id for e in ring.query(resource_type="IMAGE")] == [3]
    assert [e.id for e in ring.query(url_contains="A.TEST/1")] == [1]


def test_a_redirect_closes_its_hop_and_opens_the_next() -> None:
    ring = NetworkLog()
    ring.feed([sent("r", "http://a.test/old", ts=1.0),
               sent("r", "http://a.test/new", ts=1.1, redirect={
                   "status": 302, "statusText": "Found", "headers": {"Location": "/new"},
                   "encodedDataLength": 99}),
               response("r"), finished("r", ts=1.3)])
    hop, final = ring.entries()
    assert (hop.status, hop.redirect_to, hop.finished, hop.encoded_bytes) == (302, 2, True, 99)
    assert hop.summary()["redirectedTo"] == 2 and hop.duration_ms == 100.0
    assert (final.url, final.status, final.finished) == ("http://a.test/new", 200, True)
    assert [e.id for e in ring.query(status=302)] == [1]


def test_the_ring_keeps_the_newest_and_counts_what_it_dropped() -> None:
    ring = NetworkLog(capacity=3)
    for i in range(5):
        ring.feed([sent(f"r{i}", f"http://a.test/{i}"), finished(f"r{i}")])
    assert [e.id for e in ring.entries()] == [3, 4, 5] and ring.dropped == 2
    assert [e.id for e in ring.query(limit=2)] == [4, 5]
    # Events for a dropped request are ignored.
    ring.on_event(*finished("r0"))
    assert len(ring) == 3 and ring.get(1) is None
    ring.clear()
    assert len(ring) == 0 and ring.dropped == 0 and ring.bytes == 0


def test_the_ring_is_bounded_in_bytes_and_caps_what_pages_send() -> None:
    ring = NetworkLog(capacity=100, max_bytes=60_000)
    huge = "x" * 100_000
    ring.feed([sent("a", "data:text/plain," + huge, headers={f"h{i}": "v" * 1000
                                                                for i in range(100)})])
    (entry,) = ring.entries()
    assert len(entry.url) == URL_CAP and entry.summary()["urlTruncated"] is True
    assert sum(len(k) + len(v) for k, v in entry.request_headers.items()) <= HEADERS_CAP
    for i in range(10):
        ring.feed([sent(f"b{i}", "http://a.test/" + "y" * 8000)])
    assert ring.bytes <= 60_000 and ring.dropped > 0


def test_events_without_a_request_id_or_of_other_methods_are_ignored() -> None:
    ring = NetworkLog()
    ring.on_event("Network.responseReceived", {"requestId": "nope", "response": {}})
    ring.on_event("Network.requestWillBeSent", {"request": {}})
    ring.on_event("Network.dataReceived", {"requestId": "x"})
    assert len(ring) == 0


def test_har_has_the_shape_har_readers_expect() -> None:
    ring = NetworkLog()
    ring.feed([sent("d", "http://a.test/page?x=1&y=", kind="Document"), response("d"),
               finished("d", ts=1.05), sent("p", "http://a.test/api", method="POST",
                                            post="{}", headers={"Content-Type": "a/json"}),
               failed("p"), sent("q", "http://a.test/slow")])
    har = build_har(ring.entries(), creator_version="9", page_title="T",
                    bodies={1: body_for_har("aGk=", True)})
    text = json.dumps(har)  # serialisable
    log = json.loads(text)["log"]
    assert log["version"] == "1.2" and log["pages"][0]["title"] == "T"
    doc, post, slow = log["entries"]
    assert doc["request"]["queryString"] == [{"name": "x", "value": "1"},
                                             {"name": "y", "value": ""}]
    assert doc["response"]["content"] == {"size": 2, "mimeType": "text/plain", "text": "aGk=",
                                          "encoding": "base64"}
    assert doc["response"]["httpVersion"] == "HTTP/1.1" and doc["serverIPAddress"] == "127.0.0.1"
    timings = doc["timings"]
    assert (timings["dns"], timings["connect"], timings["send"], timings["wait"]) == (
        -1, 1.0, 0.5, 7.5)
    assert doc["time"] == pytest.approx(50.0)
    assert doc["startedDateTime"].endswith("Z")
    assert post["request"]["postData"] == {"mimeType": "a/json", "text": "{}"}
    assert post["response"]["status"] == 0
    assert post["response"]["_error"] == "net::ERR_CONNECTION_REFUSED"
    assert slow["_pending"] is True and slow["time"] == 0


def test_header_checks_refuse_what_would_misroute_or_leak() -> None:
    assert check_headers({"X-A": "1", "Authorization": "Bearer t"}) == {
        "X-A": "1", "Authorization": "Bearer t"}
    for bad in ({"Host": "x"}, {"cookie": "a=b"}, {"Sec-Fetch-Mode": "cors"},
                {"Proxy-Authorization": "x"}, {"Content-Length": "1"}, {"X A": "1"},
                {"X-A": "1\r\nX-B: 2"}, {"X-A": 1}, {"X-A": "1", "x-a": "2"},
                {f"H{i}": "v" for i in range(65)}):
        with pytest.raises(BadRequest) as info:
            check_headers(bad)
        assert info.value.details["field"] == "headers"
        assert "a=b" not in info.value.message and "X-B" not in info.value.message


def test_controls_show_patterns_and_header_names_only() -> None:
    controls = NetworkControls(blocked=("*://*:*/*.png",), extra_headers={"X-T": "secret"})
    assert controls.to_json() == {"blocked": ["*://*:*/*.png"], "extraHeaders": ["X-T"]}


# -- the CDP side: sinks and the pre-filter -------------------------------------


def event(method: str, session: str | None = "S", **params: Any) -> bytes:
    message: dict[str, Any] = {"method": method, "params": params}
    if session is not None:
        message["sessionId"] = session
    return orjson.dumps(message)


def test_a_sink_gets_its_sessions_events_synchronously() -> None:
    proto = Protocol()
    got: list[CdpEvent] = []
    sink = proto.add_sink("S", frozenset({"Network.loadingFinished"}), got.append)
    proto.receive(event("Network.loadingFinished", requestId="1"))
    proto.receive(event("Network.loadingFinished", session="OTHER", requestId="2"))
    assert [e.params["requestId"] for e in got] == ["1"]
    proto.remove_sink(sink)
    proto.remove_sink(sink)  # idempotent
    proto.receive(event("Network.loadingFinished", requestId="3"))
    assert len(got) == 1


def test_a_sink_that_raises_is_removed_and_keeps_its_error() -> None:
    proto = Protocol()

    def broken(_: CdpEvent) -> None:
        raise ValueError("boom")

    sink = proto.add_sink("S", frozenset({"A.b"}), broken)
    proto.receive(event("A.b"))
    assert isinstance(sink.error, ValueError)
    proto.receive(event("A.b"))  # no longer called, no error


def test_events_nobody_wants_are_dropped_unparsed() -> None:
    proto = Protocol()
    sub = proto.subscribe("S", frozenset({"Page.loadEventFired"}), 10)
    proto.receive(event("Network.dataReceived", requestId="1"))
    proto.receive(b'{"method":"Network.dataReceived", not json at all')
    proto.receive(event("Page.loadEventFired"))
    stats = proto.statistics()
    assert stats.skipped_events == 2 and stats.received_events == 1
    proto.unsubscribe(sub)
    # A subscriber to every method turns the pre-filter off.
    every = proto.subscribe("S", None, 10)
    proto.receive(event("Network.dataReceived"))
    assert proto.statistics().received_events == 2
    proto.unsubscribe(every)


def test_a_tap_for_every_method_turns_the_pre_filter_off() -> None:
    """A prebuilt subscription (the CDP gateway's tap) with no method list sees every event."""
    proto = Protocol()
    proto.subscribe("S", frozenset({"Page.loadEventFired"}), 10)
    proto.receive(event("Network.dataReceived"))
    assert proto.statistics().skipped_events == 1
    tap = Subscription("CLIENT", None, 10)
    proto.add_subscription(tap)
    proto.receive(event("Network.dataReceived", session="CLIENT"))
    stats = proto.statistics()
    assert stats.skipped_events == 1 and stats.received_events == 1
    proto.unsubscribe(tap)
    proto.receive(event("Network.dataReceived", session="CLIENT"))
    assert proto.statistics().skipped_events == 2
