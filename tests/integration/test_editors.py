"""Rich editors through HTTP: click focuses them, type {clear} replaces their text.

The fixture pages run the real editors from ``tests/js/node_modules``
(CodeMirror 5, CodeMirror 6, Monaco, ProseMirror) and a plain
contenteditable, each pre-filled with ``select 1 as one`` and exposing its
own model's text as ``window.editorText()``. The page server serves the
packages' files read-only under ``/js/`` (only the few package folders the
pages use); CodeMirror 6 and ProseMirror, ES modules with bare imports, are
bundled once per session with the packages' own esbuild into ``/js-bundles/``.
"""

from __future__ import annotations

import mimetypes
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from tests.conftest import PageServer, add_route
from tests.integration.helpers import fails, html_route, js, navigate, ok

pytestmark = pytest.mark.chromium

NODE_MODULES = Path(__file__).resolve().parents[1] / "js" / "node_modules"
#: The package folders the pages load files from (served read-only under /js/).
SERVED = ("codemirror5/lib", "codemirror5/mode/sql", "monaco-editor/min/vs")
OLD = "select 1 as one"
NEW = "select * from t"

_CM6_ENTRY = """
import {EditorView, basicSetup} from "codemirror";
import {sql} from "@codemirror/lang-sql";
const view = new EditorView({doc: %s, extensions: [basicSetup, sql()],
                             parent: document.getElementById("editor")});
window.editorText = () => view.state.doc.toString();
window.editorReady = true;
"""

_PM_ENTRY = """
import {EditorState} from "prosemirror-state";
import {EditorView} from "prosemirror-view";
import {schema} from "prosemirror-schema-basic";
import {keymap} from "prosemirror-keymap";
import {baseKeymap} from "prosemirror-commands";
const doc = schema.node("doc", null, [schema.node("paragraph", null, [schema.text(%s)])]);
const view = new EditorView(document.getElementById("editor"), {
  state: EditorState.create({doc, plugins: [keymap(baseKeymap)]})});
window.editorText = () => view.state.doc.textContent;
window.editorReady = true;
"""


def _page(head: str, body: str) -> str:
    return ("<!doctype html><html><head><meta charset='utf-8'><title>Editor</title>"
            f"{head}</head><body><h1>Query</h1><button id='other'>Other</button>"
            f"<div id='editor' style='width: 600px'></div>{body}</body></html>")


PAGES = {
    "codemirror5": _page(
        "<link rel='stylesheet' href='/js/codemirror5/lib/codemirror.css'>"
        "<script src='/js/codemirror5/lib/codemirror.js'></script>"
        "<script src='/js/codemirror5/mode/sql/sql.js'></script>",
        f"<script>const cm = CodeMirror(document.getElementById('editor'), "
        f"{{value: '{OLD}', mode: 'text/x-sql', lineNumbers: true}});"
        "window.editorText = () => cm.getValue(); window.editorReady = true;</script>"),
    "codemirror6": _page("", "<script src='/js-bundles/cm6.js'></script>"),
    "monaco": _page(
        "<script src='/js/monaco-editor/min/vs/loader.js'></script>",
        # No language workers: an empty worker keeps Monaco quiet without them.
        "<script>self.MonacoEnvironment = {getWorker: () => new Worker(URL.createObjectURL("
        "new Blob([''], {type: 'text/javascript'})))};"
        "require.config({paths: {vs: '/js/monaco-editor/min/vs'}});"
        "require(['vs/editor/editor.main'], () => {"
        "  document.getElementById('editor').style.height = '200px';"
        f"  const ed = monaco.editor.create(document.getElementById('editor'), {{value: '{OLD}',"
        "    language: 'plaintext', minimap: {enabled: false}, automaticLayout: false});"
        "  window.editorText = () => ed.getValue(); window.editorReady = true;});</script>"),
    "prosemirror": _page("", "<script src='/js-bundles/pm.js'></script>"),
    "contenteditable": _page(
        "", "<script>const el = document.getElementById('editor');"
            f"el.contentEditable = 'true'; el.textContent = '{OLD}';"
            "window.editorText = () => el.innerText.replace(/\\n$/, '');"
            "window.editorReady = true;</script>"),
}

#: The element inside which each editor's focus must land.
ROOTS = {"codemirror5": ".CodeMirror", "codemirror6": ".cm-editor", "monaco": ".monaco-editor",
         "prosemirror": ".ProseMirror", "contenteditable": "#editor"}


def _file_route(path: Path) -> Any:
    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"

    def handler(req: Any) -> None:
        data = path.read_bytes()
        req.send_response(200)
        req.send_header("Content-Type", kind)
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        req.wfile.write(data)

    return handler


def _bundle(entry: str, out: Path) -> None:
    source = out.with_suffix(".entry.js")
    source.write_text(entry, encoding="utf-8")
    subprocess.run([str(NODE_MODULES / ".bin" / "esbuild"), "--bundle", "--format=iife",
                    "--log-level=warning", str(source), f"--outfile={out}"],
                   check=True, timeout=60, env={**os.environ, "NODE_PATH": str(NODE_MODULES)})


@pytest.fixture(scope="module")
def editor_pages(pages: PageServer, tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[PageServer]:
    """The pages server with the editors' files, bundles and pages routed."""
    if not (NODE_MODULES / ".bin" / "esbuild").exists():
        pytest.skip("tests/js/node_modules is missing (install it: deploy/setup.sh test)")
    for folder in SERVED:
        root = NODE_MODULES / folder
        for path in root.rglob("*"):
            if path.is_file():
                add_route(f"/js/{path.relative_to(NODE_MODULES).as_posix()}", _file_route(path))
    out = tmp_path_factory.mktemp("bundles")
    for name, entry in (("cm6", _CM6_ENTRY), ("pm", _PM_ENTRY)):
        _bundle(entry % f"'{OLD}'", out / f"{name}.js")
        add_route(f"/js-bundles/{name}.js", _file_route(out / f"{name}.js"))
    for name, html in PAGES.items():
        add_route(f"/editor_{name}.html", html_route(html))
    yield pages


async def _open(api: httpx.AsyncClient, tab: str, pages: PageServer, kind: str) -> str:
    """Load the editor page; the ref of its editor (the first textbox of a snapshot)."""
    await navigate(api, tab, pages.url(f"/editor_{kind}.html"))
    while not await js(api, tab, "!!window.editorReady"):
        await trio.sleep(0.05)
    await js(api, tab, "document.getElementById('other').focus()")
    r = await api.get("/snapshot", params={"targetId": tab, "nodes": "true"})
    assert r.status_code == 200, r.text
    boxes = [n["ref"] for n in r.json()["nodes"] if n["role"] == "textbox"]
    assert boxes, r.json()["text"]
    return str(boxes[0])


async def _focus_inside(api: httpx.AsyncClient, tab: str, kind: str) -> bool:
    result = await js(api, tab, f"!!document.activeElement.closest({ROOTS[kind]!r})")
    return bool(result)


@pytest.mark.parametrize("kind", list(PAGES))
async def test_click_focuses_and_clear_replaces(api, tab, editor_pages, kind):
    with trio.fail_after(40):
        ref = await _open(api, tab, editor_pages, kind)
        assert not await _focus_inside(api, tab, kind)
        data = await ok(api, "/click", tab, ref=ref)
        assert await _focus_inside(api, tab, kind), data
        assert data["method"] == "mouse", data
        if kind in ("codemirror5", "monaco"):  # the ref is the hidden textarea
            assert data["editor"] == {"kind": kind, "via": "surface", "because": "covered"}

        data = await ok(api, "/type", tab, ref=ref, text=NEW, clear=True)
        assert await js(api, tab, "editorText()") == NEW
        assert data["editor"] == {"kind": kind, "verified": True}

        data = await ok(api, "/type", tab, ref=ref, text=" where 1")
        assert await js(api, tab, "editorText()") == NEW + " where 1"
        assert data["editor"]["verified"] is True, data

        data = await ok(api, "/type", tab, text=OLD, clear=True)  # no ref: the focused editor
        assert await js(api, tab, "editorText()") == OLD
        assert data["editor"] == {"kind": kind, "verified": True}


async def test_click_on_an_editor_under_an_overlay_focuses_it(api, tab, editor_pages):
    with trio.fail_after(30):
        ref = await _open(api, tab, editor_pages, "codemirror5")
        await js(api, tab, "const d = document.createElement('div'); d.id = 'veil';"
                           "d.style = 'position: fixed; inset: 0; z-index: 10';"
                           "document.body.append(d); 1")
        data = await ok(api, "/click", tab, ref=ref)
        assert data["method"] == "focus", data
        assert data["fallbackReason"] == "covered"
        assert data["coveredBy"]["id"] == "veil"
        assert data["editor"] == {"kind": "codemirror5", "via": "focus"}
        assert await _focus_inside(api, tab, "codemirror5")


async def test_clear_that_leaves_text_is_a_conflict(api, tab, editor_pages):
    with trio.fail_after(30):
        ref = await _open(api, tab, editor_pages, "contenteditable")
        await js(api, tab, "editor.addEventListener('beforeinput', e => e.preventDefault()); 1")
        error = await fails(api, "/type", tab, 409, "CONFLICT", ref=ref, text=NEW, clear=True)
        assert error["editor"] == "contenteditable"
        assert "nothing was typed" in error["error"]
        assert await js(api, tab, "editorText()") == OLD


async def test_text_the_editor_changed_is_not_verified(api, tab, editor_pages):
    with trio.fail_after(30):
        ref = await _open(api, tab, editor_pages, "codemirror6")
        data = await ok(api, "/type", tab, ref=ref, text="select count(", clear=True,
                        slowly=True)
        # CodeMirror 6's closeBrackets (in basicSetup) adds the closing bracket.
        assert await js(api, tab, "editorText()") == "select count()"
        assert data["editor"]["verified"] is False, data
        assert "bracket" in data["editor"]["reason"]


async def test_type_into_the_element_that_holds_one_editor(api, tab, editor_pages):
    with trio.fail_after(30):
        await _open(api, tab, editor_pages, "codemirror5")
        data = await ok(api, "/type", tab, selector="#editor", text=NEW, clear=True)
        assert await js(api, tab, "editorText()") == NEW
        assert data["editor"] == {"kind": "codemirror5", "verified": True}


# A field whose script puts its value back when it is set from script (untrusted
# input events), as some frameworks' controlled fields do: clear uses keys then.
CONTROLLED = _page("", f"""<textarea id='field' aria-label='Query'>{OLD}</textarea><script>
const field = document.getElementById('field'); let model = field.value;
field.addEventListener('input', e => {{
  if (e.isTrusted) model = field.value; else field.value = model; }});
window.editorText = () => model; window.editorReady = true;</script>""")


async def test_a_field_that_does_not_stay_cleared_is_cleared_by_keys(api, tab, editor_pages):
    with trio.fail_after(30):
        add_route("/editor_controlled.html", html_route(CONTROLLED))
        await navigate(api, tab, editor_pages.url("/editor_controlled.html"))
        data = await ok(api, "/type", tab, selector="#field", text=NEW, clear=True)
        assert await js(api, tab, "editorText()") == NEW
        assert "editor" not in data


# A widget of no known kind that, like CodeMirror 5, reads keys from an
# invisible textarea and keeps its text elsewhere: emptying the textarea's
# value would change nothing.
PROXY = _page("", f"""<textarea id='proxy' aria-label='Query' style='opacity: 0'></textarea>
<pre id='shown'></pre><script>
const proxy = document.getElementById('proxy'), shown = document.getElementById('shown');
let model = '{OLD}', all = false;
const draw = () => {{ shown.textContent = model; }};
proxy.addEventListener('keydown', e => {{
  if (e.key === 'a' && (e.ctrlKey || e.metaKey)) {{ all = true; e.preventDefault(); }}
  if (e.key === 'Backspace') {{
    model = all ? '' : model.slice(0, -1); all = false; e.preventDefault(); draw(); }}
}});
proxy.addEventListener('input', e => {{
  if (!e.isTrusted) return;
  model += proxy.value; proxy.value = ''; all = false; draw(); }});
draw(); window.editorText = () => model; window.editorReady = true;</script>""")


async def test_an_invisible_key_proxy_is_cleared_by_keys(api, tab, editor_pages):
    with trio.fail_after(30):
        add_route("/editor_proxy.html", html_route(PROXY))
        await navigate(api, tab, editor_pages.url("/editor_proxy.html"))
        await ok(api, "/type", tab, selector="#proxy", text=NEW, clear=True)
        assert await js(api, tab, "editorText()") == NEW


# The page's class names and editing hosts do not move a covered click: a page
# whose whole body claims to be an editor, and a container holding one editor,
# get the usual DOM click (``coveredBy``), not a press somewhere the page chose.
_VEIL = ("<div id='veil' style='position: fixed; inset: 0; z-index: 10'></div>"
         "<span id='target' role='button' onclick='window.clicked = (window.clicked || 0) + 1'>"
         "Go</span>")
CLAIMS = {
    "codemirror-class": "<body class='CodeMirror'><div class='CodeMirror-scroll' "
                        f"style='height: 300px'></div>{_VEIL}</body>",
    "contenteditable": f"<body contenteditable='true'>{_VEIL}</body>",
    "both": f"<body class='CodeMirror' contenteditable='true'>{_VEIL}</body>",
}


@pytest.mark.parametrize("claim", list(CLAIMS))
async def test_a_body_that_claims_to_be_an_editor_gets_the_usual_fallback(api, tab, pages, claim):
    with trio.fail_after(30):
        html = f"<!doctype html><html><head><title>Claim</title></head>{CLAIMS[claim]}</html>"
        add_route(f"/editor_claim_{claim}.html", html_route(html))
        await navigate(api, tab, pages.url(f"/editor_claim_{claim}.html"))
        data = await ok(api, "/click", tab, selector="#target")
        assert data["method"] == "dom", data
        assert data["coveredBy"]["id"] == "veil", data
        assert "editor" not in data
        assert await js(api, tab, "window.clicked") == 1


async def test_a_covered_container_holding_one_editor_gets_the_usual_fallback(
        api, tab, editor_pages):
    with trio.fail_after(30):
        await _open(api, tab, editor_pages, "codemirror5")
        await js(api, tab, "const d = document.createElement('div'); d.id = 'veil';"
                           "d.style = 'position: fixed; inset: 0; z-index: 10';"
                           "document.body.append(d); 1")
        data = await ok(api, "/click", tab, selector="#editor")
        assert data["method"] == "dom", data
        assert data["coveredBy"]["id"] == "veil", data
        assert "editor" not in data
        assert not await _focus_inside(api, tab, "codemirror5")
