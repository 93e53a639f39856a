"""Hostile page data never breaks the service (RELIABILITY S14).

A 64 KB page-controlled URL against a many-``**`` glob, lone UTF-16
surrogates in every kind of page text, oversized eval results and a
``beforeunload`` prompt: each gets a typed answer within its deadline, and
the service keeps answering meanwhile.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from tests.conftest import add_route
from tests.integration.helpers import html_route, navigate

pytestmark = pytest.mark.chromium

LONE = "a\\ud800b\\udfffc"  # as JavaScript source: two lone surrogates

SURROGATE_PAGE = f"""<!doctype html><html><head><title>t</title></head><body>
<h1 id="h">Heading</h1>
<button id="b">go</button>
<p id="p">para</p>
<input id="i" value="v">
<script>
const lone = '{LONE}';
document.title = 'Title ' + lone;
document.getElementById('p').textContent = 'Text ' + lone;
document.getElementById('h').textContent = 'Heading ' + lone;
document.getElementById('b').setAttribute('aria-label', 'Label ' + lone);
document.getElementById('i').value = 'Value ' + lone;
console.log('Console ' + lone);
console.error(new Error('Thrown ' + lone).message);
</script></body></html>"""

BEFOREUNLOAD_PAGE = """<!doctype html><html><body>
<button id="b" onclick="window.armed = true">arm</button>
<script>
window.addEventListener('beforeunload', (e) => { e.preventDefault(); e.returnValue = 'stay'; });
</script></body></html>"""

add_route("/hostile/surrogates.html", html_route(SURROGATE_PAGE))
add_route("/hostile/beforeunload.html", html_route(BEFOREUNLOAD_PAGE))
add_route("/hostile/plain.html", html_route("<!doctype html><title>plain</title><p>plain</p>"))

FFFD = "\ufffd"
REPAIRED = f"a{FFFD}b{FFFD}c"


async def ok_json(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


# -- bounded-time URL globs ---------------------------------------------------------


async def test_pathological_glob_on_a_64kb_url_answers_in_time_and_healthz_stays_up(
        api, tab, pages):
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/hostile/plain.html"))
        long_path = "/" + "x/" * 32_000 + "end"  # 64 KB, "/x/" everywhere, no "/y/"
        r = await api.post("/eval", json={
            "targetId": tab, "js": f"history.replaceState(null, '', {long_path!r}); "
                                   "location.href.length"})
        assert (await ok_json(r))["result"] > 64_000

        healthz: list[int] = []
        finished = trio.Event()

        async def probe() -> None:
            while not finished.is_set():
                h = await api.get("/healthz", timeout=5)
                healthz.append(h.status_code)
                await trio.sleep(0.05)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(probe)
            r = await api.post("/wait", json={
                "targetId": tab, "url": "**/x/**/y/**/x/**/y/**/x/**/done", "timeoutMs": 1500})
            # The page changes its URL while the wait runs: each change is matched again.
            finished.set()
        assert r.status_code == 504, r.text
        assert r.json()["code"] == "TIMEOUT"
        assert len(healthz) >= 3 and set(healthz) == {200}

        r = await api.post("/wait", json={"targetId": tab, "url": "http://*/**/x/**/end",
                                          "timeoutMs": 5000})
        assert (await ok_json(r))["ok"] is True


async def test_url_wait_sees_a_long_url_change_while_it_waits(api, tab, pages):
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/hostile/plain.html"))
        long_path = "/" + "y/" * 20_000 + "done"
        # (A wait holds its tab, so the page changes its URL by itself, later.)
        r = await api.post("/eval", json={
            "targetId": tab,
            "js": f"setTimeout(() => history.pushState(null, '', {long_path!r}), 300); 1"})
        await ok_json(r)
        r = await api.post("/wait", json={"targetId": tab, "url": "**/y/**/y/**/done",
                                          "timeoutMs": 10000})
        assert (await ok_json(r))["ok"] is True


# -- lone surrogates ----------------------------------------------------------------


async def test_lone_surrogates_in_page_text_become_replacement_characters(api, tab, pages):
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/hostile/surrogates.html"))

        r = await api.post("/eval", json={"targetId": tab, "js": "document.title"})
        assert (await ok_json(r))["result"] == f"Title {REPAIRED}"
        r = await api.post("/eval", json={"targetId": tab,
                                          "js": "({k: document.title, [document.title]: 1})"})
        assert (await ok_json(r))["result"] == {"k": f"Title {REPAIRED}", f"Title {REPAIRED}": 1}

        snap = await ok_json(await api.get("/snapshot", params={"targetId": tab}))
        assert f"Label {REPAIRED}" in snap["text"] and f"Heading {REPAIRED}" in snap["text"]
        assert snap["title"] == f"Title {REPAIRED}"
        found = await ok_json(await api.get("/find", params={"targetId": tab,
                                                            "text": "Heading"}))
        assert f"Heading {REPAIRED}" in str(found["matches"])
        for fmt in ("read", "domSnapshot"):
            body = await ok_json(await api.get("/snapshot", params={"targetId": tab,
                                                                   "format": fmt}))
            assert REPAIRED in str(body), fmt

        dom = await ok_json(await api.get("/dom", params={"targetId": tab}))
        assert f"Text {REPAIRED}" in dom["text"]
        text = await ok_json(await api.get("/dom", params={"targetId": tab, "format": "text"}))
        assert f"Text {REPAIRED}" in text["text"]

        query = await ok_json(await api.get("/query", params={"targetId": tab,
                                                             "selector": "#p, #i, #b"}))
        shown = str(query["matches"])
        assert f"Text {REPAIRED}" in shown and f"Value {REPAIRED}" in shown

        console = await ok_json(await api.get("/console", params={"targetId": tab}))
        texts = [m["text"] for m in console["messages"]]
        assert f"Console {REPAIRED}" in texts and f"Thrown {REPAIRED}" in texts

        tabs = await ok_json(await api.get("/tabs"))
        assert f"Title {REPAIRED}" in [t["title"] for t in tabs["tabs"]]

        # The text wait and the ref actions work on such text too.
        r = await api.post("/wait", json={"targetId": tab, "text": f"Text a{FFFD}",
                                          "timeoutMs": 2000})
        assert r.status_code == 504  # the page holds a lone surrogate, not U+FFFD
        r = await api.post("/click", json={"targetId": tab, "text": "Heading a"})
        assert r.status_code == 200, r.text


# -- eval_max_bytes -----------------------------------------------------------------


def peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


async def test_an_oversized_eval_result_is_refused_without_crossing_cdp(api, tab, pages, service):
    with trio.fail_after(90):
        await navigate(api, tab, pages.url("/hostile/plain.html"))
        before = peak_rss_kib(service.pid)
        r = await api.post("/eval", json={"targetId": tab, "js": "'x'.repeat(64 * 1024 * 1024)",
                                          "timeoutMs": 30000})
        assert r.status_code == 422, r.text
        body = r.json()
        assert body["code"] == "RESULT_TOO_LARGE"
        assert body["limit"] == 8 * 1024 * 1024 and body["bytes"] > body["limit"]
        # 64 MiB never reached the service: its peak memory did not grow by that much.
        assert peak_rss_kib(service.pid) - before < 32 * 1024

        r = await api.post("/eval", json={
            "targetId": tab, "js": "Array.from({length: 300000}, (_, i) => 'item ' + i)",
            "timeoutMs": 30000})
        assert r.status_code == 200, r.text  # ~3.5 MB: under the limit
        r = await api.post("/eval", json={
            "targetId": tab, "js": "Array.from({length: 900000}, (_, i) => 'item ' + i)",
            "timeoutMs": 30000})
        assert r.status_code == 422 and r.json()["code"] == "RESULT_TOO_LARGE", r.text
        r = await api.post("/eval", json={
            "targetId": tab, "js": "new Promise(r => setTimeout(() => r('é'.repeat(5e6)), 10))",
            "await": True, "timeoutMs": 30000})
        assert r.status_code == 422, r.text  # 5 M characters, 10 MB of UTF-8


@pytest.mark.parametrize(("js", "expected"), [
    ("1 + 1", 2),
    ("undefined", None),
    ("NaN", "NaN"),
    ("-0", "-0"),
    ("({a: [1, 'x', null], b: undefined})", {"a": [1, "x", None]}),
    ("var hostileKept = 41; hostileKept + 1", 42),
    ("function hostileFn() { return 7 } hostileFn()", 7),
    ("if (true) { 'completion' }", "completion"),
    ("document.body", {}),
])
async def test_eval_results_keep_their_shape(api, tab, js, expected):
    with trio.fail_after(20):
        r = await api.post("/eval", json={"targetId": tab, "js": js})
        assert (await ok_json(r))["result"] == expected


async def test_eval_errors_keep_their_shape(api, tab):
    with trio.fail_after(20):
        r = await api.post("/eval", json={"targetId": tab, "js": "var hostileKept = 41"})
        assert (await ok_json(r))["result"] is None
        r = await api.post("/eval", json={"targetId": tab, "js": "hostileKept"})
        assert (await ok_json(r))["result"] == 41  # var declarations stay global
        r = await api.post("/eval", json={"targetId": tab, "js": "throw new TypeError('nope')"})
        assert r.status_code == 400 and "TypeError: nope" in r.json()["error"]
        r = await api.post("/eval", json={"targetId": tab, "js": "Promise.reject(new Error('rej'))",
                                          "await": True})
        assert r.status_code == 400 and "rej" in r.json()["error"]
        r = await api.post("/eval", json={"targetId": tab, "js": "syntax error here"})
        assert r.status_code == 400 and "SyntaxError" in r.json()["error"]
        r = await api.post("/eval", json={"targetId": tab, "js": "while (true) {}",
                                          "timeoutMs": 500})
        assert r.status_code == 504, r.text
        r = await api.post("/eval", json={"targetId": tab, "js": "2 * 21"})
        assert (await ok_json(r))["result"] == 42
        r = await api.post("/eval", json={"targetId": tab, "js": "alert('hi'); 1"})
        assert r.status_code == 409 and r.json()["dialog"]["message"] == "hi", r.text
        r = await api.post("/dialog", json={"targetId": tab, "accept": True})
        assert r.status_code == 200, r.text
        r = await api.post("/eval", json={"targetId": tab, "js": "'after'"})
        assert (await ok_json(r))["result"] == "after"


CSP_PAGE = "<!doctype html><title>csp</title><p>strict</p>"


def csp_route(req: Any) -> None:
    data = CSP_PAGE.encode()
    req.send_response(200)
    req.send_header("Content-Type", "text/html; charset=utf-8")
    req.send_header("Content-Security-Policy", "script-src 'none'")
    req.send_header("Content-Length", str(len(data)))
    req.end_headers()
    req.wfile.write(data)


add_route("/hostile/csp.html", csp_route)


async def test_eval_works_under_a_strict_csp(api, tab, pages):
    with trio.fail_after(20):
        await navigate(api, tab, pages.url("/hostile/csp.html"))
        r = await api.post("/eval", json={"targetId": tab, "js": "document.title + '!'"})
        assert (await ok_json(r))["result"] == "csp!"


# -- beforeunload ------------------------------------------------------------------


async def test_beforeunload_answers_dialog_open_at_once(api, tab, pages):
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/hostile/beforeunload.html"))
        # Chromium shows the prompt only after a real user gesture on the page.
        r = await api.post("/click", json={"targetId": tab, "selector": "#b"})
        assert r.status_code == 200, r.text
        away = pages.url("/hostile/plain.html")
        r = await api.post("/navigate", json={"targetId": tab, "url": away, "timeoutMs": 20000})
        assert r.status_code == 409, r.text
        body = r.json()
        assert body["code"] == "DIALOG_OPEN" and body["dialog"]["type"] == "beforeunload"
        r = await api.post("/dialog", json={"targetId": tab, "accept": True})
        assert r.status_code == 200, r.text
        for _ in range(100):
            r = await api.get("/tabs")
            if any(t["url"].endswith("/hostile/plain.html") for t in r.json()["tabs"]):
                break
            await trio.sleep(0.05)
        else:
            raise AssertionError("the navigation did not go on after the dialog was accepted")


# -- secrets in URLs never reach a log (S15) ----------------------------------------------


async def test_urls_with_secrets_leave_no_trace_in_any_log(api, tab, pages, service):
    secrets = ("SECRETUSER", "SECRETPASS", "SECRETQUERY", "SECRETFRAGMENT")
    port = pages.base_url.rsplit(":", 1)[1]
    secret_url = (f"http://SECRETUSER:SECRETPASS@127.0.0.1:{port}/hostile/plain.html"
                  "?token=SECRETQUERY#access_token=SECRETFRAGMENT")
    unreachable = ("http://SECRETUSER:SECRETPASS@127.0.0.1:1/x?token=SECRETQUERY"
                   "#access_token=SECRETFRAGMENT")
    with trio.fail_after(60):
        r = await api.post("/navigate", json={"targetId": tab, "url": secret_url})
        assert r.status_code == 200, r.text
        r = await api.post("/navigate", json={"targetId": tab, "url": unreachable})
        assert r.status_code == 400, r.text  # BAD_URL, its message names the URL
        r = await api.post("/tabs/open", json={"url": secret_url})
        assert r.status_code == 200, r.text
        opened = r.json()["targetId"]
        await api.post("/tabs/close", json={"targetId": opened})
        r = await api.post("/wait", json={"targetId": tab, "url": "**/never?token=SECRETQUERY",
                                          "timeoutMs": 200})
        assert r.status_code == 504
        r = await api.post("/navigate", json={"targetId": tab, "url": "data:text/html,SECRETPASS"})
        assert r.status_code == 403
    logs = [*sorted((service.home / "logs").glob("*.log*")), service.log_path]
    audit = (service.home / "logs" / "audit.log").read_text()
    assert f"url=http://127.0.0.1:{port}/hostile/plain.html" in audit  # the URL, cut
    for path in logs:
        text = path.read_text(errors="replace")
        for secret in secrets:
            assert secret not in text, f"{secret} in {path.name}"
