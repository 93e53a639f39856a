"""S11, the hostile neighbour: another local OS user goes for the browser.

As ``nobody`` (``setpriv --reuid=65534 --regid=65534 --clear-groups``; the
drills run as root), a small stdlib-only Python client:

- asks the CDP port (once Chromium's own DevTools port, now browserd's
  gateway) for ``/json/version`` and ``/json/list``, with no token and with a
  guessed one, and tries the browser WebSocket upgrade the same ways;
- asks the control port the same questions;
- reads ``/proc/net/tcp*`` for every TCP listener on the machine and asks
  each one the browser group owns (see below) for ``/json/version``.

It must get nothing: 401 everywhere, no ``webSocketDebuggerUrl``, no 101.
From root, the drill itself maps every socket of the browser's process group
(``/proc/<pid>/fd`` of each process whose pgid is the browser's) against the
listening sockets: there must be none (the same reader sees the service's own
two listeners, so it can fail). A ``nobody`` cannot read a root process's fds,
so it is handed the (expected empty) list of the group's ports to try.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import trio

from .drill import Drill, DrillSkipped

NOBODY = 65534

#: Runs as ``nobody`` under the system Python: stdlib only, prints one JSON object.
NEIGHBOUR_SCRIPT = r'''
import base64, http.client, json, os, socket, sys

control, gateway = int(sys.argv[1]), int(sys.argv[2])
group_ports = [int(p) for p in sys.argv[3].split(",") if p]
out = {"uid": os.getuid(), "http": {}, "ws": {}, "devtools": [], "listeners": 0}

def get(port, path, token=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    headers = {"Host": f"127.0.0.1:{port}"}
    if token:
        headers["Authorization"] = "Bearer " + token
    try:
        conn.request("GET", path, headers=headers)
        reply = conn.getresponse()
        return reply.status, reply.read(65536).decode("utf-8", "replace")
    except OSError as exc:
        return None, str(exc)
    finally:
        conn.close()

def upgrade(port, path, token=None):
    lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Upgrade: websocket",
             "Connection: Upgrade", "Sec-WebSocket-Version: 13",
             "Sec-WebSocket-Key: " + base64.b64encode(os.urandom(16)).decode()]
    if token:
        lines.append("Authorization: Bearer " + token)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
            head = s.recv(4096)
        return int(head.split(b" ", 2)[1]) if head else None
    except (OSError, ValueError, IndexError):
        return None

guess = "A" * 43
for port in (gateway, control):
    for path in ("/json/version", "/json/list", "/json"):
        for label, token in (("none", None), ("guess", guess)):
            status, body = get(port, path, token)
            out["http"][f"{port}{path} {label}"] = status
            if "webSocketDebuggerUrl" in body:
                out["devtools"].append(f"{port}{path} {label}")
    for path in ("/devtools/browser/x", "/devtools/page/x"):
        for label, token in (("none", None), ("guess", guess)):
            out["ws"][f"{port}{path} {label}"] = upgrade(port, path, token)
for table in ("/proc/net/tcp", "/proc/net/tcp6"):
    with open(table) as f:
        out["listeners"] += sum(1 for line in f.read().splitlines()[1:]
                                if line.split()[3] == "0A")
for port in group_ports:
    status, body = get(port, "/json/version")
    out["http"][f"browser-group {port}/json/version none"] = status
    if "webSocketDebuggerUrl" in body:
        out["devtools"].append(f"browser-group {port}")
print(json.dumps(out))
'''


def tcp_listener_inodes() -> dict[str, int]:
    """Socket inode → port of every TCP socket in LISTEN state (IPv4 and IPv6)."""
    found: dict[str, int] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if len(fields) > 9 and fields[3] == "0A":
                found[fields[9]] = int(fields[1].rsplit(":", 1)[1], 16)
    return found


def listening_ports(pid: int) -> set[int]:
    """TCP ports ``pid`` listens on (its fds mapped to the LISTEN sockets)."""
    listeners = tcp_listener_inodes()
    ports: set[int] = set()
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return ports
    for fd in fds:
        try:
            link = os.readlink(fd)
        except OSError:
            continue
        inode = link[len("socket:["):-1] if link.startswith("socket:[") else ""
        if inode in listeners:
            ports.add(listeners[inode])
    return ports


def group_members(pgid: int) -> list[int]:
    """Live pids whose process group is ``pgid``."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getpgid(int(entry.name)) == pgid:
                    members.append(int(entry.name))
            except OSError:
                continue
    return members


def group_listeners(pgid: int) -> dict[int, set[int]]:
    """pid → TCP ports it listens on, for every member of the process group that has any."""
    return {pid: ports for pid in group_members(pgid) if (ports := listening_ports(pid))}


async def hostile_neighbour(d: Drill) -> None:
    """S11 (module docstring)."""
    setpriv = shutil.which("setpriv")
    python = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else shutil.which("python3")
    if os.geteuid() != 0 or setpriv is None or python is None:
        raise DrillSkipped("needs root, setpriv and a system python3 to act as nobody")
    svc = await d.start()
    await svc.open_tab("about:blank")
    st = await svc.status()
    browser = int(st["pid"])
    members = group_members(browser)
    d.figure("browser_group", len(members), " processes")
    own = listening_ports(svc.info.pid)
    d.check({svc.info.port, svc.info.cdp_port} <= own,
            f"the listener reader does not see the service's own ports: {own}")
    held = group_listeners(browser)
    d.check(not held, f"browser processes listen on TCP: {held}")
    group_ports = sorted({p for ports in held.values() for p in ports})
    refusals_before = svc.info.log_text().count("401 UNAUTHORIZED")
    argv = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", python,
            "-c", NEIGHBOUR_SCRIPT, str(svc.info.port), str(svc.info.cdp_port),
            ",".join(map(str, group_ports))]
    with trio.fail_after(30):
        done = await trio.run_process(argv, capture_stdout=True, capture_stderr=True,
                                      check=False, cwd="/")
    if done.returncode != 0:
        d.check(False, f"the neighbour client failed: {done.stderr.decode()[-500:]}")
        return
    report: dict[str, Any] = json.loads(done.stdout)
    d.check(report["uid"] == NOBODY, f"the neighbour ran as uid {report['uid']}")
    d.check(report["devtools"] == [], f"DevTools answered the neighbour: {report['devtools']}")
    opened = {k: v for k, v in report["ws"].items() if v == 101}
    d.check(not opened, f"WebSockets opened for the neighbour: {opened}")
    answered = {k: v for k, v in report["http"].items() if v not in (401,)}
    d.check(not answered, f"answers other than 401: {answered}")
    d.figure("probes", len(report["http"]) + len(report["ws"]))
    d.figure("tcp_listeners_seen", report["listeners"])
    d.check(svc.info.log_text().count("401 UNAUTHORIZED") > refusals_before,
            "the service logged no refusal of the neighbour")
    d.check(svc.info.token not in svc.info.log_text(), "the token appears in the log")
    st_after = await svc.status()
    d.check(st_after["pid"] == browser and st_after["state"] == "running",
            f"the browser changed under the neighbour: {st_after['state']} {st_after['pid']}")
    await d.stop(svc)


__all__ = ["NEIGHBOUR_SCRIPT", "group_listeners", "group_members", "hostile_neighbour",
           "listening_ports", "tcp_listener_inodes"]
