"""The Playwright side: async, run inside the :class:`~bench.common.AsyncioWorker`.

Playwright's async API driving the same Debian Chromium (one browser, one
context, a work page); :func:`pw_process_start` alone is synchronous (a
fresh Python per sample). Errors propagate to the caller.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import attrs

from .. import common
from ..common import CHROMIUM, cpu_delta, cpu_of, time_async
from .records import CONC_EVAL_JS, EVAL_JS, ConcResult, Result

__all__ = ["PwCtx", "pw_aria", "pw_cold_first_tab", "pw_cold_start", "pw_conc",
           "pw_conc_setup", "pw_conc_teardown", "pw_dom_text", "pw_eval", "pw_launch_kwargs",
           "pw_memory", "pw_navigate", "pw_new_tab", "pw_process_start", "pw_screenshot",
           "pw_setup", "pw_teardown"]

@attrs.define
class PwCtx:
    pw: Any
    browser: Any
    context: Any
    page: Any
    out_dir: Path

    @property
    def driver_pid(self) -> int | None:
        """The Playwright driver (node) process: a child of this process."""
        for pid in common.descendants(os.getpid()):
            cmd = common._cmdline(pid)
            if "run-driver" in cmd:
                return pid
        return None


def pw_launch_kwargs() -> dict[str, Any]:
    return {"executable_path": CHROMIUM, "args": ["--no-sandbox"]}


async def pw_setup(out_dir: Path) -> PwCtx:
    from playwright.async_api import async_playwright

    pw = await async_playwright().start()
    browser = await pw.chromium.launch(**pw_launch_kwargs())
    context = await browser.new_context(viewport={"width": 1280, "height": 720})
    page = await context.new_page()
    return PwCtx(pw=pw, browser=browser, context=context, page=page, out_dir=out_dir)


async def pw_teardown(ctx: PwCtx) -> None:
    with contextlib.suppress(Exception):
        await ctx.browser.close()
    with contextlib.suppress(Exception):
        await ctx.pw.stop()


async def pw_cold_start(ctx: PwCtx, n: int, warmup: int) -> Result:
    """chromium.launch() until it returns; closed untimed."""
    samples = []
    for i in range(warmup + n):
        t0 = time.perf_counter()
        browser = await ctx.pw.chromium.launch(**pw_launch_kwargs())
        dt = (time.perf_counter() - t0) * 1000
        await browser.close()
        if i >= warmup:
            samples.append(dt)
    return Result(samples=samples)


async def pw_cold_first_tab(ctx: PwCtx, n: int, warmup: int) -> Result:
    """launch() + new_page() + evaluate ``1+1``; closed untimed."""
    samples = []
    for i in range(warmup + n):
        t0 = time.perf_counter()
        browser = await ctx.pw.chromium.launch(**pw_launch_kwargs())
        page = await browser.new_page()
        await page.evaluate(EVAL_JS)
        dt = (time.perf_counter() - t0) * 1000
        await browser.close()
        if i >= warmup:
            samples.append(dt)
    return Result(samples=samples)


async def pw_new_tab(ctx: PwCtx, n: int, warmup: int) -> Result:
    samples = []
    for i in range(warmup + n):
        t0 = time.perf_counter()
        page = await ctx.context.new_page()
        dt = (time.perf_counter() - t0) * 1000
        await page.close()
        if i >= warmup:
            samples.append(dt)
    return Result(samples=samples)


async def pw_navigate(ctx: PwCtx, n: int, warmup: int, url: str) -> Result:
    return Result(samples=await time_async(lambda: ctx.page.goto(url), n, warmup))


async def pw_eval(ctx: PwCtx, n: int, warmup: int) -> Result:
    async def once() -> None:
        assert await ctx.page.evaluate(EVAL_JS) == 2

    return Result(samples=await time_async(once, n, warmup))


async def pw_screenshot(ctx: PwCtx, n: int, warmup: int, url: str, full: bool) -> Result:
    await ctx.page.goto(url)
    path = ctx.out_dir / ("pw-full.png" if full else "pw-view.png")
    samples = await time_async(lambda: ctx.page.screenshot(path=str(path), full_page=full),
                               n, warmup)
    return Result(samples=samples, info={"bytes": path.stat().st_size})


async def pw_aria(ctx: PwCtx, n: int, warmup: int, url: str) -> Result:
    await ctx.page.goto(url)
    last: list[str] = []

    async def once() -> None:
        last[:] = [await ctx.page.locator("body").aria_snapshot()]

    samples = await time_async(once, n, warmup)
    return Result(samples=samples, info={"chars": len(last[0])})


async def pw_dom_text(ctx: PwCtx, n: int, warmup: int, url: str) -> Result:
    await ctx.page.goto(url)
    last: list[int] = []

    async def once() -> None:
        last[:] = [len(await ctx.page.inner_text("body"))]

    samples = await time_async(once, n, warmup)
    return Result(samples=samples, info={"chars": last[0]})


async def pw_conc_setup(ctx: PwCtx, url: str, k: int) -> list[Any]:
    pages = []
    for _ in range(k):
        page = await ctx.context.new_page()
        await page.goto(url)
        pages.append(page)
    return pages


async def pw_conc_teardown(ctx: PwCtx, pages: list[Any]) -> None:
    for page in pages:
        await page.close()


async def pw_conc(ctx: PwCtx, pages: list[Any], seconds: float, workload: str) -> ConcResult:
    import asyncio

    count = 0

    async def worker(page: Any) -> None:
        nonlocal count
        while time.perf_counter() < stop_at:
            if workload == "eval":
                await page.evaluate(CONC_EVAL_JS)
            else:
                await page.locator("body").aria_snapshot()
            count += 1

    driver = ctx.driver_pid
    client = [os.getpid()] + ([driver] if driver else [])
    chromium = [p for p in common.descendants(driver or os.getpid())
                if "chromium" in common._cmdline(p)]
    before = {"client": cpu_of(client), "chromium": cpu_of(chromium)}
    t0 = time.perf_counter()
    stop_at = t0 + seconds
    await asyncio.gather(*(worker(p) for p in pages))
    elapsed = time.perf_counter() - t0
    cpu = {"client": cpu_delta(before["client"], cpu_of(client)),
           "chromium": cpu_delta(before["chromium"], cpu_of(chromium))}
    return ConcResult(k=len(pages), requests=count, seconds=elapsed, cpu=cpu)


async def pw_memory(ctx: PwCtx, url: str, tabs: int) -> dict[str, Any]:
    """The driver's RSS/PSS with one page, then with ``tabs`` more pages open."""
    driver = ctx.driver_pid
    if driver is None:
        return {}
    out: dict[str, Any] = {"idle_rss_kb": common.rss_kb(driver),
                           "idle_pss_kb": common.pss_kb(driver)}
    pages = []
    try:
        for _ in range(tabs):
            page = await ctx.context.new_page()
            await page.goto(url)
            pages.append(page)
        out["tabs_rss_kb"] = common.rss_kb(driver)
        out["tabs_pss_kb"] = common.pss_kb(driver)
        chromium = [p for p in common.descendants(driver) if "chromium" in common._cmdline(p)]
        out["chromium_pss_kb"] = sum(common.pss_kb(p) for p in chromium)
    finally:
        for page in pages:
            with contextlib.suppress(Exception):
                await page.close()
    return out


_PW_PROCESS_SCRIPT = """
import sys
from playwright.sync_api import sync_playwright
p = sync_playwright().start()
b = p.chromium.launch(executable_path=sys.argv[1], args=["--no-sandbox"])
print("ready", flush=True)
sys.stdin.readline()
b.close()
p.stop()
"""


def pw_process_start(n: int, warmup: int) -> Result:
    """A fresh Python that imports Playwright and launches: spawn → "ready" printed."""
    samples = []
    for i in range(warmup + n):
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", _PW_PROCESS_SCRIPT, CHROMIUM],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert proc.stdout is not None and proc.stdin is not None
        line = proc.stdout.readline()
        dt = (time.perf_counter() - t0) * 1000
        proc.stdin.write(b"\n")
        proc.stdin.close()
        proc.wait(timeout=30)
        if line.strip() != b"ready":
            raise RuntimeError("the Playwright process did not get ready")
        if i >= warmup:
            samples.append(dt)
    return Result(samples=samples)
