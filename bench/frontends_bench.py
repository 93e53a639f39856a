"""Trivial eval over /ws vs HTTP vs Playwright's in-process page.evaluate, and its CPU cost.

Run: ``python -m bench.frontends_bench [--n 300] [--rounds 3] [--seconds 5] [--out FILE]``.

One private ``browserd serve`` (headless, the Debian Chromium) and one
Playwright browser (the same executable). Latency: ``1+1`` evaluated ``n``
times per side per round, the sides interleaved (Playwright → HTTP → /ws)
so background load hits all alike; medians (p10-p90) over all rounds, ratios
from the same run. HTTP is one keep-alive httpx client; /ws one
trio-websocket connection, one call at a time (each timed from send to
answer). CPU: utime+stime from /proc of the service process and of its
Chromium processes, read before and after ``--seconds`` of back-to-back
evals, per lane; and the same with 8 calls in flight on one /ws connection
(8 tabs, one caller each). Prints Markdown (and writes it to ``--out``).

A script, not a test: numbers depend on the machine; nothing is asserted.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
import trio
from trio_websocket import WebSocketConnection, open_websocket_url

from bench import common
from bench.common import AsyncioWorker, Service, Stats

JS = "1+1"


class WsCaller:
    """Sequential or concurrent JSON-RPC calls on one /ws connection."""

    def __init__(self, ws: WebSocketConnection) -> None:
        self.ws = ws
        self._next = 0
        self._waiting: dict[int, trio.Event] = {}
        self._answers: dict[int, Any] = {}

    async def pump(self) -> None:
        while True:
            message = orjson.loads(await self.ws.get_message())
            request_id = message.get("id")
            if request_id in self._waiting:
                self._answers[request_id] = message
                self._waiting.pop(request_id).set()

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        self._next += 1
        request_id = self._next
        done = self._waiting[request_id] = trio.Event()
        await self.ws.send_message(orjson.dumps({"jsonrpc": "2.0", "id": request_id,
                                                 "method": method, "params": params}).decode())
        await done.wait()
        answer = self._answers.pop(request_id)
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer["result"]


async def _ws_session(svc: Service, work: Any) -> Any:
    async with open_websocket_url(f"ws://127.0.0.1:{svc.port}/ws",
                                  extra_headers=[(b"Authorization",
                                                  f"Bearer {svc.token}".encode())]) as ws:
        caller = WsCaller(ws)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(caller.pump)
            result = await work(caller)
            nursery.cancel_scope.cancel()
        return result


def ws_latency(svc: Service, tab: str, n: int) -> list[float]:
    async def work(caller: WsCaller) -> list[float]:
        async def one() -> None:
            result = await caller.call("eval", {"targetId": tab, "js": JS})
            assert result["result"] == 2

        return await common.time_async(one, n, warmup=20)

    return trio.run(_ws_session, svc, work)


def http_latency(client: httpx.Client, tab: str, n: int) -> list[float]:
    def one() -> None:
        r = client.post("/eval", json={"targetId": tab, "js": JS})
        assert r.json()["result"] == 2

    return common.time_sync(one, n, warmup=20)


def cpu_per_call(svc: Service, run: Any) -> dict[str, float]:
    """``run()`` → number of calls; CPU ms per call of the service and of its Chromium."""
    chromium = common.chromium_pids(svc.profile_dir)
    service0, chromium0 = common.cpu_seconds(svc.pid), common.cpu_of(chromium)
    t0 = time.perf_counter()
    calls = run()
    wall = time.perf_counter() - t0
    service_s = common.cpu_seconds(svc.pid) - service0
    chromium_s = common.cpu_delta(chromium0, common.cpu_of(common.chromium_pids(svc.profile_dir)))
    return {"calls": calls, "rps": calls / wall, "service_ms": service_s * 1000 / calls,
            "chromium_ms": chromium_s * 1000 / calls}


def ws_loop(svc: Service, tabs: list[str], seconds: float) -> int:
    async def work(caller: WsCaller) -> int:
        count = 0
        deadline = trio.current_time() + seconds

        async def worker(tab: str) -> None:
            nonlocal count
            while trio.current_time() < deadline:
                await caller.call("eval", {"targetId": tab, "js": JS})
                count += 1

        async with trio.open_nursery() as nursery:
            for tab in tabs:
                nursery.start_soon(worker, tab)
        return count

    return trio.run(_ws_session, svc, work)


def http_loop(client: httpx.Client, tab: str, seconds: float) -> int:
    count = 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        client.post("/eval", json={"targetId": tab, "js": JS})
        count += 1
    return count


def fmt(s: Stats) -> str:
    return f"{s.median:.2f} ({s.p10:.2f}-{s.p90:.2f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    from bench.ops import pw_setup, pw_teardown

    home = common.temp_dir("fe-bench-")
    svc = Service(home / "svc").start()
    worker = AsyncioWorker()
    load0 = Path("/proc/loadavg").read_text().split()[0]
    try:
        pw = worker.run(pw_setup(home / "pw"))

        async def pw_samples(n: int) -> list[float]:
            async def one() -> None:
                assert await pw.page.evaluate(JS) == 2

            return await common.time_async(one, n, warmup=20)

        with svc.client() as client:
            tabs = [client.post("/tabs/open", json={"url": "about:blank"}).json()["targetId"]
                    for _ in range(8)]
            samples: dict[str, list[float]] = {"pw": [], "http": [], "ws": []}
            for _ in range(args.rounds):
                samples["pw"] += worker.run(pw_samples(args.n))
                samples["http"] += http_latency(client, tabs[0], args.n)
                samples["ws"] += ws_latency(svc, tabs[0], args.n)
            stats = {k: Stats.of(v) for k, v in samples.items()}
            cpu = {
                "HTTP, 1 in flight": cpu_per_call(
                    svc, lambda: http_loop(client, tabs[0], args.seconds)),
                "/ws, 1 in flight": cpu_per_call(
                    svc, lambda: ws_loop(svc, tabs[:1], args.seconds)),
                "/ws, 8 in flight (8 tabs, one connection)": cpu_per_call(
                    svc, lambda: ws_loop(svc, tabs, args.seconds)),
            }
        worker.run(pw_teardown(pw))
    finally:
        worker.close()
        svc.stop()
        common.remove_dir(home)
    load1 = Path("/proc/loadavg").read_text().split()[0]
    pw_med = stats["pw"].median
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [
        "### Front ends: eval `1+1` over /ws, HTTP and Playwright in-process",
        "",
        f"Generated by `python -m bench.frontends_bench` ({stamp}, "
        f"{args.rounds} interleaved rounds of {args.n} calls per side; Python "
        f"{platform.python_version()}; load average {load0} → {load1}).",
        "",
        "| lane | median ms (p10-p90) | ÷ Playwright | goal |",
        "|---|---|---|---|",
        f"| Playwright `page.evaluate` (in-process) | {fmt(stats['pw'])} | 1.00x | |",
        f"| browserd HTTP `POST /eval` (keep-alive) | {fmt(stats['http'])} | "
        f"{stats['http'].median / pw_med:.2f}x | ≤ 1.5x: "
        f"{'met' if stats['http'].median <= 1.5 * pw_med else '**missed**'} |",
        f"| browserd `/ws` `eval` (JSON-RPC) | {fmt(stats['ws'])} | "
        f"{stats['ws'].median / pw_med:.2f}x | ≤ 1.0x: "
        f"{'met' if stats['ws'].median <= pw_med else '**missed**'} |",
        "",
        f"CPU per trivial eval (back-to-back for {args.seconds:g} s):",
        "",
        "| lane | evals/s | service CPU ms/eval | its Chromium CPU ms/eval | goal |",
        "|---|---|---|---|---|",
    ]
    for name, c in cpu.items():
        goal = ""
        if name.startswith("/ws"):
            goal = ("service < Chromium: " + ("met" if c["service_ms"] < c["chromium_ms"]
                                              else "**missed**"))
        lines.append(f"| {name} | {c['rps']:.0f} | {c['service_ms']:.3f} | "
                     f"{c['chromium_ms']:.3f} | {goal} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
