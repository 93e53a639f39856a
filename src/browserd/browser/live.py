"""Finding the user's own running browser: ``DevToolsActivePort`` discovery.

A Chromium-family browser with remote debugging enabled (Chrome ≥ 144's
toggle at chrome://inspect/#remote-debugging, or ``--remote-debugging-port``)
writes ``DevToolsActivePort`` into its user data directory: the port on the
first line, the browser endpoint's path (``/devtools/browser/<id>``) on the
second. browserd connects to ``ws://127.0.0.1:<port><path>`` directly: the
chrome://inspect toggle serves no ``/json`` endpoints, so nothing else is
asked of it.

Everything here is plain code over the file system: no network, no process
is started or signalled. Errors are :class:`~browserd.errors.LiveBrowserNotFound`
(503) with a hint saying how to enable remote debugging.
"""

from __future__ import annotations

import enum
import os
import stat
import sys
from pathlib import Path

from ..errors import BadRequest, LiveBrowserNotFound

__all__ = ["ACTIVE_PORT_FILE", "LiveBrowser", "live_ws_url", "parse_live_browser",
           "read_active_port", "user_data_dir"]

ACTIVE_PORT_FILE = "DevToolsActivePort"
#: The file is two short lines; anything longer is not Chromium's.
_MAX_FILE_BYTES = 4096


class LiveBrowser(enum.StrEnum):
    """The browsers ``live_browser`` names (their default user data directories)."""

    CHROME = "chrome"
    CHROME_CANARY = "chrome-canary"
    CHROMIUM = "chromium"
    EDGE = "edge"
    BRAVE = "brave"


#: Default user data directories, relative to the home directory.
_MACOS = {
    LiveBrowser.CHROME: "Library/Application Support/Google/Chrome",
    LiveBrowser.CHROME_CANARY: "Library/Application Support/Google/Chrome Canary",
    LiveBrowser.CHROMIUM: "Library/Application Support/Chromium",
    LiveBrowser.EDGE: "Library/Application Support/Microsoft Edge",
    LiveBrowser.BRAVE: "Library/Application Support/BraveSoftware/Brave-Browser",
}
_LINUX = {  # under $XDG_CONFIG_HOME (default ~/.config)
    LiveBrowser.CHROME: "google-chrome",
    LiveBrowser.CHROME_CANARY: "google-chrome-unstable",  # no Canary on Linux: the dev channel
    LiveBrowser.CHROMIUM: "chromium",
    LiveBrowser.EDGE: "microsoft-edge",
    LiveBrowser.BRAVE: "BraveSoftware/Brave-Browser",
}


def parse_live_browser(value: object, *, where: str) -> LiveBrowser:
    """``live_browser`` → :class:`LiveBrowser`; BadRequest naming the choices."""
    try:
        return LiveBrowser(str(value))
    except ValueError:
        raise BadRequest(f"{where}: live_browser {value!r}: use one of "
                         + ", ".join(b.value for b in LiveBrowser)) from None


def user_data_dir(browser: LiveBrowser, *, home: Path | None = None,
                  platform: str | None = None,
                  environ: dict[str, str] | None = None) -> Path:
    """Where ``browser`` keeps its default user data on this platform (macOS, Linux)."""
    home = Path.home() if home is None else home
    platform = sys.platform if platform is None else platform
    env = dict(os.environ) if environ is None else environ
    if platform == "darwin":
        return home / _MACOS[browser]
    config = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
    return config / _LINUX[browser]


def read_active_port(directory: Path) -> tuple[int, str]:
    """``(port, path)`` from ``directory/DevToolsActivePort``.

    Raises LiveBrowserNotFound when the file is missing, unreadable, not a
    regular file or malformed (the browser is not running with remote
    debugging enabled, or is still starting).
    """
    path = directory / ACTIVE_PORT_FILE
    try:
        with open(path, "rb", opener=_open_regular) as f:
            data = f.read(_MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise LiveBrowserNotFound(
            f"no browser with remote debugging enabled uses {directory} "
            f"(no {ACTIVE_PORT_FILE} there)") from None
    except OSError as exc:
        raise LiveBrowserNotFound(f"cannot read {path}: {exc.strerror or exc}") from None
    lines = data.decode("ascii", "replace").splitlines()
    if len(data) > _MAX_FILE_BYTES or len(lines) < 2:
        raise LiveBrowserNotFound(f"{path} is not a DevToolsActivePort file")
    port_text, endpoint = lines[0].strip(), lines[1].strip()
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535 or not (
        endpoint.startswith("/devtools/browser/") and endpoint.isprintable()
        and " " not in endpoint
    ):
        raise LiveBrowserNotFound(f"{path} is not a DevToolsActivePort file")
    return int(port_text), endpoint


def live_ws_url(directory: Path) -> str:
    """The browser endpoint of the browser using ``directory`` (always on 127.0.0.1)."""
    port, endpoint = read_active_port(directory)
    return f"ws://127.0.0.1:{port}{endpoint}"


def _open_regular(path: str, flags: int) -> int:
    """Open for reading without blocking on a FIFO; refuse anything but a regular file."""
    fd = os.open(path, flags | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd
