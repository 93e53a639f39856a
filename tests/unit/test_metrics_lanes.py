"""/metrics counts every lane (http, ws, mcp, cdp) by route and code; bounded labels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import trio
import trio.testing
from prometheus_client.parser import text_string_to_metric_families

from browserd.cdp.connection import open_cdp_over
from browserd.errors import BrowserdError
from browserd.gateway.client import GatewayClient
from browserd.metrics import OTHER, Metrics, code_label, known_codes
from browserd.urlpolicy import UrlPolicy
from tests.unit.test_gateway_client import ROOT, FakeBrowser
from tests.unit.test_ops import gauges

Labels = tuple[tuple[str, str], ...]


def calls(metrics: Metrics) -> dict[Labels, float]:
    """``browserd_requests_total`` by its labels, from the exposition text."""
    out: dict[Labels, float] = {}
    for family in text_string_to_metric_families(metrics.exposition(gauges()).decode()):
        for sample in family.samples:
            if sample.name == "browserd_requests_total":
                out[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def key(lane: str, route: str, method: str, code: str) -> Labels:
    return (("code", code), ("lane", lane), ("method", method), ("route", route))


def test_every_lane_is_counted_with_its_route_and_code() -> None:
    metrics = Metrics()
    metrics.observe_request("/click", "POST", 409, 0.01, code="STALE_REF")
    metrics.observe_request("/click", "POST", 200, 0.01, code="ok")
    metrics.observe_call("ws", "/click", "POST", "DIALOG_OPEN", 0.02)
    metrics.observe_call("ws", "subscribe", "WS", "ok", 0.0)
    metrics.observe_call("mcp", "/snapshot", "POST", "ok", 0.1)
    metrics.observe_call("mcp", "/snapshot", "POST", "ok", 0.1)
    metrics.observe_call("cdp", "Page.navigate", "CDP", "CDP_ERROR", 0.3)
    got = calls(metrics)
    assert got[key("http", "/click", "POST", "STALE_REF")] == 1
    assert got[key("http", "/click", "POST", "ok")] == 1
    assert got[key("ws", "/click", "POST", "DIALOG_OPEN")] == 1
    assert got[key("ws", "subscribe", "WS", "ok")] == 1
    assert got[key("mcp", "/snapshot", "POST", "ok")] == 2
    assert got[key("cdp", "Page.navigate", "CDP", "CDP_ERROR")] == 1
    text = metrics.exposition(gauges()).decode()
    assert 'browserd_request_duration_seconds_count{lane="mcp"} 2.0' in text
    # The HTTP view by status is still there.
    assert 'browserd_http_requests_total{method="POST",route="/click",status="409"} 1.0' in text


def test_codes_are_a_closed_set_from_the_error_hierarchy() -> None:
    codes = known_codes()
    assert {"STALE_REF", "DIALOG_OPEN", "TIMEOUT", "BAD_REQUEST", "INTERNAL"} <= codes
    assert all(code_label(code) == code for code in codes)
    assert code_label("ok") == "ok" and code_label("cancelled") == "cancelled"
    assert code_label("NOT_A_CODE") == OTHER and code_label("/etc/passwd") == OTHER
    metrics = Metrics()
    for n in range(50):  # whatever a caller passes, the label set stays small
        metrics.observe_call("ws", "/eval", "POST", f"MADE_UP_{n}", 0.0)
    assert calls(metrics) == {key("ws", "/eval", "POST", OTHER): 50}


def test_a_new_error_class_is_a_known_code_at_once() -> None:
    class Fresh(BrowserdError):
        code = "FRESH_FOR_THIS_TEST"

    assert code_label(Fresh.code) == "FRESH_FOR_THIS_TEST"


def test_http_without_a_code_reads_it_from_the_status() -> None:
    metrics = Metrics()
    metrics.observe_request("/ui/api/state", "GET", 200, 0.0)
    metrics.observe_request("/ui/api/state", "GET", 499, 0.0)
    metrics.observe_request("/ui/api/state", "GET", 500, 0.0)
    got = calls(metrics)
    assert got[key("http", "/ui/api/state", "GET", "ok")] == 1
    assert got[key("http", "/ui/api/state", "GET", "cancelled")] == 1
    assert got[key("http", "/ui/api/state", "GET", OTHER)] == 1


async def test_the_gateway_counts_each_command_by_allowlisted_method_and_outcome() -> None:
    browser = FakeBrowser()
    to_client_send, to_client = trio.open_memory_channel[str](100)
    from_client, from_client_recv = trio.open_memory_channel[str | None](100)
    seen: list[tuple[str, str]] = []

    async def says(message: Any) -> dict[str, Any]:
        await from_client.send(orjson.dumps(message).decode())
        return dict(orjson.loads(await to_client.receive()))

    with trio.fail_after(5):
        async with open_cdp_over(browser, "fake") as conn, trio.open_nursery() as nursery:
            client = GatewayClient(conn, UrlPolicy(blocked_ports=frozenset()), root=ROOT,
                                   describe="test", downloads_dir=Path("/srv/downloads"),
                                   observe=lambda method, code, s: seen.append((method, code)))
            nursery.start_soon(client.run, from_client_recv.receive, to_client_send.send)
            await trio.testing.wait_all_tasks_blocked()

            async def browser_answers(reply: dict[str, Any]) -> None:
                sent = await browser.next_command()
                await browser.say({"id": sent["id"], "sessionId": sent["sessionId"], **reply})

            async with trio.open_nursery() as inner:
                inner.start_soon(browser_answers, {"result": {"frameId": "F"}})
                await says({"id": 1, "method": "Page.navigate",
                            "params": {"url": "https://a.test/"}})
            async with trio.open_nursery() as inner:
                inner.start_soon(browser_answers, {"error": {"code": -32000, "message": "no"}})
                await says({"id": 2, "method": "Page.reload", "params": {}})
            assert "error" in await says({"id": 3, "method": "Browser.close", "params": {}})
            assert "error" in await says({"id": 4, "method": "Made.up" + "x" * 200,
                                          "params": {}})
            assert "error" in await says({"id": 5, "method": "Page.enable", "params": {},
                                          "sessionId": "NOT-MINE"})
            assert "error" in await says({"method": "Page.enable"})
            await from_client.send(None)
    assert seen == [("Page.navigate", "ok"), ("Page.reload", "CDP_ERROR"),
                    ("other", "DENIED"), ("other", "DENIED"), ("Page.enable", "BAD_REQUEST"),
                    ("Page.enable", "BAD_REQUEST")]
