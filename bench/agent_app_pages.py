"""Pages for the MCP agent-task benchmark (:mod:`bench.agent_tasks_mcp`), served on loopback.

Generated and deterministic, like :mod:`bench.agent_pages`:

- ``/reference.html`` — a package reference: a 300-row table (package,
  version, licence, maintainer, a changelog link per row) and a glossary
  ``<dl>`` of 60 terms; ``/changes/<n>.html`` is the changelog a row links to;
- ``/editor.html`` — a CodeMirror 5 editor (``codemirror5`` from the suite's
  npm packages, SQL mode) pre-filled with a query, a **Run** button and a
  result area; Run "executes" the query by recognising its table and filter;
- ``/spa.html`` — a late-drawing single-page app: its script makes a burst of
  fetches (``/api/*``, each answered after a short delay, some in sequence)
  and only then draws a project list and a settings form;
- ``/todo.html`` — a TodoMVC-like list (new-item field, items with an
  unlabelled toggle checkbox, "N items left").

:class:`AppPages` serves them from a daemon thread (``Cache-Control: no-store``).
"""

from __future__ import annotations

import html
import http.server
import json
import random
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = ["GLOSSARY_TERMS", "TABLE_ROWS", "AppPages", "changes_page", "definition_of",
           "editor_page", "reference_page", "spa_page", "todo_page", "version_of"]

TABLE_ROWS = 300
GLOSSARY_TERMS = 60
SPA_DELAY_S = 0.12
_CODEMIRROR = Path(__file__).resolve().parent.parent / "tests" / "js" / "node_modules" / \
    "codemirror5"
_WORDS = ("cache", "index", "queue", "shard", "replica", "lease", "token", "ledger",
          "schema", "cursor", "batch", "window", "quorum", "epoch", "segment", "journal",
          "snapshot", "offset", "tenant", "bucket", "policy", "digest", "frame", "route")
_LICENCES = ("MIT", "Apache-2.0", "BSD-3-Clause", "MPL-2.0", "ISC")


def _sentence(rng: random.Random, lo: int = 8, hi: int = 18) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(lo, hi))).capitalize() + "."


def _doc(title: str, body: str, head: str = "") -> str:
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>'
            f"{html.escape(title)}</title>{head}</head><body>{body}</body></html>")


def version_of(n: int) -> str:
    """The version of package ``n`` (unique among the table's rows)."""
    return f"{n % 7}.{n % 13}.{n % 5}"


def _term(i: int) -> str:
    return f"{_WORDS[i % len(_WORDS)]} {_WORDS[(i * 7 + 3) % len(_WORDS)]} {i}".title()


def definition_of(i: int) -> str:
    """The glossary definition of term ``i`` (its first sentence is fixed per term)."""
    rng = random.Random(500 + i)
    return f"The {_WORDS[i % len(_WORDS)]} kept per tenant for {i} epochs. {_sentence(rng)}"


def reference_page() -> str:
    """The table-and-terms page (see the module docstring)."""
    rng = random.Random(17)
    rows = "".join(
        f"<tr><th scope=\"row\">pkg-{n:04d}</th><td>{version_of(n)}</td>"
        f"<td>{rng.choice(_LICENCES)}</td><td>{rng.choice(_WORDS)} team</td>"
        f'<td><a href="/changes/{n}.html">{version_of(n)} notes</a></td></tr>'
        for n in range(TABLE_ROWS))
    table = ("<table><caption>Packages</caption><thead><tr><th scope=\"col\">Package</th>"
             "<th scope=\"col\">Version</th><th scope=\"col\">Licence</th>"
             "<th scope=\"col\">Maintainer</th><th scope=\"col\">Changelog</th></tr></thead>"
             f"<tbody>{rows}</tbody></table>")
    terms = "".join(f'<dt id="term-{i}">{html.escape(_term(i))}</dt>'
                    f"<dd>{html.escape(definition_of(i))}</dd>" for i in range(GLOSSARY_TERMS))
    body = (f"<header><h1>Package reference</h1><p>{_sentence(rng, 20, 30)}</p></header>"
            f"<main><h2>Packages</h2><p>{_sentence(rng)}</p>{table}"
            f"<h2>Glossary</h2><dl>{terms}</dl></main>"
            f"<footer><p>{_sentence(rng)}</p></footer>")
    return _doc("Package reference", body)


def changes_page(n: int) -> str:
    """The changelog of package ``n``: its heading names the package and version."""
    rng = random.Random(900 + n)
    items = "".join(f"<li>{_sentence(rng, 6, 12)}</li>" for _ in range(8))
    return _doc(f"pkg-{n:04d} changes",
                f"<main><h1>pkg-{n:04d} {version_of(n)} release notes</h1><ul>{items}</ul>"
                "</main>")


_EDITOR_SCRIPT = """
const editor = CodeMirror.fromTextArea(document.getElementById('query'),
  {mode: 'text/x-sql', lineNumbers: true});
const TABLES = {users: 1834, orders: 5210, invoices: 771};
document.getElementById('run').addEventListener('click', () => {
  const sql = editor.getValue().trim().replace(/\\s+/g, ' ');
  const out = document.getElementById('result');
  const m = /^select count\\(\\*\\) from (\\w+)(?: where (\\w+) ?= ?'([^']*)')? ?;?$/i.exec(sql);
  if (!m || !(m[1] in TABLES)) { out.textContent = 'Error: cannot run: ' + sql; return; }
  let n = TABLES[m[1]];
  if (m[2]) n = Math.floor(n / (m[3].length + 2));
  out.textContent = 'Result: count = ' + n + ' (' + m[1] + ')';
});
"""


def editor_page() -> str:
    """The code-editor page (CodeMirror 5, SQL mode, a Run button)."""
    head = ('<link rel="stylesheet" href="/cm/lib/codemirror.css">'
            '<script src="/cm/lib/codemirror.js"></script>'
            '<script src="/cm/mode/sql/sql.js"></script>')
    body = ("<main><h1>Query console</h1><p>Write a query and run it.</p>"
            '<textarea id="query">SELECT name, email\nFROM users\nWHERE plan = \'team\';'
            "</textarea><p><button id=\"run\" type=\"button\">Run</button></p>"
            '<output id="result">No result yet.</output></main>'
            f"<script>{_EDITOR_SCRIPT}</script>")
    return _doc("Query console", body, head)


_SPA_SCRIPT = """
async function get(path) { return (await fetch(path)).json(); }
async function boot() {
  const [me, flags] = await Promise.all([get('/api/me'), get('/api/flags')]);
  const projects = await get('/api/projects?owner=' + me.id);
  const prefs = await get('/api/prefs?user=' + me.id + '&v=' + flags.version);
  const app = document.getElementById('app');
  app.innerHTML = '';
  const h = document.createElement('h1'); h.textContent = 'Projects of ' + me.name;
  const ul = document.createElement('ul');
  for (const p of projects) {
    const li = document.createElement('li'); li.textContent = p.name + ' (' + p.state + ')';
    ul.append(li);
  }
  const form = document.createElement('form');
  form.innerHTML = '<h2>Settings</h2><label>Digest <select name="digest">' +
    prefs.options.map(o => '<option>' + o + '</option>').join('') + '</select></label> ' +
    '<button type="submit">Save settings</button><p role="status" id="saved"></p>';
  form.addEventListener('submit', ev => {
    ev.preventDefault();
    form.querySelector('#saved').textContent = 'Settings saved for ' + me.name + '.';
  });
  app.append(h, ul, form);
}
boot();
"""


def spa_page() -> str:
    """The late-drawing app's shell: "Loading…" until its fetches are in."""
    return _doc("Projects", '<div id="app"><p>Loading…</p></div>'
                f"<script>{_SPA_SCRIPT}</script>")


def _api(path: str) -> Any:
    rng = random.Random(path)
    if path == "/api/me":
        return {"id": 42, "name": "Ada"}
    if path == "/api/flags":
        return {"version": 3, "beta": False}
    if path == "/api/projects":
        return [{"name": f"{rng.choice(_WORDS)}-{i}", "state": rng.choice(("live", "draft"))}
                for i in range(12)]
    return {"options": ["Daily", "Weekly", "Never"]}


_TODO_SCRIPT = """
const items = [];
const input = document.querySelector('.new-todo');
const list = document.querySelector('.todo-list');
const count = document.querySelector('.todo-count');
function render() {
  list.innerHTML = '';
  items.forEach((item, i) => {
    const li = document.createElement('li');
    if (item.done) li.className = 'completed';
    li.innerHTML = '<div class="view"><input class="toggle" type="checkbox"' +
      (item.done ? ' checked' : '') + '><label></label><button class="destroy"></button></div>';
    li.querySelector('label').textContent = item.title;
    li.querySelector('.toggle').addEventListener('change', () => {
      item.done = !item.done; render();
    });
    list.append(li);
  });
  const left = items.filter(x => !x.done).length;
  count.textContent = left + (left === 1 ? ' item' : ' items') + ' left';
}
input.addEventListener('keydown', ev => {
  if (ev.key !== 'Enter' || !input.value.trim()) return;
  items.push({title: input.value.trim(), done: false}); input.value = ''; render();
});
render();
"""


def todo_page() -> str:
    """The TodoMVC-like list (its markup follows TodoMVC's: the toggle has no label)."""
    body = ('<section class="todoapp"><header class="header"><h1>todos</h1>'
            '<input class="new-todo" placeholder="What needs to be done?" autofocus>'
            '</header><section class="main"><ul class="todo-list"></ul></section>'
            '<footer class="footer"><span class="todo-count"></span></footer></section>'
            f"<script>{_TODO_SCRIPT}</script>")
    return _doc("Todos", body)


class _Handler(http.server.BaseHTTPRequestHandler):
    pages: dict[str, bytes] = {}

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        body = self.pages.get(path)
        kind = "text/html; charset=utf-8"
        if body is None and path.startswith("/changes/") and path.endswith(".html"):
            try:
                body = changes_page(int(path[9:-5])).encode()
            except ValueError:
                body = None
        elif body is None and path.startswith("/api/"):
            time.sleep(SPA_DELAY_S)
            body, kind = json.dumps(_api(path)).encode(), "application/json"
        elif body is None and path.startswith("/cm/"):
            file = (_CODEMIRROR / path[4:]).resolve()
            if file.is_relative_to(_CODEMIRROR) and file.is_file():
                body = file.read_bytes()
                kind = "text/css" if file.suffix == ".css" else "text/javascript"
        if body is None and path == "/favicon.ico":
            body, kind = b"", "image/x-icon"
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the page navigated away while its fetch was in flight

    def log_message(self, format: str, *args: Any) -> None:
        pass


class AppPages:
    """Serves the benchmark's app pages on 127.0.0.1 (a context manager).

    Raises FileNotFoundError at construction when the suite's npm packages
    (``tests/js/node_modules/codemirror5``) are not installed.
    """

    def __init__(self) -> None:
        if not (_CODEMIRROR / "lib" / "codemirror.js").is_file():
            raise FileNotFoundError(f"{_CODEMIRROR} is missing: run npm ci in tests/js")
        _Handler.pages = {"/reference.html": reference_page().encode(),
                          "/editor.html": editor_page().encode(),
                          "/spa.html": spa_page().encode(),
                          "/todo.html": todo_page().encode()}
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def __enter__(self) -> AppPages:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
