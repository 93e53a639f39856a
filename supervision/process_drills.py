"""Drills that break the processes: the browser's, the service's, and the link between them.

- F1: kill -9 the browser with requests in flight.
- F2: kill -9 the service (the browser must follow it down).
- F3: SIGTERM to the service (a graceful stop).
- F11: an executable that exits at once (backoff, budget, failed).
- F12: the CDP websocket to an attached browser drops.
- F16: the browser hangs (SIGSTOP on its process group).
- F17: kill -9 the browser under agent tabs in two sessions (the tabs come back).

Each is ``async def fN(d: Drill) -> None`` (:mod:`supervision.drill`); the table
that names them is :mod:`supervision.drills`.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import trio

from .chromium import launch_chromium
from .drill import PAGE_A, PAGE_B, Drill, Reply
from .harness import free_port_pair, wait_for
from .invariants import pid_alive, profile_procs
from .servers import TcpProxy, serve_pages


def _log_time(line: str) -> float:
    """Seconds (since the epoch) of a log line's ``YYYY-mm-dd HH:MM:SS,mmm`` stamp."""
    stamp, _, ms = line[:23].partition(",")
    return time.mktime(time.strptime(stamp, "%Y-%m-%d %H:%M:%S")) + int(ms) / 1000


def _singletons(profile_dir: Path) -> list[str]:
    return sorted(p.name for p in profile_dir.glob("Singleton*"))


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
        sessions: list[str] = []
        for name in ("a", "b"):
            r = await svc.post("/sessions", {"name": name})
            d.check(r.status == 200, f"POST /sessions: {r.brief()}")
            sessions.append(str(r.body.get("sessionId") or ""))
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


__all__ = ["f1", "f2", "f3", "f11", "f12", "f16", "f17"]
