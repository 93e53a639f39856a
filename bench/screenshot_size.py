"""Viewport PNG size and time: browserd vs Playwright vs raw CDP variants, a few pages.

Run from the repository root::

    .venv/bin/python -m bench.screenshot_size [--n 10] [--warmup 2]

For each generated page (``blank``, ``small``, ``1k``, ``10k`` from
:mod:`bench.pages`) it measures a 1280x720 viewport PNG:

- browserd: ``POST /screenshot`` of a tab of a private ``browserd serve``
  (capture, decode, fsynced save, JSON answer);
- raw: ``Page.captureScreenshot`` on that same tab over the bench's own CDP
  connection (browserd's gateway), with ``optimizeForSpeed`` on and off, plus
  ``fromSurface``/``captureBeyondViewport`` as Playwright sends them (a
  viewport clip at scale 1);
- Playwright (Python, Debian's ``/usr/bin/chromium``): ``page.screenshot()``
  with a 1280x720 viewport, in its own browser.

Each cell is the PNG's size, then the median (and the minimum) of ``--n``
samples after ``--warmup`` untimed ones (bytes: the last sample; PNG bytes
are deterministic for a still page).
Browserd and raw samples are taken round-robin (so load drift hits all
alike); Playwright runs after, in its own event loop. Bench tooling, not
product code: errors propagate.
"""

from __future__ import annotations

import argparse
import binascii
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import trio
import trio_websocket
from supervision.harness import LOOPBACK_TLS

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import Service, Stats, remove_dir, temp_dir
from bench.pages import PageServer
from bench.screenshot_bench import MAX_MESSAGE, RawCdp

PAGES = ("blank", "small", "1k", "10k")
WIDTH, HEIGHT = 1280, 720
Sample = tuple[Stats, int]  # (ms, bytes)


async def _round_robin(fns: dict[str, Callable[[], Awaitable[int]]], n: int,
                       warmup: int) -> dict[str, Sample]:
    """Time each of ``fns`` ``n`` times, in turn (so load drift hits all alike)."""
    sizes = dict.fromkeys(fns, 0)
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for i in range(warmup + n):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            sizes[name] = await fn()
            if i >= warmup:
                samples[name].append((time.perf_counter() - t0) * 1000)
    return {name: (Stats.of(samples[name]), sizes[name]) for name in fns}


async def measure_browserd(server: PageServer, n: int, warmup: int,
                           work: Path) -> dict[str, dict[str, Sample]]:
    service = Service(work / "home")
    out: dict[str, dict[str, Sample]] = {}
    try:
        service.start()
        async with httpx.AsyncClient(base_url=service.base_url, headers=service.headers,
                                     timeout=120, verify=LOOPBACK_TLS) as api:
            cdp_port = (await api.get("/status")).json()["ports"]["cdp"]
            r = await api.post("/tabs/open", json={"url": server.url("blank")})
            r.raise_for_status()
            target = r.json()["targetId"]
            async with httpx.AsyncClient(timeout=10, headers=service.headers,
                                         verify=LOOPBACK_TLS) as plain:
                version = (await plain.get(f"http://127.0.0.1:{cdp_port}/json/version")).json()
            auth = [(k.lower().encode(), v.encode()) for k, v in service.headers.items()]
            async with trio_websocket.open_websocket_url(
                    version["webSocketDebuggerUrl"], max_message_size=MAX_MESSAGE,
                    extra_headers=auth) as ws:
                cdp = RawCdp(ws)
                session = (await cdp.send("Target.attachToTarget",
                                          {"targetId": target, "flatten": True}))["sessionId"]

                def raw(**params: Any) -> Callable[[], Awaitable[int]]:
                    async def once() -> int:
                        result = await cdp.send("Page.captureScreenshot",
                                                {"format": "png", **params}, session)
                        return len(binascii.a2b_base64(result["data"]))
                    return once

                async def via_browserd() -> int:
                    r = await api.post("/screenshot", json={"targetId": target})
                    r.raise_for_status()
                    body = r.json()
                    assert (body["width"], body["height"]) == (WIDTH, HEIGHT), body
                    return int(body["bytes"])

                clip = {"x": 0, "y": 0, "width": WIDTH, "height": HEIGHT, "scale": 1}
                variants: dict[str, Callable[[], Awaitable[int]]] = {
                    "browserd": via_browserd,
                    "raw fast": raw(optimizeForSpeed=True, fromSurface=True),
                    "raw default": raw(fromSurface=True),
                    "raw as Playwright": raw(clip=clip, captureBeyondViewport=False),
                    "raw fast, clip": raw(clip=clip, optimizeForSpeed=True),
                }
                for page in PAGES:
                    r = await api.post("/navigate", json={"targetId": target,
                                                          "url": server.url(page)})
                    r.raise_for_status()
                    out[page] = await _round_robin(variants, n, warmup)
    finally:
        service.stop()
    return out


def measure_playwright(server: PageServer, n: int, warmup: int) -> dict[str, Sample]:
    from playwright.sync_api import sync_playwright

    out: dict[str, Sample] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
        page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        for name in PAGES:
            page.goto(server.url(name))
            size = 0
            for _ in range(warmup):
                size = len(page.screenshot())
            samples = []
            for _ in range(n):
                t0 = time.perf_counter()
                size = len(page.screenshot())
                samples.append((time.perf_counter() - t0) * 1000)
            out[name] = (Stats.of(samples), size)
        browser.close()
    return out


def report(bd: dict[str, dict[str, Sample]], pw: dict[str, Sample]) -> str:
    names = [*next(iter(bd.values())), "Playwright"]
    lines = ["| page | " + " | ".join(names) + " |",
             "|---|" + "---|" * len(names)]
    for page in PAGES:
        cells = [*bd[page].values(), pw[page]]
        lines.append(f"| {page} | " + " | ".join(
            f"{size / 1000:.1f} KB, {ms.median:.0f} ms ({ms.min:.0f})" for ms, size in cells)
                     + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    work = temp_dir("shotsize-")
    try:
        with PageServer() as server:
            bd = trio.run(measure_browserd, server, args.n, args.warmup, work)
            pw = measure_playwright(server, args.n, args.warmup)
        print(report(bd, pw))
    finally:
        remove_dir(work)


if __name__ == "__main__":
    main()
