"""The CLI as people type it, against the shared service (one subprocess per command).

``select REF VALUE``, ``upload REF FILE``, ``find ROLE NAME``, options after
the command (and ``--target`` before it), text (not JSON) from the commands
people found printing JSON, hints in CLI words, download id prefixes, the
grouped help, ``--version``, and a token that is not the service's. The
page is served by ``add_route`` (paths prefixed ``/habits_``); set-up and
checks go through the API, so only the commands under test are subprocesses.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import orjson
import pytest
import trio

from browserd import __version__
from tests.conftest import PageServer, ServiceInfo, add_route
from tests.integration.helpers import html_route, js, ref_of
from tests.integration.test_cli import cli, fails, ok

pytestmark = pytest.mark.chromium

FORM_HTML = b"""<!doctype html>
<html><head><title>Habits</title></head>
<body><h1>Order</h1>
<label>Colour <select id="colour"><option>Red</option><option>Green</option></select></label>
<label>Photo <input type="file" id="photo"></label>
<label>Email <input type="email"></label>
<button>Continue</button>
<a id="get" href="/habits_file.csv" download="list.csv">list</a>
</body></html>
"""


def csv_route(req: object) -> None:
    data = b"name,qty\nbolt,3\n"
    req.send_response(200)  # type: ignore[attr-defined]
    req.send_header("Content-Type", "text/csv")  # type: ignore[attr-defined]
    req.send_header("Content-Length", str(len(data)))  # type: ignore[attr-defined]
    req.end_headers()  # type: ignore[attr-defined]
    req.wfile.write(data)  # type: ignore[attr-defined]


@pytest.fixture
async def form_tab(service: ServiceInfo, api: httpx.AsyncClient, pages: PageServer):
    add_route("/habits_form.html", html_route(FORM_HTML))
    add_route("/habits_file.csv", csv_route)
    r = await api.post("/tabs/open", json={"url": pages.url("/habits_form.html")})
    assert r.status_code == 200, r.text
    target = r.json()["targetId"]
    yield target
    await api.post("/tabs/close", json={"targetId": target})


async def test_select_upload_and_find_as_people_type_them(
        service: ServiceInfo, api: httpx.AsyncClient, form_tab: str) -> None:
    target = form_tab
    with trio.fail_after(40):
        colour = await ref_of(api, target, "combobox", "Colour")
        run = await ok(service, "select", colour, "Green", "--target", target)
        assert run.out == "ok\nselected: Green\n", run.out
        assert await js(api, target, "document.getElementById('colour').value") == "Green"

        uploads = service.home / "data" / "uploads"
        uploads.mkdir(parents=True, exist_ok=True)
        photo = uploads / "habits-photo.txt"
        photo.write_text("not really a photo")
        file_input = await ref_of(api, target, "button", "Photo")
        await ok(service, "upload", file_input, str(photo), "--target", target)
        assert await js(api, target, "document.getElementById('photo').files[0].name") == \
            "habits-photo.txt"

        # `find textbox` is the role, not the word; `find button Continue` role and name.
        run = await ok(service, "find", "textbox", "--target", target)
        assert re.match(r'\[e\d+\] textbox "Email"', run.out), run.out
        assert run.out.endswith("1 match(es)\n"), run.out
        # Options after the command, --target before it (a unique prefix).
        found = (await ok(service, "--target", target[:8], "find", "button", "Continue",
                          "--json")).json()
        assert [(m["role"], m["name"]) for m in found["matches"]] == [("button", "Continue")]


async def test_commands_people_found_printing_json_print_text(
        service: ServiceInfo, api: httpx.AsyncClient, form_tab: str, tmp_path: Path) -> None:
    target = form_tab
    with trio.fail_after(40):
        assert (await ok(service, "healthz")).out == "ok (browser open)\n"
        run = await ok(service, "handoff", "--reason", "log in for me", "--target", target)
        assert run.out.startswith(f"tab {target} handed to a person: 'log in for me'"), run.out
        run = await fails(service, "wait", "--handoff", "--timeout-ms", "100", "--target", target)
        assert "is still active" in run.err, run.err
        run = await ok(service, "handoff-delete", "--target", target)
        assert run.out == f"handoff of tab {target} withdrawn\n", run.out
        listed = (await ok(service, "cookies", "list", "--json")).json()  # --json, nested
        assert isinstance(listed["cookies"], list)

        before = {d["id"] for d in (await api.get("/downloads")).json()["downloads"]}
        r = await api.post("/click", json={"targetId": target, "selector": "#get"})
        assert r.status_code == 200, r.text
        while True:  # a new download, completed (the effects may answer before it began)
            records = (await api.get("/downloads")).json()["downloads"]
            done = [d["id"] for d in records
                    if d["id"] not in before and d["state"] == "completed"]
            if done:
                download_id = done[0]
                break
            await trio.sleep(0.05)
        out = tmp_path / "list.csv"
        run = await ok(service, "download", download_id[:8], "--out", str(out))
        assert run.out == f"wrote 16 bytes to {out}\n", run.out
        assert out.read_bytes() == b"name,qty\nbolt,3\n"


async def test_help_version_hints_and_a_token_that_is_not_the_services(
        service: ServiceInfo, tmp_path: Path) -> None:
    with trio.fail_after(30):
        assert (await ok(service, "--version")).out.strip() == f"browserd {__version__}"
        text = (await ok(service, "--help")).out
        for title in ("Service:", "Tabs:", "Reading:", "Acting:", "Files:", "State:",
                      "Network:", "People and tokens:"):
            assert f"\n{title}\n" in text, title
        assert "``" not in text and ":mod:" not in text

        # The service's hint speaks HTTP ("list tabs with GET /tabs"); the CLI's, commands.
        run = await fails(service, "close", "zzzzzzzz")
        assert "hint: list tabs with browserd tabs" in run.err, run.err
        error = orjson.loads((await fails(service, "close", "zzzzzzzz", "--json")).err)
        assert error["hint"] == "list tabs with GET /tabs"  # scripts get the service's words

        other = tmp_path / "other-home"
        (other / "config").mkdir(parents=True)
        (other / "config" / "token").write_text("t" * 43)
        run = await cli(service, "status", home=other)
        assert run.rc == 1 and run.out == "", str(run)
        assert "is a browserd holding a different token than the token file " \
               f"{other / 'config' / 'token'} (BROWSERD_HOME={other})" in run.err, run.err
        assert "another program" not in run.err and service.token not in run.err
