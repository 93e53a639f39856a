"""A Chromium of our own: started by hand (not by browserd), to stand beside it.

:func:`launch_chromium` starts one on a profile, on a given DevTools port, on a
port Chromium picks (``cdp_port=0``) or on none; :class:`PlainChromium` stops
its process group. ``CHROMIUM`` / ``REAL_CHROMIUM`` name the executable (the
wrapper script, and the binary behind it).

Blocking: call these from a worker thread inside trio.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import attrs
import httpx

from browserd.browser.profile import user_data_dir_arg

from .rawcdp import browser_ws_url

CHROMIUM = shutil.which("chromium") or "/usr/lib/chromium/chromium"
REAL_CHROMIUM = "/usr/lib/chromium/chromium" if Path("/usr/lib/chromium/chromium").exists() \
    else CHROMIUM
QUIET_FLAGS = (
    "--headless=new", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
)


@attrs.frozen(kw_only=True)
class PlainChromium:
    proc: subprocess.Popen[bytes]
    profile_dir: Path
    cdp_port: int | None
    ws_url: str | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        """SIGTERM then SIGKILL its process group; waits (bounded)."""
        for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue


def _active_port(profile_dir: Path) -> int | None:
    """The DevTools port Chromium wrote to the profile's ``DevToolsActivePort``, if any."""
    try:
        first = (profile_dir / "DevToolsActivePort").read_text().split("\n", 1)[0]
        return int(first)
    except (OSError, ValueError):
        return None


def launch_chromium(profile_dir: Path, *, cdp_port: int | None = None,
                    timeout: float = 20.0, extra_args: tuple[str, ...] = ()) -> PlainChromium:
    """Start Chromium by hand on ``profile_dir`` (blocking until it is up).

    Up means: DevTools answers when ``cdp_port`` is given (0: a port Chromium
    picks, read back from ``DevToolsActivePort``; the result's ``cdp_port``
    and ``ws_url`` name it), otherwise the profile's ``SingletonLock`` names
    its pid. ``extra_args`` go before the start URL. Raises RuntimeError
    (after stopping it) otherwise.
    """
    profile_dir.mkdir(parents=True, exist_ok=True)
    if cdp_port == 0:  # a stale file from an earlier run must not be read back
        with contextlib.suppress(FileNotFoundError):
            (profile_dir / "DevToolsActivePort").unlink()
    argv = [REAL_CHROMIUM, *QUIET_FLAGS, user_data_dir_arg(profile_dir)]
    if os.geteuid() == 0:
        argv.append("--no-sandbox")
    if cdp_port is not None:
        argv += [f"--remote-debugging-port={cdp_port}", "--remote-debugging-address=127.0.0.1"]
    argv += [*extra_args, "about:blank"]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    chromium = PlainChromium(proc=proc, profile_dir=profile_dir, cdp_port=cdp_port)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            chromium.stop()
            raise RuntimeError(f"chromium exited {proc.returncode}")
        if cdp_port is not None:
            port = _active_port(profile_dir) if cdp_port == 0 else cdp_port
            try:
                if port is not None:
                    return attrs.evolve(chromium, cdp_port=port, ws_url=browser_ws_url(port))
            except (httpx.HTTPError, KeyError, ValueError):
                pass
        else:
            try:
                if os.readlink(profile_dir / "SingletonLock").endswith(f"-{proc.pid}"):
                    return chromium
            except OSError:
                pass
        time.sleep(0.05)
    chromium.stop()
    raise RuntimeError("chromium did not come up")


__all__ = ["CHROMIUM", "QUIET_FLAGS", "REAL_CHROMIUM", "PlainChromium", "launch_chromium"]
