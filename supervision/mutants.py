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

Editing the configuration when modules move: change ``TARGETS`` and ``NAMED`` below.
"""

from __future__ import annotations

import argparse
import ast
import copy
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

ROOT = Path(__file__).resolve().parent.parent


@attrs.frozen(kw_only=True)
class Target:
    """One module under mutation and the tests that must catch its mutants."""

    name: str
    module: str  # path under src/
    tests: tuple[str, ...]
    #: Only mutate inside these functions/methods (``Class.method`` or a bare
    #: name); None mutates the whole module.
    functions: tuple[str, ...] | None = None
    #: A pytest ``-k`` expression narrowing the tests, or None for all of them.
    select: str | None = None
    timeout_s: float = 60.0


TARGETS: tuple[Target, ...] = (
    Target(name="guard", module="browserd/http/guard.py", tests=("tests/unit/test_guard.py",)),
    Target(name="urlpolicy", module="browserd/urlpolicy.py",
           tests=("tests/unit/test_urlpolicy.py",)),
    Target(name="token", module="browserd/token.py", tests=("tests/unit/test_token.py",)),
    Target(name="proof", module="browserd/client.py", tests=("tests/unit/test_client_proof.py",),
           functions=("healthz_proof", "Client.verify")),
    Target(name="media", module="browserd/media/store.py",
           tests=("tests/unit/test_media_store.py",)),
    Target(name="restart-loop", module="browserd/supervisor/supervisor.py",
           tests=("tests/unit/test_supervisor.py", "tests/unit/test_stop_ladder.py"),
           functions=("BrowserSupervisor.run", "BrowserSupervisor.start",
                      "BrowserSupervisor.stop", "BrowserSupervisor.require_runtime",
                      "BrowserSupervisor._attempt", "BrowserSupervisor._run_launched",
                      "BrowserSupervisor._want", "BrowserSupervisor._set_state",
                      "BrowserSupervisor.mark_running")),
    Target(name="restart-policy", module="browserd/supervisor/policy.py",
           tests=("tests/unit/test_supervision_data.py", "tests/unit/test_supervisor.py")),
    Target(name="leftovers", module="browserd/supervisor/leftovers.py",
           tests=("tests/unit/test_leftovers.py", "tests/unit/test_stop_ladder.py")),
    Target(name="stop-ladder", module="browserd/browser/process.py",
           tests=("tests/unit/test_stop_ladder.py",),
           functions=("BrowserProcess.stop", "BrowserProcess._signal_group",
                      "BrowserProcess._send_close", "BrowserProcess._wait_ready",
                      "run_browser")),
    Target(name="refmap", module="browserd/tabs/state.py",
           tests=("tests/unit/test_tab_state.py",), functions=("RefMap",)),
    # Ref resolution is exercised against a real Chromium (a browserd per mutant): slow.
    Target(name="refs", module="browserd/tabs/resolve.py",
           tests=("tests/integration/test_snapshot.py", "tests/integration/test_input.py"),
           functions=("resolve_ref", "_stale"),
           select="stale or refs_stable or by_ref", timeout_s=300.0),
    # -- the newer promises (issue "The suite proves the newer promises") -------------------
    Target(name="gateway-rules", module="browserd/gateway/rules.py",
           tests=("tests/unit/test_gateway_rules.py", "tests/unit/test_gateway_mutants.py")),
    Target(name="gateway-allowlist", module="browserd/gateway/allowlist.py",
           tests=("tests/unit/test_gateway_rules.py", "tests/unit/test_gateway_mutants.py")),
    Target(name="gateway-targets", module="browserd/gateway/targets.py",
           tests=("tests/unit/test_gateway_rules.py", "tests/unit/test_gateway_mutants.py",
                  "tests/unit/test_gateway_scope.py")),
    Target(name="relay-pairing", module="browserd/relay/pairing.py",
           tests=("tests/unit/test_relay_pairing.py", "tests/unit/test_relay.py",
                  "tests/unit/test_relay_mutants.py")),
    Target(name="relay-throttle", module="browserd/relay/throttle.py",
           tests=("tests/unit/test_relay_pairing.py", "tests/unit/test_relay_mutants.py")),
    Target(name="relay-door", module="browserd/relay/door.py",
           tests=("tests/unit/test_relay_pairing.py", "tests/unit/test_relay.py",
                  "tests/unit/test_relay_mutants.py"),
           functions=("RelayDoor.__init__", "RelayDoor.__call__", "RelayDoor._check_host",
                      "RelayDoor._extension_origin", "RelayDoor._pair", "RelayDoor._exchange",
                      "RelayDoor._relay", "RelayDoor._refuse_handshake",
                      "_RelayConnection._hello", "_RelayConnection._refuse", "_connection_of",
                      "_refusal_headers", "_decode")),
    Target(name="navguard-verdicts", module="browserd/tabs/navguard.py",
           tests=("tests/unit/test_navdl.py", "tests/unit/test_navguard_mutants.py",
                  "tests/unit/test_egress.py"),
           functions=("navigation_verdict", "BlockRecord.to_json", "NavGuard.mark",
                      "NavGuard.blocks_since", "NavGuard._judge", "NavGuard._record",
                      "_event_for")),
    Target(name="downloads", module="browserd/downloads/follower.py",
           tests=("tests/unit/test_navdl.py", "tests/unit/test_profile_downloads.py",
                  "tests/unit/test_downloads_mutants.py"),
           functions=("DownloadFollower._behavior", "DownloadFollower._on_event",
                      "DownloadFollower._safe_free_space", "DownloadFollower._cancel",
                      "DownloadFollower._completed", "DownloadFollower._canceled_by_browser",
                      "_int")),
    Target(name="profile-spec", module="browserd/profiles/spec.py",
           tests=("tests/unit/test_profiles.py", "tests/unit/test_profile_downloads.py",
                  "tests/unit/test_profiles_mutants.py")),
    # A mutant that turns the reaper into a busy loop never yields to MockClock: 20 s.
    Target(name="sessions", module="browserd/profiles/sessions.py",
           tests=("tests/unit/test_sessions.py", "tests/unit/test_sessions_mutants.py",
                  "tests/unit/test_restore.py"),
           functions=("SessionTable",), timeout_s=20.0),
    Target(name="ui-gate", module="browserd/ui/gate.py",
           tests=("tests/unit/test_ops.py", "tests/unit/test_ops_mutants.py")),
    Target(name="ui-sessions", module="browserd/ui/sessions.py",
           tests=("tests/unit/test_ops.py", "tests/unit/test_ops_mutants.py")),
    Target(name="handoff", module="browserd/handoff.py",
           tests=("tests/unit/test_ops.py", "tests/unit/test_ops_mutants.py")),
    Target(name="redact", module="browserd/redact.py", tests=("tests/unit/test_redact.py",)),
    Target(name="bounded-eval", module="browserd/tabs/bounded_eval.py",
           tests=("tests/unit/test_eval_mutants.py",)),
    Target(name="jsontext", module="browserd/jsontext.py",
           tests=("tests/unit/test_decoding.py",)),
    Target(name="principals-store", module="browserd/principals/store.py",
           tests=("tests/unit/test_principals.py", "tests/unit/test_principals_mutants.py")),
    Target(name="principals-scopes", module="browserd/principals/scopes.py",
           tests=("tests/unit/test_principals.py", "tests/unit/test_principals_mutants.py")),
    Target(name="grants", module="browserd/http/routes/grants.py",
           tests=("tests/unit/test_principals.py", "tests/unit/test_principals_mutants.py")),
    Target(name="liveness", module="browserd/supervisor/liveness.py",
           tests=("tests/unit/test_liveness.py", "tests/unit/test_liveness_mutants.py")),
    Target(name="crash", module="browserd/supervisor/crash.py",
           tests=("tests/unit/test_liveness.py", "tests/unit/test_liveness_mutants.py",
                  "tests/unit/test_restore.py")),
    Target(name="vault-redactor", module="browserd/vault/redactor.py",
           tests=("tests/unit/test_vault_mutants.py",)),
    Target(name="vault-store", module="browserd/vault/store.py",
           tests=("tests/unit/test_vault_mutants.py",)),
    Target(name="confirm-rules", module="browserd/confirm/rules.py",
           tests=("tests/unit/test_confirm_mutants.py",)),
    Target(name="confirm-board", module="browserd/confirm/board.py",
           tests=("tests/unit/test_confirm_mutants.py",)),
    Target(name="tabrequests", module="browserd/tabrequests.py",
           tests=("tests/unit/test_tabrequests_mutants.py",)),
)

@attrs.frozen(kw_only=True)
class Named:
    """A mutation written by hand: ``old`` (found exactly once) replaced by ``new``."""

    name: str
    module: str  # path under src/
    old: str
    new: str
    tests: tuple[str, ...]
    select: str | None = None
    timeout_s: float = 300.0


#: The eight regressions the suite once missed (``--named``): each
#: must turn its tests red. Edit the text here when the code they break moves.
NAMED: tuple[Named, ...] = (
    Named(name="/act's navigate step skips the URL policy",
          module="browserd/http/routes/input.py",
          old='url=system.url_policy.check(args["url"])', new='url=args["url"]',
          tests=("tests/integration/test_security.py",), select="s9_url_policy"),
    Named(name="the client accepts any /healthz proof", module="browserd/client.py",
          old="not isinstance(proof, str) or not hmac.compare_digest(\n"
              "            proof, healthz_proof(self._token, nonce)\n        )",
          new="not isinstance(proof, str)", tests=("tests/unit/test_client_proof.py",)),
    Named(name="the stop ladder loses its SIGTERM step", module="browserd/browser/process.py",
          old='step = "sigterm"\n                    self._signal_group(signal.SIGTERM)',
          new='step = "sigterm"', tests=("tests/unit/test_stop_ladder.py",)),
    Named(name="the stop ladder loses its SIGKILL step", module="browserd/browser/process.py",
          old='step = "sigkill"\n                    self._signal_group(signal.SIGKILL)',
          new='step = "sigkill"', tests=("tests/unit/test_stop_ladder.py",)),
    Named(name="a browser left by a dead browserd is never stopped",
          module="browserd/supervisor/supervisor.py",
          old="        await self._pid_record.stop_leftover(profile_dir)\n", new="",
          tests=("tests/unit/test_stop_ladder.py",)),
    Named(name="stop no longer ends the restart backoff wait at once",
          module="browserd/supervisor/supervisor.py",
          old="            with trio.move_on_after(delay):\n"
              "                # A stop during the backoff ends the wait at once.\n"
              "                while self._wanted:\n"
              "                    self._wake = trio.Event()\n"
              "                    await self._wake.wait()\n",
          new="            await trio.sleep(delay)\n", tests=("tests/unit/test_supervisor.py",)),
    Named(name="backoff jitter removed", module="browserd/supervisor/policy.py",
          old="return backoff * (0.5 + rng())", new="return backoff",
          tests=("tests/unit/test_supervisor.py", "tests/unit/test_supervision_data.py")),
    Named(name="no fsync of media data before the rename", module="browserd/media/store.py",
          old="            os.fsync(fd)\n", new="            pass\n",
          tests=("tests/unit/test_media_store.py",)),
    Named(name="restart budget disabled", module="browserd/supervisor/policy.py",
          old="return len(self._times) <= self.policy.budget", new="return True",
          tests=("tests/unit/test_supervisor.py",), timeout_s=120.0),
)


#: Third-party imports done once in the parent so each forked child starts fast.
PRELOAD = ("trio", "trio.testing", "httpx", "orjson", "attrs", "platformdirs", "pytest",
           "quart", "quart_trio", "hypercorn", "trio_websocket", "hmac",
           "secrets", "http.server", "sqlite3",
           # pytest's auto-loaded plugins: schemathesis and hypothesis alone cost
           # seconds of import in every child otherwise
           "pytest_trio.plugin", "pytest_timeout", "anyio.pytest_plugin",
           "_hypothesis_pytestplugin", "schemathesis.pytest.plugin")

_COMPARE_SWAPS: dict[type[ast.cmpop], tuple[type[ast.cmpop], ...]] = {
    ast.Eq: (ast.NotEq,), ast.NotEq: (ast.Eq,),
    ast.Lt: (ast.LtE, ast.GtE), ast.LtE: (ast.Lt, ast.Gt),
    ast.Gt: (ast.GtE, ast.LtE), ast.GtE: (ast.Gt, ast.Lt),
    ast.In: (ast.NotIn,), ast.NotIn: (ast.In,),
    ast.Is: (ast.IsNot,), ast.IsNot: (ast.Is,),
}
_BINOP_SWAPS: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult, ast.BitOr: ast.BitAnd, ast.BitAnd: ast.BitOr,
}
_LOGGERS = {"log", "logger", "logging"}


def _is_log_call(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id in _LOGGERS)


def _is_docstring(node: ast.stmt) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


class Mutator(ast.NodeTransformer):
    """Applies mutation number ``target`` (or, with -1, only counts the points)."""

    def __init__(self, target: int, functions: Sequence[str] | None) -> None:
        self.target = target
        self.functions = set(functions) if functions is not None else None
        self.count = 0
        self.description: str | None = None
        self._scope: list[str] = []

    # -- where mutation is allowed -------------------------------------------------------------

    def _active(self) -> bool:
        if self.functions is None:
            return True
        qualified = ".".join(self._scope)
        return any(qualified == f or qualified.startswith(f + ".") for f in self.functions)

    def _hit(self, node: ast.AST, what: str) -> bool:
        if not self._active():
            return False
        index = self.count
        self.count += 1
        if index == self.target:
            self.description = f"line {getattr(node, 'lineno', '?')}: {what}"
            return True
        return False

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> ast.AST:
        self._scope.append(node.name)
        body = node.body[1:] if node.body and _is_docstring(node.body[0]) else node.body
        head = node.body[: len(node.body) - len(body)]
        node.body = head + [self.visit(stmt) for stmt in body]
        node.body = [stmt for stmt in node.body if stmt is not None]
        self._scope.pop()
        return node  # decorators, arguments and annotations are left alone

    visit_FunctionDef = _scoped
    visit_AsyncFunctionDef = _scoped
    visit_ClassDef = _scoped

    def visit_Module(self, node: ast.Module) -> ast.AST:
        body = node.body[1:] if node.body and _is_docstring(node.body[0]) else node.body
        head = node.body[: len(node.body) - len(body)]
        node.body = head + [self.visit(stmt) for stmt in body]
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if node.value is not None:
            node.value = self.visit(node.value)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if _is_log_call(node):
            return node
        return self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        return node  # message text: changes there are noise

    # -- the operators -------------------------------------------------------------------------

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        for i, op in enumerate(node.ops):
            for replacement in _COMPARE_SWAPS.get(type(op), ()):
                if self._hit(node, f"{type(op).__name__} -> {replacement.__name__}"):
                    node.ops[i] = replacement()
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        if self._hit(node, f"{type(node.op).__name__} -> "
                           f"{'Or' if isinstance(node.op, ast.And) else 'And'}"):
            node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not) and self._hit(node, "not x -> x"):
            return node.operand
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        swap = _BINOP_SWAPS.get(type(node.op))
        if swap is not None and self._hit(node, f"{type(node.op).__name__} -> {swap.__name__}"):
            node.op = swap()
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        swap = _BINOP_SWAPS.get(type(node.op))
        if swap is not None and self._hit(node, f"{type(node.op).__name__}= -> "
                                                f"{swap.__name__}="):
            node.op = swap()
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        value = node.value
        if isinstance(value, bool):
            if self._hit(node, f"{value} -> {not value}"):
                return ast.copy_location(ast.Constant(not value), node)
        elif isinstance(value, int | float):
            if self._hit(node, f"{value!r} -> {value + 1!r}"):
                return ast.copy_location(ast.Constant(value + 1), node)
            if value != 0 and self._hit(node, f"{value!r} -> 0"):
                return ast.copy_location(ast.Constant(type(value)(0)), node)
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
        if _is_log_call(node.value):
            return node
        self.generic_visit(node)
        call = node.value.value if isinstance(node.value, ast.Await) else node.value
        if isinstance(call, ast.Call) and self._hit(
                node, f"call removed: {ast.unparse(call)[:60]}"):
            return ast.copy_location(ast.Pass(), node)
        return node

    def visit_Return(self, node: ast.Return) -> ast.AST:
        self.generic_visit(node)
        if node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None
        ) and self._hit(node, f"return {ast.unparse(node.value)[:50]} -> return None"):
            node.value = ast.Constant(None)
        return node

    def visit_Raise(self, node: ast.Raise) -> ast.AST:
        self.generic_visit(node)
        if node.exc is not None and self._hit(node, f"raise removed: "
                                                    f"{ast.unparse(node.exc)[:50]}"):
            return ast.copy_location(ast.Pass(), node)
        return node


def count_mutants(source: str, functions: Sequence[str] | None) -> int:
    counter = Mutator(-1, functions)
    counter.visit(ast.parse(source))
    return counter.count


def mutate(source: str, index: int, functions: Sequence[str] | None) -> tuple[str, str]:
    """The source of mutant ``index`` and a description of the change."""
    mutator = Mutator(index, functions)
    tree = mutator.visit(copy.deepcopy(ast.parse(source)))
    ast.fix_missing_locations(tree)
    assert mutator.description is not None
    return ast.unparse(tree), mutator.description


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


if __name__ == "__main__":
    sys.exit(main())
