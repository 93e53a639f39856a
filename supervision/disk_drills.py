"""Drills that break what is on disk: the profile's locks and state, and the disk itself.

- F4: a persistent cookie across a graceful restart (and not in another profile).
- F5: a stale ``SingletonLock`` (this host, a dead pid).
- F6: the profile in use by a live process (another browserd, a hand-started Chromium).
- F10: a ``SingletonLock`` naming another host.
- F13: the disk fills while a screenshot is saved (needs root for its tmpfs).

Each is ``async def fN(d: Drill) -> None`` (:mod:`supervision.drill`); the table
that names them is :mod:`supervision.drills`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

from .chromium import launch_chromium
from .drill import Drill, DrillSkipped
from .invariants import pid_alive
from .rawcdp import open_raw_cdp


def _dead_pid() -> int:
    """A pid that has just exited (so, almost surely, belongs to nobody)."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _claim(profile_dir: Path) -> None:
    from browserd.browser.profile import claim_profile

    claim_profile(profile_dir)


#: What a browserd refusing a profile could plausibly delete (the lock files, the
#: profile's state). Everything else under the profile is the running browser's
#: own business (caches and blob files come and go).
_GUARDED = ("SingletonLock", "SingletonSocket", "SingletonCookie", ".browserd-profile",
            "Local State", "Default/Preferences", "Default/Cookies")


def _file_set(profile_dir: Path) -> set[str]:
    return {name for name in _GUARDED if os.path.lexists(profile_dir / name)}


# -- the drills ----------------------------------------------------------------------------


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


__all__ = ["f4", "f5", "f6", "f10", "f13"]
