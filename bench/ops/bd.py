"""The browserd side: synchronous, in the main thread (:func:`bd_conc` aside).

browserd's HTTP API through one keep-alive ``httpx.Client`` (:func:`call`).
A route that answers 404 "no route" raises :class:`~bench.ops.records.RouteMissing`
(the table says "n/a (route missing)"); any other error answer raises
``RuntimeError``. :func:`bd_conc` runs in the trio worker with its own
``httpx.AsyncClient``.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Any

import attrs
import httpx
import trio

from .. import common
from ..common import Service, cpu_delta, cpu_of, time_sync
from .records import BIG, CONC_EVAL_JS, EVAL_JS, ConcResult, Result, RouteMissing

__all__ = ["BdCtx", "bd_aria", "bd_close_tabs", "bd_cold_first_tab", "bd_cold_start",
           "bd_conc", "bd_conc_setup", "bd_dom_text", "bd_eval", "bd_memory", "bd_memory_now",
           "bd_navigate", "bd_new_tab", "bd_process_start", "bd_screenshot", "call"]

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
