"""The errors of the service, the browser or the machine: 5xx (see :mod:`browserd.errors`)."""

from __future__ import annotations

from .base import BrowserdError

__all__ = [
    "BrowserDisabled", "BrowserGone", "BrowserNotRunning", "BrowserStarting",
    "BrowserUnresponsive", "CdpError", "CdpUndecodable", "ConfigError", "ExecutableNotFound",
    "ExtensionNotConnected", "InsufficientStorage", "LiveBrowserNotFound", "Overloaded",
    "PortInUse", "ProfileInUse", "ProfileRefused", "StartupError", "TabBroken", "TargetCrashed",
    "Timeout", "Unavailable"
]



class BrowserGone(BrowserdError):
    status, code = 502, "BROWSER_GONE"
    default_hint = "the browser is being restarted; retry in a moment"


class TargetCrashed(BrowserGone):
    code = "TARGET_CRASHED"
    default_hint = "reload the tab with POST /navigate or close it"


class TabBroken(BrowserGone):
    """The tab's actor ended while the browser runs: the tab can only be closed."""

    code = "TAB_BROKEN"
    default_hint = "close it (DELETE /tabs/<id>) and open a new one"


class CdpError(BrowserdError):
    """The browser answered a command with a protocol error."""

    status, code = 502, "CDP_ERROR"

    def __init__(self, message: str, *, cdp_code: int | None = None, method: str = "") -> None:
        super().__init__(message, method=method)
        self.cdp_code = cdp_code
        self.method = method


class CdpUndecodable(CdpError):
    """The browser's reply to a command was not JSON, even after repair."""

    code = "CDP_UNDECODABLE"


class Unavailable(BrowserdError):
    status, code = 503, "UNAVAILABLE"


class BrowserDisabled(Unavailable):
    code = "BROWSER_DISABLED"
    default_hint = "set enabled = true in config.toml"


class LiveBrowserNotFound(Unavailable):
    code = "LIVE_BROWSER_NOT_FOUND"
    default_hint = ("start the browser, then enable remote debugging at chrome://inspect/"
                    "#remote-debugging (Chrome 144 or later) and allow browserd when asked")


class BrowserNotRunning(Unavailable):
    code = "BROWSER_NOT_RUNNING"
    default_hint = "start it with POST /start (or `browserd start`)"


class BrowserStarting(Unavailable):
    code = "BROWSER_STARTING"
    default_hint = "retry in a moment"


class BrowserUnresponsive(Unavailable):
    """The browser stopped answering CDP (hung); it is being restarted."""

    code = "BROWSER_UNRESPONSIVE"
    default_hint = "the browser is being restarted (reason 'hung'); retry in a few seconds"


class Overloaded(Unavailable):
    code = "OVERLOADED"
    default_hint = "too many requests at once; retry shortly"


class ExtensionNotConnected(Unavailable):
    """An extension-driver profile whose browser extension is not connected to the relay."""

    code = "EXTENSION_NOT_CONNECTED"
    default_hint = ("open the browser with the browserd extension; its options page pairs it "
                    "(`browserd extension pair` prints a code)")


class Timeout(BrowserdError):
    status, code = 504, "TIMEOUT"


class InsufficientStorage(BrowserdError):
    status, code = 507, "INSUFFICIENT_STORAGE"
    default_hint = "free disk space in the media directory"


class StartupError(BrowserdError):
    status, code = 500, "STARTUP_FAILED"


class PortInUse(StartupError):
    code = "PORT_IN_USE"


class ProfileInUse(StartupError):
    code = "PROFILE_IN_USE"


class ProfileRefused(StartupError):
    code = "PROFILE_REFUSED"


class ExecutableNotFound(StartupError):
    code = "EXECUTABLE_NOT_FOUND"


class ConfigError(StartupError):
    code = "CONFIG_ERROR"
