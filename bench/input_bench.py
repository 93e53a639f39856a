"""Input latency: how long a non-navigating click, type, press and hover take to answer.

Run from the repository root::

    .venv/bin/python -m bench.input_bench [--n 12] [--warmup 2]

It starts a private ``browserd serve`` (temporary ``BROWSERD_HOME``, free
ports, headless), serves a one-field page from a local thread, opens it in a
tab, and times each input route over one keep-alive client: the median of
``--n`` calls after ``--warmup`` untimed ones. The answer waits until the
page has run what the input set off (twice round its task queue), not a
fixed time. Bench tooling, not product code: errors propagate.
"""

from __future__ import annotations

import argparse
import http.server
import statistics
import tempfile
import threading
import time
from pathlib import Path

import trio
from supervision.harness import start_service, stop_service

PAGE = (b"<!doctype html><input id=i aria-label=field>"
        b"<button onclick=\"document.title='c'+Math.random()\">Go</button>")
CALLS = (("click", {"selector": "button"}), ("type", {"selector": "#i", "text": "hello"}),
         ("press", {"key": "a"}), ("hover", {"selector": "button"}),
         ("click (role/name)", {"role": "button", "name": "Go"}))


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args: object) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=12)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    service = start_service(Path(tempfile.mkdtemp(prefix="browserd-bench-")))
    try:
        async def run() -> None:
            async with service.client() as api:
                tab = (await api.post("/tabs/open", json={"url": url})).json()["targetId"]
                print(f"{'route':<20} {'median ms':>10}")
                for name, body in CALLS:
                    route = "/" + name.split()[0]
                    times = []
                    for i in range(args.n + args.warmup):
                        started = time.perf_counter()
                        r = await api.post(route, json={"targetId": tab, **body})
                        r.raise_for_status()
                        if i >= args.warmup:
                            times.append((time.perf_counter() - started) * 1000)
                    print(f"{name:<20} {statistics.median(times):>10.1f}")

        trio.run(run)
    finally:
        stop_service(service)
        server.shutdown()


if __name__ == "__main__":
    main()
