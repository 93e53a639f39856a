"""Session records against real Chromium: record a form fill, read it, export it, replay it.

One module-scoped flow on a small form (text input, select, checkbox, submit button,
link), in a session of its own so no other test's calls land in the record.
"""

from __future__ import annotations

import html
import io
import json
import os
import zipfile
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import trio

from tests.conftest import add_route
from tests.integration.helpers import Session, html_route

pytestmark = pytest.mark.chromium

_FORM = """<!doctype html><html><head><title>&lt;script&gt;alert(1)&lt;/script&gt; Shop</title>
</head><body><form action="/records-done" method="get">
<label>Full name <input name="fullname"></label>
<label>Plan <select name="plan"><option value="free">Free</option>
<option value="pro">Pro</option></select></label>
<label><input type="checkbox" name="terms"> I agree</label>
<button type="submit">{button}</button></form>
<a href="/records-done">Elsewhere</a></body></html>"""

add_route("/records-form", html_route(_FORM.format(button="Pay")))
add_route("/records-form-renamed", html_route(_FORM.format(button="Submit order")))
add_route("/records-done", html_route("<!doctype html><title>done</title><p>Thanks</p>"))


@pytest.fixture
async def session(api: httpx.AsyncClient) -> AsyncIterator[Session]:
    r = await api.post("/sessions", json={"name": "records"})
    assert r.status_code == 200, r.text
    sid = r.json()["sessionId"]
    yield Session(api, sid)
    await api.delete(f"/sessions/{sid}")


async def _record_fill(s: Session, url: str) -> tuple[str, str]:
    """Record the form being filled on a tab of ``s``; (record id, tab)."""
    tab = await s.open_tab()
    await s.ok("/navigate", targetId=tab, url=url)
    started = await s.ok("/record/start", targetId=tab)
    record_id = started["record"]["id"]
    await s.ok("/navigate", targetId=tab, url=url)
    r = await s.get("/snapshot", targetId=tab, nodes="true")
    assert r.status_code == 200, r.text
    refs = {(n["role"], n["name"]): n["ref"] for n in r.json()["nodes"]}
    await s.ok("/type", targetId=tab, ref=refs[("textbox", "Full name")], text="Ada Lovelace")
    await s.ok("/select", targetId=tab, ref=refs[("combobox", "Plan")], values=["Pro"])
    await s.ok("/click", targetId=tab, ref=refs[("checkbox", "I agree")])
    await s.ok("/click", targetId=tab, ref=refs[("button", "Pay")])
    stopped = await s.ok("/record/stop")
    assert stopped["record"]["recording"] is False
    return record_id, tab


def _submitted(url: str) -> dict[str, list[str]]:
    parts = urlsplit(url)
    assert parts.path == "/records-done", url
    return parse_qs(parts.query)


async def test_a_recorded_fill_reads_back_exports_and_replays(session: Session, pages: Any,
                                                             api: httpx.AsyncClient) -> None:
    with trio.fail_after(60):
        record_id, _ = await _record_fill(session, pages.url("/records-form"))

        # JSON: every step, its target by role and name (looked up before it ran).
        r = await session.get(f"/records/{record_id}")
        assert r.status_code == 200, r.text
        record = r.json()
        kinds = [s["kind"] for s in record["steps"]]
        assert kinds == ["navigate", "type", "select", "click", "click"]
        assert all(s["ok"] for s in record["steps"])
        targets = [s["targets"].get("element") for s in record["steps"][1:]]
        assert [(t["role"], t["name"]) for t in targets] == [
            ("textbox", "Full name"), ("combobox", "Plan"), ("checkbox", "I agree"),
            ("button", "Pay")]
        assert all(t["ref"].startswith("e") for t in targets)
        last = record["steps"][-1]
        assert urlsplit(last["effects"]["navigated"]).path == "/records-done"
        assert urlsplit(last["url"]).path == "/records-done"
        for step in record["steps"]:
            for which in ("before", "after"):
                shot = step[which]
                assert shot is not None and 0 < shot["width"] <= 320, step
        png = await session.get(f"/records/{record_id}/shots/{last['after']['name']}")
        assert png.status_code == 200 and png.content[:2] == b"\xff\xd8"  # a JPEG
        assert len(png.content) < 60_000

        # Another session does not see it; the list of this one does.
        listing = (await session.get("/records")).json()["records"]
        assert record_id in [i["id"] for i in listing]
        assert (await api.get(f"/records/{record_id}")).status_code == 404

        # HTML: self-contained, the page's title escaped.
        page = await session.get(f"/records/{record_id}", format="html")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        text = page.text
        assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
        assert text.count("data:image/jpeg;base64,") == 10
        assert "http://" not in text.split("</title>")[0]  # nothing fetched from elsewhere
        assert "&ldquo;Pay&rdquo;" in text

        # The Python script repeats the fill in a Chromium of its own.
        code = (await session.get(f"/records/{record_id}", format="script",
                                  lang="python")).text
        assert 'page.get_by_role("button", name="Pay", exact=True).click()' in code
        assert "e1" not in code.split("def run")[1].split("\n\n\n")[0].replace("Free", "")
        final_url = await trio.to_thread.run_sync(_run_python_script, code)
        assert _submitted(final_url) == {"fullname": ["Ada Lovelace"], "plan": ["pro"],
                                         "terms": ["on"]}

        # Replay through browserd on a fresh tab of the session.
        fresh = await session.open_tab()
        replayed = await session.ok(f"/records/{record_id}/replay", targetId=fresh)
        assert replayed == {"ok": True, "recordId": record_id, "done": 5}, replayed
        url = (await session.ok("/eval", targetId=fresh, js="location.href"))["result"]
        assert _submitted(url) == {"fullname": ["Ada Lovelace"], "plan": ["pro"],
                                   "terms": ["on"]}

        r = await session.api.delete(f"/records/{record_id}", headers=session.headers)
        assert r.status_code == 200
        assert (await session.get(f"/records/{record_id}")).status_code == 404


def _run_python_script(code: str) -> str:
    """Run the generated script's ``run(page)`` with Python Playwright; the final URL."""
    from playwright.sync_api import sync_playwright

    namespace: dict[str, Any] = {"__name__": "recorded"}
    exec(compile(code, "recorded.py", "exec"), namespace)  # (our own export)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium")
        try:
            page = browser.new_page()
            page.set_default_timeout(10_000)
            namespace["run"](page)
            page.wait_for_url("**/records-done**")
            return str(page.url)
        finally:
            browser.close()


async def test_replay_on_a_changed_page_stops_where_the_target_is_missing(
        session: Session, pages: Any) -> None:
    with trio.fail_after(60):
        record_id, _ = await _record_fill(session, pages.url("/records-form"))
        fresh = await session.open_tab()
        # The recorded URL now serves the form with its button renamed.
        add_route("/records-form", html_route(_FORM.format(button="Submit order")))
        try:
            answer = await session.ok(f"/records/{record_id}/replay", targetId=fresh)
        finally:
            add_route("/records-form", html_route(_FORM.format(button="Pay")))
        assert answer["ok"] is False
        assert (answer["stoppedAt"], answer["done"]) == (4, 4), answer
        assert answer["step"]["targets"]["element"]["name"] == "Pay"
        assert answer["error"]["code"] == "NO_MATCH", answer
        # The steps before it ran: the field holds the name.
        typed = await session.ok("/eval", targetId=fresh,
                                 js="document.querySelector('input[name=fullname]').value")
        assert typed["result"] == "Ada Lovelace"
        await session.api.delete(f"/records/{record_id}", headers=session.headers)


async def test_starting_twice_is_a_conflict_and_stopping_none_is_404(session: Session) -> None:
    r = await session.post("/record/start")
    assert r.status_code == 200, r.text
    again = await session.post("/record/start")
    assert again.status_code == 409 and again.json()["recordId"] == r.json()["record"]["id"]
    assert (await session.post("/record/stop")).status_code == 200
    missing = await session.post("/record/stop")
    assert missing.status_code == 404



def _owner(service: Any) -> dict[str, str]:
    token = (service.home / "config" / "owner-token").read_text().strip()
    return {"Authorization": f"Bearer {token}"}


async def _mint(api: httpx.AsyncClient, service: Any, **body: Any) -> dict[str, Any]:
    body = {"name": f"rec-{os.urandom(4).hex()}", "scopes": ["read", "act"], **body}
    r = await api.post("/tokens", json=body, headers=_owner(service))
    assert r.status_code == 200, r.text
    minted: dict[str, Any] = r.json()
    return minted


async def test_a_record_holds_and_shows_only_its_own_tokens_calls(
        service: Any, api: httpx.AsyncClient, pages: Any) -> None:
    with trio.fail_after(30):
        a = await _mint(api, service, newSession=True)
        sid = a["sessions"][0]
        b = await _mint(api, service, sessions=[sid])
        as_a = {"Authorization": f"Bearer {a['token']}", "X-Browserd-Session": sid}
        as_b = {"Authorization": f"Bearer {b['token']}", "X-Browserd-Session": sid}
        r = await api.post("/tabs/open", json={"url": pages.url("/records-done")},
                           headers=as_b)
        assert r.status_code == 200, r.text
        tab_b = r.json()["targetId"]
        r = await api.post("/record/start", json={}, headers=as_a)
        assert r.status_code == 200, r.text
        record_id = r.json()["record"]["id"]
        assert r.json()["record"]["principal"] == a["name"]
        r = await api.post("/navigate", json={"targetId": tab_b, "url": pages.url(
            "/records-form")}, headers=as_b)
        assert r.status_code == 200, r.text
        # B may record on its own meanwhile; A's record is not B's to read, stop or delete.
        for method, path in (("GET", f"/records/{record_id}"),
                             ("GET", f"/records/{record_id}?format=html"),
                             ("POST", f"/records/{record_id}/replay"),
                             ("DELETE", f"/records/{record_id}")):
            r = await api.request(method, path, headers=as_b,
                                  json={} if method == "POST" else None)
            assert r.status_code == 404, (method, path, r.text)
        assert record_id not in [i["id"] for i in (await api.get(
            "/records", headers=as_b)).json()["records"]]
        assert (await api.post("/record/stop", json={}, headers=as_b)).status_code == 404
        r = await api.post("/record/stop", json={}, headers=as_a)
        assert r.status_code == 200 and r.json()["record"]["steps"] == 0, r.text
        # The person reads every record and deletes it.
        owner = _owner(service)
        r = await api.get("/records", headers=owner)
        assert r.status_code == 200 and record_id in [i["id"] for i in r.json()["records"]]
        r = await api.get(f"/records/{record_id}", headers=owner)
        assert r.status_code == 200 and r.json()["steps"] == [], r.text
        assert r.json()["untrusted"] == ["steps"]
        assert (await api.delete(f"/records/{record_id}", headers=owner)).status_code == 200
        for token in (a, b):
            await api.delete(f"/tokens/{token['name']}", headers=owner)


async def test_a_record_ends_with_its_session(api: httpx.AsyncClient, service: Any) -> None:
    r = await api.post("/sessions", json={"name": "records-ending"})
    assert r.status_code == 200, r.text
    sid = r.json()["sessionId"]
    r = await api.post("/record/start", json={}, headers={"X-Browserd-Session": sid})
    assert r.status_code == 200, r.text
    record_id = r.json()["record"]["id"]
    assert (await api.delete(f"/sessions/{sid}")).status_code == 200
    r = await api.get(f"/records/{record_id}", headers=_owner(service))
    assert r.status_code == 200 and r.json()["recording"] is False, r.text
    await api.delete(f"/records/{record_id}", headers=_owner(service))


_ODD = '<&"\\é' + os.urandom(3).hex()
add_route("/records-odd", html_route(f"<!doctype html><title>{html.escape(_ODD)}</title>"))


async def test_a_secret_stored_after_the_record_is_not_in_any_export(
        session: Session, service: Any, pages: Any) -> None:
    with trio.fail_after(30):
        tab = await session.open_tab()
        await session.ok("/record/start", targetId=tab)
        await session.ok("/navigate", targetId=tab, url=pages.url("/records-odd"))
        await session.ok("/record/stop")
        record_id = (await session.get("/records")).json()["records"][0]["id"]
        raw = await session.get(f"/records/{record_id}")
        assert raw.json()["steps"][0]["title"] == _ODD  # not a secret yet
        name = f"odd{os.urandom(3).hex()}"
        r = await session.api.put(f"/secrets/{name}", json={"value": _ODD},
                                  headers=_owner(service))
        assert r.status_code == 200, r.text
        try:
            for params in ({}, {"shots": "true"}, {"format": "html"},
                           {"format": "script", "lang": "python"},
                           {"format": "script", "lang": "typescript"}):
                r = await session.get(f"/records/{record_id}", **params)
                assert r.status_code == 200, (params, r.text)
                for form in (_ODD, json.dumps(_ODD)[1:-1], html.escape(_ODD)):
                    assert form not in r.text, (params, form)
                if params.get("format") != "script":  # a script has no page titles
                    assert f"secret:{name}" in r.text, params
            r = await session.get(f"/records/{record_id}", format="trace")
            assert r.status_code == 200, r.text
            with zipfile.ZipFile(io.BytesIO(r.content)) as trace:
                text = "".join(trace.read(n).decode("utf-8", "replace")
                               for n in trace.namelist() if not n.startswith("resources/"))
            for form in (_ODD, json.dumps(_ODD)[1:-1]):
                assert form not in text, ("trace", form)
            assert f"secret:{name}" in text
        finally:
            await session.api.delete(f"/secrets/{name}", headers=_owner(service))
            await session.api.delete(f"/records/{record_id}", headers=session.headers)
