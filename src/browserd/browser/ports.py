"""Who holds a TCP port: checked before launching, named in the error."""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys
from pathlib import Path

import attrs

__all__ = ["PortHolder", "find_port_holder", "port_is_free"]


@attrs.frozen(kw_only=True)
class PortHolder:
    pid: int | None
    name: str | None

    def describe(self) -> str:
        if self.pid is None:
            return "another process"
        return f"pid {self.pid}" + (f" ({self.name})" if self.name else "")


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True when nothing listens on host:port (checked by binding, then released)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        # Like Chromium's own listener: connections of a previous browser in
        # TIME_WAIT must not count as "held"; a live listener still does.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def _listening_inodes(port: int) -> set[str]:
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10 or fields[3] != "0A":  # 0A = LISTEN
                continue
            if int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    return inodes


def find_port_holder(port: int) -> PortHolder:
    """Best effort: the pid and name listening on ``port`` (pid None if unknown)."""
    if sys.platform.startswith("linux"):
        inodes = {f"socket:[{i}]" for i in _listening_inodes(port)}
        if inodes:
            for proc in Path("/proc").iterdir():
                if not proc.name.isdigit():
                    continue
                try:
                    for fd in (proc / "fd").iterdir():
                        if os.readlink(fd) in inodes:
                            return PortHolder(pid=int(proc.name), name=_comm(int(proc.name)))
                except OSError:
                    continue
        return PortHolder(pid=None, name=None)
    try:
        out = subprocess.run(
            ["lsof", "-nP", f"-iTCP:{port}", "-sTCP:LISTEN", "-Fpc"],
            capture_output=True, text=True, timeout=3, check=False,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return PortHolder(pid=None, name=None)
    pid = name = None
    for line in out.splitlines():
        if line.startswith("p") and pid is None:
            pid = int(line[1:])
        elif line.startswith("c") and name is None:
            name = line[1:]
    return PortHolder(pid=pid, name=name)


def _comm(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None
