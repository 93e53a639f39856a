"""``python -m bench --profile OP[,OP]``: hot spots of the browserd service under load.

Starts a private service, hammers one browserd operation per target from a
thread while py-spy records the service process (a raw collapsed profile
and a flamegraph under /tmp), then prints the self and inclusive shares.
Needs ``py-spy`` (beside the interpreter or on PATH); an unknown target or
a missing py-spy ends the program with :class:`SystemExit`.
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from . import ops
from .common import Service, TrioWorker, remove_dir, temp_dir
from .pages import PageServer

__all__ = ["profile_main"]

def _collapse(path: Path) -> tuple[collections.Counter[str], collections.Counter[str], int]:
    """Self and inclusive sample counts per function from py-spy's raw (collapsed) output."""
    own: collections.Counter[str] = collections.Counter()
    incl: collections.Counter[str] = collections.Counter()
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count_s = line.rpartition(" ")
        if not stack or not count_s.isdigit():
            continue
        count = int(count_s)
        total += count
        frames = [re.sub(r":\d+\)$", ")", f) for f in stack.split(";")]
        own[frames[-1]] += count
        for frame in set(frames):
            incl[frame] += count
    return own, incl, total


def profile_main(args: argparse.Namespace) -> int:
    """Hammer browserd operations while py-spy records the service; print hot spots."""
    targets = [t.strip() for t in args.profile.split(",") if t.strip()]
    tmp = temp_dir("browserd-bench-prof-")
    svc = Service(tmp / "svc")
    try:
        with PageServer() as pages:
            svc.start()
            client = svc.client()
            ctx = ops.BdCtx(service=svc, client=client)
            trio_worker = TrioWorker()
            for target in targets:
                work = _profile_work(target, ctx, pages, trio_worker)
                raw_out = Path(f"/tmp/bench-profile-{target}.txt")
                svg_out = Path(f"/tmp/bench-profile-{target}.svg")
                stop = threading.Event()
                done = [0]

                def loop(work: Callable[[], object] = work, stop: threading.Event = stop,
                         done: list[int] = done) -> None:
                    while not stop.is_set():
                        work()
                        done[0] += 1

                work()  # warm-up (and page load)
                thread = threading.Thread(target=loop, daemon=True)
                thread.start()
                for fmt, dest in (("raw", raw_out), ("flamegraph", svg_out)):
                    subprocess.run([_py_spy(), "record", "--pid", str(svc.pid), "--duration",
                                    str(args.duration), "--nonblocking", "--format", fmt,
                                    "-o", str(dest)], check=True, capture_output=True)
                stop.set()
                thread.join()
                own, incl, total = _collapse(raw_out)
                print(f"\n## {target}: {done[0]} requests, {total} samples "
                      f"(raw: {raw_out}, flamegraph: {svg_out})")
                print("self share (top 12):")
                for frame, count in own.most_common(12):
                    print(f"  {100 * count / total:5.1f}%  {frame}")
                print("inclusive share, browserd frames (top 15):")
                mine = [(f, c) for f, c in incl.items() if "browserd" in f]
                for frame, count in sorted(mine, key=lambda fc: -fc[1])[:15]:
                    print(f"  {100 * count / total:5.1f}%  {frame}")
            trio_worker.close()
            client.close()
    finally:
        svc.stop()
        remove_dir(tmp)
    return 0


def _py_spy() -> str:
    beside = Path(sys.executable).parent / "py-spy"
    found = str(beside) if beside.exists() else shutil.which("py-spy")
    if found is None:
        raise SystemExit("py-spy not found: pip install py-spy")
    return found


def _profile_work(target: str, ctx: ops.BdCtx, pages: PageServer,
                  trio_worker: TrioWorker) -> Callable[[], object]:
    c = ctx.client
    if target == "eval":
        return lambda: ops.bd_eval(ctx, 1, 0)
    if target in ("snap1k", "snap10k", "inter1k", "inter10k"):
        size = target[-3:] if target.endswith("10k") else "1k"
        ctx.goto(pages.url(size))
        interactive = target.startswith("inter")
        return lambda: ops.call(c, "POST", "/snapshot", json={
            "targetId": ctx.tab, "format": "aria", "interactive": interactive,
            "maxChars": ops.BIG})
    if target in ("shot", "full"):
        ctx.goto(pages.url("1k"))
        return lambda: ops.call(c, "POST", "/screenshot", json={
            "targetId": ctx.tab, "fullPage": target == "full"})
    if target == "start":
        return lambda: (ops.call(c, "POST", "/stop"), ops.call(c, "POST", "/start", json={}))
    if target == "tab":
        return lambda: ops.bd_new_tab(ctx, 1, 0)
    if target.startswith("nav"):
        size = target[3:] or "1k"
        return lambda: ctx.goto(pages.url(size))
    if target == "dom10k":
        ctx.goto(pages.url("10k"))
        return lambda: ops.call(c, "POST", "/dom", json={
            "targetId": ctx.tab, "format": "text", "maxChars": ops.BIG})
    if target.startswith("conc"):
        tabs = ops.bd_conc_setup(ctx, pages.url("1k"), 8)
        workload = "snapshot" if target == "concsnap" else "eval"
        return lambda: trio_worker.run(ops.bd_conc, ctx.service, tabs, 1.0, workload)
    raise SystemExit(f"unknown profile target {target!r} (eval, snap1k, snap10k, inter1k, "
                     "inter10k, shot, full, start, tab, nav1k, nav10k, dom10k, conc, concsnap)")
