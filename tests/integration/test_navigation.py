"""History and scrolling through HTTP: /back, /forward, /reload, /scroll on real Chromium.

Pages: tests/pages/nav_*.html (three linked pages with a pushState button and
a hash link, a page with a ``beforeunload`` handler, a tall page with an
inner scroll box). Every test checks what the *page* says (location,
scroll offsets, counters it keeps), not only the answer.
"""

from __future__ import annotations

import httpx
import pytest
import trio

from tests.integration.helpers import js, ok, post

pytestmark = pytest.mark.chromium


async def goto(api: httpx.AsyncClient, tab: str, url: str) -> None:
    await ok(api, "/navigate", tab, url=url)


async def test_back_forward_reload_and_the_ends(api, tab, pages):
    with trio.fail_after(60):
        a, b = pages.url("/nav_a.html"), pages.url("/nav_b.html")
        await goto(api, tab, a)
        await goto(api, tab, b)
        data = await ok(api, "/back", tab)
        assert data["url"] == a and data["title"] == "nav a"
        assert data["loadState"] in ("domcontentloaded", "load")
        assert data["targetId"] == tab
        assert await js(api, tab, "location.href") == a
        data = await ok(api, "/back", tab)
        assert data["url"] == "about:blank"
        r = await post(api, "/back", tab)
        assert r.status_code == 409 and r.json()["code"] == "NO_HISTORY", r.text
        data = await ok(api, "/forward", tab, waitUntil="load")
        assert data["url"] == a and data["loadState"] == "load"
        data = await ok(api, "/forward", tab)
        assert data["url"] == b and data["title"] == "nav b"
        assert await js(api, tab, "document.title") == "nav b"
        r = await post(api, "/forward", tab)
        assert r.status_code == 409 and r.json()["code"] == "NO_HISTORY", r.text
        # Reload: a new document of the same URL (a marker set on the old one is gone).
        await js(api, tab, "window.marker = 7")
        data = await ok(api, "/reload", tab, waitUntil="load")
        assert data["url"] == b and data["status"] == 200 and data["loadState"] == "load"
        assert await js(api, tab, "typeof window.marker") == "undefined"
        data = await ok(api, "/reload", tab, ignoreCache=True, waitUntil="commit")
        assert data["url"] == b
        data = await ok(api, "/reload", tab, waitUntil="none")
        assert data["loadState"] == "none"


async def test_same_document_entries(api, tab, pages):
    """pushState and hash entries fire no load events; back/forward still answer."""
    with trio.fail_after(60):
        a, b = pages.url("/nav_a.html"), pages.url("/nav_b.html")
        await goto(api, tab, a)
        await goto(api, tab, b)
        await ok(api, "/back", tab)
        # pushState drops the forward entries (nav_b): forward is at its end.
        await ok(api, "/click", tab, selector="#push")
        assert await js(api, tab, "location.hash") == "#pushed"
        r = await post(api, "/forward", tab)
        assert r.status_code == 409 and r.json()["code"] == "NO_HISTORY", r.text
        await ok(api, "/click", tab, selector="#hash")
        assert await js(api, tab, "location.hash") == "#section"
        await js(api, tab, "window.sameDocument = 'yes'")
        data = await ok(api, "/back", tab)
        assert data["url"] == a + "#pushed" and data["loadState"] == "load"
        data = await ok(api, "/back", tab, waitUntil="commit")
        assert data["url"] == a and data["loadState"] == "load"
        assert await js(api, tab, "window.sameDocument") == "yes"  # never left the document
        data = await ok(api, "/forward", tab)
        assert data["url"] == a + "#pushed"
        data = await ok(api, "/forward", tab)
        assert data["url"] == a + "#section"
        assert await js(api, tab, "window.sameDocument") == "yes"
        r = await post(api, "/forward", tab)
        assert r.status_code == 409 and r.json()["code"] == "NO_HISTORY", r.text


async def test_back_to_a_restored_or_reloaded_document_is_settled(api, tab, pages):
    """Back to a previous document — restored from the back/forward cache or loaded again."""
    with trio.fail_after(60):
        a, b = pages.url("/nav_a.html"), pages.url("/nav_b.html")
        await goto(api, tab, a)
        await ok(api, "/click", tab, selector="#next")  # a link, as a person would
        assert await js(api, tab, "location.href") == b
        data = await ok(api, "/back", tab)
        assert data["url"] == a and data["loadState"] in ("domcontentloaded", "load")
        # Chromium 156 restores this page from the back/forward cache: no
        # lifecycle events follow, yet the answer is settled.
        assert await js(api, tab, "window.restored") is True
        assert await js(api, tab, "document.readyState") in ("interactive", "complete")
        data = await ok(api, "/forward", tab, waitUntil="load")
        assert data["url"] == b and data["loadState"] == "load"


async def test_beforeunload_holds_the_move_as_a_dialog(api, tab, pages):
    with trio.fail_after(60):
        await goto(api, tab, pages.url("/nav_a.html"))
        await goto(api, tab, pages.url("/nav_unload.html"))
        # beforeunload prompts only after the user touched the page.
        await ok(api, "/type", tab, selector="#field", text="draft")
        r = await post(api, "/back", tab, timeoutMs=10_000)
        assert r.status_code == 409 and r.json()["code"] == "DIALOG_OPEN", r.text
        assert r.json()["dialog"]["type"] == "beforeunload"
        r = await post(api, "/forward", tab)  # the dialog blocks further moves
        assert r.status_code == 409 and r.json()["code"] == "DIALOG_OPEN", r.text
        await ok(api, "/dialog", tab, accept=True)
        await ok(api, "/wait", tab, url="**/nav_a.html")


async def test_scroll_page_with_the_wheel(api, tab, pages):
    with trio.fail_after(60):
        await goto(api, tab, pages.url("/nav_scroll.html"))
        data = await ok(api, "/scroll", tab, to="bottom")
        assert data["atBottom"] is True and data["atTop"] is False
        assert data["scroller"] == "page" and data["method"] == "wheel"
        assert data["scrollY"] == pytest.approx(await js(api, tab, "scrollY"), abs=1)
        assert await js(api, tab, "scrollY + innerHeight >= document.documentElement"
                                  ".scrollHeight - 1") is True
        assert await js(api, tab, "window.wheels") >= 1  # a real wheel event
        data = await ok(api, "/scroll", tab, to="top")
        assert data["atTop"] is True and data["scrollY"] == 0
        data = await ok(api, "/scroll", tab, dy=500)
        assert data["scrollY"] == pytest.approx(500, abs=1) and data["method"] == "wheel"
        assert await js(api, tab, "scrollY") == pytest.approx(500, abs=1)
        data = await ok(api, "/scroll", tab)  # one page down
        assert data["scrollY"] == pytest.approx(500 + 0.9 * 720, abs=2)
        data = await ok(api, "/scroll", tab, dy=-100_000)
        assert data["atTop"] is True


async def test_scroll_an_element_and_into_view(api, tab, pages):
    with trio.fail_after(60):
        await goto(api, tab, pages.url("/nav_scroll.html"))
        data = await ok(api, "/scroll", tab, selector="#first", to="bottom")
        assert data["scroller"] == "element" and data["atBottom"] is True
        box = await js(api, tab, "[document.getElementById('box').scrollTop, "
                                 "document.getElementById('box').scrollHeight - "
                                 "document.getElementById('box').clientHeight]")
        assert box[0] > 0 and box[0] == pytest.approx(box[1], abs=1)
        assert data["scrollY"] == pytest.approx(box[0], abs=1)
        data = await ok(api, "/scroll", tab, selector="#box", dy=-300)
        assert data["scroller"] == "element"
        assert await js(api, tab, "document.getElementById('box').scrollTop") == pytest.approx(
            box[0] - 300, abs=1)
        data = await ok(api, "/scroll", tab, text="far away button")
        assert data["method"] == "intoView" and data["scroller"] == "page"
        assert await js(api, tab, "(() => { const r = document.getElementById('farButton')"
                                  ".getBoundingClientRect(); return r.top >= 0 && "
                                  "r.bottom <= innerHeight; })()") is True
        assert data["scrollY"] > 3000


async def test_scroll_refuses_bad_combinations(api, tab, pages):
    with trio.fail_after(30):
        await goto(api, tab, pages.url("/nav_scroll.html"))
        for body in ({"to": "intoView"}, {"to": "top", "dy": 5},
                     {"ref": "e1", "selector": "#box"}, {"to": "left"}):
            r = await post(api, "/scroll", tab, **body)
            assert r.status_code == 400, (body, r.text)
        r = await post(api, "/scroll", tab, selector="#nothing-here")
        assert r.status_code == 404 and r.json()["code"] == "NO_MATCH", r.text
