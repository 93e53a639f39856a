"""What a fault drill works with: its context (:class:`Drill`), the service it pokes
(:class:`Service`) and the records it leaves (:class:`Reply`, :class:`DrillResult`).

A drill is ``async def fN(d: Drill) -> None`` (the drills themselves live in
process_drills.py, page_drills.py, disk_drills.py, neighbour.py and
profiles_drill.py; drills.py is their table). It records checks
(:meth:`Drill.check`), measured figures (:meth:`Drill.figure`) and notes; any
failed check or exception makes the drill FAIL. It ends with the invariants
(:mod:`supervision.invariants`) checked while the service runs and again after
a graceful stop (:meth:`Drill.invariants`, :meth:`Drill.stop`).
:meth:`Drill.cleanup` kills whatever the drill started and any process left
on its (private, temporary) profiles; it runs shielded, so cancellation
cannot skip it.

A route a drill needs (``/screenshot``, ``/dialog``, ``/console``) that is
missing is a failure (:meth:`Drill.need_route`), never a silently weaker
check. A drill may end SKIP (:class:`DrillSkipped`) only if its table entry
declares why it can be impossible here.

Latency limits (``< 2 s``, ``< 0.5 s``) are judged by ``python -m supervision``
(:meth:`Drill.within`); under pytest (``judge_latency=False``) they are only
recorded as figures and notes, so a loaded CI machine cannot turn them red.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import httpx
import trio

from .chromium import PlainChromium
from .harness import ServiceInfo, start_service_async, stop_service_async, wait_for
from .invariants import Baseline, check_invariants, profile_procs, rss_kib, take_baseline

#: Two small pages the drills serve (:func:`supervision.servers.serve_pages`).
PAGE_A = "<!doctype html><title>A</title><body><h1>Drill page A</h1></body>"
PAGE_B = "<!doctype html><title>B</title><body><h1>Drill page B</h1></body>"


# -- results --------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class DrillResult:
    key: str
    title: str
    expectation: str
    outcome: str  # PASS | FAIL | SKIP
    figures: dict[str, str]
    failures: tuple[str, ...]
    notes: tuple[str, ...]
    seconds: float
    workdir: str | None

    @property
    def passed(self) -> bool:
        return self.outcome != "FAIL"

    def report(self) -> str:
        lines = [f"{self.key} {self.title}: {self.outcome} in {self.seconds:.1f} s",
                 f"  expect: {self.expectation}"]
        lines += [f"  {k} = {v}" for k, v in self.figures.items()]
        lines += [f"  FAIL: {f}" for f in self.failures]
        lines += [f"  note: {n}" for n in self.notes]
        if self.workdir:
            lines.append(f"  kept: {self.workdir}")
        return "\n".join(lines)


class DrillSkipped(Exception):
    """The whole drill cannot run here (a capability the spec's ``may_skip`` names)."""


@attrs.frozen(kw_only=True)
class Reply:
    status: int
    body: dict[str, Any]
    seconds: float

    @property
    def code(self) -> str | None:
        code = self.body.get("code")
        return code if isinstance(code, str) else None

    def brief(self) -> str:
        return f"{self.status} {self.code or ''} {str(self.body)[:300]}".strip()


# -- a running service as seen by a drill -------------------------------------------------


class Service:
    """A started browserd with its API client and invariant baseline."""

    def __init__(self, info: ServiceInfo, api: httpx.AsyncClient, baseline: Baseline) -> None:
        self.info = info
        self.api = api
        self.baseline = baseline
        self._routes: set[str] | None = None

    async def call(self, method: str, path: str, body: dict[str, Any] | None = None,
                   *, timeout: float = 60.0) -> Reply:
        """One API call; transport errors become status 0 (never raises httpx errors)."""
        start = time.perf_counter()
        try:
            r = await self.api.request(method, path, json=body, timeout=timeout)
            try:
                data = r.json()
            except ValueError:
                data = {"raw": r.text[:300]}
            if not isinstance(data, dict):
                data = {"value": data}
            return Reply(status=r.status_code, body=data, seconds=time.perf_counter() - start)
        except httpx.HTTPError as exc:
            return Reply(status=0, body={"error": repr(exc)}, seconds=time.perf_counter() - start)

    async def post(self, path: str, body: dict[str, Any] | None = None,
                   *, timeout: float = 60.0) -> Reply:
        return await self.call("POST", path, body or {}, timeout=timeout)

    async def get(self, path: str, *, timeout: float = 60.0) -> Reply:
        return await self.call("GET", path, timeout=timeout)

    async def status(self) -> dict[str, Any]:
        return (await self.get("/status", timeout=5)).body

    async def eval(self, js: str, *, target: str | None = None, await_: bool = False,
                   timeout_ms: int = 10_000) -> Reply:
        body: dict[str, Any] = {"js": js, "await": await_, "timeoutMs": timeout_ms}
        if target is not None:
            body["targetId"] = target
        return await self.post("/eval", body, timeout=timeout_ms / 1000 + 20)

    async def open_tab(self, url: str = "about:blank") -> str:
        r = await self.post("/tabs/open", {"url": url}, timeout=40)
        if r.status != 200:
            raise AssertionError(f"/tabs/open {url}: {r.brief()}")
        target: str = r.body["targetId"]
        return target

    async def tabs(self) -> list[dict[str, Any]]:
        tabs: list[dict[str, Any]] = (await self.get("/tabs", timeout=10)).body.get("tabs", [])
        return tabs

    async def has_route(self, path: str) -> bool:
        if self._routes is None:
            r = await self.get("/openapi.json", timeout=10)
            self._routes = set(r.body.get("paths", {}))
        return path in self._routes

    async def wait_state(self, *states: str, timeout: float,
                         where: Callable[[dict[str, Any]], bool] | None = None) -> float:
        """Poll /status until its state is one of ``states``; seconds waited."""
        async def ok() -> bool:
            st = await self.status()
            return st.get("state") in states and (where is None or where(st))

        return await wait_for(ok, timeout=timeout, interval=0.05)

    def rss_mib(self) -> float:
        kib = rss_kib(self.info.pid)
        return round((kib or 0) / 1024, 1)


# -- the drill context ----------------------------------------------------------------------


class Drill:
    """What one drill run records, and the resources it must clean up."""

    def __init__(self, key: str, workdir: Path, *, fast: bool,
                 judge_latency: bool = True) -> None:
        self.key = key
        self.workdir = workdir
        self.fast = fast
        self.judge_latency = judge_latency
        self.failures: list[str] = []
        self.figures: dict[str, str] = {}
        self.notes: list[str] = []
        self.services: list[Service] = []
        self.chromiums: list[PlainChromium] = []
        self.profiles: set[Path] = set()
        self.mounts: list[Path] = []

    # -- recording -------------------------------------------------------------------------

    def check(self, condition: Any, message: str) -> bool:
        if not condition:
            self.failures.append(message)
        return bool(condition)

    def within(self, seconds: float, limit: float, message: str) -> bool:
        """A latency limit: a check when latency is judged, else a note if exceeded."""
        if self.judge_latency:
            return self.check(seconds < limit, message)
        if seconds >= limit:
            self.note(f"over the {limit:g} s limit (not judged here): {message}")
        return True

    async def need_route(self, svc: Service, path: str) -> bool:
        """Whether ``svc`` serves ``path``; its absence fails the drill (no weaker check)."""
        present = await svc.has_route(path)
        self.check(present, f"{path} is missing: the drill's full check cannot run")
        return present

    def figure(self, name: str, value: Any, unit: str = "") -> None:
        if isinstance(value, float):
            text = f"{value:.3f}".rstrip("0").rstrip(".") if value < 10 else f"{value:.1f}"
        else:
            text = str(value)
        self.figures[name] = text + unit

    def note(self, text: str) -> None:
        self.notes.append(text)

    # -- services --------------------------------------------------------------------------

    def home(self, name: str = "home") -> Path:
        path = self.workdir / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    async def start(self, *, home: Path | None = None, env: dict[str, str] | None = None,
                    wait_browser: bool = True, port: int | None = None,
                    log_name: str = "serve.log") -> Service:
        home = home or self.home()
        env = dict(env or {})
        profile = env.get("BROWSERD_PROFILE", "clawd")
        self.profiles.add(home / "data" / "profiles" / profile)
        info = await start_service_async(home, env=env, wait_browser=wait_browser, port=port,
                                         log_name=log_name)
        svc = Service(info, info.client(), take_baseline(info.token_file))
        self.services.append(svc)
        return svc

    async def invariants(self, svc: Service, label: str, *, browser_stopped: bool = False,
                         service_down: bool = False) -> None:
        report = await check_invariants(
            profile_dir=svc.info.profile_dir, media_dir=svc.info.media_dir,
            token_file=svc.info.token_file, baseline=svc.baseline,
            service_pid=None if service_down else svc.info.pid,
            base_url=None if service_down else svc.info.base_url,
            browser_stopped=browser_stopped, judge_latency=self.judge_latency,
            # a deadline for a condition, not a latency: generous when not judging latency
            orphan_grace=4.0 if self.judge_latency else 15.0,
        )
        for violation in report.violations:
            self.failures.append(f"invariant ({label}): {violation}")
        if "healthz_ms" in report.figures and label == "after fault":
            self.figure("healthz", report.figures["healthz_ms"], " ms")

    async def stop(self, svc: Service, *, label: str = "after stop", expect_code: int = 0,
                   browser_stopped: bool = True) -> float:
        """SIGTERM the service; check its exit code and the invariants once it is down."""
        await svc.api.aclose()
        start = time.perf_counter()
        code = await stop_service_async(svc.info)
        took = time.perf_counter() - start
        self.check(code == expect_code, f"service exited {code}, expected {expect_code}")
        await self.invariants(svc, label, browser_stopped=browser_stopped, service_down=True)
        return took

    async def cleanup(self) -> None:
        with trio.CancelScope(shield=True):
            for svc in self.services:
                await svc.api.aclose()
                if svc.info.proc.poll() is None:
                    svc.info.proc.kill()
                    await trio.to_thread.run_sync(svc.info.proc.wait)
            for chromium in self.chromiums:
                await trio.to_thread.run_sync(chromium.stop)
            for profile in self.profiles:
                for p in profile_procs(profile):
                    with contextlib.suppress(OSError):
                        os.kill(p.pid, signal.SIGKILL)
            for mount in self.mounts:
                subprocess.run(["umount", "-l", str(mount)], check=False,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


__all__ = ["PAGE_A", "PAGE_B", "Drill", "DrillResult", "DrillSkipped", "Reply", "Service"]
