"""One function per operation per side.

Every timed function takes its side's context, ``n`` and ``warmup`` (plus
the operation's own arguments) and returns a :class:`Result`: wall-clock
samples in ms and an ``info`` dict (output sizes and the like).

- ``raw_*``: async, run inside the :class:`~bench.common.TrioWorker`; raw CDP
  over trio-websocket on a Chromium the bench launched with browserd's flags.
- ``pw_*``: async, run inside the :class:`~bench.common.AsyncioWorker`;
  Playwright's async API driving the same Debian Chromium.
- ``bd_*``: synchronous, in the main thread; browserd's HTTP API through
  one keep-alive ``httpx.Client``. A route that answers 404 "no route"
  raises :class:`RouteMissing` (the table says "n/a (route missing)").

Concurrency (``*_conc``) runs ``k`` workers on ``k`` tabs for a fixed time
and reports requests per second and CPU seconds per process group; memory
(``bd_memory``, ``pw_memory``) reads /proc. Errors propagate to the caller.
"""

from __future__ import annotations

import base64
import contextlib
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import attrs
import httpx
import orjson
import trio

from . import common
from .common import (
    CHROMIUM,
    RawBrowser,
    RawTab,
    Service,
    cpu_delta,
    cpu_of,
    raw_browser,
    raw_open_tab,
    time_async,
    time_sync,
)

EVAL_JS = "1+1"
CONC_EVAL_JS = "document.querySelectorAll('a').length"
BIG = 20_000_000


class RouteMissing(Exception):
    """browserd answered 404 "no route" for this path (another helper is still building it)."""


@attrs.frozen(kw_only=True)
class Result:
    samples: list[float]
    info: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ConcResult:
    """``k`` busy tabs for ``seconds``: ``requests`` done; CPU seconds by process group."""

    k: int
    requests: int
    seconds: float
    cpu: dict[str, float]

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def cpu_ms_per_request(self, group: str) -> float:
        return 1000 * self.cpu.get(group, 0.0) / self.requests if self.requests else math.nan


# -- raw CDP -------------------------------------------------------------------------------------


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


# -- Playwright ----------------------------------------------------------------------------------


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


# -- browserd ------------------------------------------------------------------------------------


_MISSING_OK = ("TAB_NOT_FOUND", "REF_NOT_FOUND", "NO_MATCH")


def call(client: httpx.Client, method: str, path: str, **kw: Any) -> dict[str, Any]:
    """One API request; RouteMissing for 404 "no route", RuntimeError for any other error."""
    r = client.request(method, path, **kw)
    if r.status_code >= 400:
        _raise_for(method, path, r)
    body: dict[str, Any] = r.json()
    return body


def _raise_for(method: str, path: str, r: httpx.Response) -> None:
    try:
        body = r.json()
    except ValueError:
        body = {}
    if r.status_code in (404, 405) and body.get("code") not in _MISSING_OK and (
            "no route" in str(body.get("error", "")) or r.status_code == 405 or not body):
        raise RouteMissing(f"{method} {path}")
    raise RuntimeError(f"{method} {path} → {r.status_code} {r.text[:300]}")


@attrs.define
class BdCtx:
    """browserd's side: the service, one keep-alive client, a work tab (opened lazily)."""

    service: Service
    client: httpx.Client
    _tab: str | None = None

    @property
    def tab(self) -> str:
        if self._tab is None:
            self._tab = call(self.client, "POST", "/tabs/open",
                             json={"url": "about:blank"})["targetId"]
        return self._tab

    def forget_tab(self) -> None:
        self._tab = None

    def goto(self, url: str) -> None:
        call(self.client, "POST", "/navigate", json={"url": url, "targetId": self.tab})


def bd_cold_start(ctx: BdCtx, n: int, warmup: int) -> Result:
    """POST /stop (untimed), then POST /start until it answers running."""
    samples = []
    for i in range(warmup + n):
        call(ctx.client, "POST", "/stop")
        ctx.forget_tab()
        t0 = time.perf_counter()
        body = call(ctx.client, "POST", "/start", json={})
        dt = (time.perf_counter() - t0) * 1000
        if not body.get("running"):
            raise RuntimeError(f"/start did not answer running: {body}")
        if i >= warmup:
            samples.append(dt)
    return Result(samples=samples)


def bd_cold_first_tab(ctx: BdCtx, n: int, warmup: int) -> Result:
    """POST /stop (untimed), then POST /start + POST /eval ``1+1`` on the default tab."""
    samples = []
    for i in range(warmup + n):
        call(ctx.client, "POST", "/stop")
        ctx.forget_tab()
        t0 = time.perf_counter()
        call(ctx.client, "POST", "/start", json={})
        call(ctx.client, "POST", "/eval", json={"js": EVAL_JS})
        dt = (time.perf_counter() - t0) * 1000
        if i >= warmup:
            samples.append(dt)
    return Result(samples=samples)


def bd_process_start(home: Path, n: int, warmup: int) -> Result:
    """Spawn ``browserd serve`` → /healthz says browser "open" (same home every time)."""
    samples = []
    for i in range(warmup + n):
        svc = Service(home)
        try:
            svc.start()
        finally:
            svc.stop()
        if i >= warmup:
            samples.append(svc.startup_ms)
    return Result(samples=samples)


def bd_new_tab(ctx: BdCtx, n: int, warmup: int) -> Result:
    samples = []
    for i in range(warmup + n):
        t0 = time.perf_counter()
        target = call(ctx.client, "POST", "/tabs/open", json={"url": "about:blank"})["targetId"]
        dt = (time.perf_counter() - t0) * 1000
        call(ctx.client, "POST", "/tabs/close", json={"targetId": target})
        if i >= warmup:
            samples.append(dt)
    return Result(samples=samples)


def bd_navigate(ctx: BdCtx, n: int, warmup: int, url: str) -> Result:
    return Result(samples=time_sync(lambda: ctx.goto(url), n, warmup))


def bd_eval(ctx: BdCtx, n: int, warmup: int) -> Result:
    tab = ctx.tab

    def once() -> None:
        body = call(ctx.client, "POST", "/eval", json={"js": EVAL_JS, "targetId": tab})
        assert body["result"] == 2 or body["result"].get("value") == 2, body

    return Result(samples=time_sync(once, n, warmup))


def bd_screenshot(ctx: BdCtx, n: int, warmup: int, url: str, full: bool) -> Result:
    ctx.goto(url)
    last: list[dict[str, Any]] = []

    def once() -> None:
        last[:] = [call(ctx.client, "POST", "/screenshot",
                        json={"targetId": ctx.tab, "fullPage": full})]

    samples = time_sync(once, n, warmup)
    return Result(samples=samples, info={"bytes": last[0].get("bytes"),
                                         "note": last[0].get("note")})


def bd_aria(ctx: BdCtx, n: int, warmup: int, url: str, interactive: bool) -> Result:
    ctx.goto(url)
    last: list[dict[str, Any]] = []

    def once() -> None:
        last[:] = [call(ctx.client, "POST", "/snapshot",
                        json={"targetId": ctx.tab, "format": "aria",
                              "interactive": interactive, "maxChars": BIG})]

    samples = time_sync(once, n, warmup)
    body = last[0]
    return Result(samples=samples, info={"chars": len(body.get("text", "")),
                                         "nodes": (body.get("stats") or {}).get("refs", 0),
                                         "truncated": body.get("truncated")})


def bd_dom_text(ctx: BdCtx, n: int, warmup: int, url: str) -> Result:
    ctx.goto(url)
    last: list[dict[str, Any]] = []

    def once() -> None:
        last[:] = [call(ctx.client, "POST", "/dom",
                        json={"targetId": ctx.tab, "format": "text", "maxChars": BIG})]

    samples = time_sync(once, n, warmup)
    return Result(samples=samples, info={"chars": len(last[0].get("text", ""))})


def bd_conc_setup(ctx: BdCtx, url: str, k: int) -> list[str]:
    tabs = []
    for _ in range(k):
        tabs.append(call(ctx.client, "POST", "/tabs/open", json={"url": url})["targetId"])
    return tabs


def bd_close_tabs(ctx: BdCtx, tabs: list[str]) -> None:
    for target in tabs:
        with contextlib.suppress(RuntimeError):
            call(ctx.client, "POST", "/tabs/close", json={"targetId": target})


async def bd_conc(service: Service, tabs: list[str], seconds: float,
                  workload: str) -> ConcResult:
    """Runs in the trio worker: one AsyncClient, one task per tab, looping until time is up.

    CPU: the service process, all Chromium processes of its profile, and
    this (client) process, from /proc before and after.
    """
    count = 0
    failures: list[str] = []

    async with service.async_client() as client:
        async def worker(tab: str) -> None:
            nonlocal count
            while time.perf_counter() < stop_at:
                if workload == "eval":
                    r = await client.post("/eval", json={"js": CONC_EVAL_JS, "targetId": tab})
                else:
                    r = await client.post("/snapshot", json={"targetId": tab, "format": "aria",
                                                             "interactive": True})
                if r.status_code >= 400:
                    failures.append(f"{r.status_code} {r.text[:200]}")
                    return
                count += 1

        chromium = common.chromium_pids(service.profile_dir)
        before = {"service": cpu_of([service.pid]), "chromium": cpu_of(chromium),
                  "client": cpu_of([os.getpid()])}
        t0 = time.perf_counter()
        stop_at = t0 + seconds
        async with trio.open_nursery() as nursery:
            for tab in tabs:
                nursery.start_soon(worker, tab)
        elapsed = time.perf_counter() - t0
        cpu = {"service": cpu_delta(before["service"], cpu_of([service.pid])),
               "chromium": cpu_delta(before["chromium"], cpu_of(chromium)),
               "client": cpu_delta(before["client"], cpu_of([os.getpid()]))}
    if failures:
        if failures[0].startswith("404") and "no route" in failures[0]:
            raise RouteMissing(failures[0])
        raise RuntimeError(f"{len(failures)} requests failed, first: {failures[0]}")
    return ConcResult(k=len(tabs), requests=count, seconds=elapsed, cpu=cpu)


def bd_memory_now(service: Service) -> dict[str, int]:
    chromium = common.chromium_pids(service.profile_dir)
    return {"rss_kb": common.rss_kb(service.pid), "pss_kb": common.pss_kb(service.pid),
            "chromium_pss_kb": sum(common.pss_kb(p) for p in chromium),
            "chromium_procs": len(chromium)}


def bd_memory(ctx: BdCtx, url: str, tabs: int) -> dict[str, Any]:
    """Open ``tabs`` tabs on ``url``, read the service's RSS/PSS, close them again."""
    opened: list[str] = []
    try:
        t0 = time.perf_counter()
        for _ in range(tabs):
            opened.append(call(ctx.client, "POST", "/tabs/open", json={"url": url})["targetId"])
        open_s = time.perf_counter() - t0
        listed = len(call(ctx.client, "GET", "/tabs")["tabs"])
        out: dict[str, Any] = {**bd_memory_now(ctx.service), "tabs_listed": listed,
                               "open_s": open_s}
    finally:
        bd_close_tabs(ctx, opened)
    out["after_close"] = bd_memory_now(ctx.service)
    return out
