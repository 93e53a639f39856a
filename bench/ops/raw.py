"""The raw-CDP side: async, run inside the :class:`~bench.common.TrioWorker`.

Raw CDP on a Chromium the bench launched with browserd's flags
(:func:`bench.common.raw_browser`), driven through one connection and a
work tab held by :func:`raw_hold` until :func:`raw_stop`. Errors propagate
to the caller.
"""

from __future__ import annotations

import base64
import math
import os
import time
from pathlib import Path
from typing import Any

import attrs
import orjson
import trio

from .. import common
from ..common import RawBrowser, RawTab, cpu_delta, cpu_of, raw_browser, raw_open_tab, time_async
from .records import CONC_EVAL_JS, EVAL_JS, ConcResult, Result

__all__ = ["RawCtx", "raw_aria", "raw_cold_first_tab", "raw_cold_start", "raw_conc",
           "raw_conc_setup", "raw_conc_teardown", "raw_dom_text", "raw_eval", "raw_goto",
           "raw_hold", "raw_navigate", "raw_new_tab", "raw_screenshot", "raw_stop"]

@attrs.define
class RawCtx:
    """The raw side's long-lived browser, its work tab, and where files go."""

    browser: RawBrowser
    tab: RawTab
    out_dir: Path
    start_profile: Path
    cancel: trio.CancelScope


async def raw_hold(profile: Path, start_profile: Path, out_dir: Path,
                   task_status: trio.TaskStatus[RawCtx] = trio.TASK_STATUS_IGNORED) -> None:
    """Launch the raw side's browser and a work tab; keep them until cancelled."""
    with trio.CancelScope() as cancel:
        async with raw_browser(profile, common.free_port_pair()) as rb:
            tab = await raw_open_tab(rb.conn)
            task_status.started(RawCtx(browser=rb, tab=tab, out_dir=out_dir,
                                       start_profile=start_profile, cancel=cancel))
            await trio.sleep_forever()


async def raw_stop(ctx: RawCtx) -> None:
    ctx.cancel.cancel()


async def raw_cold_start(ctx: RawCtx, n: int, warmup: int) -> Result:
    """Spawn → DevTools line → websocket open → Browser.getVersion answered."""
    samples = []
    for i in range(warmup + n):
        t0 = time.perf_counter()
        async with raw_browser(ctx.start_profile, common.free_port_pair()):
            dt = (time.perf_counter() - t0) * 1000
        if i >= warmup:
            samples.append(dt)
    return Result(samples=samples)


async def raw_cold_first_tab(ctx: RawCtx, n: int, warmup: int) -> Result:
    """Launch, open and set up a tab, evaluate ``1+1`` in it."""
    samples = []
    for i in range(warmup + n):
        t0 = time.perf_counter()
        async with raw_browser(ctx.start_profile, common.free_port_pair()) as rb:
            tab = await raw_open_tab(rb.conn)
            await tab.send("Runtime.evaluate", {"expression": EVAL_JS, "returnByValue": True})
            dt = (time.perf_counter() - t0) * 1000
        if i >= warmup:
            samples.append(dt)
    return Result(samples=samples)


async def raw_new_tab(ctx: RawCtx, n: int, warmup: int) -> Result:
    """Target.createTarget + Target.attachToTarget(flatten); closed untimed."""
    conn = ctx.browser.conn
    samples = []
    for i in range(warmup + n):
        t0 = time.perf_counter()
        tab = await raw_open_tab(conn, setup=False)
        dt = (time.perf_counter() - t0) * 1000
        await conn.send("Target.closeTarget", {"targetId": tab.target_id})
        if i >= warmup:
            samples.append(dt)
    return Result(samples=samples)


async def raw_goto(tab: RawTab, url: str) -> None:
    """Page.navigate, then wait for the tab's Page.loadEventFired."""
    sub = tab.conn.subscribe(tab.session_id, frozenset({"Page.loadEventFired"}))
    try:
        reply = await tab.send("Page.navigate", {"url": url})
        if reply.get("errorText"):
            raise RuntimeError(f"navigation failed: {reply['errorText']}")
        await sub.receive()
    finally:
        tab.conn.unsubscribe(sub)


async def raw_navigate(ctx: RawCtx, n: int, warmup: int, url: str) -> Result:
    return Result(samples=await time_async(lambda: raw_goto(ctx.tab, url), n, warmup))


async def raw_eval(ctx: RawCtx, n: int, warmup: int) -> Result:
    async def once() -> None:
        r = await ctx.tab.send("Runtime.evaluate", {"expression": EVAL_JS,
                                                    "returnByValue": True})
        assert r["result"]["value"] == 2

    return Result(samples=await time_async(once, n, warmup))


async def raw_screenshot(ctx: RawCtx, n: int, warmup: int, url: str, full: bool) -> Result:
    """Page.captureScreenshot (browserd's parameters: PNG, optimizeForSpeed), decode, write."""
    await raw_goto(ctx.tab, url)
    path = ctx.out_dir / ("raw-full.png" if full else "raw-view.png")
    sizes: list[int] = []

    async def once() -> None:
        params: dict[str, Any] = {"format": "png", "optimizeForSpeed": True,
                                  "fromSurface": True}
        if full:
            metrics = await ctx.tab.send("Page.getLayoutMetrics")
            size = metrics["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": math.ceil(size["width"]),
                              "height": math.ceil(size["height"]), "scale": 1}
            params["captureBeyondViewport"] = True
        r = await ctx.tab.send("Page.captureScreenshot", params)
        data = base64.b64decode(r["data"])
        path.write_bytes(data)
        sizes.append(len(data))

    samples = await time_async(once, n, warmup)
    return Result(samples=samples, info={"bytes": sizes[-1]})


async def raw_aria(ctx: RawCtx, n: int, warmup: int, url: str) -> Result:
    """Accessibility.getFullAXTree (parsed); size = its JSON in characters."""
    await raw_goto(ctx.tab, url)
    last: list[dict[str, Any]] = []

    async def once() -> None:
        last[:] = [await ctx.tab.send("Accessibility.getFullAXTree")]

    samples = await time_async(once, n, warmup)
    return Result(samples=samples, info={"chars": len(orjson.dumps(last[0]))})


async def raw_dom_text(ctx: RawCtx, n: int, warmup: int, url: str) -> Result:
    await raw_goto(ctx.tab, url)
    last: list[int] = []

    async def once() -> None:
        r = await ctx.tab.send("Runtime.evaluate", {"expression": "document.body.innerText",
                                                    "returnByValue": True})
        last[:] = [len(r["result"]["value"])]

    samples = await time_async(once, n, warmup)
    return Result(samples=samples, info={"chars": last[0]})


async def raw_conc_setup(ctx: RawCtx, url: str, k: int) -> list[RawTab]:
    tabs = []
    for _ in range(k):
        tab = await raw_open_tab(ctx.browser.conn)
        await raw_goto(tab, url)
        tabs.append(tab)
    return tabs


async def raw_conc_teardown(ctx: RawCtx, tabs: list[RawTab]) -> None:
    for tab in tabs:
        await ctx.browser.conn.send("Target.closeTarget", {"targetId": tab.target_id})


async def raw_conc(ctx: RawCtx, tabs: list[RawTab], seconds: float, workload: str) -> ConcResult:
    """Each tab loops its request (``eval`` or ``snapshot``) until the time is up."""
    count = 0

    async def worker(tab: RawTab) -> None:
        nonlocal count
        while time.perf_counter() < stop_at:
            if workload == "eval":
                await tab.send("Runtime.evaluate", {"expression": CONC_EVAL_JS,
                                                    "returnByValue": True})
            else:
                await tab.send("Accessibility.getFullAXTree")
            count += 1

    chromium = common.chromium_pids(ctx.browser.profile_dir)
    before = {"client": cpu_of([os.getpid()]), "chromium": cpu_of(chromium)}
    t0 = time.perf_counter()
    stop_at = t0 + seconds
    async with trio.open_nursery() as nursery:
        for tab in tabs:
            nursery.start_soon(worker, tab)
    elapsed = time.perf_counter() - t0
    cpu = {"client": cpu_delta(before["client"], cpu_of([os.getpid()])),
           "chromium": cpu_delta(before["chromium"], cpu_of(chromium))}
    return ConcResult(k=len(tabs), requests=count, seconds=elapsed, cpu=cpu)
