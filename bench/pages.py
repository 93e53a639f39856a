"""Generated benchmark pages and the local HTTP server that serves them.

:func:`build_page` returns an HTML document of about ``n`` elements with a
realistic mix (headings, paragraphs, links, buttons, inputs, lists, tables in
nested divs), deterministic for a given ``n``. :class:`PageServer` serves
``/small.html`` (100 elements), ``/1k.html`` and ``/10k.html`` on 127.0.0.1 from
a daemon thread, with ``Cache-Control: no-store`` so every navigation fetches
the page again on every side.
"""

from __future__ import annotations

import html
import http.server
import random
import threading
from typing import Any

SIZES = {"small": 100, "1k": 1_000, "10k": 10_000}
_WORDS = (
    "agent", "browser", "page", "order", "account", "settings", "search", "result", "price",
    "delivery", "profile", "message", "update", "review", "cart", "checkout", "help", "contact",
    "about", "terms", "privacy", "report", "invoice", "travel", "ticket", "weather", "news",
    "sport", "music", "video", "photo", "garden",
)


def _text(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(lo, hi)))


class _Builder:
    """Appends blocks until ``budget`` elements have been written."""

    def __init__(self, n: int) -> None:
        self.rng = random.Random(n)
        self.budget = n
        self.count = 0
        self.out: list[str] = []
        self.ids = 0

    def left(self) -> int:
        return self.budget - self.count

    def el(self, markup: str, elements: int = 1) -> None:
        self.out.append(markup)
        self.count += elements

    def next_id(self) -> int:
        self.ids += 1
        return self.ids

    def block(self) -> None:
        """One section: a heading, then one of several kinds of content, nested in divs."""
        rng = self.rng
        kind = rng.choice(("prose", "links", "form", "list", "table", "cards"))
        self.el('<div class="section"><div class="inner">', 2)
        level = rng.randint(2, 4)
        self.el(f"<h{level}>{html.escape(_text(rng, 2, 5)).title()}</h{level}>", 1)
        if kind == "prose":
            for _ in range(rng.randint(2, 4)):
                if rng.random() < 0.5:
                    self.el(f"<p>{_text(rng, 12, 30)} <a href='#p{self.next_id()}'>"
                            f"{_text(rng, 1, 3)}</a> {_text(rng, 5, 12)}.</p>", 2)
                else:
                    self.el(f"<p>{_text(rng, 15, 40)}.</p>", 1)
        elif kind == "links":
            self.el("<nav><ul>", 2)
            for _ in range(rng.randint(3, 6)):
                self.el(f"<li><a href='/go/{self.next_id()}'>{_text(rng, 1, 3)}</a></li>", 2)
            self.el("</ul></nav>", 0)
        elif kind == "form":
            fid = self.next_id()
            self.el(f"<form onsubmit='return false'><fieldset><legend>{_text(rng, 1, 3)}"
                    "</legend>", 3)
            for j in range(rng.randint(2, 4)):
                kind_in = rng.choice(("text", "email", "checkbox", "number"))
                self.el(f"<div><label for='f{fid}_{j}'>{_text(rng, 1, 2)}</label>"
                        f"<input id='f{fid}_{j}' type='{kind_in}' name='n{fid}_{j}'></div>", 3)
            self.el(f"<div><select name='s{fid}'><option>one</option><option>two</option>"
                    "<option>three</option></select></div>", 5)
            self.el(f"<button type='submit'>{_text(rng, 1, 2)}</button></fieldset></form>", 1)
        elif kind == "list":
            self.el("<ul>", 1)
            for _ in range(rng.randint(3, 8)):
                self.el(f"<li>{_text(rng, 3, 9)}</li>", 1)
            self.el("</ul>", 0)
        elif kind == "table":
            cols = rng.randint(3, 5)
            self.el("<table><thead><tr>", 3)
            for _ in range(cols):
                self.el(f"<th>{_text(rng, 1, 2)}</th>", 1)
            self.el("</tr></thead><tbody>", 1)
            for _ in range(rng.randint(2, 5)):
                self.el("<tr>", 1)
                for c in range(cols):
                    cell = (f"<a href='/row/{self.next_id()}'>{_text(rng, 1, 2)}</a>"
                            if c == 0 else _text(rng, 1, 3))
                    self.el(f"<td>{cell}</td>", 2 if c == 0 else 1)
                self.el("</tr>", 0)
            self.el("</tbody></table>", 0)
        else:  # cards
            for _ in range(rng.randint(2, 3)):
                self.el(f"<div class='card'><div class='body'><h5>{_text(rng, 2, 4)}</h5>"
                        f"<p>{_text(rng, 8, 20)}</p><button type='button'>"
                        f"{_text(rng, 1, 2)}</button></div></div>", 5)
        self.el("</div></div>", 0)


def build_page(n: int) -> str:
    """An HTML document with about ``n`` elements (±a dozen; deterministic for ``n``)."""
    b = _Builder(n - 6)  # html, head, title, style, body, main
    while b.left() > 0:
        b.block()
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>bench {n} elements</title>"
            "<style>body{font:14px sans-serif;margin:8px}.section{margin:6px 0}"
            ".card{display:inline-block;width:30%;margin:4px;border:1px solid #ccc}"
            "table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px}</style>"
            "</head><body><main>" + "".join(b.out) + "</main></body></html>")


class _Handler(http.server.BaseHTTPRequestHandler):
    pages: dict[str, bytes] = {}
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        body = self.pages.get(self.path.split("?")[0])
        if body is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class PageServer:
    """Serves the generated pages at http://127.0.0.1:PORT/<name>.html (a daemon thread).

    Use as a context manager; leaving it shuts the server down.
    """

    def __init__(self) -> None:
        pages = {f"/{name}.html": build_page(n).encode() for name, n in SIZES.items()}
        pages["/blank.html"] = b"<!doctype html><title>blank</title><p>blank</p>"
        handler = type("BenchHandler", (_Handler,), {"pages": pages})
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, name: str) -> str:
        """The URL of a generated page: ``small``, ``1k``, ``10k`` or ``blank``."""
        return f"{self.base_url}/{name}.html"

    def __enter__(self) -> PageServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
