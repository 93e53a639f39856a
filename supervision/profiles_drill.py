"""P1, one profile's browser killed while the others serve a load.

A service runs three profiles at once (the default ``clawd`` and the
``[profiles.alpha]`` / ``[profiles.beta]`` tables). Two load tasks keep
``clawd`` and ``beta`` busy (eval on their own tab, back to back); then
``alpha``'s browser is killed with SIGKILL. ``alpha`` must come back (a new
pid, running) and nothing else may see an error: every request of the load
is 200, and the other browsers keep their pids.
"""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import trio

from .drill import Drill, Service
from .harness import free_port_pair, wait_for

LOADED = ("clawd", "beta")
VICTIM = "alpha"


async def _profiles(svc: Service) -> dict[str, dict[str, Any]]:
    reply = await svc.get("/profiles", timeout=10)
    return {p["name"]: p for p in reply.body.get("profiles", [])}


async def profile_kill(d: Drill) -> None:
    home = d.home()
    (home / "config").mkdir(mode=0o700, exist_ok=True)
    (home / "config" / "config.toml").write_text(
        f"[profiles.alpha]\ncdp_port = {free_port_pair()}\n"
        f"[profiles.beta]\ncdp_port = {free_port_pair()}\n")
    for name in ("alpha", "beta"):
        d.profiles.add(home / "data" / "profiles" / name)
    svc = await d.start(home=home)

    async def all_running() -> bool:
        table = await _profiles(svc)
        return len(table) == 3 and all(p["running"] for p in table.values())

    await wait_for(all_running, timeout=60)
    before = await _profiles(svc)
    victim_pid = before[VICTIM]["pid"]

    errors: list[str] = []
    served = {name: 0 for name in LOADED}
    stop = trio.Event()

    async def load(profile: str) -> None:
        opened = await svc.post("/tabs/open", {"url": "about:blank", "profile": profile})
        if opened.status != 200:
            errors.append(f"{profile}: open {opened.brief()}")
            return
        target = opened.body["targetId"]
        while not stop.is_set():
            r = await svc.post("/eval", {"js": "1 + 1", "targetId": target, "profile": profile},
                               timeout=30)
            if r.status != 200:
                errors.append(f"{profile}: {r.brief()}")
            served[profile] += 1

    async with trio.open_nursery() as nursery:
        for name in LOADED:
            nursery.start_soon(load, name)
        await trio.sleep(1.0)  # the load runs before the fault
        t0 = time.perf_counter()
        os.kill(victim_pid, signal.SIGKILL)

        async def victim_back() -> bool:
            entry = (await _profiles(svc))[VICTIM]
            return bool(entry["running"] and entry.get("pid") not in (None, victim_pid))

        try:
            await wait_for(victim_back, timeout=60)
            d.figure("victim_back", time.perf_counter() - t0, " s")
        except trio.TooSlowError:
            d.check(False, f"{VICTIM} did not come back within 60 s")
        await trio.sleep(1.0)  # and runs on after it
        stop.set()

    after = await _profiles(svc)
    d.figure("requests_served", sum(served.values()))
    d.check(all(served[n] > 0 for n in LOADED), f"a load task served nothing: {served}")
    d.check(not errors, f"{len(errors)} errors outside {VICTIM}: {errors[:5]}")
    for name in LOADED:
        d.check(after[name]["pid"] == before[name]["pid"] and after[name]["running"],
                f"{name} was disturbed: {before[name].get('pid')} -> {after[name]}")
    r = await svc.post("/tabs/open", {"url": "about:blank", "profile": VICTIM})
    d.check(r.status == 200, f"{VICTIM} after its restart: {r.brief()}")
    await d.invariants(svc, "after fault")
    await d.stop(svc)


__all__ = ["profile_kill"]
