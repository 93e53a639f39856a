"""Service and browser lifecycle against a real Chromium (issue: foundation)."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from supervision import harness
from supervision.harness import LOOPBACK_TLS

from browserd.browser.profile import profile_pids
from tests.conftest import ServiceInfo, free_port_pair, start_service, stop_service
from tests.integration.helpers import poll_sync

pytestmark = pytest.mark.chromium


def profile_processes(profile_dir: Path) -> list[int]:
    """Pids (live, not zombies) whose command line uses this profile directory."""
    return profile_pids(profile_dir)


@pytest.fixture(scope="module")
def private(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """One service for the module's tests on a running browser, in file order: each
    leaves it running (the stop test starts it again, the kill test waits for it)."""
    info = start_service(tmp_path_factory.mktemp("private") / "home")
    yield info
    stop_service(info)


def test_start_runs_our_browser_in_its_own_group_on_our_profile_and_port(
    private: ServiceInfo,
) -> None:
    with private.sync_client() as api:
        status = api.get("/status").json()
    assert status["state"] == "running" and status["running"] and status["cdpReady"]
    pid = status["pid"]
    assert os.getpgid(pid) == pid, "the browser leads its own process group"
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert f"--user-data-dir={status['userDataDir']}".encode() in cmdline
    assert b"--remote-debugging-pipe" in cmdline
    assert not any(arg.startswith(b"--remote-debugging-port") for arg in cmdline)
    assert not any(arg.startswith(b"--remote-allow-origins") for arg in cmdline)
    assert status["ports"] == {"control": private.port, "cdp": private.cdp_port}
    assert status["profile"] == "clawd" and status["color"] == "#FF4500"
    token = private.home / "config" / "token"
    assert stat.S_IMODE(token.stat().st_mode) == 0o600
    assert stat.S_IMODE(token.parent.stat().st_mode) == 0o700


def test_tabs_round_trip(private: ServiceInfo) -> None:
    with private.sync_client() as api:
        before = {t["targetId"] for t in api.get("/tabs").json()["tabs"]}
        a = api.post("/tabs/open", json={"url": "about:blank"}).json()
        b = api.post("/tabs/open", json={"url": "about:blank"}).json()
        tabs = api.get("/tabs").json()
        assert tabs["running"] is True
        ids = {t["targetId"] for t in tabs["tabs"]}
        assert {a["targetId"], b["targetId"]} <= ids and len(ids) == len(before) + 2
        assert all(t["type"] == "page" for t in tabs["tabs"])
        active = [t["targetId"] for t in tabs["tabs"] if t["isActive"]]
        assert active == [b["targetId"]]
        # focus by a unique prefix, case-insensitive
        prefix = a["targetId"][:8].lower()
        r = api.post("/tabs/focus", json={"targetId": prefix})
        assert r.status_code == 200 and r.json()["targetId"] == a["targetId"]
        tabs = api.get("/tabs").json()["tabs"]
        focused = next(t for t in tabs if t["targetId"] == a["targetId"])
        assert focused["isActive"] and focused["lastFocusedAt"] is not None
        # too-short prefixes and unknown ids are 404 with the stable code
        r = api.post("/tabs/focus", json={"targetId": a["targetId"][:3]})
        assert (r.status_code, r.json()["code"]) == (404, "TAB_NOT_FOUND")
        r = api.post("/tabs/close", json={"targetId": "NOPE" * 8})
        assert r.json()["code"] == "TAB_NOT_FOUND"
        # close one by POST, the other by DELETE
        assert api.post("/tabs/close", json={"targetId": a["targetId"]}).status_code == 200
        assert api.delete(f"/tabs/{b['targetId']}").status_code == 200
        ids = {t["targetId"] for t in api.get("/tabs").json()["tabs"]}
        assert ids == before


def test_stop_leaves_no_process_of_the_profile_and_start_again(private: ServiceInfo) -> None:
    with private.sync_client() as api:
        status = api.get("/status").json()
        profile = Path(status["userDataDir"])
        assert profile_processes(profile)
        r = api.post("/stop")
        assert r.json() == {"ok": True, "stopped": True}
        poll_sync(lambda: not profile_processes(profile), within=5)
        assert api.get("/healthz").json() == {"ok": True, "browser": "closed"}
        assert {k: v for k, v in api.get("/tabs").json().items() if k != "untrusted"} == {
            "running": False, "tabs": []}
        r = api.post("/tabs/open", json={"url": "about:blank"})
        assert (r.status_code, r.json()["code"]) == (503, "BROWSER_NOT_RUNNING")
        assert not any((profile / n).exists() for n in ("SingletonLock", "SingletonSocket"))
        assert api.post("/stop").json() == {"ok": True, "stopped": False}
        status = api.post("/start").json()
        assert status["state"] == "running" and status["userDataDir"] == str(profile)
        assert api.post("/start").json()["pid"] == status["pid"], "start is a no-op when running"


def test_killed_browser_comes_back_on_the_same_profile(private: ServiceInfo) -> None:
    with private.sync_client() as api:
        first = api.get("/status").json()
        os.kill(first["pid"], signal.SIGKILL)

        def back() -> dict | None:  # type: ignore[type-arg]
            s = api.get("/status").json()
            return s if s["state"] == "running" and s["pid"] != first["pid"] else None

        second = poll_sync(back, within=15)
        assert second["userDataDir"] == first["userDataDir"]
        assert second["restarts"] >= 1
        assert api.post("/tabs/open", json={"url": "about:blank"}).status_code == 200
        assert len(profile_processes(Path(first["userDataDir"]))) >= 1
        assert first["pid"] not in profile_processes(Path(first["userDataDir"]))


def test_disabled_answers_503_at_once_and_launches_nothing(tmp_path: Path) -> None:
    info = start_service(tmp_path / "home", env={"BROWSERD_ENABLED": "0"}, wait_browser=False)
    try:
        with info.sync_client() as api:
            assert api.get("/healthz").json()["browser"] == "disabled"
            for method, path, body in (("POST", "/tabs/open", {"url": "about:blank"}),
                                       ("POST", "/start", None),
                                       ("POST", "/navigate", {"url": "http://x.test/"})):
                r = api.request(method, path, json=body)
                assert (r.status_code, r.json()["code"]) == (503, "BROWSER_DISABLED")
                assert "disabled" in r.json()["error"].lower()
            assert api.get("/status").json()["state"] == "disabled"
        assert not profile_processes(tmp_path / "home" / "data" / "profiles" / "clawd")
    finally:
        stop_service(info)


def test_cdp_port_held_by_another_listener_is_a_clear_error(tmp_path: Path) -> None:
    """The CDP port is the gateway's: taken, the service refuses to start and names
    the holder (as for the control port); nothing is launched."""
    port = free_port_pair()
    squatter = socket.socket()
    squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    squatter.bind(("127.0.0.1", port + 1))
    squatter.listen()
    try:
        with pytest.raises(RuntimeError, match="browserd exited 1") as refused:
            start_service(tmp_path / "home", port=port, wait_browser=False)
        log = str(refused.value)
        assert f"CDP gateway port {port + 1} is already held by pid {os.getpid()}" in log, log
        assert "Traceback" not in log
        assert not profile_processes(tmp_path / "home" / "data" / "profiles" / "clawd")
    finally:
        squatter.close()


def test_without_the_gateway_a_held_cdp_port_does_not_matter(tmp_path: Path) -> None:
    """cdp_gateway = false: nothing listens on the CDP port, so a squatter there is harmless."""
    port = free_port_pair()
    squatter = socket.socket()
    squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    squatter.bind(("127.0.0.1", port + 1))
    squatter.listen()
    try:
        info = start_service(tmp_path / "home", port=port,
                             env={"BROWSERD_CDP_GATEWAY": "false"})
        try:
            with info.sync_client() as api:
                assert api.get("/status").json()["state"] == "running"
                assert api.post("/tabs/open", json={"url": "about:blank"}).status_code == 200
        finally:
            assert stop_service(info) == 0
    finally:
        squatter.close()


def test_foreign_profile_directory_is_refused_untouched(tmp_path: Path) -> None:
    profile = tmp_path / "home" / "data" / "profiles" / "clawd"
    profile.mkdir(parents=True)
    (profile / "Cookies").write_bytes(b"someone else's")
    info = start_service(tmp_path / "home", wait_browser=False)
    try:
        with info.sync_client() as api:
            status = poll_sync(lambda: (s := api.get("/status").json())["state"] == "failed"
                              and s, within=10)
        assert status["lastError"]["code"] == "PROFILE_REFUSED"
        assert sorted(p.name for p in profile.iterdir()) == ["Cookies"]
        assert (profile / "Cookies").read_bytes() == b"someone else's"
    finally:
        stop_service(info)


def test_sigterm_exits_zero_after_closing_the_browser(tmp_path: Path) -> None:
    info = start_service(tmp_path / "home")
    with info.sync_client() as api:
        pid = api.get("/status").json()["pid"]
    profile = tmp_path / "home" / "data" / "profiles" / "clawd"
    assert stop_service(info) == 0
    assert not profile_processes(profile)
    with pytest.raises(OSError):
        os.kill(pid, 0)
    assert "stopped (close)" in info.log_text()
    # closed the way Chrome closes itself: no lock left, and a clean exit recorded
    # (the next start shows no "restore pages?" bubble)
    assert not list(profile.glob("Singleton*"))
    prefs = json.loads((profile / "Default" / "Preferences").read_text())["profile"]
    assert prefs["exit_type"] == "Normal" and prefs["exited_cleanly"] is True


def test_fatal_start_failure_exits_non_zero(tmp_path: Path) -> None:
    env = {**os.environ, "BROWSERD_HOME": str(tmp_path),
           "BROWSERD_CONTROL_URL": "http://0.0.0.0:18999"}
    r = subprocess.run([sys.executable, "-m", "browserd", "serve"], env=env,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0
    assert "non-loopback" in r.stderr and "allow_remote_control" in r.stderr


def test_control_port_taken_exits_non_zero_naming_the_holder(tmp_path: Path) -> None:
    port = free_port_pair()
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", port))
    squatter.listen()
    try:
        env = {**os.environ, "BROWSERD_HOME": str(tmp_path),
               "BROWSERD_CONTROL_URL": f"http://127.0.0.1:{port}"}
        r = subprocess.run([sys.executable, "-m", "browserd", "serve"], env=env,
                           capture_output=True, text=True, timeout=30)
        assert r.returncode != 0
        assert f"pid {os.getpid()}" in r.stderr
    finally:
        squatter.close()


def test_cli_status_and_tabs(private: ServiceInfo) -> None:
    env = {**os.environ, "BROWSERD_HOME": str(private.home),
           "BROWSERD_CONTROL_URL": private.base_url}
    r = subprocess.run([sys.executable, "-m", "browserd", "status"], env=env,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "state: running" in r.stdout
    r = subprocess.run([sys.executable, "-m", "browserd", "--json", "tabs"], env=env,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and '"running":true' in r.stdout
    r = subprocess.run([sys.executable, "-m", "browserd", "focus", "nope-nope"], env=env,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and "no tab" in r.stderr


def test_cli_never_sends_the_token_to_an_impostor(tmp_path: Path) -> None:
    """A squatter on the control port gets no token from the CLI."""
    port = free_port_pair()
    received: list[bytes] = []
    server = socket.socket()
    server.bind(("127.0.0.1", port))
    server.listen()
    server.settimeout(0.2)  # short: the loop below ends as soon as the CLI has exited
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True, mode=0o700)
    token = "t" * 43
    fd = os.open(home / "config" / "token", os.O_CREAT | os.O_WRONLY, 0o600)
    os.write(fd, token.encode())
    os.close(fd)
    env = {**os.environ, "BROWSERD_HOME": str(home),
           "BROWSERD_CONTROL_URL": f"http://127.0.0.1:{port}"}
    cli = subprocess.Popen([sys.executable, "-m", "browserd", "status"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    try:
        while cli.poll() is None and time.monotonic() < deadline:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            conn.settimeout(2)
            try:
                received.append(conn.recv(65536))
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: 11\r\nConnection: close\r\n\r\n{\"ok\":true}")
            finally:
                conn.close()
        _, err = cli.communicate(timeout=20)
    finally:
        server.close()
    assert cli.returncode != 0
    assert "not this browserd" in err
    assert received and all(token.encode() not in data for data in received)


def test_healthz_needs_no_token_and_says_nothing_else(service: ServiceInfo) -> None:
    r = httpx.get(f"{service.base_url}/healthz", timeout=5, verify=LOOPBACK_TLS)
    assert r.status_code == 200 and set(r.json()) == {"ok", "browser"}


def test_harness_retries_a_port_someone_else_took(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The port race in the harness: a pair taken between probe and bind means a new pair."""
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", 0))
    squatter.listen()
    taken = squatter.getsockname()[1]
    picks = iter([taken, harness.free_port_pair()])
    monkeypatch.setattr(harness, "free_port_pair", lambda: next(picks))
    try:
        info = start_service(tmp_path / "home", env={"BROWSERD_ENABLED": "0"},
                             wait_browser=False)
        try:
            assert info.port != taken
            assert httpx.get(f"{info.base_url}/healthz", timeout=10,
                             verify=LOOPBACK_TLS).status_code == 200
        finally:
            stop_service(info)
    finally:
        squatter.close()
