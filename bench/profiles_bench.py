"""Many profiles, one service: memory and per-request CPU (issue #14).

Run from the repository root::

    .venv/bin/python -m bench.profiles_bench [--profiles 10] [--tabs 5] [--requests 200]

One private ``browserd serve`` (temporary ``BROWSERD_HOME``, free ports,
headless, ``auto_start = false``) with ``--profiles`` profiles (the default
one and ``[profiles.pN]`` tables). In the same run it measures:

1. with only the default profile running: the service's CPU seconds per
   ``/eval`` request (``--requests`` back to back on one tab), and its RSS;
2. after starting every profile and opening ``--tabs`` tabs in each: the
   service's RSS (goal ≤ 120 MB), and the CPU per request again, on the
   default profile and spread over every profile;
3. the service's idle CPU (5 s, no requests) in both states, and the
   one-profile figure once more after the others are stopped (the noise);
4. the control: one profile while as many Chromiums *not* driven by browserd
   (one blank tab each) run beside it — what the machine's
   contention alone does to the same figure.

Bench tooling, not product code: errors propagate.
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import time
from pathlib import Path

import httpx
from supervision.harness import LOOPBACK_TLS

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from supervision.chromium import launch_chromium
from supervision.harness import free_port_pair, start_service, stop_service
from supervision.invariants import cpu_seconds

RSS_GOAL_MB = 120.0


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _free_range(count: int) -> int:
    for _ in range(100):
        start = free_port_pair()
        try:
            socks = []
            for port in range(start, start + count):
                sock = socket.socket()
                socks.append(sock)
                sock.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            for sock in socks:
                sock.close()
        return start
    raise RuntimeError("no free port range")


def _cpu_per_request(client: httpx.Client, pid: int, targets: list[tuple[str, str]],
                     requests: int) -> float:
    """Service CPU ms per /eval, round-robin over ``targets`` (profile, targetId)."""
    for profile, target in targets:  # warm up
        client.post("/eval", json={"js": "1", "targetId": target, "profile": profile})
    before = cpu_seconds(pid) or 0.0
    for i in range(requests):
        profile, target = targets[i % len(targets)]
        r = client.post("/eval", json={"js": "1 + 1", "targetId": target, "profile": profile})
        r.raise_for_status()
    return ((cpu_seconds(pid) or 0.0) - before) * 1000 / requests


def _idle_cpu_ms_per_s(pid: int, seconds: float = 5.0) -> float:
    before = cpu_seconds(pid) or 0.0
    time.sleep(seconds)
    return ((cpu_seconds(pid) or 0.0) - before) * 1000 / seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.profiles_bench")
    parser.add_argument("--profiles", type=int, default=10)
    parser.add_argument("--tabs", type=int, default=5)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args(argv)
    others = [f"p{i}" for i in range(1, args.profiles)]
    home = Path(tempfile.mkdtemp(prefix="browserd-profiles-bench-"))
    (home / "config").mkdir(mode=0o700)
    start = _free_range(len(others) + 1)
    (home / "config" / "config.toml").write_text(
        f"auto_start = false\nprofile_port_start = {start}\n"
        f"profile_port_end = {start + len(others)}\n"
        + "".join(f"[profiles.{name}]\n" for name in others))
    info = start_service(home, wait_browser=False, timeout=60)
    try:
        with httpx.Client(base_url=info.base_url, headers=info.headers, timeout=120,
                          verify=LOOPBACK_TLS) as client:
            client.post("/start").raise_for_status()
            tab = client.post("/tabs/open", json={"url": "about:blank"}).json()["targetId"]
            one_rss = _rss_mb(info.pid)
            one_idle = _idle_cpu_ms_per_s(info.pid)
            one_cpu = _cpu_per_request(client, info.pid, [("clawd", tab)], args.requests)
            # (one tab each: headless Chromium refuses several start URLs)
            foreign = [launch_chromium(home / "foreign" / name) for name in others]
            try:
                time.sleep(3)
                beside_cpu = _cpu_per_request(client, info.pid, [("clawd", tab)], args.requests)
            finally:
                for chromium in foreign:
                    chromium.stop()
            t0 = time.perf_counter()
            for name in others:
                client.post("/start", json={"profile": name}).raise_for_status()
            started_s = time.perf_counter() - t0
            targets: list[tuple[str, str]] = []
            for name in ["clawd", *others]:
                for _ in range(args.tabs - (1 if name == "clawd" else 0)):
                    opened = client.post("/tabs/open", json={"url": "about:blank",
                                                             "profile": name})
                    opened.raise_for_status()
                    targets.append((name, opened.json()["targetId"]))
            table = client.get("/profiles").json()["profiles"]
            running = sum(1 for p in table if p["running"])
            tabs = sum(p["tabs"] for p in table)
            many_rss = _rss_mb(info.pid)
            many_idle = _idle_cpu_ms_per_s(info.pid)
            many_cpu_default = _cpu_per_request(client, info.pid, [("clawd", tab)],
                                                args.requests)
            many_cpu_spread = _cpu_per_request(client, info.pid, targets, args.requests)
            for name in others:
                client.post("/stop", json={"profile": name}).raise_for_status()
            again_cpu = _cpu_per_request(client, info.pid, [("clawd", tab)], args.requests)
    finally:
        stop_service(info, timeout=60)
    print(f"profiles running: {running}, tabs: {tabs} (start of {len(others)} profiles: "
          f"{started_s:.1f} s)")
    print(f"service RSS: one profile {one_rss:.1f} MB; {running} profiles x {args.tabs} tabs "
          f"{many_rss:.1f} MB (goal <= {RSS_GOAL_MB:.0f} MB: "
          f"{'met' if many_rss <= RSS_GOAL_MB else 'MISSED'})")
    print(f"service CPU per /eval: one profile {one_cpu:.2f} ms; {running} profiles "
          f"{many_cpu_default:.2f} ms (same tab), {many_cpu_spread:.2f} ms (spread over "
          f"{len(targets)} tabs); one profile again after stopping the others "
          f"{again_cpu:.2f} ms")
    print(f"control: one profile beside {len(others)} Chromiums not driven by browserd "
          f"{beside_cpu:.2f} ms per /eval")
    print(f"service idle CPU: one profile {one_idle:.2f} ms/s; {running} profiles "
          f"{many_idle:.2f} ms/s")
    return 0 if many_rss <= RSS_GOAL_MB else 1


if __name__ == "__main__":
    sys.exit(main())
