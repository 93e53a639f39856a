"""The navigation guard's verdicts and block records, against a scripted browser.

A :class:`NavGuard` runs on a real CdpConnection to the fake peer of
``tests/fakecdp.py``: the peer reports a page (auto-attached, paused), then
pauses its document requests as Chromium's ``Fetch`` does, and the test reads
how the guard answered each one and what it recorded. Written for the
mutants of the guard's verdict functions (``python -m supervision.mutants
--only navguard-verdicts``) and for the audit's "iframe navigations are
judged" and "blocked URLs are reported without userinfo, query or fragment".
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing

from browserd.egress import EgressPolicy, EgressScopes
from browserd.tabs.contain import Containment
from browserd.tabs.navguard import NavGuard, navigation_verdict
from browserd.urlpolicy import UrlPolicy
from tests.fakecdp import FakeCdpPeer, connected

POLICY = UrlPolicy(blocked_ports=frozenset({18791, 18792}))
BLOCKED = "http://127.0.0.1:18791/admin"
SECRET_URL = "http://user:pw@127.0.0.1:18791/admin/x?token=s3cret#access_token=s3cret"


@asynccontextmanager
async def guarded_page(*, opener: str | None = None) -> AsyncIterator[tuple[FakeCdpPeer,
                                                                            NavGuard]]:
    """A guard with one page ``T1`` (session ``S1``) under it."""
    peer = FakeCdpPeer()
    with trio.fail_after(10):
        async with connected(peer) as conn, trio.open_nursery() as nursery:
            guard = NavGuard(conn, POLICY)
            await nursery.start(guard.run)
            info: dict[str, Any] = {"targetId": "T1", "type": "page", "url": "about:blank"}
            if opener:
                info["openerId"] = opener
            await peer.emit("Target.attachedToTarget", {
                "sessionId": "S1", "targetInfo": info, "waitingForDebugger": True})
            assert await guard.wait_guarded("T1")
            yield peer, guard
            nursery.cancel_scope.cancel()


async def pause(peer: FakeCdpPeer, request_id: str, url: str, *, frame: str = "T1",
                kind: str = "Document", redirected_from: str | None = None) -> str:
    """Pause one request on the page; how the guard answered it (continue / fail)."""
    params: dict[str, Any] = {"requestId": request_id, "request": {"url": url},
                              "frameId": frame, "resourceType": kind}
    if redirected_from is not None:
        params["redirectedRequestId"] = redirected_from
    await peer.emit("Fetch.requestPaused", params, session_id="S1")
    while True:
        for method in ("Fetch.continueRequest", "Fetch.failRequest"):
            if any(p.get("requestId") == request_id for p in peer.sent(method)):
                return method.split(".")[1]
        await trio.sleep(0.005)


async def test_an_iframe_navigation_is_judged_like_the_page_s_own() -> None:
    async with guarded_page() as (peer, guard):
        mark = guard.mark()
        assert await pause(peer, "R1", "https://a.test/frame", frame="CHILD") == (
            "continueRequest")
        assert await pause(peer, "R2", BLOCKED, frame="CHILD") == "failRequest"
        (block,) = guard.blocks_since(mark, target_id="T1")
        assert (block.main_frame, block.reason, block.url) == (False, "port", BLOCKED)
        assert block.to_json() == {"url": BLOCKED, "reason": "port", "resourceType": "document"}
        assert peer.sent("Target.closeTarget") == []  # the page itself goes on
        assert peer.sent("Fetch.failRequest")[0]["errorReason"] == "BlockedByClient"
        # Not a document: not the URL policy's to judge.
        assert await pause(peer, "R3", BLOCKED, frame="CHILD", kind="Image") == (
            "continueRequest")
        assert guard.blocks_since(mark, target_id="T1") == [block]


async def test_a_blocked_url_is_recorded_without_userinfo_query_or_fragment() -> None:
    async with guarded_page() as (peer, guard):
        mark = guard.mark()
        assert await pause(peer, "R1", SECRET_URL) == "failRequest"
        (block,) = guard.blocks_since(mark, target_id="T1")
        assert block.main_frame is True
        assert block.to_json() == {"url": "http://127.0.0.1:18791/admin/x", "reason": "port"}
        assert "s3cret" not in str(block) and "user" not in block.url


async def test_a_redirect_is_reported_with_the_first_url_of_its_chain() -> None:
    async with guarded_page() as (peer, guard):
        mark = guard.mark()
        assert await pause(peer, "R1", "https://a.test/start?q=secret") == "continueRequest"
        assert await pause(peer, "R2", "https://b.test/hop", redirected_from="R1") == (
            "continueRequest")
        assert await pause(peer, "R3", SECRET_URL, redirected_from="R2") == "failRequest"
        (block,) = guard.blocks_since(mark, target_id="T1")
        assert block.to_json() == {"url": "http://127.0.0.1:18791/admin/x", "reason": "port",
                                   "redirectedFrom": "https://a.test/start"}
        # A new request of the page starts a new chain.
        later = guard.mark()
        assert later > mark
        assert await pause(peer, "R4", BLOCKED) == "failRequest"
        (again,) = guard.blocks_since(later, target_id="T1")
        assert again.redirected_from is None and again.seq > block.seq


async def test_a_popup_blocked_at_its_first_navigation_is_closed_and_reported_to_its_opener(
        ) -> None:
    async with guarded_page(opener="OPENER") as (peer, guard):
        mark = guard.mark()
        assert await pause(peer, "R1", BLOCKED) == "failRequest"
        while not peer.sent("Target.closeTarget"):
            await trio.sleep(0.005)
        assert peer.sent("Target.closeTarget") == [{"targetId": "T1"}]
        assert "T1" in guard.closed_popups
        (block,) = guard.blocks_since(mark, target_id="OPENER")
        assert block.to_json() == {"url": BLOCKED, "reason": "port", "targetId": "T1"}
        assert guard.blocks_since(mark, target_id="OTHER") == []
        assert guard.blocks_since(mark, target_id="OTHER", opened_by=["T1"]) == [block]
        assert guard.blocks_since(guard.mark(), target_id="OPENER") == []


async def test_a_popup_that_showed_a_page_is_not_closed_for_a_later_block() -> None:
    async with guarded_page(opener="OPENER") as (peer, _):
        assert await pause(peer, "R1", "https://a.test/") == "continueRequest"
        assert await pause(peer, "R2", BLOCKED) == "failRequest"
        await trio.sleep(0.05)
        assert peer.sent("Target.closeTarget") == []


@pytest.mark.parametrize(("url", "verdict"), [
    ("https://a.test/", None),
    ("http://127.0.0.1:18791/", "port"),
    ("HTTP://127.0.0.1:18792/x", "port"),
    ("file:///etc/passwd", "scheme"),
    ("javascript:alert(1)", "scheme"),
    ("http://[::1/", "invalid"),
    ("https://a.test/" + "x" * 10_000, None),
    ("data:text/html," + "x" * 10_000, "scheme"),
    ("about:blank", None),
])
def test_verdicts(url: str, verdict: str | None) -> None:
    assert navigation_verdict(POLICY, url) == verdict



def test_an_authority_longer_than_what_is_read_is_refused_not_guessed() -> None:
    """A 4 KB userinfo must not push the port out of the part that is judged
    (found by a mutant of the 4096-character cut: the port was read as "1879")."""
    tail = "@127.0.0.1:18791"
    for length in (4095, 4096, 4097, 4100, 10_000):
        url = "http://" + "u" * (length - 7 - len(tail)) + tail + "/x"
        assert navigation_verdict(POLICY, url) in ("port", "invalid"), length
    ok = "http://u@a.test/" + "x" * 10_000
    assert navigation_verdict(POLICY, ok) is None
    assert navigation_verdict(POLICY, "https://a.test?" + "q" * 10_000) is None
    assert navigation_verdict(POLICY, "https://a.test#" + "f" * 10_000) is None
    assert navigation_verdict(POLICY, "https://" + "a" * 10_000) == "invalid"
    # Right at the edge: an authority of 4096 characters and no more is read whole ...
    whole = "http://" + "u" * (4096 - 7 - 7) + "@a.test"
    assert len(whole) == 4096 and navigation_verdict(POLICY, whole) is None
    # ... one more character, and it is cut: the port unknown, the URL refused.
    cut = "http://" + "u" * (4097 - 7 - 16) + "@127.0.0.1:18791"
    assert len(cut) == 4097 and navigation_verdict(POLICY, cut) == "invalid"
    assert navigation_verdict(POLICY, whole + "/") == "invalid"  # the "/" is beyond 4096
    assert navigation_verdict(POLICY, "https://a.test") is None  # short, no path: fine
    assert navigation_verdict(POLICY, "http://127.0.0.1:18791") == "port"


async def test_the_waiter_for_a_page_never_seen_is_woken_when_it_is_forgotten() -> None:
    async with guarded_page() as (_, guard):
        woken: list[str] = []

        async def wait(target_id: str) -> None:
            await guard.wait_decided([target_id])
            woken.append(target_id)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(wait, "NEVER-0")
            await trio.testing.wait_all_tasks_blocked()  # (so NEVER-0 is the older)
            nursery.start_soon(wait, "NEVER-1")
            await trio.testing.wait_all_tasks_blocked()
            # T1's and the two above are kept; 997 more make 1000: all kept.
            for i in range(2, 999):
                with trio.move_on_after(0):
                    await guard.wait_decided([f"NEVER-{i}"])
            await trio.testing.wait_all_tasks_blocked()
            assert woken == []
            with trio.move_on_after(0):
                await guard.wait_decided(["NEVER-999"])  # one more: the oldest (T1's) goes
            await trio.testing.wait_all_tasks_blocked()
            assert woken == []
            with trio.move_on_after(0):
                await guard.wait_decided(["NEVER-1000"])  # and the next oldest
            await trio.testing.wait_all_tasks_blocked()
            assert woken == ["NEVER-0"]
            nursery.cancel_scope.cancel()


async def test_a_repeated_subframe_block_replaces_the_older_record() -> None:
    async with guarded_page() as (peer, guard):
        mark = guard.mark()
        assert await pause(peer, "R1", BLOCKED, frame="CHILD") == "failRequest"
        assert await pause(peer, "R2", BLOCKED, frame="CHILD") == "failRequest"
        assert await pause(peer, "R3", BLOCKED + "/other", frame="CHILD") == "failRequest"
        blocks = guard.blocks_since(mark, target_id="T1")
        assert [b.url for b in blocks] == [BLOCKED, BLOCKED + "/other"]
        assert blocks[0].seq == mark + 2  # the newer of the two
        # The page's own navigations are each kept.
        assert await pause(peer, "R4", BLOCKED) == "failRequest"
        assert await pause(peer, "R5", BLOCKED) == "failRequest"
        main = [b for b in guard.blocks_since(mark, target_id="T1") if b.main_frame]
        assert len(main) == 2


async def test_the_url_policy_stands_even_where_the_egress_policy_allows() -> None:
    """A contained page whose allowed origins include browserd's own port is still kept
    from it: egress narrows what the URL policy lets through, it never widens it."""
    scopes = EgressScopes()
    scopes.set_context("C1", EgressPolicy.parse(["http://127.0.0.1:*", "https://a.test"]))
    peer = FakeCdpPeer()
    with trio.fail_after(10):
        async with connected(peer) as conn, trio.open_nursery() as nursery:
            guard = NavGuard(conn, POLICY, egress=scopes, contain=Containment)
            await nursery.start(guard.run)
            await peer.emit("Target.attachedToTarget", {
                "sessionId": "S1", "waitingForDebugger": True,
                "targetInfo": {"targetId": "T1", "type": "page", "browserContextId": "C1"}})
            assert await guard.wait_guarded("T1")
            mark = guard.mark()
            assert await pause(peer, "R1", "https://a.test/") == "continueRequest"
            assert await pause(peer, "R2", BLOCKED) == "failRequest"
            assert await pause(peer, "R3", "https://evil.test/") == "failRequest"
            assert [(b.url, b.reason) for b in guard.blocks_since(mark, target_id="T1")] == [
                (BLOCKED, "port"), ("https://evil.test/", "egress")]
            nursery.cancel_scope.cancel()
