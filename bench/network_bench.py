"""What the network ring costs the service: CPU per page load, ring on vs off, same run.

Run from the repository root::

    .venv/bin/python -m bench.network_bench [--loads 20] [--rounds 5]

It starts two private ``browserd serve`` instances side by side (temporary
``BROWSERD_HOME`` each, headless): one with ``network_capture = "always"``
(every tab's Network domain on, the ring fed from its events) and one with
the default ``"on-demand"``, where a tab no network route touched does not
record. A local thread serves a page that
makes 100 requests (the document, 40 images, 20 scripts, 10 stylesheets,
29 fetches whose bodies it reads; ``Cache-Control: no-store``). Each round
loads the page ``--loads`` times in one tab of each service (``POST
/navigate`` + waiting for the page's fetches), ring-off and ring-on
alternating round by round so background load hits both alike, and reads
each service process's CPU time (user + system, /proc) around its loads.

Prints per-round CPU ms per page load for both, the medians, the extra cost
of the ring in % and what the ring held. Bench tooling, not product code:
errors propagate.
"""

from __future__ import annotations

import argparse
import http.server
import statistics
import sys
import threading
from pathlib import Path
from typing import Any

import httpx

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import Service, cpu_seconds, remove_dir, temp_dir

IMAGES, SCRIPTS, STYLES, FETCHES = 40, 20, 10, 29  # + the document = 100 requests
_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415478"
    "9c63f8cfc0000003010100c9fe92ef0000000049454e44ae426082")


def page_html() -> bytes:
    parts = ["<!doctype html><title>100 requests</title>"]
    parts += [f'<link rel="stylesheet" href="/s/{i}.css">' for i in range(STYLES)]
    parts += [f'<img src="/i/{i}.png" width="4" height="4">' for i in range(IMAGES)]
    parts += [f'<script src="/j/{i}.js"></script>' for i in range(SCRIPTS)]
    parts.append(f"<script>window.done = Promise.all(Array.from({{length: {FETCHES}}}, "
                 "(_, i) => fetch('/f/' + i + '.json').then(r => r.text())))"
                 ".then(() => 'done');</script>")
    return "".join(parts).encode()


class _Handler(http.server.BaseHTTPRequestHandler):
    page = page_html()

    def do_GET(self) -> None:
        path = self.path
        if path == "/page.html":
            body, kind = self.page, "text/html"
        elif path.startswith("/i/"):
            body, kind = _PNG, "image/png"
        elif path.startswith("/j/"):
            body, kind = b"window.x = (window.x || 0) + 1;", "text/javascript"
        elif path.startswith("/s/"):
            body, kind = b"p { margin: 0 }", "text/css"
        elif path.startswith("/f/"):
            body, kind = b'{"ok": true, "items": [1, 2, 3]}', "application/json"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def load(client: httpx.Client, tab: str, url: str) -> None:
    r = client.post("/navigate", json={"targetId": tab, "url": url})
    r.raise_for_status()
    r = client.post("/eval", json={"targetId": tab, "js": "window.done", "await": True})
    r.raise_for_status()
    assert r.json()["result"] == "done", r.text


def measure(service: Service, client: httpx.Client, tab: str, url: str, loads: int) -> float:
    """Service CPU ms per page load over ``loads`` loads."""
    before = cpu_seconds(service.pid)
    for _ in range(loads):
        load(client, tab, url)
    return (cpu_seconds(service.pid) - before) * 1000 / loads


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loads", type=int, default=20, help="page loads per round and side")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/page.html"
    homes = {"on": temp_dir("bench-net-on-"), "off": temp_dir("bench-net-off-")}
    services = {side: Service(home, env={"BROWSERD_NETWORK_CAPTURE": "always" if side == "on"
                                         else "on-demand"})
                for side, home in homes.items()}
    results: dict[str, list[float]] = {"on": [], "off": []}
    try:
        clients, tabs = {}, {}
        for side, service in services.items():
            service.start()
            clients[side] = service.client()
            r = clients[side].post("/tabs/open", json={"url": "about:blank"})
            r.raise_for_status()
            tabs[side] = r.json()["targetId"]
            for _ in range(3):  # warm-up: caches, JIT, first-use paths
                load(clients[side], tabs[side], url)
        for rnd in range(args.rounds):
            order = ("off", "on") if rnd % 2 == 0 else ("on", "off")
            for side in order:
                results[side].append(measure(services[side], clients[side], tabs[side], url,
                                             args.loads))
            print(f"round {rnd + 1}: off {results['off'][-1]:.1f} ms/load, "
                  f"on {results['on'][-1]:.1f} ms/load", flush=True)
        ring = clients["on"].get("/network", params={"targetId": tabs["on"], "limit": 1})
        ring.raise_for_status()
        held = ring.json()
        for client in clients.values():
            client.close()
    finally:
        for service in services.values():
            service.stop()
        server.shutdown()
        for home in homes.values():
            remove_dir(home)
    off, on = statistics.median(results["off"]), statistics.median(results["on"])
    print(f"\nservice CPU per page load (median of {args.rounds} rounds x {args.loads} loads, "
          f"{IMAGES + SCRIPTS + STYLES + FETCHES + 1} requests each):")
    print(f"  ring off: {off:.2f} ms   ring on: {on:.2f} ms   extra: {on - off:+.2f} ms "
          f"({(on / off - 1) * 100:+.1f}%)")
    print(f"  ring on held {held['kept']} requests, dropped {held['dropped']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
