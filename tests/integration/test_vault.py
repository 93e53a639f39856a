"""The vault (S21): a secret reaches the page and nowhere the agent can read.

The person stores a secret with the owner token; an agent types it by name
(``/type {secret}``, ``/login``); then every place the agent can look —
answers of type, snapshot, find, dom, eval, console, network bodies, HAR,
events, errors, the audit and service logs — holds ``«secret:NAME»`` and never
the value. A secret bound to another origin is refused.
"""

from __future__ import annotations

import json
import os
from typing import Any

import httpx
import pytest
import trio

from tests.conftest import PageServer, ServiceInfo, add_route
from tests.integration.helpers import html_route, js

pytestmark = pytest.mark.chromium

VALUE = "hunter2-S3cr3t-" + os.urandom(4).hex()
RECEIVED: list[str] = []

FORM = """<!doctype html><title>login</title>
<form method="post" action="/vault/submit">
  <label>User <input name="user" type="text" autocomplete="username"></label>
  <label>Password <input name="pass" type="password"></label>
  <label>Note <input id="note" name="note" aria-label="note"></label>
  <button>Sign in</button>
</form>
<script>
document.getElementById('note').addEventListener('input', e => {
  console.log('note is ' + e.target.value);
  fetch('/vault/echo', {method: 'POST', body: e.target.value});
  document.title = 'typed ' + e.target.value;
});
</script>"""


def _submit(req: Any) -> None:
    body = req.rfile.read(int(req.headers.get("Content-Length") or 0)).decode()
    RECEIVED.append(body)
    fields = dict(p.split("=", 1) for p in body.split("&") if "=" in p)
    from urllib.parse import unquote_plus

    echo = unquote_plus(fields.get("pass", ""))
    html_route(f"<!doctype html><title>welcome</title><p>you sent {echo}</p>")(req)


def _echo(req: Any) -> None:
    body = req.rfile.read(int(req.headers.get("Content-Length") or 0))
    RECEIVED.append(body.decode())
    req.send_response(200)
    req.send_header("Content-Type", "text/plain")
    req.send_header("Content-Length", str(len(body)))
    req.end_headers()
    req.wfile.write(body)


add_route("/vault/form", html_route(FORM))
add_route("/vault/submit", _submit)
add_route("/vault/echo", _echo)


def owner(service: ServiceInfo) -> dict[str, str]:
    token = (service.home / "config" / "owner-token").read_text().strip()
    return {"Authorization": f"Bearer {token}"}


async def store(api: httpx.AsyncClient, service: ServiceInfo, name: str, **body: Any) -> None:
    r = await api.put(f"/secrets/{name}", json={"value": VALUE, **body}, headers=owner(service))
    assert r.status_code == 200 and VALUE not in r.text, r.text


async def test_a_typed_secret_reaches_the_page_and_no_answer_or_log(
        service: ServiceInfo, api: httpx.AsyncClient, pages: PageServer, tab: str) -> None:
    origin = pages.url("/").rstrip("/")
    await store(api, service, "site", origin=origin, username="alice")
    # The agent cannot read the vault, nor write it.
    r = await api.get("/secrets")
    assert r.status_code == 403 and r.json()["code"] == "OWNER_ONLY", r.text
    r = await api.get("/secrets", headers=owner(service))
    assert [s["name"] for s in r.json()["secrets"]] == ["site"] and VALUE not in r.text
    r = await api.post("/navigate", json={"targetId": tab, "url": pages.url("/vault/form")})
    assert r.status_code == 200, r.text
    await api.get("/network", params={"targetId": tab})  # recording starts with the first read
    r = await api.post("/type", json={"targetId": tab, "selector": "#note", "secret": "site"})
    assert r.status_code == 200, r.text
    answers = [r.text]
    with trio.fail_after(10):
        while not any(VALUE in x for x in RECEIVED):
            await trio.sleep(0.05)  # the page's fetch carried the value to the server
    for method, path, params in (
            ("GET", "/snapshot", {"targetId": tab}), ("GET", "/find", {"targetId": tab,
                                                                        "role": "textbox"}),
            ("GET", "/dom", {"targetId": tab}), ("GET", "/console", {"targetId": tab}),
            ("GET", "/tabs", {}), ("GET", "/network", {"targetId": tab})):
        r = await api.request(method, path, params=params)
        assert r.status_code == 200, (path, r.text)
        answers.append(r.text)
    value = await js(api, tab, "document.getElementById('note').value")
    assert value == "«secret:site»", value
    requests = (await api.get("/network", params={"targetId": tab})).json()["requests"]
    echo = next(q for q in requests if q["url"].endswith("/vault/echo"))
    r = await api.get(f"/network/{echo['id']}", params={"targetId": tab})
    answers.append(r.text)
    r = await api.post("/network/har", json={"targetId": tab, "bodies": True})
    assert r.status_code == 200, r.text
    har = await api.get(r.json()["mediaUrl"])
    answers.append(har.text)
    # An error that would quote the page: the title (typed VALUE) in a failed wait.
    r = await api.post("/wait", json={"targetId": tab, "url": "**/never", "timeoutMs": 100})
    answers.append(r.text)
    for text in answers:
        assert VALUE not in text
    assert any("«secret:site»" in text for text in answers)
    # /login types the username and the password, submits; the server receives both.
    r = await api.post("/navigate", json={"targetId": tab, "url": pages.url("/vault/form")})
    r = await api.post("/login", json={"targetId": tab, "name": "site"})
    assert r.status_code == 200 and r.json()["filled"] == ["username", "password"], r.text
    with trio.fail_after(10):
        while not any("user=alice" in x and "pass=" in x for x in RECEIVED):
            await trio.sleep(0.05)
    submitted = next(x for x in RECEIVED if "user=alice" in x)
    from urllib.parse import unquote_plus

    assert unquote_plus(submitted.split("pass=")[1].split("&")[0]) == VALUE
    await trio.sleep(0.5)
    r = await api.get("/snapshot", params={"targetId": tab})
    assert "«secret:site»" in r.text and VALUE not in r.text, r.text
    for name in ("audit.log", "browserd.log"):
        log = (service.home / "logs" / name).read_text(errors="replace")
        assert VALUE not in log, name
    assert VALUE not in service.log_text()


async def test_a_secret_is_typed_only_on_its_origin_and_only_with_the_scope(
        service: ServiceInfo, api: httpx.AsyncClient, pages: PageServer,
        other_origin: PageServer, tab: str) -> None:
    await store(api, service, "elsewhere", origin="https://accounts.example.com")
    r = await api.post("/navigate", json={"targetId": tab, "url": pages.url("/vault/form")})
    assert r.status_code == 200, r.text
    r = await api.post("/type", json={"targetId": tab, "selector": "#note",
                                      "secret": "elsewhere"})
    assert r.status_code == 403 and r.json()["code"] == "SECRET_ORIGIN", r.text
    assert await js(api, tab, "document.getElementById('note').value") == ""
    r = await api.post("/type", json={"targetId": tab, "selector": "#note", "secret": "nope"})
    assert r.status_code == 404 and r.json()["code"] == "SECRET_NOT_FOUND", r.text
    r = await api.post("/type", json={"targetId": tab, "selector": "#note", "text": "a",
                                      "secret": "elsewhere"})
    assert r.status_code == 400, r.text
    minted = await api.post("/tokens", headers=owner(service),
                            json={"name": f"nosecrets-{os.urandom(3).hex()}",
                                  "scopes": ["read", "act"]})
    headers = {"Authorization": f"Bearer {minted.json()['token']}"}
    for path, body in (("/type", {"selector": "#note", "secret": "elsewhere"}),
                       ("/login", {"name": "elsewhere"}),
                       ("/act", {"actions": [{"kind": "type", "selector": "#note",
                                              "secret": "elsewhere"}]})):
        r = await api.post(path, json={"targetId": tab, **body}, headers=headers)
        assert r.status_code == 403 and r.json()["scope"] == "secrets", (path, r.text)
    r = await api.delete("/secrets/elsewhere", headers=owner(service))
    assert r.status_code == 200, r.text
    assert json.loads((await api.get("/secrets", headers=owner(service))).text)["secrets"] \
        == [s for s in (await api.get("/secrets", headers=owner(service))).json()["secrets"]
            if s["name"] != "elsewhere"]
