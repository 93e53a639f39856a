"""A hung browser is found and replaced; a dead one says how it died (real processes).

First on a small fake browser (a Python script on the CDP pipe, launched exactly
as Chromium is), then on a real Chromium:

- SIGSTOP on the browser's process group: it is found unresponsive within
  interval + timeout, the call in flight and new requests fail fast with 503
  BROWSER_UNRESPONSIVE, the stopped group is killed (no ``Browser.close``) and a
  new browser serves; ``lastCrash`` says ``hung``;
- kill -9 of the running browser, five times in a row: each ``lastCrash`` says
  ``killed`` with signal 9 and the stderr tail (the pipe closing first used to
  win the race and lose the process's own account);
- (fake only) an exit by itself, a pipe that breaks while the process lives on,
  and a pipe that closes a moment before the exit, told apart.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from browserd.config import Settings
from browserd.errors import BrowserGone, BrowserUnresponsive
from browserd.events import EventType
from browserd.paths import Paths
from browserd.supervisor import BrowserSupervisor
from browserd.supervisor.policy import RestartPolicy
from tests.conftest import ServiceInfo, start_service, stop_service


class Recorder:
    """An event sink that keeps what is published."""

    def __init__(self) -> None:
        self.events: list[tuple[EventType, dict[str, Any]]] = []

    def publish(self, event_type: EventType, *, target_id: str | None = None,
                **data: Any) -> None:
        self.events.append((event_type, data))

    def of(self, event_type: EventType) -> list[dict[str, Any]]:
        return [d for t, d in self.events if t == event_type]


# -- a fake browser on the pipe ----------------------------------------------------------------

FAKE_BROWSER = """\
import json, os, sys, threading, time
sys.stderr.write("fake-browser: up\\n")
sys.stderr.flush()

def serve():  # NUL-framed JSON on fds 3 (commands) and 4 (replies), like Chromium's pipe
    buffer = b""
    while True:
        chunk = os.read(3, 65536)
        if not chunk:
            os._exit(0)  # browserd's end closed: the lifeline
        buffer += chunk
        *messages, buffer = buffer.split(b"\\0")
        for raw in messages:
            command = json.loads(raw)
            method = command.get("method")
            if method == "Fake.exit":
                sys.stderr.write("fake-browser: exiting\\n")
                sys.stderr.flush()
                os._exit(command["params"]["code"])
            if method in ("Fake.dropPipe", "Fake.closeThenExit"):  # the pipe breaks first
                os.close(3)
                os.close(4)
                if method == "Fake.dropPipe":
                    return  # and the process lives on
                time.sleep(0.3)
                os._exit(5)
            result = ({"targetInfos": []} if method == "Target.getTargets"
                      else {"product": "Fake/1"} if method == "Browser.getVersion" else {})
            os.write(4, json.dumps({"id": command["id"], "result": result}).encode() + b"\\0")
            if method == "Browser.close":
                os._exit(0)

threading.Thread(target=serve, daemon=True).start()
while True:
    time.sleep(3600)
"""


@pytest.fixture
def launched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A supervisor that launches the fake browser (small liveness values, short ladder)."""
    from browserd.browser import process as process_module

    monkeypatch.setattr(process_module, "CLOSE_WAIT_S", 0.3)
    monkeypatch.setattr(process_module, "TERM_WAIT_S", 0.5)
    monkeypatch.delenv("BROWSERD_BROWSER", raising=False)
    exe = tmp_path / "fake-browser"
    exe.write_text(f"#!{sys.executable}\n{FAKE_BROWSER}")
    exe.chmod(0o755)
    events = Recorder()

    def make(policy: RestartPolicy | None = None, **settings: Any) -> BrowserSupervisor:
        paths = Paths.resolve({"BROWSERD_HOME": str(tmp_path / "home")})
        base: dict[str, Any] = {"executable": str(exe), "headless": False,
                                "liveness_interval_s": 0.2, "liveness_timeout_s": 0.5}
        return BrowserSupervisor(Settings(**(base | settings)), paths, policy=policy,
                                 events=events)  # type: ignore[arg-type]

    make.events = events  # type: ignore[attr-defined]
    return make


def proc_state(pid: int) -> str:
    """The process's state letter (R, S, T: stopped, Z: zombie; X: gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return "X"


def alive(pid: int) -> bool:
    return proc_state(pid) not in ("Z", "X")


async def serving_again(sup: BrowserSupervisor, old_pid: int | None) -> int:
    while sup.state != "running" or sup.statistics().pid in (None, old_pid):
        await trio.sleep(0.01)
    pid = sup.statistics().pid
    assert pid is not None
    return pid


async def test_a_sigstopped_browser_is_found_hung_its_calls_fail_and_it_is_replaced(
    launched: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="browserd.browser.process")
    sup: BrowserSupervisor = launched(restart_budget=2)
    failed: list[tuple[float, BaseException]] = []
    states: list[str] = []
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            await sup.start()
            pid = sup.statistics().pid
            assert pid is not None
            conn = sup.require_runtime().connection
            os.killpg(pid, signal.SIGSTOP)
            stopped_at = trio.current_time()
            while proc_state(pid) != "T":  # delivered (kill() returns before that)
                await trio.sleep(0.001)

            async def in_flight() -> None:
                try:
                    await conn.send("Runtime.evaluate", {"expression": "1"})
                except (BrowserGone, BrowserUnresponsive) as exc:
                    failed.append((trio.current_time() - stopped_at, exc))

            nursery.start_soon(in_flight)
            while sup.state == "running":
                await trio.sleep(0.01)
            while sup.state == "unresponsive":  # the ladder: SIGTERM stays pending, SIGKILL
                states.append(sup.state)
                await trio.sleep(0.01)
            new_pid = await serving_again(sup, pid)
            nursery.cancel_scope.cancel()
    assert len(failed) == 1 and isinstance(failed[0][1], BrowserUnresponsive), failed
    assert failed[0][0] < 0.2 + 0.5 + 1.0  # interval + timeout (+ slack), not its 30 s cap
    assert states, "never seen unresponsive"
    assert not alive(pid) and new_pid != pid and sup.spawns == 2
    assert f"browser pid {pid} stopped (sigkill)" in caplog.text  # no Browser.close first
    crash = sup.statistics().last_crash
    assert crash is not None and crash["reason"] == "hung"
    assert "fake-browser: up" in crash["stderrTail"]


async def test_kill_9_is_told_by_the_process_every_time(launched: Any) -> None:
    """The race the pipe wins: five kills, five times signal 9 and the stderr tail."""
    sup: BrowserSupervisor = launched(RestartPolicy(backoff_start_s=0.05, backoff_max_s=0.1,
                                                    budget=10))
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            await sup.start()
            pid = sup.statistics().pid
            for _ in range(5):
                assert pid is not None
                os.kill(pid, signal.SIGKILL)
                pid = await serving_again(sup, pid)
                crash = sup.statistics().last_crash
                assert crash is not None
                assert (crash["reason"], crash.get("signal")) == ("killed", 9), crash
                assert "fake-browser: up" in crash["stderrTail"]
            nursery.cancel_scope.cancel()
    crashed = launched.events.of(EventType.BROWSER_CRASHED)
    assert [(c["reason"], c["signal"]) for c in crashed] == [("killed", 9)] * 5
    restarting = [d for d in launched.events.of(EventType.BROWSER_STATE)
                  if d["state"] == "restarting" and "error" in d]
    assert restarting and all("SIGKILL" in d["error"]["message"] for d in restarting)


@pytest.mark.parametrize(("command", "expected"), [
    ({"method": "Fake.exit", "params": {"code": 3}}, {"reason": "exited", "exitCode": 3}),
    ({"method": "Fake.dropPipe"}, {"reason": "pipe_closed"}),
    # The pipe closes 0.3 s before the exit: the exit status is waited for, not raced.
    ({"method": "Fake.closeThenExit"}, {"reason": "exited", "exitCode": 5}),
])
async def test_an_exit_and_a_broken_pipe_are_told_apart(
    launched: Any, command: dict[str, Any], expected: dict[str, Any]
) -> None:
    sup: BrowserSupervisor = launched()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            await sup.start()
            pid = sup.statistics().pid
            conn = sup.require_runtime().connection
            with contextlib.suppress(BrowserGone):
                await conn.post(command["method"], command.get("params"))
            await serving_again(sup, pid)
            nursery.cancel_scope.cancel()
    crash = sup.statistics().last_crash
    assert crash is not None
    assert {k: v for k, v in crash.items() if k in ("reason", "exitCode", "signal")} == expected
    # its last words (read before the stop), or its first ones
    words = "fake-browser: exiting" if command["method"] == "Fake.exit" else "fake-browser: up"
    assert words in crash["stderrTail"]


# -- a real Chromium (a private service) ---------------------------------------------------------

INTERVAL_S, TIMEOUT_S = 0.5, 2.0


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceInfo]:
    info = start_service(tmp_path_factory.mktemp("crash") / "home", env={
        "BROWSERD_LIVENESS_INTERVAL_S": str(INTERVAL_S),
        "BROWSERD_LIVENESS_TIMEOUT_S": str(TIMEOUT_S),
        "BROWSERD_RESTART_BUDGET": "20",
    })
    yield info
    stop_service(info)


def group_alive(pgid: int) -> bool:
    """Any live (non-zombie) process left in the process group ``pgid``."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(") ", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


async def running_again(api: httpx.AsyncClient, old_pid: int) -> dict[str, Any]:
    with trio.fail_after(30):
        while True:
            st = (await api.get("/status")).json()
            if st["state"] == "running" and st["pid"] not in (None, old_pid):
                return st
            await trio.sleep(0.05)


@pytest.mark.chromium
async def test_a_sigstopped_chromium_is_unresponsive_then_replaced(svc: ServiceInfo) -> None:
    async with svc.client() as api, trio.open_nursery() as nursery:
        before = (await api.get("/status")).json()
        pid = before["pid"]
        tab = (await api.post("/tabs/open", json={"url": "about:blank"})).json()["targetId"]
        in_flight: list[tuple[int, dict[str, Any], float]] = []

        async def waiting_eval() -> None:
            r = await api.post("/eval", json={"targetId": tab, "js": "new Promise(() => {})",
                                              "await": True, "timeoutMs": 30_000})
            in_flight.append((r.status_code, r.json(), time.monotonic()))

        nursery.start_soon(waiting_eval)
        await trio.sleep(0.3)  # the eval is waiting on the browser
        os.killpg(pid, signal.SIGSTOP)
        stopped = time.monotonic()
        try:
            with trio.fail_after(INTERVAL_S + TIMEOUT_S + 5):
                while True:
                    health = (await api.get("/healthz")).json()
                    if health["browser"] == "unresponsive":
                        break
                    assert health == {"ok": True, "browser": "open"}, health
                    await trio.sleep(0.02)
            found = time.monotonic() - stopped
            assert health == {"ok": False, "browser": "unresponsive"}
            t0 = time.monotonic()
            r = await api.post("/eval", json={"targetId": tab, "js": "1 + 1"})
            fast = time.monotonic() - t0
            assert (r.status_code, r.json()["code"]) == (503, "BROWSER_UNRESPONSIVE"), r.text
            assert fast < 1.0, f"the refusal took {fast:.2f} s"
        except BaseException:
            os.killpg(pid, signal.SIGCONT)  # never leave a stopped browser behind
            raise
        # interval + timeout bound the detection; the machine's load is the slack
        assert found < INTERVAL_S + TIMEOUT_S + 1.5, f"found hung after {found:.2f} s"
        st = await running_again(api, pid)
        assert in_flight, "the eval in flight never answered"
        status, body, answered = in_flight[0]
        assert (status, body.get("code")) == (503, "BROWSER_UNRESPONSIVE"), in_flight
        assert answered - stopped < INTERVAL_S + TIMEOUT_S + 1.5  # not after its 30 s
        assert not group_alive(pid), "the stopped browser's group is still there"
        assert st["restarts"] == before["restarts"] + 1
        crash = st["lastCrash"]
        assert crash["reason"] == "hung" and crash["tabsAffected"] >= 1, crash
        assert isinstance(crash["stderrTail"], str) and "signal" not in crash
        assert st["lastError"] is None  # running again; the crash is kept
        tab = (await api.post("/tabs/open", json={"url": "about:blank"})).json()["targetId"]
        r = await api.post("/eval", json={"targetId": tab, "js": "6 * 7"})
        assert r.status_code == 200 and r.json()["result"] == 42, r.text
        assert (await api.get("/healthz")).json() == {"ok": True, "browser": "open"}
        nursery.cancel_scope.cancel()


@pytest.mark.chromium
async def test_kill_9_of_chromium_records_signal_9_and_the_stderr_tail_every_time(
    svc: ServiceInfo,
) -> None:
    async with svc.client() as api:
        st = (await api.get("/status")).json()
        seen: list[float] = []
        for _ in range(5):
            pid = st["pid"]
            os.kill(pid, signal.SIGKILL)
            st = await running_again(api, pid)
            crash = st["lastCrash"]
            assert (crash["reason"], crash.get("signal")) == ("killed", 9), crash
            assert "exitCode" not in crash
            # Chromium logs as it starts (headless here: dbus, GPU at ERROR level, which
            # the tail keeps): the process's own words, not the pipe's "closed"
            assert crash["stderrTail"], crash
            seen.append(crash["at"])
            # A stop and a start: the next crash waits no grown backoff (and this one is kept)
            assert (await api.post("/stop")).status_code == 200
            st = (await api.post("/start")).json()
            assert st["state"] == "running" and st["lastCrash"] == crash, st
        assert seen == sorted(set(seen)), "each kill is its own crash"
