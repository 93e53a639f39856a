"""One ``browserd serve`` per home: an advisory lock held for the service's life.

Two services started together on the same home would both pass the port
check, race for the port and for the browser profile, and the loser would
die in the middle of its startup. Instead each takes ``<state>/serve.lock``
(``flock``, non-blocking) before anything else; the second one is refused at
once with :class:`~browserd.errors.AlreadyRunning`, naming the holder's pid.
The kernel drops the lock when the holder exits, even on ``kill -9``, so a
stale file never blocks a start.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from .errors import AlreadyRunning
from .paths import Paths, ensure_private_dir


def lock_path(paths: Paths) -> Path:
    return paths.state_dir / "serve.lock"


@contextlib.contextmanager
def hold_instance_lock(paths: Paths) -> Iterator[Path]:
    """Hold the home's service lock for the ``with`` block.

    Raises AlreadyRunning when another live process holds it. The lock file
    records the holder's pid (for the message only; the lock is the flock).
    """
    ensure_private_dir(paths.state_dir)
    path = lock_path(paths)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            raise AlreadyRunning(
                f"another browserd is already serving {paths.data_dir} (pid {holder})",
                hint="`browserd status` talks to it; stop it first to start another here",
                pid=holder) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield path
    finally:
        os.close(fd)  # releases the lock
