"""Pages for the agent-task benchmark, generated (deterministic) and served on loopback.

- ``/docs.html`` — a long reference page shaped like Python's library docs:
  a sidebar of links, sections with paragraphs, one ``<dl class="function">``
  per API entry (``<dt>`` signature, ``<dd>`` paragraphs and a ``<pre><code>``
  example), ~300 entries;
- ``/index.html`` — an index of 2,000 module links (with a sidebar);
- ``/mod/<n>.html`` — a module page: sidebar, heading, a first paragraph, more text;
- ``/form.html`` → ``/done.html`` — a sign-up form (text, email, select,
  checkbox, submit) and the confirmation that echoes it.

:class:`AgentPages` serves them from a daemon thread (``Cache-Control: no-store``).
"""

from __future__ import annotations

import html
import http.server
import random
import threading
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["DOC_ENTRIES", "INDEX_LINKS", "AgentPages", "docs_page", "index_page", "module_page"]

DOC_ENTRIES = 300
INDEX_LINKS = 2000
_WORDS = ("path", "file", "descriptor", "process", "signal", "buffer", "mode", "flag",
          "environment", "value", "result", "error", "handle", "stream", "offset", "user",
          "group", "directory", "link", "timeout", "encoding", "platform", "system", "call")


def _sentence(rng: random.Random, lo: int = 8, hi: int = 20) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(lo, hi))]
    return " ".join(words).capitalize() + "."


def _sidebar(rng: random.Random, n: int = 120) -> str:
    links = "".join(f'<li><a href="/mod/{rng.randrange(INDEX_LINKS)}.html">'
                    f"{html.escape(rng.choice(_WORDS))} {i}</a></li>" for i in range(n))
    return f'<nav aria-label="Contents"><ul>{links}</ul></nav>'


def _page(title: str, body: str, rng: random.Random) -> str:
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>'
            f"{html.escape(title)}</title></head><body>{_sidebar(rng)}<main>{body}</main>"
            f"<footer><p>{_sentence(rng)}</p></footer></body></html>")


def docs_page() -> str:
    """The long reference page (see the module docstring)."""
    rng = random.Random(7)
    parts = ["<h1>osx — Miscellaneous system interfaces</h1>",
             f"<p>{' '.join(_sentence(rng) for _ in range(6))}</p>"]
    for i in range(DOC_ENTRIES):
        if i % 25 == 0:
            parts.append(f"<h2>Section {i // 25 + 1}</h2><p>{_sentence(rng, 20, 40)}</p>")
        name = f"osx.func_{i}"
        example = html.escape(f">>> import osx\n>>> osx.func_{i}('{rng.choice(_WORDS)}', "
                              f"mode=0o{rng.randrange(8)}{rng.randrange(8)}{rng.randrange(8)})\n"
                              f"'{rng.choice(_WORDS)}\\\\{rng.choice(_WORDS)}'")
        parts.append(
            f'<dl class="function"><dt id="{name}">{name}(<em>path</em>, <em>mode=0o777</em>, '
            f"*, <em>dir_fd=None</em>)</dt><dd><p>Return the {rng.choice(_WORDS)} of "
            f"<code>func_{i}</code>: {_sentence(rng, 15, 30)}</p>"
            f"<p>{_sentence(rng, 15, 30)} {_sentence(rng)}</p>"
            f"<pre><code>{example}</code></pre>"
            f"<p>Availability: Unix, Windows. Changed in version 3.{i % 13}.</p></dd></dl>")
    return _page("osx — Miscellaneous system interfaces", "".join(parts), rng)


def index_page() -> str:
    """The 2,000-link module index."""
    rng = random.Random(11)
    rows = "".join(f'<li><a href="/mod/{i}.html">mod_{i:04d}</a> — {_sentence(rng, 4, 9)}</li>'
                   for i in range(INDEX_LINKS))
    return _page("Module index", f"<h1>Module index</h1><ul>{rows}</ul>", rng)


def module_page(n: int) -> str:
    """One module page; its first paragraph starts with "mod_NNNN provides"."""
    rng = random.Random(1000 + n)
    body = (f"<h1>mod_{n:04d} — {html.escape(rng.choice(_WORDS))} tools</h1>"
            f"<p>mod_{n:04d} provides {_sentence(rng, 20, 35)}</p>"
            + "".join(f"<h2>{rng.choice(_WORDS).title()}</h2><p>{_sentence(rng, 30, 60)}</p>"
                      for _ in range(12)))
    return _page(f"mod_{n:04d}", body, rng)


_FORM = ("<h1>Create an account</h1><form action=\"/done.html\" method=\"get\">"
         "<p><label>Full name <input name=\"name\" required></label></p>"
         "<p><label>Email <input type=\"email\" name=\"email\" required></label></p>"
         "<p><label>Plan <select name=\"plan\"><option value=\"free\">Free</option>"
         "<option value=\"team\">Team</option><option value=\"pro\">Pro</option></select>"
         "</label></p><p><label><input type=\"checkbox\" name=\"terms\" value=\"yes\"> "
         "I accept the terms</label></p><p><button type=\"submit\">Create account</button>"
         "</p></form>")


def _done(query: dict[str, list[str]]) -> str:
    name = html.escape(query.get("name", [""])[0])
    plan = html.escape(query.get("plan", [""])[0])
    ok = query.get("terms", [""])[0] == "yes"
    text = (f"<p id=\"result\">Thanks, {name}: your {plan} account is ready.</p>" if ok
            else "<p id=\"result\">Please accept the terms.</p>")
    return _page("Account created", f"<h1>Account</h1>{text}", random.Random(5))


class _Handler(http.server.BaseHTTPRequestHandler):
    pages: dict[str, bytes] = {}

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        body: bytes | None = self.pages.get(parts.path)
        if body is None and parts.path.startswith("/mod/") and parts.path.endswith(".html"):
            try:
                body = module_page(int(parts.path[5:-5])).encode()
            except ValueError:
                body = None
        if body is None and parts.path == "/done.html":
            body = _done(parse_qs(parts.query)).encode()
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class AgentPages:
    """Serves the benchmark pages on 127.0.0.1 (a context manager)."""

    def __init__(self) -> None:
        _Handler.pages = {"/docs.html": docs_page().encode(),
                          "/index.html": index_page().encode(),
                          "/form.html": _page("Sign up", _FORM, random.Random(3)).encode()}
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def __enter__(self) -> AgentPages:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
