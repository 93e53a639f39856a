"""``python -m bench [--quick] [--only start,tab,...] [--out docs/benchmarks.md]``

Runs raw CDP, Playwright and browserd side by side on the same Debian
Chromium and writes a Markdown report. Every ratio comes from the same run:
each operation is measured in rounds (raw, Playwright, browserd, then again),
so background noise lands on all three sides alike; figures are medians
after warm-up.

Operations (``--only`` keys): start, tab, nav, eval, shot, snap, dom, conc, mem.

``--profile OP[,OP]`` instead hammers one browserd operation while py-spy
samples the service process and prints its hot spots (needs ``py-spy``).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from importlib.metadata import version
from pathlib import Path

from .common import remove_dir, temp_dir
from .profiling import profile_main
from .report import render
from .run import ALL_OPS, Bench, log

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, one round")
    parser.add_argument("--only", default="", help="comma list of: " + ",".join(ALL_OPS))
    parser.add_argument("--out", default="docs/benchmarks.md", help="the report to write")
    parser.add_argument("--note", default="", help="a paragraph added to the report")
    parser.add_argument("--profile", default="", help="profile browserd on these operations")
    parser.add_argument("--duration", type=int, default=10, help="seconds per profile")
    args = parser.parse_args(argv)
    if args.profile:
        return profile_main(args)
    selected = [o.strip() for o in args.only.split(",") if o.strip()] or list(ALL_OPS)
    unknown = set(selected) - set(ALL_OPS)
    if unknown:
        parser.error(f"unknown operations {sorted(unknown)}; choose from {','.join(ALL_OPS)}")
    started, load0 = time.time(), os.getloadavg()
    tmp = temp_dir("browserd-bench-")
    bench = Bench(args, tmp)
    try:
        bench.setup()
        bench.run(selected)
    finally:
        bench.teardown()
        remove_dir(tmp)
    load1 = os.getloadavg()
    meta = {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "CPUs": str(os.cpu_count()),
        "CPU model": _cpu_model(),
        "Chromium": bench.conditions.get("chromium", "?"),
        "Playwright": version("playwright"),
        "Python": platform.python_version(),
        "OS": platform.platform(),
        "mode": ("quick" if args.quick else "full") + f", operations: {','.join(selected)}",
        "load average (1 min) at start / end": f"{load0[0]:.2f} / {load1[0]:.2f}",
        "wall time": f"{time.time() - started:.0f} s",
    }
    text = render(bench, meta)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    log(f"wrote {out} ({meta['wall time']})")
    print(text)
    return 0


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


if __name__ == "__main__":
    sys.exit(main())
