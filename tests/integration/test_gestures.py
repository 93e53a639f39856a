"""Uploads, drag and raw input through HTTP, on real Chromium.

Pages: tests/pages/upload.html (a plain file input, a styled button that
opens a hidden input's chooser, a drop zone with a "browse" chooser) and
tests/pages/gestures.html (a canvas that records mouse events, a sortable
list reordered by native HTML5 drag-and-drop, a knob dragged with pointer
events, a text field that logs keys). Every test checks what the *page* saw.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from tests.conftest import ServiceInfo, add_route
from tests.integration.helpers import fails, html_route, js, navigate, ok, post, ref_of

pytestmark = pytest.mark.chromium


@pytest.fixture
def uploads(service: ServiceInfo, tmp_path: Path) -> Path:
    """A fresh folder inside the service's default upload root, with two small files."""
    root = service.home / "data" / "uploads"
    assert root.is_dir() and (root.stat().st_mode & 0o777) == 0o700
    folder = root / tmp_path.name
    folder.mkdir()
    (folder / "resume.txt").write_text("hello from the agent\n")
    (folder / "photo.txt").write_text("pixels" * 10)
    return folder


async def seen(api: httpx.AsyncClient, tab: str) -> list[str]:
    result = await js(api, tab, "window.seen")
    return list(result)


# -- uploads -------------------------------------------------------------------------


async def test_plain_file_input_by_selector_ref_and_relative_path(api, tab, pages, uploads):
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/upload.html"))
        resume = str(uploads / "resume.txt")
        data = await ok(api, "/upload", tab, selector="#plain", files=[resume])
        assert data["files"] == ["resume.txt"] and data["via"] == "input"
        assert data["multiple"] is False and data["effects"] == {}
        assert await seen(api, tab) == ["plain=resume.txt:21"]
        assert await js(api, tab, "readFirst('plain')", wait=True) == "hello from the agent\n"
        # The snapshot's ref of the input (and of its <label>) works too; a relative
        # path is taken relative to the upload root.
        ref = await ref_of(api, tab, "button", "Photos")
        relative = [f"{uploads.name}/resume.txt", f"{uploads.name}/photo.txt"]
        data = await ok(api, "/upload", tab, ref=ref, files=relative)
        assert data["multiple"] is True
        assert (await seen(api, tab))[-1] == "multi=resume.txt:21,photo.txt:60"
        # Several files for a single-file input: 400, nothing set.
        body = await fails(api, "/upload", tab, 400, "BAD_REQUEST", selector="#plain",
                           files=[resume, str(uploads / "photo.txt")])
        assert "one file" in body["error"]
        assert len(await seen(api, tab)) == 2
        # Not a file input: 400 with a pointer to /click {files}.
        body = await fails(api, "/upload", tab, 400, "BAD_REQUEST", selector="#styled",
                           files=[resume])
        assert "/click" in body["hint"]


async def test_paths_outside_upload_roots_are_blocked(api, tab, pages, uploads, tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("host secret")
    (uploads / "link.txt").symlink_to(outside)
    (uploads / "dirlink").symlink_to(tmp_path, target_is_directory=True)
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/upload.html"))
        for path in (str(outside), str(uploads / "link.txt"), str(uploads / "dirlink/secret.txt"),
                     f"{uploads}/../../../config/token", "/etc/passwd",
                     str(tmp_path / "missing.txt")):
            body = await fails(api, "/upload", tab, 403, "UPLOAD_BLOCKED", selector="#plain",
                               files=[path])
            assert "host secret" not in str(body)
        # The same through /click {files} and /act: refused before anything is clicked.
        await fails(api, "/click", tab, 403, "UPLOAD_BLOCKED", selector="#styled",
                    files=[str(uploads / "link.txt")])
        await fails(api, "/act", tab, 403, "UPLOAD_BLOCKED", actions=[
            {"kind": "click", "selector": "#nothing"},
            {"kind": "upload", "selector": "#plain", "files": [str(outside)]}])
        body = await fails(api, "/act", tab, 400, "FILE_NOT_FOUND", actions=[
            {"kind": "upload", "selector": "#plain", "files": [str(uploads / "nope.txt")]}])
        assert body["index"] == 0 and body["error"].startswith("actions[0]: ")
        # Inside the roots: a missing file or a directory is 400 FILE_NOT_FOUND.
        await fails(api, "/upload", tab, 400, "FILE_NOT_FOUND", selector="#plain",
                    files=[str(uploads / "missing.txt")])
        await fails(api, "/upload", tab, 400, "FILE_NOT_FOUND", selector="#plain",
                    files=[str(uploads)])
        assert await seen(api, tab) == []
        assert await js(api, tab, "document.getElementById('plain').files.length") == 0


async def test_styled_button_opens_a_chooser_that_upload_answers(api, tab, pages, uploads):
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/upload.html"))
        await fails(api, "/upload", tab, 409, "NO_FILE_CHOOSER", files=[])
        data = await ok(api, "/click", tab, text="Upload avatar")
        assert data["effects"] == {"fileChooser": {"multiple": False}}
        data = await ok(api, "/upload", tab, files=[str(uploads / "photo.txt")])
        assert data == {**data, "via": "chooser", "files": ["photo.txt"], "multiple": False}
        assert await seen(api, tab) == ["avatar=photo.txt:60"]
        # Answered: no chooser is pending any more.
        await fails(api, "/upload", tab, 409, "NO_FILE_CHOOSER", files=[])
        # /click {files}: the chooser the click opens is filled at once.
        data = await ok(api, "/click", tab, selector="#styled",
                        files=[str(uploads / "resume.txt")])
        assert data["files"] == ["resume.txt"] and "fileChooser" not in data["effects"]
        assert (await seen(api, tab))[-1] == "avatar=resume.txt:21"
        # A click that opens no chooser: 409, and nothing was uploaded.
        await fails(api, "/click", tab, 409, "NO_FILE_CHOOSER", selector="#nothing",
                    files=[str(uploads / "resume.txt")])
        assert len(await seen(api, tab)) == 2
        # A chooser left open is forgotten when the page navigates away.
        await ok(api, "/click", tab, selector="#styled")
        await navigate(api, tab, pages.url("/upload.html"))
        await fails(api, "/upload", tab, 409, "NO_FILE_CHOOSER", files=[])


async def test_drop_zone_browse_chooser_takes_several_files(api, tab, pages, uploads):
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/upload.html"))
        files = [str(uploads / "resume.txt"), str(uploads / "photo.txt")]
        data = await ok(api, "/click", tab, text="browse")
        assert data["effects"]["fileChooser"] == {"multiple": True}
        data = await ok(api, "/upload", tab, files=files)
        assert data["multiple"] is True
        assert await seen(api, tab) == ["zone-input=resume.txt:21,photo.txt:60"]
        # A single-file chooser refuses two files and stays pending for a retry.
        await ok(api, "/click", tab, selector="#styled")
        await fails(api, "/upload", tab, 400, "BAD_REQUEST", files=files)
        await ok(api, "/upload", tab, files=files[:1])
        assert (await seen(api, tab))[-1] == "avatar=resume.txt:21"
        # Files dropped on the zone as if dragged in from the desktop.
        data = await ok(api, "/drag", tab, files=files, to={"text": "Drop files here"})
        assert data["native"] is True and data["files"] == ["resume.txt", "photo.txt"]
        assert (await seen(api, tab))[-1] == "zone=resume.txt:21,photo.txt:60"
        await fails(api, "/drag", tab, 403, "UPLOAD_BLOCKED", files=["/etc/passwd"],
                    to={"selector": "#zone"})
        await fails(api, "/drag", tab, 400, "BAD_REQUEST", files=files[:1],
                    to={"selector": "#zone"}, **{"from": {"selector": "#browse"}})


# -- drag ----------------------------------------------------------------------------


async def test_sortable_list_reordered_by_native_drag_and_drop(api, tab, pages):
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/gestures.html"))
        data = await ok(api, "/drag", tab, **{"from": {"selector": "#task-a"},
                                               "to": {"selector": "#task-c"}})
        assert data["native"] is True
        assert await js(api, tab, "order()") == ["task-b", "task-c", "task-a"]
        assert await js(api, tab, "dndLog") == ["dragstart task-a", "drop task-a on task-c",
                                                "dragend"]
        # By refs and by text, with one step.
        r = await api.get("/snapshot", params={"targetId": tab})
        lines = r.json()["text"].splitlines()  # "[e4] listitem" then '  text "Charlie"'
        source = next(a.split("]")[0].strip(" [") for a, b in itertools.pairwise(lines)
                      if a.strip().endswith("listitem") and '"Charlie"' in b)
        data = await ok(api, "/drag", tab, steps=1, **{"from": {"ref": source},
                                                        "to": {"text": "Alpha"}})
        assert data["native"] is True
        assert await js(api, tab, "order()") == ["task-b", "task-a", "task-c"]
        # The mouse is released afterwards: a plain click works again.
        await ok(api, "/mouse", tab, action="click", x=100, y=100)
        assert (await js(api, tab, "padEvents.map(e => e.type)"))[-1] == "click"


async def test_pointer_drag_moves_a_knob_to_a_point(api, tab, pages):
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/gestures.html"))
        data = await ok(api, "/drag", tab, **{"from": {"selector": "#knob"},
                                               "to": {"x": 320, "y": 380}})
        assert data["native"] is False
        assert data["from"] == {"x": 20, "y": 380} and data["to"] == {"x": 320, "y": 380}
        assert await js(api, tab, "knob.getAttribute('aria-valuenow')") == "300"
        await fails(api, "/drag", tab, 400, "BAD_REQUEST",
                    **{"from": {"selector": "#knob"}, "to": {"x": 1, "y": 2, "ref": "e1"}})
        await fails(api, "/drag", tab, 400, "BAD_REQUEST",
                    **{"from": {"selector": "#knob", "text": "x"}, "to": {"x": 1, "y": 2}})
        await fails(api, "/drag", tab, 404, "NO_MATCH",
                    **{"from": {"selector": "#knob"}, "to": {"selector": "#nope"}})
        assert await js(api, tab, "knob.getAttribute('aria-valuenow')") == "300"


# -- raw mouse and keyboard ----------------------------------------------------------


async def test_canvas_records_raw_mouse_coordinates(api, tab, pages):
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/gestures.html"))
        await ok(api, "/mouse", tab, action="move", x=10, y=20)
        data = await ok(api, "/mouse", tab, action="down", x=10, y=20)
        assert data["buttons"] == ["left"]
        await ok(api, "/mouse", tab, action="move", x=110, y=70)
        data = await ok(api, "/mouse", tab, action="up", x=110, y=70)
        assert data["buttons"] == []
        await ok(api, "/mouse", tab, action="click", x=200, y=150, clickCount=2)
        await ok(api, "/mouse", tab, action="click", x=30, y=40, button="right")
        await ok(api, "/mouse", tab, action="wheel", x=50, y=60, deltaY=120)
        events = await js(api, tab, "padEvents")
        brief = [(e["type"], e["x"], e["y"], e["buttons"]) for e in events]
        assert brief[:4] == [("mousemove", 10, 20, 0), ("mousedown", 10, 20, 1),
                             ("mousemove", 110, 70, 1), ("mouseup", 110, 70, 0)]
        clicks = [(e["type"], e["detail"]) for e in events if e["x"] == 200]
        assert ("dblclick", 2) in clicks and ("click", 1) in clicks
        assert ("contextmenu", 30, 40, 2) in [(e["type"], e["x"], e["y"], e["button"])
                                              for e in events]
        wheel = [e for e in events if e["type"] == "wheel"]
        assert wheel and wheel[0]["dy"] == 120 and (wheel[0]["x"], wheel[0]["y"]) == (50, 60)


async def test_keyboard_down_up_and_insert_text_reach_the_page(api, tab, pages):
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/gestures.html"))
        await ok(api, "/click", tab, selector="#keys")
        data = await ok(api, "/keyboard", tab, action="down", key="Shift")
        assert data["modifiers"] == ["Shift"]
        await ok(api, "/keyboard", tab, action="down", key="a")
        await ok(api, "/keyboard", tab, action="up", key="a")
        data = await ok(api, "/keyboard", tab, action="up", key="Shift")
        assert data["modifiers"] == []
        await ok(api, "/keyboard", tab, action="down", key="b")
        await ok(api, "/keyboard", tab, action="up", key="b")
        await ok(api, "/keyboard", tab, action="insertText", text=" héllo ✓")
        log = await js(api, tab, "keyLog")
        assert log == ["keydown Shift ShiftLeft true false", "keydown A KeyA true false",
                       "input A", "keyup A KeyA true false", "keyup Shift ShiftLeft false false",
                       "keydown b KeyB false false", "input Ab", "keyup b KeyB false false",
                       "input Ab héllo ✓"]
        # Shift held across requests applies to the mouse too.
        await ok(api, "/keyboard", tab, action="down", key="Shift")
        await ok(api, "/mouse", tab, action="click", x=5, y=5)
        await ok(api, "/keyboard", tab, action="up", key="Shift")
        clicks = [e for e in await js(api, tab, "padEvents") if e["type"] == "click"]
        assert clicks[-1]["shift"] is True
        await fails(api, "/keyboard", tab, 400, "BAD_REQUEST", action="down", key="Control+a")
        await fails(api, "/keyboard", tab, 400, "BAD_REQUEST", action="insertText")
        await fails(api, "/keyboard", tab, 400, "BAD_REQUEST", action="up")


async def test_act_runs_the_new_kinds(api, tab, pages, uploads):
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/upload.html"))
        r = await post(api, "/act", tab, actions=[
            {"kind": "upload", "selector": "#plain", "files": [str(uploads / "resume.txt")]},
            {"kind": "click", "selector": "#styled", "files": [str(uploads / "photo.txt")]},
        ])
        assert r.status_code == 200 and r.json()["ok"] is True, r.text
        assert await seen(api, tab) == ["plain=resume.txt:21", "avatar=photo.txt:60"]
        await navigate(api, tab, pages.url("/gestures.html"))
        r = await post(api, "/act", tab, actions=[
            {"kind": "drag", "from": {"selector": "#task-c"}, "to": {"selector": "#task-a"}},
            {"kind": "mouse", "action": "click", "x": 7, "y": 8},
            {"kind": "click", "selector": "#keys"},
            {"kind": "keyboard", "action": "insertText", "text": "done"},
            {"kind": "keyboard", "action": "down", "key": "Enter"},
            {"kind": "keyboard", "action": "up", "key": "Enter"},
        ])
        body = r.json()
        assert r.status_code == 200 and body["ok"] is True, r.text
        assert [s["kind"] for s in body["steps"]] == ["drag", "mouse", "click", "keyboard",
                                                      "keyboard", "keyboard"]
        assert await js(api, tab, "order()") == ["task-a", "task-c", "task-b"]
        assert await js(api, tab, "keys.value") == "done"
        assert "keydown Enter Enter false false" in await js(api, tab, "keyLog")
        # Validation names the action at fault before anything runs.
        r = await post(api, "/act", tab, actions=[
            {"kind": "mouse", "action": "click", "x": 1, "y": 1},
            {"kind": "drag", "from": {"selector": "#task-a"}}])
        assert r.status_code == 400 and r.json()["index"] == 1, r.text


def test_default_upload_root_is_private(service: ServiceInfo) -> None:
    root = service.home / "data" / "uploads"
    assert root.is_dir()
    assert os.stat(root).st_mode & 0o077 == 0


async def test_upload_into_an_out_of_process_iframe(api, tab, pages, other_origin, uploads):
    child = other_origin.url("/upload_child.html")
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/upload_frames.html?child=") + child)
        refs: dict[str, str] = {}
        while len(refs) < 2:  # the frame attaches asynchronously
            r = await api.get("/snapshot", params={"targetId": tab, "nodes": "true"})
            refs = {n["name"]: n["ref"] for n in r.json()["nodes"]
                    if n["name"] in ("Child file", "Child upload")}
            await trio.sleep(0.1)
        files = [str(uploads / "resume.txt"), str(uploads / "photo.txt")]
        await ok(api, "/upload", tab, ref=refs["Child file"], files=files)
        while "child=" not in await js(api, tab, "document.getElementById('out').textContent"):
            await trio.sleep(0.05)
        out = await js(api, tab, "document.getElementById('out').textContent")
        assert out == "child=resume.txt:21,photo.txt:60;"
        # A chooser the frame opens is intercepted in the frame's own session.
        data = await ok(api, "/click", tab, ref=refs["Child upload"])
        assert data["effects"] == {"fileChooser": {"multiple": True}}
        await ok(api, "/upload", tab, files=files[1:])
        while out.count(";") < 2:
            out = await js(api, tab, "document.getElementById('out').textContent")
            await trio.sleep(0.05)
        assert out.split(";")[1] == "child=photo.txt:60"
        data = await ok(api, "/click", tab, ref=refs["Child upload"], files=files[:1])
        assert data["files"] == ["resume.txt"]


async def test_cli_upload_click_drag_mouse_keyboard(service, api, tab, pages, uploads):
    from tests.integration.test_cli import fails as cli_fails
    from tests.integration.test_cli import ok as cli_ok
    from tests.integration.test_cli import ref_of as cli_ref_of

    with trio.fail_after(90):
        await navigate(api, tab, pages.url("/upload.html"))
        text = (await cli_ok(service, "snapshot", "--target", tab)).out
        avatar = cli_ref_of(text, "button", "Upload avatar")
        run = await cli_ok(service, "click", avatar, "--target", tab)
        assert "file chooser open: answer it with `browserd upload FILE…`" in run.out, run.out
        run = await cli_ok(service, "upload", str(uploads / "resume.txt"), "--target", tab)
        assert run.out.splitlines() == ["ok", "uploaded: resume.txt"], run.out
        run = await cli_ok(service, "click", avatar, "--files", str(uploads / "photo.txt"),
                           "--target", tab)
        assert "uploaded: photo.txt" in run.out, run.out
        run = await cli_ok(service, "upload", "--selector", "#multi", "--json", "--target", tab,
                           str(uploads / "resume.txt"), str(uploads / "photo.txt"))
        assert run.json()["files"] == ["resume.txt", "photo.txt"]
        assert await seen(api, tab) == ["avatar=resume.txt:21", "avatar=photo.txt:60",
                                        "multi=resume.txt:21,photo.txt:60"]
        run = await cli_fails(service, "upload", "/etc/passwd", "--selector", "#plain",
                              "--target", tab)
        assert "outside the upload roots" in run.err and "upload_roots" in run.err

        await navigate(api, tab, pages.url("/gestures.html"))
        text = (await cli_ok(service, "snapshot", "--target", tab)).out
        knob = cli_ref_of(text, "slider", "Knob")
        run = await cli_ok(service, "drag", knob, "120,380", "--target", tab)
        assert run.out.strip() == "ok", run.out
        assert await js(api, tab, "knob.getAttribute('aria-valuenow')") == "100"
        await cli_ok(service, "mouse", "click", "40", "50", "--target", tab)
        await cli_ok(service, "mouse", "wheel", "40", "50", "--delta-y", "30", "--target", tab)
        events = [(e["type"], e["x"], e["y"]) for e in await js(api, tab, "padEvents")]
        assert ("click", 40, 50) in events and ("wheel", 40, 50) in events
        await ok(api, "/click", tab, selector="#keys")
        await cli_ok(service, "keyboard", "insertText", "typed", "--target", tab)
        await cli_ok(service, "keyboard", "down", "x", "--target", tab)
        await cli_ok(service, "keyboard", "up", "x", "--target", tab)
        assert await js(api, tab, "keys.value") == "typedx"


async def test_dialog_of_an_out_of_process_iframe_still_reaches_the_tab(api, tab, pages,
                                                                        other_origin):
    # Frame sessions now have Page enabled (for chooser interception): a dialog the
    # frame opens must still be reported by the action and answered by /dialog.
    add_route("/gest_alert_child.html", html_route(
        "<button onclick=\"alert('hi from child')\">Child alert</button>"))
    child = other_origin.url("/gest_alert_child.html")
    with trio.fail_after(60):
        await navigate(api, tab, pages.url("/upload_frames.html?child=") + child)
        ref = None
        while ref is None:
            r = await api.get("/snapshot", params={"targetId": tab, "nodes": "true"})
            ref = next((n["ref"] for n in r.json()["nodes"] if n["name"] == "Child alert"),
                       None)
            await trio.sleep(0.1)
        data = await ok(api, "/click", tab, ref=ref)
        assert data["effects"]["dialog"] == {"type": "alert", "message": "hi from child"}
        data = await ok(api, "/dialog", tab, accept=True)
        assert data["accepted"] is True


# -- effects: the same record as every other action ---------------------------------


def _attachment(h: Any) -> None:
    body = b"gesture download"
    h.send_response(200)
    h.send_header("Content-Type", "application/octet-stream")
    h.send_header("Content-Disposition", 'attachment; filename="gesture.bin"')
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


_EFFECTS_PAGE = """<!doctype html><meta charset="utf-8"><title>Effects</title>
<style>a, button, input {{ position: absolute; left: 0; width: 200px; height: 30px;
  display: block; margin: 0; }}</style>
<a id="nav" href="/gestures.html" style="top: 0">next page</a>
<a id="dl" href="/gest_download.bin" style="top: 40px">download</a>
<a id="bad" href="{blocked}" style="top: 80px">blocked</a>
<input type="file" id="leave" style="top: 120px" aria-label="Leave"
       onchange="location.href = '/gestures.html'">
<button type="button" id="both" style="top: 160px">Upload and download</button>
<input type="file" id="hidden" style="display: none"
       onchange="document.title = 'got ' + this.files[0].name">
<script>
document.getElementById('both').addEventListener('click', () => {{
  document.getElementById('hidden').click();
  document.getElementById('dl').click();
}});
</script>"""


async def test_gestures_report_load_state_downloads_and_blocks(service, api, tab, pages,
                                                              uploads):
    tag = os.urandom(4).hex()
    blocked = f"http://127.0.0.1:{service.port}/navblocked-{tag}"
    add_route("/gest_download.bin", _attachment)
    add_route("/gest_effects.html", html_route(_EFFECTS_PAGE.format(blocked=blocked)))
    page = pages.url("/gest_effects.html")
    with trio.fail_after(90):
        # A raw click that follows a link waits for waitUntil and says where it got.
        await navigate(api, tab, page)
        data = await ok(api, "/mouse", tab, action="click", x=50, y=15, waitUntil="load")
        assert data["effects"]["navigated"] == pages.url("/gestures.html")
        assert data["effects"]["loadState"] == "load"
        # A raw click on a download link lists the download.
        await navigate(api, tab, page)
        data = await ok(api, "/mouse", tab, action="click", x=50, y=55)
        assert [d["suggestedFilename"] for d in data["effects"]["downloads"]] == ["gesture.bin"]
        # A key that follows a link the URL policy refuses reports the block.
        await js(api, tab, "document.getElementById('bad').focus()")
        data = await ok(api, "/keyboard", tab, action="down", key="Enter")
        await ok(api, "/keyboard", tab, action="up", key="Enter")
        assert [b["reason"] for b in data["effects"]["blocked"]] == ["port"], data
        # An upload whose change handler navigates: waitUntil, alone and in /act.
        await navigate(api, tab, page)
        resume = str(uploads / "resume.txt")
        data = await ok(api, "/upload", tab, selector="#leave", files=[resume],
                        waitUntil="commit")
        assert data["effects"]["navigated"] == pages.url("/gestures.html")
        assert data["effects"]["loadState"] in ("loading", "domcontentloaded", "load")
        await navigate(api, tab, page)
        r = await post(api, "/act", tab, actions=[
            {"kind": "upload", "selector": "#leave", "files": [resume], "waitUntil": "load"}])
        assert r.status_code == 200 and r.json()["ok"] is True, r.text
        effects = r.json()["steps"][0]["result"]["effects"]
        assert effects["loadState"] == "load" and effects["navigated"].endswith("/gestures.html")
        # /click {files}: the click and the upload are observed once, so the
        # download the click started is listed once and no chooser is left open.
        await navigate(api, tab, page)
        data = await ok(api, "/click", tab, selector="#both", files=[resume])
        assert data["files"] == ["resume.txt"]
        assert [d["suggestedFilename"] for d in data["effects"]["downloads"]] == ["gesture.bin"]
        assert "fileChooser" not in data["effects"]
        assert await js(api, tab, "document.title") == "got resume.txt"
        await fails(api, "/upload", tab, 409, "NO_FILE_CHOOSER", files=[])
        await fails(api, "/mouse", tab, 400, "BAD_REQUEST", action="click", x=1, y=1,
                    waitUntil="networkidle")
