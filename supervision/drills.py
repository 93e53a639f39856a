"""Fault drills F1-F17: start browserd on a real Chromium, inject one fault, check recovery.

(S11, the hostile neighbour, lives in neighbour.py and is registered here.)

Each drill is ``async def fN(d: Drill) -> None``. It records checks
(:meth:`Drill.check`), measured figures (:meth:`Drill.figure`) and notes;
any failed check or exception makes the drill FAIL. Every drill ends with
the invariants (:mod:`supervision.invariants`) checked while the service
runs and again after a graceful stop. :func:`run_drill` runs one drill with
a hard deadline and always cleans up: services it started are killed, and
any process left on its (private, temporary) profiles is killed too.

A route a drill needs (``/screenshot``, ``/dialog``, ``/console``) that is
missing is a failure (:meth:`Drill.need_route`), never a silently weaker
check. A drill may end SKIP only if its :class:`DrillSpec` declares why it
can be impossible here (``may_skip``); any other skip is a failure.

Latency limits (``< 2 s``, ``< 0.5 s``) are judged by ``python -m supervision``
(:meth:`Drill.within`); under pytest (``judge_latency=False``) they are only
recorded as figures and notes, so a loaded CI machine cannot turn them red.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import httpx
import trio

from .harness import (
    PlainChromium,
    ServiceInfo,
    TcpProxy,
    free_port_pair,
    launch_chromium,
    open_raw_cdp,
    serve_pages,
    start_service_async,
    stop_service_async,
    wait_for,
)
from .invariants import (
    Baseline,
    check_invariants,
    cpu_seconds,
    pid_alive,
    profile_procs,
    read_proc,
    rss_kib,
    take_baseline,
)

DRILL_DEADLINE_S = 150.0
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


# -- helpers ---------------------------------------------------------------------------------


def _log_time(line: str) -> float:
    """Seconds (since the epoch) of a log line's ``YYYY-mm-dd HH:MM:SS,mmm`` stamp."""
    stamp, _, ms = line[:23].partition(",")
    return time.mktime(time.strptime(stamp, "%Y-%m-%d %H:%M:%S")) + int(ms) / 1000


def _dead_pid() -> int:
    """A pid that has just exited (so, almost surely, belongs to nobody)."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _claim(profile_dir: Path) -> None:
    from browserd.browser.profile import claim_profile

    claim_profile(profile_dir)


def _singletons(profile_dir: Path) -> list[str]:
    return sorted(p.name for p in profile_dir.glob("Singleton*"))


#: What a browserd refusing a profile could plausibly delete (the lock files, the
#: profile's state). Everything else under the profile is the running browser's
#: own business (caches and blob files come and go).
_GUARDED = ("SingletonLock", "SingletonSocket", "SingletonCookie", ".browserd-profile",
            "Local State", "Default/Preferences", "Default/Cookies")


def _file_set(profile_dir: Path) -> set[str]:
    return {name for name in _GUARDED if os.path.lexists(profile_dir / name)}


async def _send_cdp_session(port: int, token: str, target_id: str, method: str) -> float:
    """Attach to ``target_id`` over a raw CDP socket and fire ``method`` (no reply awaited).

    Returns the ``time.perf_counter()`` at which it was sent.
    """
    async with open_raw_cdp(port, token=token) as cdp:
        with trio.fail_after(5):
            attached = await cdp.send("Target.attachToTarget",
                                      {"targetId": target_id, "flatten": True})
            sent = time.perf_counter()
            await cdp.fire(method, {}, session_id=attached["sessionId"])
            await trio.sleep(0.2)
    return sent


async def _probe(svc: Service, *, path: str, body: dict[str, Any] | None,
                 every: float, latencies: list[float], failures: list[str],
                 answered_at: list[float] | None = None, timeout: float = 5.0) -> None:
    """Call ``path`` every ``every`` s until cancelled; record latency and non-200s.

    ``answered_at`` collects the ``time.perf_counter()`` of each 200 answer.
    """
    while True:
        r = await svc.call("POST" if body is not None else "GET", path, body, timeout=timeout)
        latencies.append(r.seconds)
        if r.status != 200:
            failures.append(f"{path}: {r.brief()}")
        elif answered_at is not None:
            answered_at.append(time.perf_counter())
        await trio.sleep(every)


# -- the drills ----------------------------------------------------------------------------


async def f1(d: Drill) -> None:
    """kill -9 the browser with requests in flight."""
    svc = await d.start()
    st = await svc.status()
    old_pid = st["pid"]
    tab = await svc.open_tab("about:blank")
    have_shot = await d.need_route(svc, "/screenshot")
    inflight: dict[str, Reply] = {}
    early: list[str] = []
    t_kill: float | None = None

    async def run(name: str, call: Callable[[], Awaitable[Reply]]) -> None:
        r = await call()
        if t_kill is None:
            early.append(f"{name} answered before the kill: {r.brief()}")
            return
        inflight[name] = attrs.evolve(r, seconds=time.perf_counter() - t_kill)

    tab2 = None
    if have_shot:
        # A tall, noisy page so the full-page capture takes a while.
        tab2 = await svc.open_tab("about:blank")
        r = await svc.eval(
            "const c = document.createElement('canvas'); c.width = 1280; c.height = 8000;"
            "const g = c.getContext('2d'); const img = g.createImageData(1280, 8000);"
            "crypto.getRandomValues(img.data.subarray(0, 65536));"
            "for (let i = 65536; i < img.data.length; i += 65536)"
            "  img.data.copyWithin(i, (i * 7919) % 65536 & ~3, 65536);"
            "g.putImageData(img, 0, 0); document.body.appendChild(c); 1", target=tab2)
        d.check(r.status == 200, f"making the page tall: {r.brief()}")
    else:
        d.note("/screenshot absent: in-flight screenshots skipped")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(run, "eval", lambda: svc.eval(
            "new Promise(() => {})", target=tab, await_=True, timeout_ms=60_000))
        if tab2 is not None:
            await trio.sleep(0.1)
            # Queued behind the eval on the same tab, and a full-page capture elsewhere.
            nursery.start_soon(run, "queued screenshot", lambda: svc.post(
                "/screenshot", {"targetId": tab}, timeout=60))
            nursery.start_soon(run, "full-page screenshot", lambda: svc.post(
                "/screenshot", {"targetId": tab2, "fullPage": True}, timeout=60))
        await trio.sleep(0.5)
        t_kill = time.perf_counter()
        os.kill(old_pid, signal.SIGKILL)
    for text in early:
        if text.startswith("full-page"):
            d.note(text[:120])
        else:
            d.check(False, text)
    d.check("eval" in inflight, "the never-resolving eval was not in flight")
    worst = 0.0
    for name, r in inflight.items():
        worst = max(worst, r.seconds)
        d.check(r.status == 502 and r.code == "BROWSER_GONE",
                f"in-flight {name}: expected 502 BROWSER_GONE, got {r.brief()}")
        d.within(r.seconds, 2.0, f"in-flight {name} took {r.seconds:.2f} s to fail")
    d.figure("inflight_fail", worst * 1000, " ms")

    recover = await svc.wait_state(
        "running", timeout=15, where=lambda s: s.get("pid") not in (None, old_pid))
    d.figure("recover", time.perf_counter() - (t_kill or 0.0), " s")
    del recover
    st = await svc.status()
    d.check(st["restarts"] == 1 and st["spawns"] == 2,
            f"expected 1 restart / 2 spawns, got {st['restarts']} / {st['spawns']}")
    d.figure("spawns", st["spawns"])
    d.check(st["userDataDir"] == str(svc.info.profile_dir), "relaunched on another profile")
    r = await svc.get("/tabs")
    d.check(r.status == 200 and r.body.get("running") is True, f"/tabs after: {r.brief()}")
    new_tab = await svc.open_tab("about:blank")
    r = await svc.eval("1 + 1", target=new_tab)
    d.check(r.status == 200 and r.body.get("result") == 2, f"eval after relaunch: {r.brief()}")

    # The old tree (its process group) must be gone: no orphan renderer/GPU/zygote.
    async def old_group_gone() -> bool:
        return not [p for p in profile_procs(svc.info.profile_dir) if p.pgid == old_pid]

    try:
        took = await wait_for(old_group_gone, timeout=4)
        d.figure("old_tree_gone", took * 1000, " ms")
    except trio.TooSlowError:
        left = [(p.pid, p.kind) for p in profile_procs(svc.info.profile_dir)
                if p.pgid == old_pid]
        d.check(False, f"orphans of the killed browser: {left}")
    await d.invariants(svc, "after fault")
    await d.stop(svc)


async def f2(d: Drill) -> None:
    """kill -9 the service: the browser exits by itself; a new start succeeds."""
    svc = await d.start()
    st = await svc.status()
    browser_pid = st["pid"]
    port = svc.info.port
    await svc.open_tab("about:blank")
    await svc.api.aclose()
    t0 = time.perf_counter()
    svc.info.proc.kill()
    await trio.to_thread.run_sync(svc.info.proc.wait)
    try:
        await wait_for(lambda: not pid_alive(browser_pid), timeout=10, interval=0.005)
        d.figure("browser_exit", (time.perf_counter() - t0) * 1000, " ms")
    except trio.TooSlowError:
        d.check(False, f"browser pid {browser_pid} still alive 10 s after the service died")
    try:
        await wait_for(lambda: not profile_procs(svc.info.profile_dir), timeout=10,
                       interval=0.02)
        d.figure("all_procs_gone", (time.perf_counter() - t0) * 1000, " ms")
    except trio.TooSlowError:
        left = [(p.pid, p.kind) for p in profile_procs(svc.info.profile_dir)]
        d.check(False, f"processes of the profile left 10 s after the service died: {left}")
    d.figure("lock_left", ",".join(_singletons(svc.info.profile_dir)) or "none")
    await d.invariants(svc, "service killed", service_down=True)

    t1 = time.perf_counter()
    svc2 = await d.start(port=port)
    d.figure("restart_same_port", time.perf_counter() - t1, " s")
    st2 = await svc2.status()
    d.check(st2["state"] == "running" and st2["pid"] != browser_pid,
            f"second start: {st2['state']} pid {st2['pid']}")
    tab = await svc2.open_tab("about:blank")
    r = await svc2.eval("1 + 1", target=tab)
    d.check(r.status == 200, f"eval after restart: {r.brief()}")
    await d.invariants(svc2, "after fault")
    await d.stop(svc2)


async def f3(d: Drill) -> None:
    """SIGTERM to the service: Browser.close first, exit 0, clean profile."""
    svc = await d.start()
    await svc.open_tab("about:blank")
    took = await d.stop(svc)
    d.figure("stop", took * 1000, " ms")
    log = svc.info.log_text()
    d.check("stopped (close)" in log, "the log does not say the browser 'stopped (close)'")
    step = [line for line in log.splitlines() if "browser pid" in line and "stopped" in line]
    d.figure("ladder_step", step[-1].rsplit("(", 1)[-1].rstrip(")") if step else "?")
    left = _singletons(svc.info.profile_dir)
    d.check(not left, f"Singleton* files left: {left}")
    prefs_path = svc.info.profile_dir / "Default" / "Preferences"
    try:
        prefs = json.loads(prefs_path.read_text())
    except (OSError, ValueError) as exc:
        d.check(False, f"cannot read Preferences: {exc}")
        return
    profile = prefs.get("profile", {})
    d.figure("exit_type", profile.get("exit_type"))
    d.check(profile.get("exit_type") == "Normal", f"exit_type {profile.get('exit_type')!r}")
    d.check(profile.get("exited_cleanly") is True,
            f"exited_cleanly {profile.get('exited_cleanly')!r}")


def _cookie_rows(profile_dir: Path, name: str) -> list[tuple[str, str]]:
    db = profile_dir / "Default" / "Cookies"
    if not db.exists():
        return []
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "Cookies"
        shutil.copyfile(db, copy)
        conn = sqlite3.connect(copy)
        try:
            rows = conn.execute("SELECT host_key, name FROM cookies WHERE name = ?",
                                (name,)).fetchall()
        finally:
            conn.close()
    return [(str(h), str(n)) for h, n in rows]


async def _get_cookie(port: int, token: str, name: str) -> dict[str, Any] | None:
    async with open_raw_cdp(port, token=token) as cdp:
        with trio.fail_after(5):
            result = await cdp.send("Storage.getCookies")
    for cookie in result.get("cookies", []):
        if cookie.get("name") == name:
            found: dict[str, Any] = cookie
            return found
    return None


async def f4(d: Drill) -> None:
    """A persistent cookie survives a graceful restart; another profile does not see it."""
    svc = await d.start()
    name, value = "drill_f4", f"v{int(time.time())}"
    async with open_raw_cdp(svc.info.cdp_port, token=svc.info.token) as cdp:
        with trio.fail_after(5):
            await cdp.send("Storage.setCookies", {"cookies": [{
                "name": name, "value": value, "domain": "127.0.0.1", "path": "/",
                "expires": time.time() + 86400, "secure": False, "httpOnly": False,
            }]})
    r = await svc.post("/stop")
    d.check(r.status == 200 and r.body.get("stopped") is True, f"/stop: {r.brief()}")
    rows = _cookie_rows(svc.info.profile_dir, name)
    d.check(rows, "cookie not in the on-disk Cookies DB after a graceful /stop")
    t0 = time.perf_counter()
    r = await svc.post("/start")
    d.check(r.status == 200 and r.body.get("state") == "running", f"/start: {r.brief()}")
    d.figure("restart", time.perf_counter() - t0, " s")
    cookie = await _get_cookie(svc.info.cdp_port, svc.info.token, name)
    d.check(cookie is not None and cookie.get("value") == value,
            f"cookie after restart via CDP: {cookie}")
    d.figure("cookie_after_restart", "present" if cookie else "missing")

    other = await d.start(env={"BROWSERD_PROFILE": "other"}, log_name="serve-other.log")
    leaked = await _get_cookie(other.info.cdp_port, other.info.token, name)
    d.check(leaked is None, f"profile 'other' sees the cookie: {leaked}")
    d.figure("other_profile", "clean" if leaked is None else "LEAKED")
    await d.invariants(svc, "after fault")
    await d.stop(other)
    await d.stop(svc)
    rows = _cookie_rows(svc.info.profile_dir, name)
    d.check(rows, "cookie not in the on-disk Cookies DB after the service stopped")
    d.check(not _cookie_rows(other.info.profile_dir, name), "cookie in profile 'other' on disk")


async def f5(d: Drill) -> None:
    """A stale SingletonLock (this host, dead pid) does not stop a start."""
    home = d.home()
    profile = home / "data" / "profiles" / "clawd"
    _claim(profile)
    dead = _dead_pid()
    os.symlink(f"{socket.gethostname()}-{dead}", profile / "SingletonLock")
    os.symlink("/tmp/browserd-drill-gone/SingletonSocket", profile / "SingletonSocket")
    os.symlink("1234567890", profile / "SingletonCookie")
    t0 = time.perf_counter()
    svc = await d.start(home=home)
    d.figure("start", time.perf_counter() - t0, " s")
    st = await svc.status()
    d.check(st["state"] == "running", f"state {st['state']}: {st.get('lastError')}")
    lock = os.readlink(profile / "SingletonLock")
    d.check(lock.endswith(f"-{st['pid']}"), f"lock names {lock}, not the new browser")
    d.figure("stale_pid", dead)
    tab = await svc.open_tab("about:blank")
    r = await svc.eval("1 + 1", target=tab)
    d.check(r.status == 200, f"eval: {r.brief()}")
    await d.invariants(svc, "after fault")
    await d.stop(svc)


async def f6(d: Drill) -> None:
    """A profile in use by a live process is refused; nothing deleted, nothing killed."""
    home = d.home()
    svc = await d.start(home=home)
    st = await svc.status()
    owner = st["pid"]
    profile = svc.info.profile_dir
    lock_before = os.readlink(profile / "SingletonLock")
    files_before = _file_set(profile)

    second = await d.start(home=home, wait_browser=False, log_name="serve-second.log")
    try:
        await second.wait_state("failed", timeout=15)
    except trio.TooSlowError:
        d.check(False, f"second browserd state: {(await second.status()).get('state')}")
    st2 = await second.status()
    err = (st2.get("lastError") or {}).get("error", "")
    d.figure("second_browserd", f"{st2['state']}: {err}")
    d.check(f"profile in use by pid {owner}" in err,
            f"second browserd's lastError {err!r} does not name pid {owner}")
    d.check(st2.get("spawns") == 0, f"second browserd spawned {st2.get('spawns')} browsers")
    d.check(pid_alive(owner), "the first browserd's browser was killed")
    d.check(os.readlink(profile / "SingletonLock") == lock_before, "SingletonLock changed")
    missing = files_before - _file_set(profile)
    d.check(not missing, f"files deleted: {sorted(missing)}")
    await d.stop(second, browser_stopped=False)
    d.check(pid_alive(owner), "stopping the second browserd killed the first one's browser")
    r = await svc.eval("1 + 1")
    d.check(r.status == 200, f"first browserd after the refusal: {r.brief()}")
    await d.invariants(svc, "after fault")
    await d.stop(svc)

    # A plain Chromium started by hand on the same profile.
    chromium = await trio.to_thread.run_sync(lambda: launch_chromium(profile))
    d.chromiums.append(chromium)
    lock_before = os.readlink(profile / "SingletonLock")
    files_before = _file_set(profile)
    third = await d.start(home=home, wait_browser=False, log_name="serve-third.log")
    try:
        await third.wait_state("failed", timeout=15)
    except trio.TooSlowError:
        d.check(False, f"browserd beside a hand-started chromium: "
                       f"{(await third.status()).get('state')}")
    st3 = await third.status()
    err = (st3.get("lastError") or {}).get("error", "")
    d.figure("beside_chromium", f"{st3['state']}: {err}")
    d.check(f"profile in use by pid {chromium.pid}" in err,
            f"lastError {err!r} does not name chromium pid {chromium.pid}")
    d.check(chromium.proc.poll() is None, "the hand-started chromium was killed")
    d.check(os.readlink(profile / "SingletonLock") == lock_before, "SingletonLock changed")
    await d.stop(third, browser_stopped=False)
    d.check(chromium.proc.poll() is None, "stopping browserd killed the hand-started chromium")
    missing = files_before - _file_set(profile)
    d.check(not missing, f"files deleted: {sorted(missing)}")
    await trio.to_thread.run_sync(chromium.stop)


async def f7(d: Drill) -> None:
    """Renderer crash in tab A: calls on A fail fast, B works, A reloads or closes."""
    with serve_pages({"/a.html": PAGE_A, "/b.html": PAGE_B}) as pages:
        svc = await d.start()
        tab_a = await svc.open_tab(pages.url("/a.html"))
        tab_b = await svc.open_tab(pages.url("/b.html", host="localhost"))
        inflight: list[Reply] = []
        t0 = 0.0

        async def pending_eval() -> None:
            r = await svc.eval("new Promise(() => {})", target=tab_a, await_=True,
                               timeout_ms=30_000)
            inflight.append(attrs.evolve(r, seconds=time.perf_counter() - t0))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(pending_eval)
            await trio.sleep(0.3)
            t0 = time.perf_counter()  # refined below to the moment Page.crash is sent
            sent = await _send_cdp_session(svc.info.cdp_port, svc.info.token, tab_a, "Page.crash")
        r = attrs.evolve(inflight[0], seconds=inflight[0].seconds - (sent - t0))
        d.figure("inflight_fail", r.seconds * 1000, " ms")
        d.check(r.status == 502, f"in-flight eval on the crashed tab: {r.brief()}")
        d.within(r.seconds, 2.0, f"in-flight eval took {r.seconds:.2f} s to fail")
        d.figure("inflight_code", r.code)
        r = await svc.eval("1 + 1", target=tab_a)
        d.check(r.status == 502, f"new eval on crashed A: {r.brief()}")
        d.within(r.seconds, 2.0, f"new eval on crashed A took {r.seconds:.2f} s")
        d.check(r.code == "TARGET_CRASHED", f"new eval on crashed A: code {r.code}")
        d.figure("later_call_code", r.code)
        r = await svc.eval("document.title", target=tab_b)
        d.check(r.status == 200 and r.body.get("result") == "B", f"tab B: {r.brief()}")
        tabs = {t["targetId"]: t for t in await svc.tabs()}
        d.check(tabs.get(tab_a, {}).get("crashed") is True, f"/tabs for A: {tabs.get(tab_a)}")
        st = await svc.status()
        d.check(st["state"] == "running" and st["restarts"] == 0,
                f"a tab crash restarted the browser: {st['state']} restarts {st['restarts']}")
        t1 = time.perf_counter()
        r = await svc.post("/navigate", {"targetId": tab_a, "url": pages.url("/a.html")},
                           timeout=30)
        d.check(r.status == 200, f"reload of crashed A: {r.brief()}")
        if r.status == 200:
            d.figure("reload", (time.perf_counter() - t1) * 1000, " ms")
            r = await svc.eval("document.title", target=tab_a)
            d.check(r.status == 200 and r.body.get("result") == "A",
                    f"eval on A after reload: {r.brief()}")
            tabs = {t["targetId"]: t for t in await svc.tabs()}
            d.check(not tabs.get(tab_a, {}).get("crashed"), "A still marked crashed")
        # Crash it again and close it this time.
        await _send_cdp_session(svc.info.cdp_port, svc.info.token, tab_a, "Page.crash")
        await trio.sleep(0.3)
        r = await svc.post("/tabs/close", {"targetId": tab_a}, timeout=15)
        d.check(r.status == 200, f"close of crashed A: {r.brief()}")
        ids = [t["targetId"] for t in await svc.tabs()]
        d.check(tab_a not in ids, "A still listed after close")
        await d.invariants(svc, "after fault")
        await d.stop(svc)


async def f8(d: Drill) -> None:
    """Hung renderer: 504 within the deadline, others stay responsive, the tab recovers."""
    with serve_pages({"/a.html": PAGE_A, "/b.html": PAGE_B}) as pages:
        svc = await d.start()
        tab_a = await svc.open_tab(pages.url("/a.html"))
        tab_b = await svc.open_tab(pages.url("/b.html", host="localhost"))
        health: list[float] = []
        other: list[float] = []
        health_at: list[float] = []
        other_at: list[float] = []
        probe_failures: list[str] = []
        # Judged (python -m supervision): a 1 s hang and 5 s probe deadlines. Under
        # pytest the hang lasts 4 s and a probe may take 30 s: what is checked there
        # is the outcome (the others answered while A hung), not how fast.
        hang_ms = 1000 if d.judge_latency else 4000
        probe_timeout = 5.0 if d.judge_latency else 30.0
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: _probe(
                svc, path="/healthz", body=None, every=0.1, latencies=health,
                failures=probe_failures, answered_at=health_at, timeout=probe_timeout))
            nursery.start_soon(lambda: _probe(
                svc, path="/eval", body={"js": "1 + 1", "targetId": tab_b}, every=0.1,
                latencies=other, failures=probe_failures, answered_at=other_at,
                timeout=probe_timeout))
            hang_from = time.perf_counter()
            r = await svc.eval("while (true) {}", target=tab_a, timeout_ms=hang_ms)
            hang_to = time.perf_counter()
            d.figure("busy_loop", r.seconds * 1000, " ms")
            d.check(r.status == 504, f"while(true): {r.brief()}")
            d.within(r.seconds, hang_ms / 1000 + 1.0,
                     f"while(true) answered after {r.seconds:.2f} s")
            r = await svc.eval("new Promise(() => {})", target=tab_a, await_=True,
                               timeout_ms=1000)
            d.figure("never_resolving", r.seconds * 1000, " ms")
            d.check(r.status == 504, f"never-resolving promise: {r.brief()}")
            d.within(r.seconds, 2.0, f"never-resolving promise took {r.seconds:.2f} s")
            r = await svc.eval("document.title", target=tab_a)
            d.check(r.status == 200 and r.body.get("result") == "A",
                    f"tab A after termination: {r.brief()}")
            nursery.cancel_scope.cancel()
        d.check(not probe_failures, f"probe failures: {probe_failures[:3]}")
        during = [t for t in health_at if hang_from <= t <= hang_to]
        during_other = [t for t in other_at if hang_from <= t <= hang_to]
        d.figure("answers_while_hung", f"healthz {len(during)}, other tab {len(during_other)}")
        d.check(during, "no /healthz answer arrived while tab A hung")
        d.check(during_other, "the other tab answered nothing while tab A hung")
        if health and other:
            d.figure("healthz_max", max(health) * 1000, " ms")
            d.figure("other_tab_max", max(other) * 1000, " ms")
            d.within(max(health), 0.5, f"/healthz waited {max(health):.3f} s")
            d.within(max(other), 0.5, f"the other tab waited {max(other):.3f} s")
        await d.invariants(svc, "after fault")
        await d.stop(svc)


async def _resolve_dialog_raw(port: int, token: str, target_id: str) -> None:
    async with open_raw_cdp(port, token=token) as cdp:
        with trio.fail_after(5):
            attached = await cdp.send("Target.attachToTarget",
                                      {"targetId": target_id, "flatten": True})
            await cdp.send("Page.handleJavaScriptDialog", {"accept": True},
                           session_id=attached["sessionId"])


async def _eval_once_dialog_closed(svc: Service, tab: str, js: str) -> Reply:
    """Evaluate ``js`` once the tab no longer reports a dialog (409 retried, 10 s deadline)."""
    with trio.fail_after(10):
        while (r := await svc.eval(js, target=tab)).status == 409:
            await trio.sleep(0.02)
    return r


async def f9(d: Drill) -> None:
    """alert()/confirm(): calls on the tab report 409 DIALOG_OPEN; /dialog resolves it."""
    svc = await d.start()
    tab = await svc.open_tab("about:blank")
    have_dialog = await d.need_route(svc, "/dialog")
    r = await svc.eval("setTimeout(() => alert('drill-x'), 0); 1", target=tab)
    d.check(r.status == 200, f"scheduling alert: {r.brief()}")
    # The alert opens on the page's next task: until then a call may still
    # succeed; once it is open every call is 409 (no fixed sleep).
    with trio.fail_after(10):
        while (r := await svc.eval("1 + 1", target=tab)).status == 200:
            await trio.sleep(0.02)
    d.figure("call_with_alert", r.seconds * 1000, " ms")
    d.check(r.status == 409 and r.code == "DIALOG_OPEN", f"eval with alert open: {r.brief()}")
    d.within(r.seconds, 1.0, f"eval with alert open took {r.seconds:.2f} s")
    dialog = r.body.get("dialog") or {}
    d.check(dialog.get("message") == "drill-x", f"dialog in the body: {dialog}")

    async def resolve() -> None:
        if have_dialog:
            rr = await svc.post("/dialog", {"targetId": tab, "accept": True}, timeout=10)
            d.check(rr.status == 200, f"/dialog: {rr.brief()}")
        else:
            await _resolve_dialog_raw(svc.info.cdp_port, svc.info.token, tab)

    await resolve()
    r = await _eval_once_dialog_closed(svc, tab, "1 + 1")
    d.check(r.status == 200 and r.body.get("result") == 2, f"eval after the dialog: {r.brief()}")

    # A dialog opened by the call itself.
    r = await svc.eval("confirm('drill-y')", target=tab, timeout_ms=10_000)
    d.figure("call_opening_confirm", r.seconds * 1000, " ms")
    d.check(r.status == 409 and r.code == "DIALOG_OPEN", f"eval opening confirm: {r.brief()}")
    d.within(r.seconds, 2.0, f"eval opening confirm took {r.seconds:.2f} s")
    r = await svc.get("/tabs")
    d.check(r.status == 200, f"/tabs with a dialog open: {r.brief()}")
    d.within(r.seconds, 1.0, f"/tabs with a dialog open took {r.seconds:.2f} s")
    await resolve()
    r = await _eval_once_dialog_closed(svc, tab, "document.readyState")
    d.check(r.status == 200, f"eval after the second dialog: {r.brief()}")
    await d.invariants(svc, "after fault")
    await d.stop(svc)


async def f10(d: Drill) -> None:
    """A SingletonLock naming another host is left in place, with an actionable error."""
    home = d.home()
    profile = home / "data" / "profiles" / "clawd"
    _claim(profile)
    target = "other-host.drill.invalid-4242"
    os.symlink(target, profile / "SingletonLock")
    svc = await d.start(home=home, wait_browser=False)
    try:
        await svc.wait_state("failed", timeout=15)
    except trio.TooSlowError:
        d.check(False, f"state {(await svc.status()).get('state')}, expected failed")
    st = await svc.status()
    err = st.get("lastError") or {}
    d.figure("lastError", f"{err.get('code')}: {str(err.get('error')).split(' is ', 1)[-1]}")
    d.check("other-host.drill.invalid" in err.get("error", ""), f"error {err}")
    d.check("SingletonLock" in err.get("hint", ""), f"hint is not actionable: {err.get('hint')}")
    d.check(st.get("spawns") == 0, f"spawned {st.get('spawns')} browsers")
    d.check(os.readlink(profile / "SingletonLock") == target, "the foreign lock was touched")
    r = await svc.post("/start", timeout=30)
    d.check(r.status >= 400 and r.status != 504, f"/start again: {r.brief()}")
    d.check(os.readlink(profile / "SingletonLock") == target, "the foreign lock was touched")
    await d.invariants(svc, "after fault")
    await d.stop(svc)


async def f11(d: Drill) -> None:
    """An executable that exits at once: backoff, cap, failed with stderr; flat memory."""
    script = d.workdir / "crashing-browser"
    script.write_text("#!/bin/sh\necho 'drill: simulated browser crash at startup' >&2\nexit 1\n")
    script.chmod(0o755)
    budget = 3 if d.fast else 5
    env = {"BROWSERD_EXECUTABLE": str(script), "BROWSERD_RESTART_BUDGET": str(budget)}
    t0 = time.perf_counter()
    svc = await d.start(env=env, wait_browser=False)
    rss0 = svc.rss_mib()
    with trio.fail_after(60 if d.fast else 120):
        while (st := await svc.status())["state"] != "failed":
            await trio.sleep(0.05)
    # Spawn times from the service's own log (ms resolution), not from polling.
    spawn_times = [_log_time(line) for line in svc.info.log_text().splitlines()
                   if "launched browser pid" in line]
    gaps = [round(b - a, 2) for a, b in itertools.pairwise(spawn_times)]
    d.figure("spawns", st["spawns"])
    d.figure("gaps", "/".join(f"{g:.2f}" for g in gaps), " s")
    d.figure("to_failed", time.perf_counter() - t0, " s")
    d.check(st["spawns"] == budget + 1, f"spawns {st['spawns']}, expected {budget + 1}")
    # Backoff 0.5 s doubling, jitter x0.5-1.5; a gap also holds one failed launch.
    for i, gap in enumerate(gaps):
        base = 0.5 * 2 ** i
        d.check(0.5 * base - 0.05 <= gap <= 1.5 * base + 0.75,
                f"gap {i + 1} is {gap:.2f} s, outside the backoff {0.5 * base:.2f}-"
                f"{1.5 * base:.2f} s")
    err = st.get("lastError") or {}
    d.check("simulated browser crash" in str(err.get("stderr", "")),
            f"lastError has no stderr tail: {err}")
    await trio.sleep(1.0)
    st = await svc.status()
    d.check(st["spawns"] == budget + 1 and st["state"] == "failed",
            f"still spawning after failed: {st['spawns']} {st['state']}")
    rss1 = svc.rss_mib()
    d.figure("rss", f"{rss0}->{rss1}", " MiB")
    d.check(rss1 - rss0 < 20, f"service RSS grew {rss1 - rss0:.1f} MiB")
    r = await svc.get("/healthz")
    d.check(r.status == 200, f"/healthz: {r.brief()}")
    await d.invariants(svc, "after fault")
    await d.stop(svc)


async def f12(d: Drill) -> None:
    """The CDP websocket drops while an attached browser lives."""
    chrome_port = free_port_pair()
    chromium = await trio.to_thread.run_sync(
        lambda: launch_chromium(d.workdir / "attached-profile", cdp_port=chrome_port))
    d.chromiums.append(chromium)
    proxy = TcpProxy(chrome_port)
    async with trio.open_nursery() as nursery:
        await nursery.start(proxy.run)
        svc = await d.start(env={"BROWSERD_CDP_URL": f"http://127.0.0.1:{proxy.port}"})
        st = await svc.status()
        d.check(st["pid"] is None, f"attach mode reports a pid of its own: {st['pid']}")
        tab = await svc.open_tab("about:blank")
        have_console = await d.need_route(svc, "/console")
        inflight: list[Reply] = []
        t_cut = 0.0

        async def pending() -> None:
            r = await svc.eval("new Promise(() => {})", target=tab, await_=True,
                               timeout_ms=30_000)
            inflight.append(attrs.evolve(r, seconds=time.perf_counter() - t_cut))

        async with trio.open_nursery() as inner:
            inner.start_soon(pending)
            await trio.sleep(0.3)
            t_cut = time.perf_counter()
            cut = proxy.cut()
        d.figure("cut_connections", cut)
        r = inflight[0]
        d.figure("inflight_fail", r.seconds * 1000, " ms")
        d.check(r.status == 502, f"pending eval after the cut: {r.brief()}")
        d.within(r.seconds, 1.0, f"pending eval took {r.seconds:.2f} s to fail")
        await svc.wait_state("running", timeout=15)
        d.figure("reconnect", time.perf_counter() - t_cut, " s")
        st = await svc.status()
        d.check(st["restarts"] == 1, f"restarts {st['restarts']}")
        d.check(chromium.proc.poll() is None, "the attached browser died")
        r = await svc.eval("document.readyState", target=tab)
        d.check(r.status == 200, f"same tab after reconnect: {r.brief()}")
        ids = [t["targetId"] for t in await svc.tabs()]
        d.check(len(ids) == len(set(ids)), f"duplicate tabs after reconnect: {ids}")
        if have_console:
            # A second message is the barrier: console events arrive in order, so
            # once it is seen every copy of the first (one per subscription) is too.
            await svc.eval("console.log('drill-f12-marker'); console.log('drill-f12-barrier'); 1",
                           target=tab)
            with trio.fail_after(10):
                while True:
                    r = await svc.call("GET", f"/console?targetId={tab}")
                    text = json.dumps(r.body)
                    if "drill-f12-barrier" in text:
                        break
                    await trio.sleep(0.05)
            count = text.count("drill-f12-marker")
            d.figure("console_copies", count)
            d.check(count == 1, f"console message seen {count} times after reconnect")
        await trio.sleep(0.3)
        d.figure("live_connections", proxy.live)
        d.check(proxy.live == 1, f"{proxy.live} live CDP connections through the proxy")
        r = await svc.post("/stop")
        d.check(r.status == 200, f"/stop: {r.brief()}")
        with trio.move_on_after(10):  # the service closes its connection as it stops
            while proxy.live:
                await trio.sleep(0.05)
        d.check(chromium.proc.poll() is None, "/stop in attach mode killed the browser")
        d.check(proxy.live == 0, f"{proxy.live} connections left after /stop")
        r = await svc.post("/start")
        d.check(r.status == 200 and r.body.get("state") == "running", f"/start: {r.brief()}")
        await d.invariants(svc, "after fault")
        await d.stop(svc)
        d.check(chromium.proc.poll() is None, "stopping the service killed the attached browser")
        nursery.cancel_scope.cancel()
    await trio.to_thread.run_sync(chromium.stop)


async def f13(d: Drill) -> None:
    """Disk full while saving a screenshot: 507, nothing partial, still serving."""
    home = d.home()
    media = home / "cache" / "media"
    media.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs",
                           str(media)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise DrillSkipped(f"cannot mount a tmpfs: {proc.stderr.strip()}")
    d.mounts.append(media)
    svc = await d.start(home=home)
    if not await d.need_route(svc, "/screenshot"):
        await d.stop(svc)
        return
    tab = await svc.open_tab("about:blank")
    await svc.eval("document.body.innerHTML = '<h1>drill F13</h1>'; 1", target=tab)
    r = await svc.post("/screenshot", {"targetId": tab})
    d.check(r.status == 200, f"first screenshot: {r.brief()}")
    first = Path(r.body.get("path", "/nonexistent"))
    first_bytes = first.read_bytes() if first.exists() else b""
    names_before = {p.name for p in media.iterdir()}
    free = os.statvfs(media).f_bavail * os.statvfs(media).f_frsize
    filler = media / "filler.bin"
    with open(filler, "wb") as f, contextlib.suppress(OSError):
        f.write(b"\0" * max(0, free - 1024))
    await svc.eval("document.body.style.height = '5000px'; document.body.style.background = "
                   "'repeating-linear-gradient(45deg, red, blue 7px, green 13px)'; 1",
                   target=tab)
    r = await svc.post("/screenshot", {"targetId": tab, "fullPage": True})
    d.figure("full_disk", f"{r.status} {r.code}")
    d.check(r.status == 507 and r.code == "INSUFFICIENT_STORAGE", f"disk full: {r.brief()}")
    names_after = {p.name for p in media.iterdir()}
    d.check(names_after == names_before | {"filler.bin"} or names_after == names_before,
            f"new files after a failed save: {names_after - names_before}")
    d.check(first.exists() and first.read_bytes() == first_bytes, "earlier file damaged")
    filler.unlink()
    r = await svc.eval("1 + 1", target=tab)
    d.check(r.status == 200, f"eval after 507: {r.brief()}")
    r = await svc.post("/screenshot", {"targetId": tab})
    d.check(r.status == 200, f"screenshot after freeing space: {r.brief()}")
    await d.invariants(svc, "after fault")
    await d.stop(svc)


async def f14(d: Drill) -> None:
    """Closing the last tab: the browser stays up (or is restarted); /tabs/open works."""
    svc = await d.start()
    st = await svc.status()
    pid = st["pid"]
    await svc.open_tab("about:blank")
    await svc.open_tab("about:blank")
    for t in await svc.tabs():
        r = await svc.post("/tabs/close", {"targetId": t["targetId"]}, timeout=15)
        d.check(r.status == 200, f"closing {t['targetId']}: {r.brief()}")
    await trio.sleep(0.5)
    st = await svc.status()
    stayed = st["state"] == "running" and st["pid"] == pid
    d.figure("browser", "stayed up" if stayed else f"{st['state']} pid {st['pid']}")
    if not stayed:
        await svc.wait_state("running", timeout=15)
        d.note("the browser exited with its last tab and was restarted")
    tabs = await svc.tabs()
    d.check(tabs == [], f"/tabs after closing all: {tabs}")
    t0 = time.perf_counter()
    tab = await svc.open_tab("about:blank")
    d.figure("open_after", (time.perf_counter() - t0) * 1000, " ms")
    r = await svc.eval("1 + 1", target=tab)
    d.check(r.status == 200, f"eval in the new tab: {r.brief()}")
    d.check(len(await svc.tabs()) == 1, "expected exactly one tab")
    await d.invariants(svc, "after fault")
    await d.stop(svc)


async def f15(d: Drill) -> None:
    """Overload: 50 concurrent screenshots and evals; excess refused fast; RSS bounded."""
    with serve_pages({"/a.html": PAGE_A, "/b.html": PAGE_B}) as pages:
        svc = await d.start()
        tabs = [await svc.open_tab(pages.url("/a.html")),
                await svc.open_tab(pages.url("/b.html", host="localhost")),
                await svc.open_tab(pages.url("/a.html", host="localhost"))]
        have_shot = await d.need_route(svc, "/screenshot")
        rss0 = svc.rss_mib()
        replies: list[tuple[str, Reply]] = []
        health: list[float] = []
        probe_failures: list[str] = []
        # The burst gets its own connection pool, warmed up, so what is measured is
        # the service, not 50 TCP handshakes; the /healthz probe keeps its own client.
        burst = Service(svc.info, svc.info.client(
            limits=httpx.Limits(max_connections=100, max_keepalive_connections=100)),
            svc.baseline)
        d.services.append(burst)
        async with trio.open_nursery() as warm:
            for _ in range(50):
                warm.start_soon(burst.get, "/healthz")
        audit = svc.info.home / "logs" / "audit.log"
        audit_from = audit.stat().st_size if audit.exists() else 0

        async def one(i: int) -> None:
            tab = tabs[i % len(tabs)]
            if have_shot and i % 2:
                r = await burst.post("/screenshot", {"targetId": tab}, timeout=60)
                replies.append(("screenshot", r))
            else:
                r = await burst.eval(f"new Promise(r => setTimeout(() => r({i}), 200))",
                                     target=tab, await_=True, timeout_ms=20_000)
                replies.append(("eval", r))

        t0 = time.perf_counter()
        cpu0 = cpu_seconds(svc.info.pid)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: _probe(svc, path="/healthz", body=None, every=0.1,
                                              latencies=health, failures=probe_failures))
            async with trio.open_nursery() as fifty:
                for i in range(50):
                    fifty.start_soon(one, i)
            nursery.cancel_scope.cancel()
        total = time.perf_counter() - t0
        d.figure("service_cpu", cpu_seconds(svc.info.pid) - cpu0, " s")
        ok = [r for _, r in replies if r.status == 200]
        refused = [r for _, r in replies if r.status in (429, 503)]
        other = [r for _, r in replies if r.status not in (200, 429, 503)]
        d.figure("ok/refused/other", f"{len(ok)}/{len(refused)}/{len(other)}")
        d.figure("burst", total, " s")
        d.check(not other, f"unexpected answers: {[r.brief() for r in other[:3]]}")
        d.check(ok, "nothing succeeded")
        d.check(refused, "no request was refused: concurrency is not bounded")
        if refused:
            worst = max(r.seconds for r in refused)
            d.figure("refusal_max", worst * 1000, " ms")
            # Seen by the client this includes its own 50 requests and the machine's
            # load on 2 cores; the service's own refusal time is checked below.
            d.within(worst, 2.0, f"a refusal took {worst:.2f} s to arrive")
            with open(audit, "rb") as f:
                f.seek(audit_from)
                lines = f.read().decode(errors="replace").splitlines()
            server = [float(line.rsplit("ms=", 1)[1]) for line in lines
                      if ("outcome=TAB_BUSY" in line or "outcome=OVERLOADED" in line)
                      and "ms=" in line]
            if server:
                d.figure("refusal_in_service_max", max(server), " ms")
                d.within(max(server) / 1000, 0.1,
                         f"the service took {max(server):.0f} ms to refuse")
        d.figure("healthz_max", max(health) * 1000, " ms")
        d.check(health, "no /healthz probe completed during the burst")
        d.within(max(health), 0.5, f"/healthz waited {max(health):.3f} s during the burst")
        d.check(not probe_failures, f"probe failures: {probe_failures[:3]}")
        for tab in tabs:
            r = await svc.eval("document.title", target=tab)
            d.check(r.status == 200, f"tab after the burst: {r.brief()}")
        rss1 = svc.rss_mib()
        d.figure("rss", f"{rss0}->{rss1}", " MiB")
        d.check(rss1 - rss0 < 100, f"service RSS grew {rss1 - rss0:.1f} MiB")
        await d.invariants(svc, "after fault")
        await d.stop(svc)


async def f16(d: Drill) -> None:
    """A hung browser: SIGSTOP its process group; found, refused fast, replaced, told."""
    interval, timeout = 0.5, 2.0
    bound = interval + timeout  # a probe every interval, each with the timeout to answer
    svc = await d.start(env={"BROWSERD_LIVENESS_INTERVAL_S": str(interval),
                             "BROWSERD_LIVENESS_TIMEOUT_S": str(timeout)})
    st = await svc.status()
    old_pid, restarts = st["pid"], st["restarts"]
    tab = await svc.open_tab("about:blank")
    inflight: list[Reply] = []
    t_stop = 0.0

    async def pending() -> None:
        r = await svc.eval("new Promise(() => {})", target=tab, await_=True, timeout_ms=60_000)
        inflight.append(attrs.evolve(r, seconds=time.perf_counter() - t_stop))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(pending)
        await trio.sleep(0.3)  # the eval waits on the browser
        t_stop = time.perf_counter()
        os.killpg(old_pid, signal.SIGSTOP)
        found: float | None = None
        health: dict[str, Any] = {}
        while time.perf_counter() - t_stop < bound + 10:
            health = (await svc.get("/healthz", timeout=5)).body
            if health.get("browser") == "unresponsive":
                found = time.perf_counter() - t_stop
                break
            await trio.sleep(0.02)
        refused = await svc.eval("1 + 1", target=tab)
    d.check(found is not None, f"/healthz never said unresponsive (last: {health})")
    if found is not None:
        d.figure("found_hung", found, " s")
        d.within(found, bound + 0.5, f"found hung after {found:.2f} s (bound {bound:g} s)")
        d.check(health == {"ok": False, "browser": "unresponsive"}, f"/healthz: {health}")
    d.figure("refusal", refused.seconds * 1000, " ms")
    d.check((refused.status, refused.code) == (503, "BROWSER_UNRESPONSIVE"),
            f"a call while unresponsive: {refused.brief()}")
    d.within(refused.seconds, 0.5, f"the refusal took {refused.seconds:.2f} s")
    r = inflight[0] if inflight else None
    d.check(r is not None and (r.status, r.code) == (503, "BROWSER_UNRESPONSIVE"),
            f"the eval in flight: {r.brief() if r else 'no answer'}")
    if r is not None:
        d.figure("inflight_fail", r.seconds, " s")
        d.within(r.seconds, bound + 0.5, f"the eval in flight took {r.seconds:.2f} s to fail")
    await svc.wait_state("running", timeout=30, where=lambda s: s["pid"] not in (None, old_pid))
    d.figure("recover", time.perf_counter() - t_stop, " s")
    st = await svc.status()
    crash = st.get("lastCrash") or {}
    d.figure("lastCrash", f"{crash.get('reason')}, {crash.get('tabsAffected')} tabs")
    d.check(crash.get("reason") == "hung", f"lastCrash: {crash}")
    d.check(st["restarts"] == restarts + 1, f"restarts {restarts} -> {st['restarts']}")
    d.check(not pid_alive(old_pid), f"the stopped browser (pid {old_pid}) is still there")
    step = [line for line in svc.info.log_text().splitlines()
            if f"browser pid {old_pid} stopped" in line]
    d.figure("ladder_step", step[-1].rsplit("(", 1)[-1].rstrip(")") if step else "?")
    d.check(step and "(sigkill)" in step[-1], f"the stopped group was not killed: {step}")
    tab = await svc.open_tab("about:blank")
    r = await svc.eval("6 * 7", target=tab)
    d.check(r.status == 200 and r.body.get("result") == 42, f"eval after the restart: {r.brief()}")
    await d.invariants(svc, "after fault")
    await d.stop(svc)


async def f17(d: Drill) -> None:
    """kill -9 the browser under five agent tabs in two sessions: all come back, and say so."""
    with serve_pages({"/a.html": PAGE_A, "/b.html": PAGE_B}) as pages:
        svc = await d.start()
        sessions = []
        for name in ("a", "b"):
            r = await svc.post("/sessions", {"name": name})
            d.check(r.status == 200, f"POST /sessions: {r.brief()}")
            sessions.append(r.body.get("sessionId"))
        if not all(sessions):
            return
        opened: dict[str, tuple[str, str]] = {}  # old id -> (session, url)
        for n, session in enumerate([sessions[0]] * 3 + [sessions[1]] * 2):
            url = pages.url(f"/{'ab'[n % 2]}.html?tab={n}")
            r = await svc.post("/tabs/open", {"url": url, "session": session}, timeout=40)
            d.check(r.status == 200, f"/tabs/open {url} in {session}: {r.brief()}")
            if r.status == 200:
                opened[r.body["targetId"]] = (session, url)
        old_pid = (await svc.status())["pid"]
        t_kill = time.perf_counter()
        os.kill(old_pid, signal.SIGKILL)
        await svc.wait_state("running", timeout=30,
                             where=lambda s: s.get("pid") not in (None, old_pid))
        d.figure("recover", time.perf_counter() - t_kill, " s")
        st = await svc.status()
        crash = st.get("lastCrash") or {}
        d.check((crash.get("reason"), crash.get("signal")) == ("killed", 9),
                f"lastCrash: {crash}")
        d.check(bool(crash.get("stderrTail")), "lastCrash has no stderr tail")
        new_of: dict[str, str] = {}
        for session in sessions:
            r = await svc.get(f"/tabs?session={session}", timeout=10)
            d.check(r.status == 200, f"/tabs of session {session}: {r.brief()}")
            tabs = r.body.get("tabs", [])
            back = {t.get("restoredFrom"): t.get("url") for t in tabs}
            want = {old: url for old, (s, url) in opened.items() if s == session}
            d.check(back == want, f"session {session}: tabs {back}, expected {want}")
            new_of.update({t["restoredFrom"]: t["targetId"] for t in tabs
                           if t.get("restoredFrom")})
        d.figure("restored", f"{len(new_of)}/{len(opened)} tabs in {len(sessions)} sessions")
        answers: list[float] = []
        for old, (session, url) in opened.items():
            r = await svc.post("/eval", {"targetId": old, "js": "1", "session": session})
            answers.append(r.seconds)
            d.check((r.status, r.code) == (409, "TAB_RESTORED")
                    and r.body.get("targetId") == new_of.get(old)
                    and r.body.get("crash") == crash, f"old id {old}: {r.brief()}")
            other = sessions[1] if session == sessions[0] else sessions[0]
            r = await svc.post("/eval", {"targetId": old, "js": "1", "session": other})
            d.check((r.status, r.code) == (404, "TAB_NOT_FOUND"),
                    f"old id {old} asked by the other session: {r.brief()}")
            if old in new_of:
                r = await svc.post("/eval", {"targetId": new_of[old], "js": "location.href",
                                             "session": session})
                d.check(r.status == 200 and r.body.get("result") == url,
                        f"the reopened tab of {old}: {r.brief()}")
        if answers:
            d.figure("old_id_answer", max(answers) * 1000, " ms")
        await d.invariants(svc, "after fault")
        await d.stop(svc)


# -- the table of drills -------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class DrillSpec:
    key: str
    title: str
    expectation: str
    fn: Callable[[Drill], Awaitable[None]]
    fast: bool
    #: Why this drill can be impossible on some machines. Only a drill that
    #: declares it may end SKIP; any other DrillSkipped is a FAIL.
    may_skip: str | None = None


async def s11(d: Drill) -> None:
    """Another OS user (nobody) tries the gateway and looks for a DevTools listener."""
    from .neighbour import hostile_neighbour

    await hostile_neighbour(d)


FLOOD_LINES_FULL, FLOOD_LINES_FAST = 200_000, 60_000
FLOOD_PAGE = """<!doctype html><title>flood</title><script>
for (let i = 0; i < {n}; i++) console.log('line ' + i);
for (let i = 0; i < 500; i++) fetch('/flood.html?req=' + i).catch(() => {{}});
document.title = 'flooded';
</script>"""


async def f18(d: Drill) -> None:
    """A page floods events while it loads; its tab keeps answering; drops are counted."""
    lines = FLOOD_LINES_FAST if d.fast else FLOOD_LINES_FULL
    svc = await d.start()
    with serve_pages({"/flood.html": FLOOD_PAGE.format(n=lines)}) as pages:
        tab = await svc.open_tab("about:blank")
        t0 = time.perf_counter()
        r = await svc.post("/navigate", {"targetId": tab, "url": pages.url("/flood.html"),
                                         "timeoutMs": 120_000}, timeout=150)
        d.figure("flood_load", time.perf_counter() - t0, " s")
        d.check(r.status == 200, f"/navigate to the flood: {r.brief()}")
        title = await svc.eval("document.title", target=tab, timeout_ms=60_000)
        d.check(title.status == 200 and title.body.get("result") == "flooded",
                f"/eval after the flood: {title.brief()}")
        snap = await svc.get(f"/snapshot?targetId={tab}", timeout=60)
        d.check(snap.status == 200 and "flood" in str(snap.body.get("title")),
                f"/snapshot after the flood: {snap.brief()}")
        console = await svc.get(f"/console?targetId={tab}", timeout=30)
        dropped = console.body.get("dropped") if console.status == 200 else None
        d.check(isinstance(dropped, int) and dropped >= lines - 500,
                f"/console dropped {dropped} of {lines} lines (500 kept): {console.brief()}")
        if isinstance(dropped, int):
            d.figure("console_dropped", dropped, "")
        tabs = await svc.tabs()
        d.check(any(t["targetId"] == tab and not t.get("broken") for t in tabs),
                f"the tab is listed and not broken: {tabs}")


async def p1(d: Drill) -> None:
    """kill -9 one profile's browser while the other profiles serve a load."""
    from .profiles_drill import profile_kill

    await profile_kill(d)


DRILLS: dict[str, DrillSpec] = {s.key: s for s in [
    DrillSpec(key="F1", title="kill -9 the browser, requests in flight", fast=True, fn=f1,
              expectation="in-flight calls 502 BROWSER_GONE < 2 s; relaunch on the same "
                          "profile; /tabs works; no orphans"),
    DrillSpec(key="F2", title="kill -9 the service", fast=False, fn=f2,
              expectation="the browser exits by itself (pipe lifeline); a new start on the "
                          "same profile and port succeeds"),
    DrillSpec(key="F3", title="SIGTERM to the service", fast=True, fn=f3,
              expectation="exit 0; Browser.close first; no Singleton*; exit_type Normal"),
    DrillSpec(key="F4", title="persistent cookie, graceful restart", fast=False, fn=f4,
              expectation="cookie via CDP after restart and on disk after close; another "
                          "profile does not see it"),
    DrillSpec(key="F5", title="stale SingletonLock (this host, dead pid)", fast=True, fn=f5,
              expectation="start succeeds, same profile"),
    DrillSpec(key="F6", title="profile in use by a live process", fast=False, fn=f6,
              expectation="refused: 'profile in use by pid N'; deletes nothing, kills nothing"),
    DrillSpec(key="F7", title="renderer crash in tab A", fast=True, fn=f7,
              expectation="calls on A fail < 2 s TARGET_CRASHED; B works; A marked crashed; "
                          "A reloads or closes"),
    DrillSpec(key="F8", title="hung renderer", fast=True, fn=f8,
              expectation="504 within the deadline; /healthz and other tab answer while it "
                          "hangs (< 0.5 s); tab recovers"),
    DrillSpec(key="F9", title="alert()/confirm() open", fast=True, fn=f9,
              expectation="409 DIALOG_OPEN, no hang; /dialog resolves it"),
    DrillSpec(key="F10", title="SingletonLock of another host", fast=False, fn=f10,
              expectation="lock left in place; actionable error in /status"),
    DrillSpec(key="F11", title="executable exits at once", fast=True, fn=f11,
              expectation="exponential backoff, then failed with stderr tail; bounded spawns; "
                          "flat memory"),
    DrillSpec(key="F12", title="CDP websocket drops (attach mode)", fast=False, fn=f12,
              expectation="pending calls fail at once; reconnect; one subscription; the "
                          "browser is never killed"),
    DrillSpec(key="F13", title="disk full while saving a screenshot", fast=False, fn=f13,
              expectation="507, nothing partial, earlier files intact, still serving",
              may_skip="it mounts a 2 MiB tmpfs, which needs root (or CAP_SYS_ADMIN)"),
    DrillSpec(key="F14", title="the last tab is closed", fast=True, fn=f14,
              expectation="browser stays up (or restarts); /tabs [] then /tabs/open works"),
    DrillSpec(key="F15", title="overload: 50 concurrent calls", fast=False, fn=f15,
              expectation="excess 429/503 quickly; nothing else breaks; RSS bounded"),
    DrillSpec(key="F16", title="hung browser (SIGSTOP on its process group)", fast=True,
              fn=f16, expectation="/healthz unresponsive within interval + timeout; in-flight "
                                  "and new calls 503 BROWSER_UNRESPONSIVE fast; the group "
                                  "SIGKILLed; restarted (lastCrash hung); works after"),
    DrillSpec(key="F17", title="kill -9 the browser under agent tabs in two sessions",
              fast=True, fn=f17,
              expectation="restarted; all 5 tabs reopened at their URLs in their sessions "
                          "(restoredFrom); each old id 409 TAB_RESTORED with the new id and "
                          "lastCrash (signal 9, stderr tail), 404 in the other session"),
    DrillSpec(key="F18", title="a page floods events while it loads", fast=True, fn=f18,
              expectation="the tab answers /eval and /snapshot after 200,000 console lines "
                          "and 500 fetches (60,000 in the fast run); drops counted; never "
                          "BROWSER_GONE or broken"),
    DrillSpec(key="P1", title="kill -9 one profile's browser under load", fast=True, fn=p1,
              expectation="it restarts with a new pid; the other profiles serve every request "
                          "(no error) and keep their browsers"),
    DrillSpec(key="S11", title="hostile neighbour: another OS user on the CDP port", fast=True,
              fn=s11, expectation="401 on every gateway/control probe without the token; no "
                                  "process of the browser group listens on TCP"),
]}

FAST = tuple(k for k, s in DRILLS.items() if s.fast)


async def run_drill(key: str, *, fast: bool = True, keep: bool = False,
                    judge_latency: bool = True) -> DrillResult:
    """Run one drill with a hard deadline; never raises for a drill failure.

    ``judge_latency=False`` (pytest) records latency limits as notes instead
    of failing on them (:meth:`Drill.within`).

    The drill's temporary directory is removed when it passes (kept on
    failure, or with ``keep``). Cancellation cleans up the same way.
    """
    spec = DRILLS[key]
    workdir = Path(tempfile.mkdtemp(prefix=f"browserd-drill-{key}-"))
    drill = Drill(key, workdir, fast=fast, judge_latency=judge_latency)
    outcome = "PASS"
    start = time.perf_counter()
    try:
        with trio.fail_after(DRILL_DEADLINE_S):
            await spec.fn(drill)
    except DrillSkipped as exc:
        if spec.may_skip is None:
            drill.failures.append(f"skipped, but the drill declares no reason it may: {exc}")
        else:
            outcome = "SKIP"
            drill.note(f"{exc} (declared: {spec.may_skip})")
    except trio.TooSlowError:
        drill.failures.append(f"timed out: {traceback.format_exc(limit=-3)}")
    except Exception as exc:
        drill.failures.append(f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-4)}")
    finally:
        await drill.cleanup()
    if drill.failures:
        outcome = "FAIL"
    kept = keep or outcome == "FAIL"
    if not kept:
        shutil.rmtree(workdir, ignore_errors=True)
    return DrillResult(
        key=key, title=spec.title, expectation=spec.expectation, outcome=outcome,
        figures=dict(drill.figures), failures=tuple(drill.failures), notes=tuple(drill.notes),
        seconds=time.perf_counter() - start, workdir=str(workdir) if kept else None,
    )


__all__ = ["DRILLS", "FAST", "Drill", "DrillResult", "DrillSpec", "read_proc", "run_drill"]
