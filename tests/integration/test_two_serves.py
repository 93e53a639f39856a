"""Two ``browserd serve`` started together: one serves, the other exits with one line."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from supervision.harness import LOOPBACK_TLS

from tests.conftest import free_port_pair

pytestmark = pytest.mark.chromium


def spawn(home: Path, port: int, out: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "BROWSERD_HOME": str(home), "BROWSERD_HEADLESS": "1",
           "BROWSERD_CONTROL_URL": f"http://127.0.0.1:{port}"}
    with open(out, "wb") as sink:
        return subprocess.Popen([sys.executable, "-m", "browserd", "serve"], env=env,
                                stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def error_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if " ERROR " in line]


def run_pair(homes: tuple[Path, Path], port: int, tmp_path: Path) -> None:
    outs = (tmp_path / "a.out", tmp_path / "b.out")
    procs = [spawn(home, port, out) for home, out in zip(homes, outs, strict=True)]
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and all(p.poll() is None for p in procs):
            time.sleep(0.05)
        losers = [i for i, p in enumerate(procs) if p.poll() is not None]
        assert len(losers) == 1, "exactly one of the two must give up"
        loser, winner = losers[0], 1 - losers[0]
        assert procs[loser].returncode == 1
        text = outs[loser].read_text()
        assert "Traceback" not in text and "ExceptionGroup" not in text, text
        lines = error_lines(outs[loser])
        assert len(lines) == 1, text
        assert "already" in lines[0], lines[0]
        r = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5, verify=LOOPBACK_TLS)
        assert r.status_code == 200
        assert procs[winner].poll() is None
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def test_two_serves_on_one_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_pair((home, home), free_port_pair(), tmp_path)


def test_two_serves_on_one_port(tmp_path: Path) -> None:
    # Different homes, the same control port: the bind race is one line too.
    run_pair((tmp_path / "h1", tmp_path / "h2"), free_port_pair(), tmp_path)
