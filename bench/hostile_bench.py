"""Hostile page data: what it costs the service (RELIABILITY S14).

Run from the repository root::

    .venv/bin/python -m bench.hostile_bench

It starts a private ``browserd serve`` (temporary ``BROWSERD_HOME``, free
ports, headless) and measures:

- ``/wait`` with a many-``**`` URL glob on a page whose URL is 64 KB (and
  2 MB), while a second client probes ``/healthz`` every 20 ms: the probes'
  median and worst latency;
- ``/eval`` of a 200 MB string: the answer, its time, and how much the
  service's peak RSS (VmHWM) grew;
- in-process: the glob matcher and the surrogate repair on large inputs.

Bench tooling, not product code: errors propagate.
"""

from __future__ import annotations

import http.server
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import trio
from supervision.harness import LOOPBACK_TLS

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from supervision.harness import start_service, stop_service

from browserd import jsontext as decoding
from browserd.textmatch import glob_match

PATTERN = "**/x/**/y/**/x/**/y/**/x/**/done"


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<!doctype html><title>bench</title><p>bench</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def probe_healthz(api: httpx.AsyncClient, seconds: float) -> str:
    probes: list[float] = []
    with trio.move_on_after(seconds):
        while True:
            started = time.perf_counter()
            (await api.get("/healthz")).raise_for_status()
            probes.append((time.perf_counter() - started) * 1000)
            await trio.sleep(0.02)
    return (f"/healthz x{len(probes)} with nothing else running: median "
            f"{statistics.median(probes):.1f} ms, worst {max(probes):.1f} ms")


async def glob_under_load(api: httpx.AsyncClient, tab: str, url_len: int) -> str:
    js = f"history.replaceState(null, '', '/' + 'x/'.repeat({url_len // 2}) + 'end'); 1"
    r = await api.post("/eval", json={"targetId": tab, "js": js, "timeoutMs": 60000})
    r.raise_for_status()
    probes: list[float] = []
    done = trio.Event()

    async def probe() -> None:
        while not done.is_set():
            started = time.perf_counter()
            (await api.get("/healthz")).raise_for_status()
            probes.append((time.perf_counter() - started) * 1000)
            await trio.sleep(0.02)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(probe)
        started = time.perf_counter()
        r = await api.post("/wait", json={"targetId": tab, "url": PATTERN, "timeoutMs": 2000})
        took = (time.perf_counter() - started) * 1000
        done.set()
    return (f"/wait on a {url_len // 1024} KB URL: {r.status_code} after {took:.0f} ms "
            f"(timeoutMs 2000); /healthz x{len(probes)}: median "
            f"{statistics.median(probes):.1f} ms, worst {max(probes):.1f} ms")


async def main() -> None:
    home = Path(tempfile.mkdtemp(prefix="browserd-hostile-bench-"))
    info = start_service(home)
    try:
        async with httpx.AsyncClient(base_url=info.base_url, headers=info.headers,
                                     timeout=120, verify=LOOPBACK_TLS) as api:
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            page = f"http://127.0.0.1:{server.server_address[1]}/"
            tab = (await api.post("/tabs/open", json={"url": page})).json()["targetId"]
            print(await probe_healthz(api, 2.0))
            for size in (64 * 1024, 2 * 1024 * 1024 - 64):
                print(await glob_under_load(api, tab, size))
            before = peak_rss_mib(info.pid)
            started = time.perf_counter()
            r = await api.post("/eval", json={"targetId": tab,
                                              "js": "'x'.repeat(200 * 1024 * 1024)",
                                              "timeoutMs": 60000})
            took = (time.perf_counter() - started) * 1000
            print(f"/eval of a 200 MB string: {r.status_code} {r.json().get('code')} after "
                  f"{took:.0f} ms; service peak RSS {before:.0f} -> "
                  f"{peak_rss_mib(info.pid):.0f} MiB")
    finally:
        stop_service(info)

    text = "http://a.test/" + "x/" * 32_000 + "nope"
    started = time.perf_counter()
    glob_match(PATTERN, text)
    print(f"glob_match, 64 KB URL, in-process: {(time.perf_counter() - started) * 1000:.2f} ms")
    for label, data in [
        ("1 lone surrogate in 7 MB of ASCII JSON",
         b'{"v":["' + b"abcdefgh" * 900_000 + b'\\ud800"]}'),
        ("1 M lone surrogates (13 MB)", b'"' + b"\\ud800\\u00e9x" * 1_000_000 + b'"'),
    ]:
        started = time.perf_counter()
        decoding.loads(data)
        print(f"decode, {label}: {(time.perf_counter() - started) * 1000:.0f} ms")


if __name__ == "__main__":
    trio.run(main)
