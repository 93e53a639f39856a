"""A small AST mutation runner: break the code on purpose, one change at a time.

``python -m supervision.mutants [--only guard,urlpolicy] [--list] [--limit N] [--every N]
[--record results.jsonl] [--rerun results.jsonl] [--named] [-v]``

For each configured target (a module, optionally only some of its functions,
and the fast tests that guard it) every mutation point is changed in turn —
comparisons flipped, ``and``/``or`` swapped, ``not`` dropped, numbers and
booleans changed, arithmetic swapped, statement calls, ``raise`` and return
values removed — and the mapped tests are run against the mutant. A mutant
is *killed* when a test fails (or the run exceeds its timeout: a hang is a
failure too) and *survives* when every test passes. The score and each
survivor (file:line and the change) are printed; survivors are either gaps
in the tests or equivalent changes, and docs/testing.md records which.

How it runs: the whole ``src/`` tree is copied to a temporary directory; this
process imports the heavy third-party libraries once, then forks one child
per mutant, which puts the copy first on ``sys.path`` and runs pytest
in-process on the mapped tests. The working tree is never modified. Not
part of CI: it takes minutes.

``--named`` instead applies the hand-written mutations of ``NAMED`` (the eight
regressions the suite once missed) one at a time and says which were caught.

What is mutated and the tests that must catch it are the tables of
mutant_targets.py (``TARGETS``, ``NAMED``); the AST changes are mutator.py's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import attrs

from .mutant_targets import NAMED, TARGETS, Named, Target
from .mutator import count_mutants, mutate

ROOT = Path(__file__).resolve().parent.parent


#: Third-party imports done once in the parent so each forked child starts fast.
PRELOAD = ("trio", "trio.testing", "httpx", "orjson", "attrs", "platformdirs", "pytest",
           "quart", "quart_trio", "hypercorn", "trio_websocket", "hmac",
           "secrets", "http.server", "sqlite3",
           # pytest's auto-loaded plugins: schemathesis and hypothesis alone cost
           # seconds of import in every child otherwise
           "pytest_trio.plugin", "pytest_timeout", "anyio.pytest_plugin",
           "_hypothesis_pytestplugin", "schemathesis.pytest.plugin")


# -- running ---------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Outcome:
    target: str
    index: int
    description: str
    verdict: str  # killed | timeout | survived
    seconds: float


#: Set in each child's environment (and so inherited by everything it starts):
#: what a mutant left running is found by it and killed after the run.
RUN_MARK = "BROWSERD_MUTANT_RUN"


def _run_tests_in_child(src_copy: Path, tests: Sequence[str], select: str | None,
                        mark: str) -> None:
    """In the forked child: put the copy first, run pytest quietly, exit with its code."""
    os.setsid()
    os.environ[RUN_MARK] = mark
    # MUTANTS_CHILD_LOG=file keeps the children's pytest output (debugging the runner)
    devnull = os.open(os.environ.get("MUTANTS_CHILD_LOG", os.devnull),
                      os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sys.path.insert(0, str(src_copy))
    # ... and so must every browserd the tests start (``python -m browserd serve``):
    # PYTHONPATH comes before the editable install's path entry.
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(src_copy), *filter(None, [os.environ.get("PYTHONPATH")])])
    # Anything that imported the real browserd must import the copy instead.
    for name in list(sys.modules):
        if name.split(".")[0] in ("browserd", "tests") or (
            name.startswith("supervision.") and name != __name__
        ):
            del sys.modules[name]
    import pytest

    code = pytest.main(["-q", "-x", "-p", "no:cacheprovider",
                        # the plugins were preloaded by the parent (PRELOAD)
                        "-W", "ignore::pytest.PytestAssertRewriteWarning",
                        *(["-k", select] if select else []),
                        *[str(ROOT / t) for t in tests]])
    os._exit(int(code))


def run_tests(src_copy: Path, target: Target | Named) -> tuple[str, float]:
    """Run ``target``'s tests on ``src_copy`` in a forked child: (verdict, seconds)."""
    started = time.monotonic()
    mark = f"{os.getpid()}-{time.monotonic_ns()}"
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            _run_tests_in_child(src_copy, target.tests, target.select, mark)
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            os._exit(99)
    deadline = started + target.timeout_s
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                code = os.waitstatus_to_exitcode(status)
                return ("survived" if code == 0 else "killed"), time.monotonic() - started
            if time.monotonic() > deadline:
                with _quiet():
                    os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return "timeout", time.monotonic() - started
            time.sleep(0.05)
    finally:
        _kill_left_behind(mark)


def _kill_left_behind(mark: str) -> None:
    """SIGKILL every process still carrying ``mark`` (a mutant may break the very clean-up)."""
    needle = f"{RUN_MARK}={mark}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            with _quiet():
                os.kill(int(entry), signal.SIGKILL)


class _quiet:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return exc[0] is not None and issubclass(exc[0], OSError)  # type: ignore[arg-type]


def run_target(target: Target, src_copy: Path, *, limit: int | None, every: int = 1,
               verbose: bool, record: Path | None = None,
               only_indices: set[int] | None = None) -> Iterator[Outcome]:
    path = src_copy / target.module
    original = path.read_text()
    total = count_mutants(original, target.functions)
    baseline, _ = run_tests(src_copy, target)
    if baseline != "survived":
        raise SystemExit(f"{target.name}: the tests fail without any mutant ({baseline})")
    indices = [i for i in range(0, total if limit is None else min(total, limit), every)
               if only_indices is None or i in only_indices]
    try:
        for index in indices:
            mutated, description = mutate(original, index, target.functions)
            path.write_text(mutated)
            verdict, seconds = run_tests(src_copy, target)
            outcome = Outcome(target=target.name, index=index, description=description,
                              verdict=verdict, seconds=seconds)
            if record is not None:
                with record.open("a") as f:
                    f.write(json.dumps(attrs.asdict(outcome)) + "\n")
            if verbose or verdict == "survived":
                print(f"  [{index + 1}/{total}] {verdict:8} {target.module} {description}",
                      flush=True)
            yield outcome
    finally:
        path.write_text(original)


def run_named(src_copy: Path, named: Sequence[Named]) -> int:
    """Apply each hand-written mutation alone; 1 if any left its tests green."""
    missed = []
    for m in named:
        path = src_copy / m.module
        original = path.read_text()
        if original.count(m.old) != 1:
            print(f"  ?  {m.name}: the text to break is not in {m.module} exactly once "
                  "(the code moved: update NAMED)", flush=True)
            missed.append(m.name)
            continue
        baseline, _ = run_tests(src_copy, m)
        if baseline != "survived":
            print(f"  ?  {m.name}: its tests fail without the mutation ({baseline})", flush=True)
            missed.append(m.name)
            continue
        path.write_text(original.replace(m.old, m.new))
        try:
            verdict, seconds = run_tests(src_copy, m)
        finally:
            path.write_text(original)
        caught = verdict != "survived"
        if not caught:
            missed.append(m.name)
        print(f"  {'caught' if caught else 'MISSED'} ({verdict}, {seconds:.0f} s)  {m.name}  "
              f"[{' '.join(m.tests)}{' -k ' + m.select if m.select else ''}]", flush=True)
    print(f"\n{len(named) - len(missed)}/{len(named)} hand-written mutations caught")
    return 1 if missed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m supervision.mutants", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="comma-separated target names "
                                       f"({', '.join(t.name for t in TARGETS)})")
    parser.add_argument("--list", action="store_true", help="count mutants per target, run none")
    parser.add_argument("--limit", type=int, help="at most N mutants per target")
    parser.add_argument("--every", type=int, default=1,
                        help="a sample: only every Nth mutant (mutants 0, N, 2N, ...)")
    parser.add_argument("--record", type=Path, help="append each outcome as a JSON line here")
    parser.add_argument("--rerun", type=Path,
                        help="run only the mutants recorded as survivors in this --record file")
    parser.add_argument("--named", action="store_true",
                        help="run only the hand-written mutations of NAMED")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every mutant")
    args = parser.parse_args(argv)
    targets = list(TARGETS)
    if args.only:
        wanted = {n.strip() for n in args.only.split(",")}
        unknown = wanted - {t.name for t in targets}
        if unknown:
            parser.error(f"unknown targets: {', '.join(sorted(unknown))}")
        targets = [t for t in targets if t.name in wanted]
    rerun: dict[str, set[int]] | None = None
    if args.rerun:
        rerun = {}
        for line in args.rerun.read_text().splitlines():
            entry = json.loads(line)
            if entry["verdict"] == "survived":
                rerun.setdefault(entry["target"], set()).add(entry["index"])
        targets = [t for t in targets if t.name in rerun]
    if args.list:
        for t in targets:
            source = (ROOT / "src" / t.module).read_text()
            print(f"{t.name:15} {count_mutants(source, t.functions):5}  {t.module}")
        return 0
    sys.dont_write_bytecode = True  # the children must never reuse a mutant's bytecode
    for name in PRELOAD:
        __import__(name)
    os.chdir(ROOT)
    summary: list[tuple[str, int, int, list[Outcome]]] = []
    with tempfile.TemporaryDirectory(prefix="browserd-mutants-") as tmp:
        src_copy = Path(tmp) / "src"
        shutil.copytree(ROOT / "src", src_copy,
                        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        if args.named:
            return run_named(src_copy, NAMED)
        for target in targets:
            print(f"… {target.name}: {target.module} against {' '.join(target.tests)}",
                  flush=True)
            outcomes = list(run_target(target, src_copy, limit=args.limit, every=args.every,
                                       verbose=args.verbose, record=args.record,
                                       only_indices=None if rerun is None
                                       else rerun[target.name]))
            killed = sum(1 for o in outcomes if o.verdict != "survived")
            survivors = [o for o in outcomes if o.verdict == "survived"]
            summary.append((target.name, killed, len(outcomes), survivors))
            print(f"  {target.name}: {killed}/{len(outcomes)} killed", flush=True)
    print("\ntarget          killed / total   score")
    all_killed = all_total = 0
    for name, killed, total, _ in summary:
        all_killed += killed
        all_total += total
        print(f"{name:15} {killed:6} / {total:<6} {100 * killed / max(total, 1):6.1f}%")
    print(f"{'all':15} {all_killed:6} / {all_total:<6} "
          f"{100 * all_killed / max(all_total, 1):6.1f}%")
    for name, _, _, survivors in summary:
        for o in survivors:
            print(f"survived: {name} {o.description}")
    return 0


__all__ = ["PRELOAD", "ROOT", "RUN_MARK", "Outcome", "main", "run_named", "run_target",
           "run_tests"]


if __name__ == "__main__":
    sys.exit(main())
