"""/query, /dom and /console through the HTTP API."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import trio

from tests.conftest import PageServer
from tests.integration.helpers import navigate

pytestmark = pytest.mark.chromium

SECRET = "hunter2-secret"


async def get(api: httpx.AsyncClient, path: str, **params: Any) -> dict[str, Any]:
    r = await api.get(path, params=params)
    assert r.status_code == 200, r.text
    assert SECRET not in r.text
    body: dict[str, Any] = r.json()
    return body


async def test_query_matches(api: httpx.AsyncClient, tab: str, pages: PageServer) -> None:
    with trio.fail_after(30):
        await navigate(api, tab, pages.url("/snap_form.html"))
        body = await get(api, "/query", targetId=tab, selector="input")
        assert body["count"] == 3
        email, password, remember = body["matches"]
        assert email == {
            "index": 0, "tag": "input", "id": "email", "className": "", "text": "",
            "value": "ada@example.test", "href": None, "truncated": False,
            "outerHTML": '<input id="email" name="email" type="email" value="ada@example.test">',
        }
        assert password["id"] == "pw" and password["value"] is None
        assert 'type="password"' in password["outerHTML"]
        assert remember["index"] == 2
        link = (await get(api, "/query", targetId=tab, selector="p.help a"))["matches"][0]
        assert link["tag"] == "a" and link["text"] == "Forgot password?"
        assert link["href"] == pages.url("/snap_help.html")
        para = (await get(api, "/query", targetId=tab, selector=".help"))["matches"][0]
        assert para["className"] == "help"
        assert para["text"] == "Trouble signing in? Forgot password?"
        # POST takes the same fields as a body.
        r = await api.post("/query", json={"targetId": tab, "selector": "input", "limit": 1})
        assert r.status_code == 200, r.text
        assert r.json()["count"] == 3 and len(r.json()["matches"]) == 1
        none = await get(api, "/query", targetId=tab, selector="table")
        assert none["count"] == 0 and none["matches"] == []


async def test_query_truncates_and_validates(api: httpx.AsyncClient, tab: str,
                                             pages: PageServer) -> None:
    with trio.fail_after(30):
        await navigate(api, tab, pages.url("/snap_form.html"))
        long_text = "word " * 200
        r = await api.post("/eval", json={
            "targetId": tab,
            "js": f"document.body.insertAdjacentHTML('beforeend', "
                  f"'<div id=\"long\">{long_text}</div>')"})
        assert r.status_code == 200, r.text
        match = (await get(api, "/query", targetId=tab, selector="#long"))["matches"][0]
        assert len(match["text"]) == 200 and len(match["outerHTML"]) == 500
        assert match["truncated"] is True
        r = await api.get("/query", params={"targetId": tab, "selector": "input[["})
        assert r.status_code == 400 and r.json()["code"] == "BAD_REQUEST"
        r = await api.get("/query", params={"targetId": tab})
        assert r.status_code == 400 and r.json()["field"] == "selector"
        r = await api.get("/query", params={"targetId": tab, "selector": "a", "limit": "501"})
        assert r.status_code == 400


async def test_page_scripts_cannot_interfere(api: httpx.AsyncClient, tab: str,
                                             pages: PageServer) -> None:
    with trio.fail_after(30):
        await navigate(api, tab, pages.url("/snap_patched.html"))
        body = await get(api, "/query", targetId=tab, selector="p.item")
        assert [m["text"] for m in body["matches"]] == ["one", "two"]
        text = await get(api, "/dom", targetId=tab, format="text")
        assert text["text"].split() == ["one", "two"]
        html = await get(api, "/dom", targetId=tab, selector="p.item")
        assert html["text"] == '<p class="item">one</p>'


async def test_dom_html_and_text(api: httpx.AsyncClient, tab: str, pages: PageServer) -> None:
    with trio.fail_after(30):
        await navigate(api, tab, pages.url("/snap_form.html"))
        # The password typed into the field is never in the HTML either.
        r = await api.post("/eval", json={
            "targetId": tab, "js": f"document.getElementById('pw').value = '{SECRET}-typed'"})
        assert r.status_code == 200
        doc = await get(api, "/dom", targetId=tab)
        assert doc["format"] == "html" and doc["truncated"] is False
        assert doc["text"].startswith("<!DOCTYPE html>\n<html>")
        assert "<h1>Sign in</h1>" in doc["text"]
        form = await get(api, "/dom", targetId=tab, selector="#login")
        assert form["text"].startswith('<form id="login">') and form["text"].endswith("</form>")
        text = await get(api, "/dom", targetId=tab, format="text")
        assert "Trouble signing in? Forgot password?" in text["text"]
        assert "Hidden button" not in text["text"] and "<" not in text["text"]
        cut = await get(api, "/dom", targetId=tab, maxChars=50)
        assert cut["truncated"] is True and cut["text"] == doc["text"][:50]
        r = await api.post("/dom", json={"targetId": tab, "format": "text", "selector": "h1"})
        assert r.status_code == 200 and r.json()["text"] == "Sign in"
        r = await api.get("/dom", params={"targetId": tab, "selector": "#missing"})
        assert r.status_code == 404 and r.json()["code"] == "NO_MATCH"
        r = await api.get("/dom", params={"targetId": tab, "format": "pdf"})
        assert r.status_code == 400


async def test_console_levels_and_clear(api: httpx.AsyncClient, tab: str,
                                        pages: PageServer) -> None:
    with trio.fail_after(30):
        await navigate(api, tab, pages.url("/snap_form.html"))
        everything: list[dict[str, Any]] = []
        while len(everything) < 5:  # console events arrive asynchronously
            everything = (await get(api, "/console", targetId=tab))["messages"]
            await trio.sleep(0.02)
        assert [(m["level"], m["text"]) for m in everything] == [
            ("log", "form ready"), ("info", "info line"), ("warn", "careful"),
            ("error", "broken thing"), ("debug", "debug detail")]
        assert everything[0]["url"] == pages.url("/snap_form.html")
        assert everything[0]["source"] == "console"
        warn = await get(api, "/console", targetId=tab, level="warn")
        assert [m["text"] for m in warn["messages"]] == ["careful", "broken thing"]
        r = await api.post("/console", json={"targetId": tab, "level": "error", "clear": True})
        assert r.status_code == 200
        assert [m["text"] for m in r.json()["messages"]] == ["broken thing"]
        assert (await get(api, "/console", targetId=tab))["messages"] == []
        r = await api.post("/eval", json={"targetId": tab, "js": "console.error('later')"})
        assert r.status_code == 200
        later: list[dict[str, Any]] = []
        while not later:
            later = (await get(api, "/console", targetId=tab))["messages"]
            await trio.sleep(0.02)
        assert [m["text"] for m in later] == ["later"]
        r = await api.get("/console", params={"targetId": tab, "level": "loud"})
        assert r.status_code == 400
