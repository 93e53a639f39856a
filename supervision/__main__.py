"""``python -m supervision [--only F1,F3] [--fast] [--keep] [--verbose] [--markdown]``.

Runs the drills one after another (each on its own private browserd), prints a
table (drill, expectation, outcome, measured figures) and exits 1 if any failed.
``--fast`` runs the CI subset with short budgets; ``--only`` picks drills.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap

import trio

from .drill import DrillResult
from .drills import DRILLS, FAST, run_drill


def _table(results: list[DrillResult]) -> str:
    rows = [("drill", "expectation", "outcome", "figures")]
    for r in results:
        figures = ", ".join(f"{k}={v}" for k, v in r.figures.items())
        rows.append((r.key, r.expectation, r.outcome, figures))
    widths = (5, 48, 7, 70)
    out = []
    for i, row in enumerate(rows):
        cells = [textwrap.wrap(cell, w) or [""] for cell, w in zip(row, widths, strict=True)]
        height = max(len(c) for c in cells)
        for line in range(height):
            out.append(" | ".join((c[line] if line < len(c) else "").ljust(w)
                                  for c, w in zip(cells, widths, strict=True)).rstrip())
        if i == 0:
            out.append("-+-".join("-" * w for w in widths))
    return "\n".join(out)


def _markdown(results: list[DrillResult]) -> str:
    out = ["| drill | fault | expectation | outcome | figures |", "|---|---|---|---|---|"]
    for r in results:
        figures = ", ".join(f"{k} {v}" for k, v in r.figures.items()).replace("|", "/")
        out.append(f"| {r.key} | {r.title} | {r.expectation} | {r.outcome} | {figures} |")
    return "\n".join(out)


async def _run(keys: list[str], *, fast: bool, keep: bool, verbose: bool) -> list[DrillResult]:
    results = []
    for key in keys:
        print(f"… {key} {DRILLS[key].title}", file=sys.stderr, flush=True)
        result = await run_drill(key, fast=fast, keep=keep)
        results.append(result)
        if verbose or result.outcome == "FAIL":
            print(result.report(), file=sys.stderr, flush=True)
        else:
            print(f"  {result.outcome} in {result.seconds:.1f} s", file=sys.stderr, flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m supervision", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="comma-separated drills, e.g. F1,F3")
    parser.add_argument("--fast", action="store_true",
                        help=f"the CI subset ({','.join(FAST)}) with short budgets")
    parser.add_argument("--keep", action="store_true", help="keep every drill's temp dir")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each drill's report")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = parser.parse_args(argv)
    if args.only:
        keys = [k.strip().upper() for k in args.only.split(",") if k.strip()]
        unknown = [k for k in keys if k not in DRILLS]
        if unknown:
            parser.error(f"unknown drills: {', '.join(unknown)} (have {', '.join(DRILLS)})")
    else:
        keys = list(FAST) if args.fast else list(DRILLS)
    load_before = os.getloadavg()[0]
    results = trio.run(lambda: _run(keys, fast=args.fast, keep=args.keep, verbose=args.verbose))
    print(_markdown(results) if args.markdown else _table(results))
    total = sum(r.seconds for r in results)
    failed = [r.key for r in results if r.outcome == "FAIL"]
    # Only a drill whose spec declares why it may be impossible here ends SKIP
    # (run_drill turns any other skip into FAIL); say so, never "all passed".
    skipped = [r.key for r in results if r.outcome == "SKIP"]
    verdict = "FAILED: " + ", ".join(failed) if failed else "all passed"
    if skipped:
        verdict += f" (declared skips: {', '.join(skipped)})"
    print(f"\n{len(results)} drills in {total:.1f} s on {os.cpu_count()} cores "
          f"(load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}); {verdict}")
    return 1 if failed else 0


__all__ = ["main"]


if __name__ == "__main__":
    sys.exit(main())
