"""Screenshot cost: raw CDP vs browserd's ``POST /screenshot``, on one browser.

Run from the repository root::

    /tmp/venv0/bin/python -m bench.screenshot_bench [--n 20] [--warmup 3]

It starts a private ``browserd serve`` (temporary ``BROWSERD_HOME``, free
ports, headless), serves a generated long page from a local thread, opens it
in one browserd tab, and then measures, for the viewport and the full page:

- raw: ``Page.captureScreenshot`` over the bench's *own* trio-websocket
  connection to the same Chromium (CDP port read from ``/status``, its own
  flattened session on the same tab), base64 decode, and a plain file write
  (no fsync) — with ``optimizeForSpeed`` on and off;
- browserd: ``POST /screenshot`` over one keep-alive httpx client (capture,
  bring-to-front, decode, atomic fsynced save, JSON answer).

Each cell is the median of ``--n`` samples after ``--warmup`` untimed ones;
the three variants of a row are sampled round-robin, so load drift hits all alike.
It prints a table with the ratios browserd / raw, the file sizes, and what
decoding the full page's base64 costs. Bench tooling, not product code:
errors propagate.
"""

from __future__ import annotations

import argparse
import binascii
import http.server
import itertools
import os
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
import trio
import trio_websocket
from supervision.harness import LOOPBACK_TLS

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import Service, Stats, remove_dir, temp_dir
from bench.pages import build_page

MAX_MESSAGE = 512 * 1024 * 1024


def long_page(height_px: int) -> bytes:
    """A realistic page (text, tables, forms) exactly ``height_px`` tall (plus body margins)."""
    body = build_page(2000)
    return body.replace("<main>", f"<main style='height:{height_px}px;overflow:hidden'>").encode()


class _Handler(http.server.BaseHTTPRequestHandler):
    page = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(self.page)))
        self.end_headers()
        self.wfile.write(self.page)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class RawCdp:
    """The bench's own CDP client: one command at a time, replies matched by id."""

    def __init__(self, ws: trio_websocket.WebSocketConnection) -> None:
        self.ws = ws
        self.ids = itertools.count(1)

    async def send(self, method: str, params: dict[str, Any] | None = None,
                   session_id: str | None = None) -> dict[str, Any]:
        msg_id = next(self.ids)
        message: dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
        if session_id:
            message["sessionId"] = session_id
        await self.ws.send_message(orjson.dumps(message).decode())
        while True:
            reply = orjson.loads(await self.ws.get_message())
            if reply.get("id") == msg_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result


async def interleaved(fns: list[Callable[[], Awaitable[object]]], n: int,
                      warmup: int) -> list[Stats]:
    """Time each of ``fns`` ``n`` times, round-robin (so load drift hits all alike)."""
    for fn in fns:
        for _ in range(warmup):
            await fn()
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(n):
        for fn, out in zip(fns, samples, strict=True):
            t0 = time.perf_counter()
            await fn()
            out.append((time.perf_counter() - t0) * 1000)
    return [Stats.of(s) for s in samples]


async def run(n: int, warmup: int, height: int) -> str:
    work = temp_dir("shotbench-")
    _Handler.page = long_page(height)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    service = Service(work / "home")
    lines: list[str] = []
    try:
        service.start()
        async with httpx.AsyncClient(base_url=service.base_url, headers=service.headers,
                                     timeout=120, verify=LOOPBACK_TLS) as api:
            status = (await api.get("/status")).json()
            cdp_port = status["ports"]["cdp"]
            url = f"http://127.0.0.1:{server.server_address[1]}/long.html"
            r = await api.post("/tabs/open", json={"url": url})
            r.raise_for_status()
            target = r.json()["targetId"]
            dims = (await api.post("/eval", json={
                "targetId": target,
                "js": "[document.documentElement.scrollWidth,"
                      " document.documentElement.scrollHeight]"})).json()["result"]
            # The CDP port is browserd's gateway: the same token.
            async with httpx.AsyncClient(timeout=10, headers=service.headers,
                                         verify=LOOPBACK_TLS) as plain:
                version = (await plain.get(f"http://127.0.0.1:{cdp_port}/json/version")).json()
            auth = [(k.lower().encode(), v.encode()) for k, v in service.headers.items()]
            async with trio_websocket.open_websocket_url(
                    version["webSocketDebuggerUrl"], max_message_size=MAX_MESSAGE,
                    extra_headers=auth) as ws:
                cdp = RawCdp(ws)
                attached = await cdp.send("Target.attachToTarget",
                                          {"targetId": target, "flatten": True})
                session = attached["sessionId"]
                out_dir = work / "raw"
                out_dir.mkdir()
                counter = itertools.count()
                sizes: dict[str, int] = {}

                def raw(full: bool, fast: bool) -> Callable[[], Awaitable[object]]:
                    key = f"raw-{'full' if full else 'vp'}-{'fast' if fast else 'compact'}"

                    async def once() -> None:
                        params: dict[str, Any] = {"format": "png", "optimizeForSpeed": fast}
                        if full:
                            metrics = await cdp.send("Page.getLayoutMetrics", None, session)
                            size = metrics["cssContentSize"]
                            params["captureBeyondViewport"] = True
                            params["clip"] = {"x": 0, "y": 0, "width": size["width"],
                                              "height": size["height"], "scale": 1}
                        result = await cdp.send("Page.captureScreenshot", params, session)
                        data = binascii.a2b_base64(result["data"])
                        path = out_dir / f"{next(counter)}.png"
                        path.write_bytes(data)
                        sizes[key] = len(data)
                        path.unlink()

                    return once

                def via_browserd(full: bool) -> Callable[[], Awaitable[object]]:
                    key = f"bd-{'full' if full else 'vp'}"

                    async def once() -> None:
                        r = await api.post("/screenshot", json={"targetId": target,
                                                                "fullPage": full})
                        r.raise_for_status()
                        body = r.json()
                        sizes[key] = body["bytes"]
                        if body.get("scaled"):
                            raise RuntimeError(f"browserd scaled the capture: {body['note']}")

                    return once

                rows = []
                for full in (False, True):
                    label = "full page" if full else "viewport"
                    fast, compact, bd = await interleaved(
                        [raw(full, True), raw(full, False), via_browserd(full)], n, warmup)
                    rows.append((label, fast, compact, bd, full))

                # What decoding the full page's base64 costs (the part browserd
                # moves to a worker thread above 1 MiB).
                shot = await cdp.send("Page.captureScreenshot", {
                    "format": "png", "optimizeForSpeed": True, "captureBeyondViewport": True,
                    "clip": {"x": 0, "y": 0, "width": dims[0], "height": dims[1], "scale": 1}},
                    session)
                decode = []
                for _ in range(n):
                    t0 = time.perf_counter()
                    binascii.a2b_base64(shot["data"])
                    decode.append((time.perf_counter() - t0) * 1000)
                decode_stats = Stats.of(decode)
                b64_mb = len(shot["data"]) / 1e6

        lines.append(f"page {dims[0]}x{dims[1]} CSS px; N={n} after {warmup} warm-up; "
                     f"load avg {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        lines.append("")
        lines.append(f"{'capture':<10} {'raw fast':>10} {'raw compact':>12} {'browserd':>10} "
                     f"{'bd/raw fast':>12} {'bd/raw compact':>15} "
                     f"{'PNG bytes fast / compact / bd':>32}")
        for label, fast, compact, bd, full in rows:
            tag = "full" if full else "vp"
            size_txt = (f"{sizes[f'raw-{tag}-fast']:,} / {sizes[f'raw-{tag}-compact']:,} / "
                        f"{sizes[f'bd-{tag}']:,}")
            lines.append(
                f"{label:<10} {fast.median:>8.1f}ms {compact.median:>10.1f}ms "
                f"{bd.median:>8.1f}ms {bd.median / fast.median:>11.2f}x "
                f"{bd.median / compact.median:>14.2f}x {size_txt:>32}")
        lines.append("")
        lines.append("p10-p90 (ms): " + "; ".join(
            f"{label}: raw fast {f.p10:.0f}-{f.p90:.0f}, raw compact {c.p10:.0f}-{c.p90:.0f},"
            f" browserd {b.p10:.0f}-{b.p90:.0f}" for label, f, c, b, _ in rows))
        lines.append(f"base64 decode of the full page ({b64_mb:.2f} MB of base64): "
                     f"median {decode_stats.median:.2f} ms "
                     f"({decode_stats.median / b64_mb:.2f} ms/MB)")
        return "\n".join(lines)
    finally:
        service.stop()
        server.shutdown()
        server.server_close()
        remove_dir(work)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20, help="timed samples per cell")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first")
    parser.add_argument("--height", type=int, default=12000,
                        help="page height in CSS px (keep it under 16384: browserd scales above)")
    args = parser.parse_args(argv)
    print(trio.run(run, args.n, args.warmup, args.height))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
