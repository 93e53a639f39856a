"""The page functions of ``tabs/js/``, one by one, against a real headless Chromium.

Each is called here as browserd calls it (its self-contained declaration, in the
browserd world, ``this`` = the element), so every branch an action's answer depends
on is seen in a real page, not only through the HTTP routes: fields, the pointer,
editors, reading and waiting, the main world, settling, effects and capture.

Their layout and linking: tests/unit/test_page_functions.py. The fixtures:
_walker_tab.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio

from browserd.tabs.pagejs import page_function
from tests.integration._walker_tab import Servers, Tab, browser_url, servers, tab

__all__ = ["browser_url", "servers", "tab"]

pytestmark = pytest.mark.chromium

FORM_FUNCTIONS = """<!doctype html><title>Form functions</title>
<input id="txt" value="hello"><input id="ro" readonly><input id="cb" type="checkbox">
<textarea id="ta"></textarea><input id="proxy" style="opacity: 0" value="keys">
<input id="sticky" value="stays"><div id="plain">plain</div>
<label id="lab">Pick <input id="file" type="file" multiple></label>
<select id="s"><option value="a">  Apple   pie </option><option value="b" disabled>Banana</option>
<option value="c">Cherry</option></select>
<script>
  window.changes = 0;
  document.getElementById('s').addEventListener('change', () => window.changes++);
  document.getElementById('sticky').addEventListener('input', e => e.target.value = 'back');
</script>
"""


async def test_page_functions_of_fields(tab: Tab, servers: Servers) -> None:
    with trio.fail_after(20):
        await tab.goto(servers.put("/fn-form", FORM_FUNCTIONS))
        typing = {}
        for sel in ("#txt", "#ro", "#cb", "#ta"):
            await tab.page(f"document.querySelector('{sel}').focus()")
            typing[sel] = await tab.on(sel, "typingTarget")
        await tab.page("document.activeElement.blur()")
        typing["#plain"] = await tab.on("#plain", "typingTarget")
        cleared = {sel: await tab.on(sel, "clearField")
                   for sel in ("#txt", "#proxy", "#sticky", "#plain")}
        values = await tab.page("[...document.querySelectorAll('input')].map(i => i.value)")
        chosen = await tab.on("#s", "selectOptions", ["Apple pie"])
        changes = await tab.page("window.changes")
        missing = await tab.on("#s", "selectOptions", ["zzz"])
        several = await tab.on("#s", "selectOptions", ["a", "c"])
        disabled = await tab.on("#s", "selectOptions", ["b"])
        not_select = await tab.on("#lab", "selectOptions", ["a"])
        label_input = await tab.on("#lab", "fileInputOf", by_value=False)
        text_input = await tab.on("#txt", "fileInputOf")
        facts = await tab.on("#file", "fileInputFacts")
    assert typing == {"#txt": "ok", "#ro": "readonly input", "#cb": "input type=checkbox",
                      "#ta": "ok", "#plain": "body"}
    assert cleared == {"#txt": "value", "#proxy": "proxy", "#sticky": "kept", "#plain": "none"}
    assert values[:5] == ["", "", "on", "keys", "back"]
    assert chosen == {"selected": ["a"]} and changes == 1
    assert missing == {"missing": ["zzz"], "available": [
        {"value": "a", "label": "Apple pie"}, {"value": "b", "label": "Banana"},
        {"value": "c", "label": "Cherry"}]}
    assert several == {"notMultiple": 2}
    assert disabled == {"disabledOption": "b"}
    assert not_select == {"notSelect": "label"}
    assert label_input["subtype"] == "node" and label_input["description"].startswith("input#file")
    assert text_input == "input type=text"
    assert facts == {"multiple": True, "disabled": False}


POINTER_FUNCTIONS = """<!doctype html><title>Pointer functions</title>
<style>body { margin: 0 } button { position: absolute; width: 100px; height: 40px }</style>
<button id="free" style="left: 10px; top: 10px">Free</button>
<button id="under" style="left: 10px; top: 100px">Under</button>
<div role="dialog" aria-label="Cookie banner" class="banner  x"
     style="position: absolute; left: 0; top: 90px; width: 300px; height: 80px"></div>
<button id="far" style="left: 10px; top: 5000px">Far</button>
<button id="none" style="display: none">None</button>
<button id="gone" style="left: 200px; top: 10px">Gone</button>
<script>
  window.seen = [];
  for (const t of ['click', 'mouseover', 'mouseenter', 'mousemove'])
    document.getElementById('free').addEventListener(t, e => window.seen.push(e.type));
</script>
"""


async def test_page_functions_of_the_pointer(tab: Tab, servers: Servers) -> None:
    async def point(sel: str) -> Any:
        node = await tab.element(sel)
        quads = (await tab.cdp.send("DOM.getContentQuads", {"objectId": node}, tab.session)
                 ) if sel != "#none" else {"quads": []}
        return await tab.on(sel, "clickPoint", quads["quads"], 0, 0)

    with trio.fail_after(20):
        await tab.goto(servers.put("/fn-pointer", POINTER_FUNCTIONS))
        free, under, far, none = [await point(s) for s in ("#free", "#under", "#far", "#none")]
        gone = await tab.element("#gone")
        await tab.page("document.getElementById('gone').remove()")
        detached = (await tab.cdp.send("Runtime.callFunctionOn", {
            "objectId": gone, "functionDeclaration": page_function("clickPoint").declaration,
            "arguments": [{"value": []}, {"value": 0}, {"value": 0}],
            "returnByValue": True}, tab.session))["result"]["value"]
        await tab.on("#free", "hoverByEvents")
        await tab.on("#free", "clickElement")
        seen = await tab.page("window.seen")
    assert free == {"x": 60, "y": 30}
    assert under == {"x": 60, "y": 120, "covered": {
        "tag": "div", "id": "", "className": "banner x", "role": "dialog",
        "name": "Cookie banner"}}
    assert far == {"offscreen": True}
    assert none == {"noBox": True}
    assert detached == {"detached": True}
    assert seen == ["mouseover", "mouseenter", "mousemove", "click"]


EDITOR_FUNCTIONS = """<!doctype html><title>Editor functions</title>
<div id="ed" contenteditable="true"><p id="first">one</p><p>two</p></div>
<input id="plain">
<div class="monaco-editor" style="position: relative; height: 60px">
  <textarea class="inputarea" style="width: 1px; height: 1px"></textarea>
  <div class="view-lines">
    <div class="view-line" style="position: absolute; top: 20px">second</div>
    <div class="view-line" style="position: absolute; top: 0px">first</div>
  </div>
</div>
"""


async def test_page_functions_of_editors(tab: Tab, servers: Servers) -> None:
    with trio.fail_after(20):
        await tab.goto(servers.put("/fn-editors", EDITOR_FUNCTIONS))
        platform = await tab.page("navigator.platform")
        probe = await tab.on("#first", "editorQuestion", "probe", False)
        plain = await tab.on("#plain", "editorQuestion", "probe", False)
        plain_text = await tab.on("#plain", "editorQuestion", "text", False)
        hidden = await tab.on(".monaco-editor textarea", "editorQuestion", "probe", False)
        monaco_text = await tab.on(".monaco-editor textarea", "editorQuestion", "text", False)
        held = await tab.on("body", "editorQuestion", "probe", True)
        nothing_focused = await tab.call("focusedElement")
        refused = await tab.on("#first", "editorQuestion", "focus", False)  # a <p>: no focus
        focused = await tab.on("#ed", "editorQuestion", "focus", False)
        kept = await tab.on("#first", "editorQuestion", "focus", False)
        active = await tab.page("document.activeElement.id")
        now = await tab._evaluate(page_function("focusedElement").call(), tab.ctx, False)
        surface = await tab.on(".monaco-editor textarea", "editorQuestion", "surface", True,
                               by_value=False)
        text = await tab.on("#ed", "editorQuestion", "text", False)
        world_platform = await tab.call("pagePlatform")
        await tab.page("document.body.contentEditable = 'true'")
        whole = await tab.on("#plain", "editorQuestion", "probe", True)
    assert probe == {"kind": "contenteditable", "hiddenInput": False, "cover": "none",
                     "platform": platform}
    assert plain is None and plain_text == {"none": True}
    assert hidden["kind"] == "monaco" and hidden["hiddenInput"] is True
    assert monaco_text == {"text": "first\nsecond"}
    assert held is None  # an element merely holding an editor is no click's editor
    assert nothing_focused is None
    assert (refused, focused, kept, active) == ("refused", "focused", "kept", "ed")
    assert now["subtype"] == "node" and now["description"] == "div#ed"
    assert surface["subtype"] == "node" and surface["description"] == "div.view-lines"
    assert text == {"text": "one\n\ntwo"}  # innerText: paragraphs apart
    assert world_platform == platform
    assert whole is None  # the whole document is no widget a click aims within


READING_FUNCTIONS = """<!doctype html><title>Reading functions</title>
<form id="f"><input type="password" id="pw" value="hunter2secret"><p>Visible words</p></form>
<p id="hidden" style="display: none">Hidden words</p>
<div id="box" style="height: 100px; overflow: auto"><div style="height: 1000px">
  <span id="inner">inside</span></div></div>
<div style="height: 3000px"></div>
"""


async def test_page_functions_of_reading_and_waiting(tab: Tab, servers: Servers) -> None:
    with trio.fail_after(20):
        url = servers.put("/fn-reading", READING_FUNCTIONS)
        await tab.goto(url)
        query = json.loads(await tab.call("queryMatches", "#f, #pw", 5, 200, 30))
        bad_query = json.loads(await tab.call("queryMatches", "[", 5, 200, 500))
        html = json.loads(await tab.call("documentText", None, "html", 100_000))
        text = json.loads(await tab.call("documentText", "#f", "text", 7))
        no_match = json.loads(await tab.call("documentText", "#nope", "text", 10))
        second = await tab._evaluate(page_function("selectorMatch").call("p", 1), tab.ctx,
                                     False)
        beyond = json.loads(await tab.call("selectorMatch", "p", 5))
        bad = json.loads(await tab.call("selectorMatch", "[", 0))
        waits = [await tab.call("waitCondition", mode, arg) for mode, arg in (
            ("selector", "#pw"), ("selector", "#hidden"), ("selector", "#nope"),
            ("text", "Visible words"), ("text", "Hidden words"), ("gone", "Visible words"),
            ("gone", "Hidden words"))]
        bad_wait = json.loads(await tab.call("waitCondition", "selector", "["))
        ready = await tab.call("readyState")
        identity = json.loads(await tab.call("pageIdentity"))
        inner = await tab.on("#inner", "scrollState", "by", 0, 50)
        page = json.loads(await tab.call("pageScrollState", "to", None, 200))
        read = json.loads(await tab.call("pageScrollState", "read", None, None))
        drawn = await tab.call("twoFramesDrawn", await_promise=True)
    assert query["count"] == 2 and query["matches"][1]["value"] is None
    form = query["matches"][0]
    assert "hunter2secret" not in json.dumps(query) and form["truncated"] is True
    assert form["outerHTML"] == '<form id="f"><input type="pass'
    assert "bad" in bad_query
    assert html["text"].startswith("<!DOCTYPE html>\n<html>") and "hunter2" not in html["text"]
    assert 'id="pw" value=""' in html["text"]
    assert text == {"text": "Visible", "length": len("Visible words")}
    assert no_match == {"none": True}
    assert second["subtype"] == "node" and second["description"] == "p#hidden"
    assert beyond == {"count": 2} and "bad" in bad
    assert waits == [True, False, False, True, False, False, True]
    assert "bad" in bad_wait
    assert ready == "complete" and identity == [url, "Reading functions"]
    assert inner == {"page": False, "x": 0, "y": 50, "maxX": 0, "maxY": 900,
                     "vw": inner["vw"], "vh": 100}
    assert page["page"] is True and page["y"] == 200 and read["y"] == 200
    assert page["maxY"] > 3000 - page["vh"]
    assert drawn is True


async def test_page_functions_of_the_main_world(tab: Tab, servers: Servers) -> None:
    """boundedEval (the /eval size bound) and removeUnheldApis (egress containment) run in
    the page's own world."""
    with trio.fail_after(20):
        await tab.goto(servers.put("/fn-main", "<!doctype html><title>Main</title>"))
        fits = await tab.call("boundedEval", "var kept = 'é€😀'; kept", 100, "mk", False,
                              main=True)
        kept = await tab.page("kept")  # a var of the script became a global, as before
        too_big = await tab.call("boundedEval", "'x'.repeat(500)", 100, "mk", False,
                                 main=True)
        awaited = await tab.call("boundedEval", "Promise.resolve([1, 2])", 100, "mk", True,
                                 main=True, await_promise=True)
        before = await tab.page("typeof SharedWorker + ' ' + typeof RTCPeerConnection")
        await tab.call("removeUnheldApis", main=True)
        after = await tab.page("typeof SharedWorker + ' ' + typeof RTCPeerConnection + ' '"
                               " + ('serviceWorker' in navigator)")
    assert fits == "é€😀" and kept == "é€😀"
    assert too_big == {"mk": 500}
    assert awaited == [1, 2]
    assert before == "function function"
    assert after == "undefined undefined false"


SETTLING_FUNCTIONS = """<!doctype html><title>Settling functions</title>
<style>html { overflow-y: scroll } ::-webkit-scrollbar { width: 12px }</style>
<p id="p">start</p><script>window.ran = true;</script>
"""
#: Pages that run script on their own, each in a way the settling check must see.
SCRIPTED = {
    "script": "<p>x</p><script>window.ran = true;</script>",
    "svg script": "<svg><script>window.ran = true;</script></svg>",
    "handler": '<body onload="window.ran = true"><p>x</p></body>',
    "frame": '<iframe srcdoc="<p>inside</p>"></iframe>',
    "shadow root": '<div><template shadowrootmode="open"><p>in</p></template></div>',
}


async def test_a_document_that_runs_no_script_is_quiet_at_once(tab: Tab,
                                                               servers: Servers) -> None:
    """runsNoScript (settle.py): only a page with nothing that runs script on its own
    skips the quiet window (a page that cannot change itself is drawn once parsed)."""
    with trio.fail_after(20):
        await tab.goto(servers.put("/fn-static", "<!doctype html><title>s</title>"
                                   '<p>static <a href="javascript:void 0">link</a></p>'))
        static = await tab.call("runsNoScript")
        with trio.fail_after(5):  # (not the 60 s it asks for)
            quiet = await tab.call("domQuiet", 60_000, 60_000, await_promise=True)
        scripted = {}
        for what, body in SCRIPTED.items():
            await tab.goto(servers.put(f"/fn-scripted-{len(scripted)}",
                                       f"<!doctype html><title>s</title>{body}"))
            scripted[what] = await tab.call("runsNoScript")
    assert static is True and quiet is True
    assert scripted == dict.fromkeys(SCRIPTED, False), scripted


async def test_page_functions_of_settling_effects_and_capture(tab: Tab,
                                                              servers: Servers) -> None:
    """domQuiet (settle.py), taskQueueTurned (effects.py), scrollbarGutter (capture.py)
    in the browserd world; pageInfo (page.py) in the page's own."""
    with trio.fail_after(20):
        url = servers.put("/fn-settling", SETTLING_FUNCTIONS)
        await tab.goto(url)
        info = await tab.call("pageInfo", main=True)
        gutter = await tab.call("scrollbarGutter")
        await tab.page("document.documentElement.style.overflow = 'hidden'")
        no_gutter = await tab.call("scrollbarGutter")
        turned = await tab._evaluate(page_function("taskQueueTurned").call(), tab.ctx, True,
                                     await_promise=True)
        # The DOM changes every 20 ms, 10 times: quiet for 400 ms only after the last.
        await tab.page("window.changes = 0; const t = setInterval(() => {"
                       " document.getElementById('p').textContent = ++window.changes;"
                       " if (window.changes === 10) clearInterval(t); }, 20)")
        quiet = await tab.call("domQuiet", 400, 0, await_promise=True)
        changes = await tab.page("window.changes")
        observers = [await tab.world("typeof globalThis.__browserdQuiet"),
                     await tab.page("typeof globalThis.__browserdQuiet")]
        # A young document: quiet only once its load event is `youngMs` old.
        since_load = ("performance.now() - "
                      "performance.getEntriesByType('navigation')[0].loadEventEnd")
        young_ms = int(await tab.world(since_load)) + 300
        young = await tab.call("domQuiet", 10, young_ms, await_promise=True)
        aged = await tab.world(since_load)
        # A response the page draws from (fetch) counts as a change; an image does not:
        # quiet 400 ms after the fetch, but not 400 ms after the image (the DOM's change
        # just before it, 300 ms earlier, decides).
        loaded = ("(url, how) => new Promise(done => { if (how === 'fetch') fetch(url)"
                  ".then(r => r.text()).then(() => done(performance.now())); else {"
                  " const img = new Image(); img.onload = img.onerror = () =>"
                  " done(performance.now()); img.src = url; } })")
        ends: dict[str, tuple[float, float]] = {}
        for how in ("img", "fetch"):
            await tab.page(f"document.getElementById('p').textContent = '{how}'")
            end = (await tab._evaluate(f"({loaded})('{url}?slow=300&{how}', '{how}')", None, True,
                                       await_promise=True))["value"]
            assert await tab.call("domQuiet", 400, 0, await_promise=True) is True
            ends[how] = (end, await tab.world("performance.now()"))
    assert info == {"url": url, "title": "Settling functions", "status": 200}
    assert gutter == 12 and no_gutter == 0
    assert turned == {"type": "undefined"}
    assert quiet is True and changes == 10
    assert observers == ["object", "undefined"]  # kept in browserd's world only
    assert young is True and aged >= young_ms
    image_end, image_quiet = ends["img"]
    fetch_end, fetch_quiet = ends["fetch"]
    assert image_quiet < image_end + 400, ends  # the image did not hold it
    assert fetch_quiet >= fetch_end + 400, ends  # the fetch did
