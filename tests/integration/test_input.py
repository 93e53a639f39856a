"""Page input through HTTP: click, type, press, hover, select, wait, act, dialog.

Pages: tests/pages/input_*.html. Every test drives the real service
(``service`` fixture: headless Chromium) and checks what the *page* saw.
"""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest
import trio
from supervision.harness import LOOPBACK_TLS

from tests.conftest import add_route
from tests.integration.helpers import js, ok, post, ref_of

pytestmark = pytest.mark.chromium


async def goto(api: httpx.AsyncClient, tab: str, url: str) -> None:
    r = await api.post("/navigate", json={"targetId": tab, "url": url})
    assert r.status_code == 200, r.text


async def test_sign_in_form_typed_and_submitted(api, tab, pages):
    with trio.fail_after(30):
        await goto(api, tab, pages.url("/input_form.html"))
        data = await ok(api, "/type", tab, selector="#email", text="ada@example.com", clear=True)
        assert data["effects"] == {}
        assert await js(api, tab, "document.getElementById('email').value") == "ada@example.com"
        assert await js(api, tab, "document.activeElement.id") == "email"
        data = await ok(api, "/type", tab, selector="#password", text="s3cret", submit=True)
        assert data["effects"]["navigated"].startswith(pages.url("/input_welcome.html"))
        search = await js(api, tab, "location.search")
        assert search == "?email=ada%40example.com&password=s3cret"


async def test_click_submit_button_by_text_and_ref(api, tab, pages):
    with trio.fail_after(30):
        await goto(api, tab, pages.url("/input_form.html"))
        data = await ok(api, "/click", tab, text="Continue")
        assert data["method"] == "mouse"
        assert "input_welcome.html" in data["effects"]["navigated"]
        await goto(api, tab, pages.url("/input_form.html"))
        ref = await ref_of(api, tab, "button", "Continue")
        data = await ok(api, "/click", tab, ref=ref)
        assert "input_welcome.html" in data["effects"]["navigated"]


async def test_covered_button_falls_back_to_dom_click(api, tab, pages):
    with trio.fail_after(30):
        await goto(api, tab, pages.url("/input_overlay.html"))
        data = await ok(api, "/click", tab, selector="#under")
        assert data["method"] == "dom"
        assert data["fallbackReason"] == "covered"
        assert data["coveredBy"] == {"tag": "div", "id": "cover", "className": "modal backdrop",
                                     "role": "dialog", "name": "Cookie consent"}
        assert await js(api, tab, "document.getElementById('out').textContent") == "clicked false"
        await js(api, tab, "document.getElementById('cover').remove()")
        data = await ok(api, "/click", tab, selector="#free")
        assert data["method"] == "mouse" and "coveredBy" not in data
        assert await js(api, tab, "document.getElementById('out2').textContent") == "free true"
        # display: contents has no box of its own, but its text does: a real click.
        data = await ok(api, "/click", tab, selector="#ghost")
        assert data["method"] == "mouse"
        assert await js(api, tab, "document.getElementById('out2').textContent") == "ghost true"
        # No box at all (zero size): DOM click, no coveredBy.
        data = await ok(api, "/click", tab, selector="#tiny")
        assert data["method"] == "dom" and data["fallbackReason"] == "noBox"
        assert "coveredBy" not in data
        assert await js(api, tab, "document.getElementById('out2').textContent") == "tiny false"


async def test_click_options_shadow_and_scroll(api, tab, pages):
    with trio.fail_after(30):
        await goto(api, tab, pages.url("/input_misc.html"))
        await ok(api, "/click", tab, selector="#counter", modifiers=["Shift"])
        assert await js(api, tab, "document.getElementById('out').textContent") == "n=1 shift"
        await ok(api, "/click", tab, selector="#counter", clickCount=2)
        out = await js(api, tab, "document.getElementById('out').textContent")
        assert out == "n=3 detail=2"
        data = await ok(api, "/click", tab, text="Shadow button")
        assert data["method"] == "mouse"
        assert await js(api, tab, "document.getElementById('out').textContent") == "shadow true"
        await goto(api, tab, pages.url("/input_links.html"))
        data = await ok(api, "/click", tab, selector="#far")
        assert data["method"] == "mouse"
        assert await js(api, tab, "document.getElementById('out').textContent") == "far true"
        data = await ok(api, "/click", tab, selector="#hash")
        assert data["effects"]["navigated"].endswith("#section")


async def test_click_in_same_origin_and_cross_origin_frames(api, tab, pages, other_origin):
    with trio.fail_after(40):
        child = other_origin.url("/input_child.html?who=cross")
        await goto(api, tab, pages.url("/input_frames.html?child=") + child)
        # The out-of-process frame is attached asynchronously: snapshot until both show.
        buttons: list[str] = []
        with trio.fail_after(10):
            while len(buttons) < 2:
                r = await api.get("/snapshot", params={"targetId": tab, "nodes": "true"})
                buttons = [n["ref"] for n in r.json()["nodes"]
                           if n["role"] == "button" and n["name"] == "Child button"]
                await trio.sleep(0.1)
        assert len(buttons) == 2, r.json()["text"]
        for ref in buttons:
            data = await ok(api, "/click", tab, ref=ref)
            assert data["method"] == "mouse", data
        with trio.fail_after(5):
            while True:
                out = await js(api, tab, "document.getElementById('out').textContent")
                if out.count(";") == 2:
                    break
                await trio.sleep(0.05)
        assert sorted(out.strip(";").split(";")) == ["cross true", "same true"]
        # Typing into a field of the out-of-process frame: focus there, keys routed there.
        r = await api.get("/snapshot", params={"targetId": tab, "nodes": "true"})
        fields = [n["ref"] for n in r.json()["nodes"] if n["name"] == "Child field"]
        assert len(fields) == 2
        for ref in fields:
            await ok(api, "/type", tab, ref=ref, text="hi", clear=True)
            await ok(api, "/press", tab, key="Tab")  # blur: fires change
        with trio.fail_after(5):
            while True:
                out = await js(api, tab, "document.getElementById('out').textContent")
                if out.count(";") == 4:
                    break
                await trio.sleep(0.05)
        assert sorted(out.strip(";").split(";")) == ["cross true", "cross typed hi",
                                                     "same true", "same typed hi"]


async def test_alert_reported_then_accepted(api, tab, pages):
    with trio.fail_after(30):
        await goto(api, tab, pages.url("/input_dialogs.html"))
        # The click answers while the alert is open (the test's deadline bounds it).
        data = await ok(api, "/click", tab, selector="#alert")
        assert data["effects"]["dialog"] == {"type": "alert", "message": "Saved!"}
        r = await post(api, "/click", tab, selector="#confirm")
        assert r.status_code == 409 and r.json()["code"] == "DIALOG_OPEN"
        r = await post(api, "/wait", tab, url="**")
        assert r.status_code == 409 and r.json()["code"] == "DIALOG_OPEN"
        data = await ok(api, "/dialog", tab, accept=True)
        assert data["dialog"]["message"] == "Saved!"
        assert await js(api, tab, "document.getElementById('out').textContent") == "after alert"
        r = await post(api, "/dialog", tab, accept=True)
        assert r.status_code == 409 and r.json()["code"] == "NO_DIALOG"


async def test_confirm_and_prompt_results_reach_the_page(api, tab, pages):
    with trio.fail_after(30):
        await goto(api, tab, pages.url("/input_dialogs.html"))
        out = "document.getElementById('out').textContent"
        data = await ok(api, "/click", tab, text="Confirm")
        assert data["effects"]["dialog"] == {"type": "confirm", "message": "Delete it?"}
        await ok(api, "/dialog", tab, accept=False)
        assert await js(api, tab, out) == "cancelled"
        await ok(api, "/click", tab, text="Confirm")
        await ok(api, "/dialog", tab, accept=True)
        assert await js(api, tab, out) == "confirmed"
        data = await ok(api, "/click", tab, selector="#prompt")
        assert data["effects"]["dialog"]["type"] == "prompt"
        await ok(api, "/dialog", tab, accept=True, promptText="Ada")
        assert await js(api, tab, out) == "name=Ada"


async def test_link_with_target_blank_reports_new_tab(api, tab, pages):
    with trio.fail_after(30):
        await goto(api, tab, pages.url("/input_links.html"))
        data = await ok(api, "/click", tab, selector="#blank")
        new_tabs = data["effects"]["newTabs"]
        assert len(new_tabs) == 1 and new_tabs[0] != tab
        assert "navigated" not in data["effects"]
        try:
            with trio.fail_after(10):
                while True:
                    tabs = (await api.get("/tabs")).json()["tabs"]
                    if any(t["targetId"] == new_tabs[0] for t in tabs):
                        break
                    await trio.sleep(0.05)
        finally:
            await api.post("/tabs/close", json={"targetId": new_tabs[0]})
        data = await ok(api, "/click", tab, selector="#same")
        assert data["effects"]["navigated"].endswith("/input_welcome.html?from=same")
        assert "newTabs" not in data["effects"]


async def test_select_by_value_and_label(api, tab, pages):
    with trio.fail_after(30):
        await goto(api, tab, pages.url("/input_select.html"))
        data = await ok(api, "/select", tab, selector="#fruit", values=["b"])
        assert data["selected"] == ["b"]
        data = await ok(api, "/select", tab, selector="#fruit", values=["Cherry"])
        assert data["selected"] == ["c"]
        data = await ok(api, "/select", tab, selector="#many", values=["Red", "b"])
        assert data["selected"] == ["r", "b"]
        out = await js(api, tab, "document.getElementById('out').textContent")
        assert out == ("fruit:input fruit:change=b fruit:input fruit:change=c "
                       "many:input many:change=r,b")
        r = await post(api, "/select", tab, selector="#fruit", values=["Kiwi"])
        assert r.status_code == 400 and "'Kiwi'" in r.json()["error"]
        assert {"value": "a", "label": "Apple"} in r.json()["available"]
        r = await post(api, "/select", tab, selector="#notselect", values=["a"])
        assert r.status_code == 400 and "<div>" in r.json()["error"]
        r = await post(api, "/select", tab, selector="#fruit", values=["a", "b"])
        assert r.status_code == 400
        assert await js(api, tab, "document.getElementById('fruit').value") == "c"


async def test_hover_applies_css_hover_and_mouseenter(api, tab, pages):
    with trio.fail_after(30):
        await goto(api, tab, pages.url("/input_hover.html"))
        bg = "getComputedStyle(document.getElementById('card')).backgroundColor"
        assert await js(api, tab, bg) == "rgb(0, 0, 255)"
        data = await ok(api, "/hover", tab, selector="#card")
        assert data["method"] == "mouse"
        assert await js(api, tab, bg) == "rgb(255, 0, 0)"
        assert await js(api, tab, "document.getElementById('out').textContent") == "entered true"


async def test_press_keys_and_chords(api, tab, pages):
    with trio.fail_after(30):
        await goto(api, tab, pages.url("/input_form.html"))
        await ok(api, "/click", tab, selector="#email")
        await ok(api, "/press", tab, key="Control+a")
        await ok(api, "/press", tab, key="Backspace")
        assert await js(api, tab, "document.getElementById('email').value") == ""
        await ok(api, "/press", tab, key="Tab")
        assert await js(api, tab, "document.activeElement.id") == "password"
        await ok(api, "/press", tab, key="Shift+Tab")
        assert await js(api, tab, "document.activeElement.id") == "email"
        await ok(api, "/press", tab, key="a", modifiers=["Shift"])
        await ok(api, "/press", tab, key="Escape")
        assert await js(api, tab, "document.getElementById('email').value") == "A"
        keys = await js(api, tab, "document.getElementById('keys').textContent")
        assert keys.split() == ["C-Control", "C-a", "Backspace", "Tab", "S-Shift", "S-Tab",
                                "S-Shift", "S-A", "Escape"], keys
        await ok(api, "/type", tab, text="b@c.d", slowly=True)
        keys = await js(api, tab, "document.getElementById('keys').textContent")
        assert keys.split()[-5:] == ["b", "@", "c", ".", "d"]
        data = await ok(api, "/press", tab, key="Enter")
        assert "input_welcome.html?email=Ab%40c.d" in data["effects"]["navigated"]
        for bad in ({"key": "Hyper+x"}, {"key": "NoSuchKey"}, {"key": ""},
                    {"key": "a", "modifiers": ["Super"]}):
            r = await post(api, "/press", tab, **bad)
            assert r.status_code == 400, (bad, r.text)


async def test_wait_conditions_and_timeout(api, tab, pages):
    with trio.fail_after(40):
        await goto(api, tab, pages.url("/input_misc.html"))
        await js(api, tab, """setTimeout(() => {
            const p = document.createElement('p'); p.id = 'late'; p.textContent = 'Arrived';
            document.body.append(p);
            document.getElementById('vanish').textContent = '';
            history.pushState({}, '', '/input_misc.html?step=2');
        }, 300)""")
        data = await ok(api, "/wait", tab, selector="#late", timeoutMs=5000)
        assert 0 < data["waitedMs"] <= 5000
        await ok(api, "/wait", tab, text="Arrived", timeoutMs=2000)
        await ok(api, "/wait", tab, textGone="Vanish", timeoutMs=2000)
        await ok(api, "/wait", tab, url="**/input_misc.html?step=2", timeoutMs=2000)
        await ok(api, "/wait", tab, url="http://*/input_misc.html*", timeoutMs=2000)
        await ok(api, "/wait", tab, loadState="load", timeoutMs=2000)
        r = await post(api, "/wait", tab, selector="#never", timeoutMs=300)
        assert r.status_code == 504 and r.json()["code"] == "TIMEOUT"
        r = await post(api, "/wait", tab, url="**/elsewhere", timeoutMs=200)
        assert r.status_code == 504
        r = await post(api, "/wait", tab, selector="p[", timeoutMs=2000)
        assert r.status_code == 400
        for bad in ({}, {"selector": "p", "text": "x"}, {"loadState": "idle"}):
            r = await post(api, "/wait", tab, **bad)
            assert r.status_code == 400, (bad, r.text)
        # A navigation started by a click, then waited for.
        await js(api, tab, "setTimeout(() => { location.href = '/input_welcome.html'; }, 200)")
        await ok(api, "/wait", tab, url="**/input_welcome.html", timeoutMs=5000)
        await ok(api, "/wait", tab, loadState="load", timeoutMs=5000)
        await ok(api, "/wait", tab, selector="#hi", timeoutMs=5000)


async def test_act_batch_runs_in_order_and_stops_at_first_failure(api, tab, pages):
    with trio.fail_after(40):
        await goto(api, tab, pages.url("/input_form.html"))
        data = await ok(api, "/act", tab, actions=[
            {"kind": "type", "selector": "#email", "text": "bob@example.com", "clear": True},
            {"kind": "type", "selector": "#password", "text": "pw"},
            {"kind": "click", "text": "Continue"},
            {"kind": "wait", "selector": "#hi"},
        ])
        assert [s["ok"] for s in data["steps"]] == [True] * 4
        assert "input_welcome.html" in data["steps"][2]["result"]["effects"]["navigated"]
        assert "failedAt" not in data
        await goto(api, tab, pages.url("/input_misc.html"))
        r = await post(api, "/act", tab, actions=[
            {"kind": "click", "selector": "#counter"},
            {"kind": "click", "selector": "#nope"},
            {"kind": "click", "selector": "#counter"},
        ])
        assert r.status_code == 200, r.text
        data = r.json()
        assert data["ok"] is False and data["failedAt"] == 1, data
        assert len(data["steps"]) == 2
        assert data["steps"][1]["error"]["code"] == "NO_MATCH"
        assert await js(api, tab, "document.getElementById('out').textContent") == "n=1"
        # A step that times out is reported, not replayed; later steps do not run.
        data = (await post(api, "/act", tab, actions=[
            {"kind": "wait", "selector": "#never", "timeoutMs": 200},
            {"kind": "click", "selector": "#counter"},
        ])).json()
        assert data.get("failedAt") == 0, data
        assert data["steps"][0]["error"]["code"] == "TIMEOUT"
        assert await js(api, tab, "document.getElementById('out').textContent") == "n=1"
        # Invalid batches are refused before anything runs.
        for actions in ([], [{"kind": "click", "selector": "#counter"}, {"kind": "fly"}],
                        [{"kind": "click", "selector": "#counter", "button": "side"}],
                        [{"kind": "click", "selector": "#counter"}, {"kind": "click"}],
                        ["click"]):
            r = await post(api, "/act", tab, actions=actions)
            assert r.status_code == 400, (actions, r.text)
        assert await js(api, tab, "document.getElementById('out').textContent") == "n=1"
        # A dialog in the middle of a batch: reported, then resolved by a dialog step.
        await goto(api, tab, pages.url("/input_dialogs.html"))
        data = await ok(api, "/act", tab, actions=[
            {"kind": "click", "selector": "#confirm"},
            {"kind": "dialog", "accept": True},
            {"kind": "wait", "text": "confirmed"},
        ])
        assert data["steps"][0]["result"]["effects"]["dialog"]["type"] == "confirm"


async def test_field_validation(api, tab, pages):
    with trio.fail_after(30):
        await goto(api, tab, pages.url("/input_misc.html"))
        for body in ({"selector": "#counter", "button": "side"},
                     {"selector": "#counter", "clickCount": 4},
                     {"selector": "#counter", "clickCount": 0},
                     {"selector": "#counter", "modifiers": ["Hyper"]},
                     {"selector": "#counter", "modifiers": "Shift"},
                     {},
                     {"selector": "#counter", "text": "Count"},
                     {"selector": "#counter", "bogus": 1}):
            r = await post(api, "/click", tab, **body)
            assert r.status_code == 400, (body, r.text)
        r = await post(api, "/type", tab, selector="#counter")
        assert r.status_code == 400
        r = await post(api, "/hover", tab)
        assert r.status_code == 400
        r = await post(api, "/select", tab, selector="#x", values=[])
        assert r.status_code == 400
        r = await post(api, "/click", tab, selector="#nope")
        assert r.status_code == 404 and r.json()["code"] == "NO_MATCH"
        r = await post(api, "/click", tab, ref="e999999")
        assert r.status_code == 404 and r.json()["code"] == "REF_NOT_FOUND"
        assert await js(api, tab, "document.getElementById('out').textContent") == ""


async def test_stale_refs_are_refused(api, tab, pages):
    with trio.fail_after(30):
        await goto(api, tab, pages.url("/input_misc.html"))
        vanish = await ref_of(api, tab, "button", "Vanish")
        rename = await ref_of(api, tab, "button", "Rename me")
        count = await ref_of(api, tab, "button", "Count")
        await ok(api, "/click", tab, ref=vanish)
        r = await post(api, "/click", tab, ref=vanish)
        assert r.status_code == 409 and r.json()["code"] == "STALE_REF"
        assert r.json()["reason"] == "detached"
        await ok(api, "/click", tab, ref=rename)
        r = await post(api, "/click", tab, ref=rename)
        assert r.status_code == 409 and r.json()["reason"] == "changed"
        await goto(api, tab, pages.url("/input_misc.html"))
        r = await post(api, "/click", tab, ref=count)
        assert r.status_code == 409 and r.json()["reason"] == "navigated"
        assert await js(api, tab, "document.getElementById('out').textContent") == ""


def gate_route(arrived: threading.Event, release: threading.Event) -> Any:
    """A page-server handler that says it was reached, then answers once released (≤ 60 s)."""

    def handler(req: Any) -> None:
        arrived.set()
        release.wait(60)
        req.send_response(200)
        req.send_header("Content-Type", "text/plain")
        req.send_header("Content-Length", "2")
        req.send_header("Cache-Control", "no-store")
        req.end_headers()
        req.wfile.write(b"ok")

    return handler


async def test_tab_queue_full_answers_429(api, tab, pages):
    """With the tab's slot held and its queue full, every further call is 429 at once."""
    arrived, release = threading.Event(), threading.Event()
    add_route("/input_gate", gate_route(arrived, release))
    try:
        with trio.fail_after(60):
            await goto(api, tab, pages.url("/input_misc.html"))
            statuses: list[int] = []
            refused = trio.Event()
            holder: list[httpx.Response] = []

            async def hold_the_slot() -> None:
                holder.append(await post(api, "/eval", tab, js="fetch('/input_gate', "
                                         "{cache: 'no-store'}).then(r => r.status)", **{
                                             "await": True, "timeoutMs": 60_000}))

            async def queued_wait() -> None:
                r = await post(api, "/wait", tab, url="**/never", timeoutMs=400)
                statuses.append(r.status_code)
                if r.status_code == 429:
                    assert r.json()["code"] == "TAB_BUSY"
                    if statuses.count(429) == 5:
                        refused.set()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(hold_the_slot)
                # The eval holds the tab's work slot while its fetch waits at the server.
                while not arrived.is_set():
                    await trio.sleep(0.02)
                for _ in range(13):
                    nursery.start_soon(queued_wait)
                # tab_queue_limit (8) wait behind the eval; the other 5 are refused.
                await refused.wait()
                release.set()
            assert holder[0].status_code == 200 and holder[0].json()["result"] == 200
            assert sorted(statuses) == [429] * 5 + [504] * 8, statuses
            await ok(api, "/wait", tab, url="**/input_misc.html", timeoutMs=1000)
    finally:
        release.set()


async def test_hung_page_click_is_bounded_and_tab_recovers(api, service, tab, pages):
    with trio.fail_after(40):
        await goto(api, tab, pages.url("/input_misc.html"))
        r = await api.post("/tabs/open", json={"url": pages.url("/input_form.html")})
        other = r.json()["targetId"]
        probes_during_hang = 0
        result: dict[str, Any] = {}

        async def hang_click() -> None:
            r = await post(api, "/click", tab, selector="#hang", timeoutMs=1500)
            result.update(status=r.status_code, body=r.json())

        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(hang_click)
                async with httpx.AsyncClient(base_url=service.base_url, timeout=5,
                                             verify=LOOPBACK_TLS) as bare:
                    while not result:
                        # The service and other tabs answer while this tab hangs.
                        r = await bare.get("/healthz")
                        assert r.status_code == 200
                        assert await js(api, other, "1 + 1") == 2
                        if not result:
                            probes_during_hang += 1
                        await trio.sleep(0.1)
            assert result["status"] == 504, result
            assert result["body"]["uncertain"] is True
            assert result["body"]["terminated"] is True
            assert probes_during_hang >= 1
            assert await js(api, tab, "1 + 1") == 2
            data = await ok(api, "/click", tab, selector="#counter")
            assert data["method"] == "mouse"
            assert await js(api, tab, "document.getElementById('out').textContent") == "n=1"
        finally:
            await api.post("/tabs/close", json={"targetId": other})


def test_chords_and_url_globs_parse() -> None:
    from browserd.errors import BadRequest
    from browserd.tabs.actions import glob_regex, modifier_mask, parse_chord

    chord = parse_chord("Control+Shift+ArrowLeft")
    assert chord.modifiers == ("Control", "Shift") and chord.key.key_code == 37
    assert parse_chord("Control++").key.key == "+"
    assert parse_chord("+").modifiers == ()
    assert parse_chord("Tab", ["Shift"]).modifiers == ("Shift",)
    assert parse_chord("Esc").key.key == "Escape"
    enter = parse_chord("Enter").key
    assert (enter.code, enter.key_code, enter.text) == ("Enter", 13, "\r")
    assert parse_chord("é").key.text == "é"
    for bad in ("", "a+", "Control+", "Hyper+a", "NoSuchKey"):
        with pytest.raises(BadRequest):
            parse_chord(bad)
    assert modifier_mask(["Alt", "Control", "Meta", "Shift"]) == 15
    assert glob_regex("**/done?x=1").match("http://h:1/a/b/done?x=1")
    assert glob_regex("http://*/done").match("http://h:1/done")
    assert not glob_regex("http://*/done").match("http://h:1/a/done")
    assert not glob_regex("**/done").match("http://h/done/more")
