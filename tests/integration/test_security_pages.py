"""Control API security against real pages in real browsers (RELIABILITY.md S6): an
attack page on another site, in a separate browser (even knowing the token) or in the
browser browserd drives, reaches nothing on either port; the guard logs its refusals.

Requests over HTTP (S1, S3-S5): test_security_requests.py; S7-S9 and the audit log:
test_security.py. The detectors: _security_detectors.py.
"""

from __future__ import annotations

import functools
import re
import secrets
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
import orjson
import pytest
import trio
from supervision.harness import LOOPBACK_TLS

from tests.conftest import PageServer, ServiceInfo, free_port_pair
from tests.integration._rawcdp import launch_chromium, open_cdp
from tests.integration._security_detectors import (
    HITS,
    Marker,
    assert_untouched,
    hits,
    marker,
    new_tag,
    observe,
    page_eval,
)

__all__ = ["hits", "marker"]

pytestmark = pytest.mark.chromium


# -- S6: real pages in real browsers --------------------------------------------------

EXPECTED_ATTACKS = {
    "fetch-cors:open@ip:json-auth", "fetch-cors:eval@ip:json-auth", "fetch-cors:open@ip:text",
    "fetch-cors:eval@localhost:text", "fetch-nocors:open@ip:text", "fetch-nocors:eval@ip:text",
    "fetch-nocors:open@ip:json-auth", "fetch-nocors:eval@ip:blob-json",
    "fetch-nocors:open@localhost:urlencoded", "fetch-nocors:eval@ip:multipart",
    "beacon:open@ip:text", "beacon:eval@ip:text", "fetch-cors:read-tabs",
    "fetch-nocors:read-tabs", "fetch-cors:read-openapi", "fetch-cors:cdp-version",
    "fetch-cors:cdp-list", "fetch-nocors:cdp-list", "fetch-cors:cdp-new-put",
    "fetch-nocors:cdp-new-get", "img:open", "img:eval", "img:cdp-new", "form:open-textplain",
    "form:eval-textplain", "form:open-urlencoded", "form:eval-multipart", "ws:control-root",
    "ws:control-eval", "ws:cdp-browser", "ws:cdp-page",
}


def assert_page_could_do_nothing(results: dict[str, Any]) -> None:
    """Every observation the attack page made shows a refusal it could not read."""
    missing = EXPECTED_ATTACKS - set(results)
    assert not missing, f"the attack page did not run: {sorted(missing)}"
    for name, seen in results.items():
        kind = name.split(":", 1)[0]
        if kind == "fetch-cors":
            assert set(seen) == {"error"}, (name, seen)  # a CORS failure: nothing to read
        elif kind == "fetch-nocors":
            assert seen == {"type": "opaque", "status": 0, "body": "", "headers": []} or (
                set(seen) == {"error"}), (name, seen)
        elif kind == "img":
            assert seen == {"loaded": False}, (name, seen)
        elif kind == "form":
            assert seen["submitted"] and seen["readable"] is False and seen["text"] is None, (
                name, seen)
        elif kind == "ws":
            assert seen["opened"] is False and seen["messages"] == [], (name, seen)
            assert seen["error"] or seen["closed"], (name, seen)
        elif kind == "beacon":
            assert set(seen) == {"queued"}, (name, seen)
        else:
            raise AssertionError(f"unknown observation {name}: {seen}")


REFUSAL_RE = re.compile(r"refused ([A-Z]+ '[^']*') from \S+ (\d{3} [A-Z_]+)$")


def refusals(service: ServiceInfo) -> dict[tuple[str, str], int]:
    """How often the guard logged each (request, outcome) refusal so far."""
    counts: dict[tuple[str, str], int] = {}
    text = (service.home / "logs" / "browserd.log").read_text(errors="replace")
    for line in text.splitlines():
        if m := REFUSAL_RE.search(line):
            counts[(m[1], m[2])] = counts.get((m[1], m[2]), 0) + 1
    return counts


def assert_guard_refused_the_attacks(service: ServiceInfo, before: dict[tuple[str, str], int]
                                     ) -> None:
    """The attacks did reach browserd (so the browser did not just drop them) and were refused."""
    after = refusals(service)
    new = {key: n - before.get(key, 0) for key, n in after.items() if n > before.get(key, 0)}
    origin = "403 FORBIDDEN_ORIGIN"
    assert {outcome for _, outcome in new} == {origin}, new
    assert new.get(("POST '/tabs/open'", origin), 0) >= 14, new
    assert new.get(("POST '/eval'", origin), 0) >= 14, new
    for request in ("OPTIONS '/tabs/open'", "OPTIONS '/eval'", "GET '/tabs/open'",
                    "GET '/eval'", "WEBSOCKET '/'", "WEBSOCKET '/eval'"):
        assert (request, origin) in new, (request, new)


async def browser_ws_id(service: ServiceInfo) -> str:
    async with httpx.AsyncClient(timeout=10, headers=service.headers, verify=LOOPBACK_TLS) as raw:
        version = (await raw.get(f"http://127.0.0.1:{service.cdp_port}/json/version")).json()
    return str(version["webSocketDebuggerUrl"]).rsplit("/", 1)[1]


def attack_url(other_origin: PageServer, pages: PageServer, *, cp: int, dp: int, bid: str,
               tok: str, tid: str, tag: str) -> str:
    query = urlencode({"cp": cp, "dp": dp, "bid": bid, "tok": tok,
                       "mk": pages.url("/sec_marker.html"), "tid": tid, "tag": tag})
    url = other_origin.url("/sec_attack.html") + "?" + query
    assert urlsplit(url).hostname == "localhost"  # another site than 127.0.0.1
    return url


async def wait_results(evaluate: Callable[[str], Awaitable[Any]]) -> dict[str, Any]:
    while True:
        text = await evaluate("window.__secDone ? JSON.stringify(window.__secResults) : ''")
        if text:
            results: dict[str, Any] = orjson.loads(text)
            return results
        await trio.sleep(0.1)


async def test_s6_attack_page_in_a_separate_browser(
    api: httpx.AsyncClient, service: ServiceInfo, pages: PageServer, other_origin: PageServer,
    marker: Marker,
) -> None:
    """A page in another browser, even knowing the token, gets nothing from either port.

    Control: the same page aimed at a DevTools port that does allow its origin
    (the attacking browser's own, started with ``--remote-allow-origins``)
    does open the socket and create a target, so the check can fail.
    """
    tag, control_tag = new_tag(), new_tag()
    with trio.fail_after(60):
        bid = await browser_ws_id(service)
        before = await observe(api, service.cdp_port)
        logged = refusals(service)
        url = attack_url(other_origin, pages, cp=service.port, dp=service.cdp_port, bid=bid,
                         tok=service.token, tid=marker.target_id, tag=tag)
        allow = f"--remote-allow-origins={other_origin.base_url}"
        with launch_chromium(extra_args=(allow,)) as ws_url:
            async with open_cdp(ws_url) as cdp:

                async def run_page(page_url: str) -> dict[str, Any]:
                    target = await cdp.send("Target.createTarget", {"url": page_url})
                    attached = await cdp.send("Target.attachToTarget",
                                              {"targetId": target["targetId"], "flatten": True})

                    async def evaluate(expression: str) -> Any:
                        reply = await cdp.send(
                            "Runtime.evaluate", {"expression": expression, "returnByValue": True},
                            session_id=attached["sessionId"])
                        return reply["result"].get("value")

                    results = await wait_results(evaluate)
                    assert await evaluate("typeof window.__sec_pwned") == "undefined"
                    return results

                results = await run_page(url)
                own = urlsplit(ws_url)
                assert own.port is not None
                control = attack_url(other_origin, pages, cp=free_port_pair(), dp=own.port,
                                     bid=own.path.rsplit("/", 1)[1], tok="x", tid="",
                                     tag=control_tag)
                opened = (await run_page(control))["ws:cdp-browser"]
                assert opened["opened"] is True and '"targetId"' in opened["messages"][0], opened
                while not HITS.matching(control_tag):  # the tab it opened loads the marker
                    await trio.sleep(0.05)
        assert_page_could_do_nothing(results)
        assert_guard_refused_the_attacks(service, logged)
        await assert_untouched(api, service, before, tag, marker)


async def test_s6_attack_page_inside_the_managed_browser(
    api: httpx.AsyncClient, service: ServiceInfo, pages: PageServer, other_origin: PageServer,
    marker: Marker,
) -> None:
    """The same page opened in the browser browserd drives reaches nothing either."""
    tag = new_tag()
    with trio.fail_after(60):
        bid = await browser_ws_id(service)
        before = await observe(api, service.cdp_port)
        logged = refusals(service)
        url = attack_url(other_origin, pages, cp=service.port, dp=service.cdp_port, bid=bid,
                         tok="guess-" + secrets.token_urlsafe(24), tid=marker.target_id,
                         tag=tag)
        r = await api.post("/tabs/open", json={"url": url})
        assert r.status_code == 200, r.text
        attack_tab = r.json()["targetId"]
        try:
            results = await wait_results(functools.partial(page_eval, api, attack_tab))
            assert await page_eval(api, attack_tab, "typeof window.__sec_pwned") == "undefined"
            assert_page_could_do_nothing(results)
            assert_guard_refused_the_attacks(service, logged)
            await assert_untouched(api, service, before, tag, marker,
                                   extra_tabs=frozenset({attack_tab}))
        finally:
            await api.post("/tabs/close", json={"targetId": attack_tab})
