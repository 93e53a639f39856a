"""Finding the Chromium-family executable to launch.

Order: ``$BROWSERD_BROWSER``, then the ``executable`` setting (a name such as
``chromium`` / ``chrome`` / ``edge`` / ``brave``, or a path), then the
platform's usual places. When nothing is found the error lists every place
tried and how to install a browser.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from ..errors import ExecutableNotFound

__all__ = ["Executable", "find_executable"]

_MAC_APPS = {
    "canary": "Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary",
    "chromium": "Chromium.app/Contents/MacOS/Chromium",
    "chrome": "Google Chrome.app/Contents/MacOS/Google Chrome",
    "edge": "Microsoft Edge.app/Contents/MacOS/Microsoft Edge",
    "brave": "Brave Browser.app/Contents/MacOS/Brave Browser",
}
_MAC_ORDER = ("canary", "chromium", "chrome", "edge", "brave")

_LINUX_NAMES = {
    "chromium": ("chromium", "chromium-browser"),
    "chrome": ("google-chrome", "google-chrome-stable"),
    "edge": ("microsoft-edge", "microsoft-edge-stable"),
    "brave": ("brave-browser", "brave"),
}
_LINUX_ORDER = ("chromium", "chrome", "edge", "brave")
_LINUX_EXTRA_DIRS = ("/usr/bin", "/usr/local/bin", "/snap/bin", "/opt/google/chrome")
_MAC_ROOTS = ("/Applications",)  # then ~/Applications

# Debian's /usr/bin/chromium is a shell wrapper (sources /etc/chromium.d, costs
# 15-25 ms, prints a shell error); the real binary sits beside its resources.
_REAL_BINARIES = {"/usr/bin/chromium": "/usr/lib/chromium/chromium"}


@attrs.frozen(kw_only=True)
class Executable:
    path: Path
    kind: str  # "chromium", "chrome", "edge", "brave", "canary" or "custom"


def _real(path: str) -> str:
    real = _REAL_BINARIES.get(path)
    return real if real and os.access(real, os.X_OK) else path


def _candidates(
    platform: str,
    environ: Mapping[str, str],
    kinds: Sequence[str],
    mac_roots: Sequence[Path],
    linux_dirs: Sequence[Path],
) -> list[tuple[str, str | None, str]]:
    """``(kind, path to check or None, what to report as tried)``, in order."""
    out: list[tuple[str, str | None, str]] = []
    if platform == "darwin":
        for kind in kinds:
            rel = _MAC_APPS.get(kind)
            if rel:
                out += [(kind, str(root / rel), str(root / rel)) for root in mac_roots]
        return out
    path_env = environ.get("PATH", os.defpath)
    for kind in kinds:
        for name in _LINUX_NAMES.get(kind, ()):
            found = shutil.which(name, path=path_env)
            out.append((kind, found, found or f"{name} on $PATH"))
            out += [(kind, str(d / name), str(d / name)) for d in linux_dirs]
    return out


def find_executable(
    setting: str | None,
    *,
    environ: Mapping[str, str] | None = None,
    platform: str | None = None,
    home: Path | None = None,
    mac_roots: Sequence[Path] | None = None,
    linux_dirs: Sequence[Path] | None = None,
) -> Executable:
    """Resolve the browser to launch or raise ExecutableNotFound listing what was tried.

    ``mac_roots`` (default ``/Applications``, ``~/Applications``) and
    ``linux_dirs`` (default the usual install dirs, searched after $PATH) are
    seams for tests.
    """
    env = os.environ if environ is None else environ
    plat = sys.platform if platform is None else platform
    home_dir = Path.home() if home is None else home
    roots = (
        [Path(r) for r in _MAC_ROOTS] + [home_dir / "Applications"]
        if mac_roots is None
        else list(mac_roots)
    )
    dirs = [Path(d) for d in _LINUX_EXTRA_DIRS] if linux_dirs is None else list(linux_dirs)
    wanted = env.get("BROWSERD_BROWSER") or setting
    tried: list[str] = []
    if wanted:
        is_path = "/" in wanted or wanted.startswith(".")
        if is_path:
            path = Path(wanted).expanduser()
            if path.is_file() and os.access(path, os.X_OK):
                return Executable(path=Path(_real(str(path.absolute()))), kind="custom")
            raise ExecutableNotFound(
                f"browser executable {wanted!r} does not exist or is not executable",
                hint="set executable in config.toml (or $BROWSERD_BROWSER) to an existing path",
            )
        kinds: Sequence[str] = (wanted.lower(),)
        if kinds[0] not in _LINUX_NAMES and kinds[0] not in _MAC_APPS:
            found = shutil.which(wanted, path=env.get("PATH", os.defpath))
            if found:
                return Executable(path=Path(_real(found)), kind="custom")
            raise ExecutableNotFound(
                f"unknown browser {wanted!r}",
                hint="use chromium, chrome, edge, brave, or an absolute path",
            )
    else:
        kinds = _MAC_ORDER if plat == "darwin" else _LINUX_ORDER
    for kind, candidate, label in _candidates(plat, env, kinds, roots, dirs):
        if label in tried:
            continue
        tried.append(label)
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return Executable(path=Path(_real(candidate)), kind=kind)
    how = (
        "install Chromium or Google Chrome into /Applications"
        if plat == "darwin"
        else "install one, e.g. `sudo apt-get install -y chromium` on Debian/Ubuntu"
    )
    raise ExecutableNotFound(
        "no Chromium-family browser found; tried: " + ", ".join(tried),
        hint=f"{how}, or set executable in config.toml / $BROWSERD_BROWSER",
        tried=tried,
    )
