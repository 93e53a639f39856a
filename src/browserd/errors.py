"""The one error hierarchy of browserd.

Every failure that can reach a caller is a :class:`BrowserdError`. Each class
carries the HTTP ``status`` it maps to and a stable ``code`` string; the HTTP
façade turns any of them into ``{"error", "code", "hint"}`` in one place, and
the CLI prints the message and exits non-zero.

Tree::

    BrowserdError                          500 INTERNAL
    ├── BadRequest                         400 BAD_REQUEST
    │   ├── BadUrl                         400 BAD_URL
    │   ├── JsException                    400 JS_EXCEPTION
    │   ├── UploadFileMissing              400 FILE_NOT_FOUND
    │   └── DriverNotAvailable             400 DRIVER_NOT_AVAILABLE
    ├── Unauthorized                       401 UNAUTHORIZED
    │   ├── TokenRevoked                   401 TOKEN_REVOKED
    │   └── TokenExpired                   401 TOKEN_EXPIRED
    ├── Forbidden                          403 FORBIDDEN_ORIGIN
    │   ├── EvalDisabled                   403 EVAL_DISABLED
    │   ├── UrlBlocked                     403 URL_BLOCKED
    │   ├── UploadBlocked                  403 UPLOAD_BLOCKED
    │   ├── OwnerOnly                      403 OWNER_ONLY
    │   ├── ScopeRequired                  403 SCOPE_REQUIRED
    │   ├── ScopeExceedsParent             403 SCOPE_EXCEEDS_PARENT
    │   ├── NotAgentTab                    403 NOT_AGENT_TAB
    │   └── PairingFailed                  403 PAIRING_FAILED
    ├── NotFound                           404 NOT_FOUND
    │   ├── TabNotFound                    404 TAB_NOT_FOUND
    │   ├── RefNotFound                    404 REF_NOT_FOUND
    │   ├── NoMatch                        404 NO_MATCH
    │   ├── ProfileNotFound                404 PROFILE_NOT_FOUND
    │   ├── RequestNotFound                404 REQUEST_NOT_FOUND
    │   ├── TokenNotFound                  404 TOKEN_NOT_FOUND
    │   └── SessionNotFound                404 SESSION_NOT_FOUND
    ├── MethodNotAllowed                   405 METHOD_NOT_ALLOWED
    ├── Conflict                           409 CONFLICT
    │   ├── AmbiguousTarget                409 AMBIGUOUS_TARGET
    │   ├── StaleRef                       409 STALE_REF
    │   ├── DialogOpen                     409 DIALOG_OPEN
    │   ├── AttachOnly                     409 ATTACH_ONLY
    │   ├── NoDialog                       409 NO_DIALOG
    │   ├── NoFileChooser                  409 NO_FILE_CHOOSER
    │   ├── NoFrame                        409 NO_FRAME
    │   ├── NoHistory                      409 NO_HISTORY
    │   ├── ProfileRunning                 409 PROFILE_RUNNING
    │   ├── ProfileExists                  409 PROFILE_EXISTS
    │   ├── ProfileProtected               409 PROFILE_PROTECTED
    │   ├── HandoffActive                  409 HANDOFF_ACTIVE
    │   ├── TabRestored                    409 TAB_RESTORED
    │   └── RelayBusy                      409 RELAY_BUSY
    ├── TabLost                            410 TAB_LOST
    ├── BodyTooLarge                       413 BODY_TOO_LARGE
    ├── UnsupportedMediaType               415 UNSUPPORTED_MEDIA_TYPE
    ├── MisdirectedHost                    421 MISDIRECTED_HOST
    ├── ResultTooLarge                     422 RESULT_TOO_LARGE
    ├── TabBusy                            429 TAB_BUSY
    ├── TooManySessions                    429 TOO_MANY_SESSIONS
    ├── BrowserGone                        502 BROWSER_GONE
    │   ├── TargetCrashed                  502 TARGET_CRASHED
    │   └── TabBroken                      502 TAB_BROKEN
    ├── Unavailable                        503 UNAVAILABLE
    │   ├── BrowserDisabled                503 BROWSER_DISABLED
    │   ├── BrowserNotRunning              503 BROWSER_NOT_RUNNING
    │   ├── BrowserStarting                503 BROWSER_STARTING
    │   ├── BrowserUnresponsive            503 BROWSER_UNRESPONSIVE
    │   ├── LiveBrowserNotFound            503 LIVE_BROWSER_NOT_FOUND
    │   ├── Overloaded                     503 OVERLOADED
    │   └── ExtensionNotConnected          503 EXTENSION_NOT_CONNECTED
    ├── Timeout                            504 TIMEOUT
    ├── InsufficientStorage                507 INSUFFICIENT_STORAGE
    ├── CdpError                           502 CDP_ERROR
    │   └── CdpUndecodable                 502 CDP_UNDECODABLE
    └── StartupError                       500 STARTUP_FAILED
        ├── PortInUse                      500 PORT_IN_USE
        ├── ProfileInUse                   500 PROFILE_IN_USE
        ├── ProfileRefused                 500 PROFILE_REFUSED
        ├── ExecutableNotFound             500 EXECUTABLE_NOT_FOUND
        └── ConfigError                    500 CONFIG_ERROR

``CdpError``: the browser answered a command with an error. ``StartupError``:
refusals at launch (port taken, profile locked, …).

:func:`unwrap_group` is the one place exception groups are collapsed at actor
boundaries.
"""

from __future__ import annotations

from typing import Any, ClassVar

from .groups import collapse_group

__all__ = [
    "AmbiguousTarget", "AttachOnly", "BadRequest", "BadUrl", "BodyTooLarge", "BrowserDisabled",
    "BrowserGone", "BrowserNotRunning", "BrowserStarting", "BrowserUnresponsive", "BrowserdError",
    "CdpError", "ConfigError", "Conflict", "DialogOpen", "DriverNotAvailable",
    "EvalDisabled", "ExecutableNotFound", "ExtensionNotConnected", "Forbidden", "HandoffActive",
    "InsufficientStorage", "JsException", "LiveBrowserNotFound", "MethodNotAllowed",
    "MisdirectedHost", "NoDialog", "NoFileChooser", "NoHistory", "NoMatch", "NotAgentTab",
    "NotFound", "Overloaded", "OwnerOnly", "PairingFailed", "PortInUse", "ProfileExists",
    "ProfileInUse", "ProfileNotFound", "ProfileProtected", "ProfileRefused", "ProfileRunning",
    "RefNotFound", "RelayBusy", "RequestNotFound", "ScopeExceedsParent", "ScopeRequired",
    "SessionNotFound", "StaleRef", "StartupError", "TabBroken", "TabBusy", "TabLost",
    "TabNotFound", "TabRestored", "TargetCrashed", "Timeout", "TokenExpired", "TokenNotFound",
    "TokenRevoked", "TooManySessions", "Unauthorized", "Unavailable", "UnsupportedMediaType",
    "UploadBlocked", "UploadFileMissing", "UrlBlocked", "unwrap_group"
]


class BrowserdError(Exception):
    """Base of every browserd error; ``status`` and ``code`` are stable."""

    status: ClassVar[int] = 500
    code: ClassVar[str] = "INTERNAL"
    default_hint: ClassVar[str] = ""
    #: Which error of a group is the answer (:func:`unwrap_group`): the lowest rank wins.
    rank: ClassVar[int] = 50

    def __init__(self, message: str, *, hint: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.hint = self.default_hint if hint is None else hint
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        """The JSON error body: ``{error, code, hint, ...details}``.

        A detail can never replace ``error``, ``code`` or ``hint``.
        """
        body: dict[str, Any] = {"error": self.message, "code": self.code}
        if self.hint:
            body["hint"] = self.hint
        for key, value in self.details.items():
            if key not in ("error", "code", "hint"):
                body[key] = value
        return body


class BadRequest(BrowserdError):
    status, code = 400, "BAD_REQUEST"


class BadUrl(BadRequest):
    code = "BAD_URL"


class JsException(BadRequest):
    code = "JS_EXCEPTION"


class UploadFileMissing(BadRequest):
    """A file named for an upload does not exist (or is not a readable regular file)."""

    code = "FILE_NOT_FOUND"
    default_hint = "put the file under one of the upload roots first"


class DriverNotAvailable(BadRequest):
    code = "DRIVER_NOT_AVAILABLE"
    default_hint = "use driver 'launch', 'cdp', 'live' or 'extension'"


class Unauthorized(BrowserdError):
    status, code = 401, "UNAUTHORIZED"
    default_hint = "send 'Authorization: Bearer <token>'; `browserd token` prints it"


class TokenRevoked(Unauthorized):
    """The token was revoked (or an ancestor of it was): it opens nothing any more."""

    code = "TOKEN_REVOKED"
    default_hint = "ask the person for a new token (`browserd tokens create`)"


class TokenExpired(Unauthorized):
    code = "TOKEN_EXPIRED"
    default_hint = "ask the person (or the parent token's holder) for a new token"


class Forbidden(BrowserdError):
    status, code = 403, "FORBIDDEN_ORIGIN"


class OwnerOnly(Forbidden):
    """Only the person at the machine (the owner token) may do this, never the agent."""

    code = "OWNER_ONLY"
    default_hint = ("offering a tab is the user's decision: `browserd offer` (it reads the "
                    "owner token, which the agent's token is not)")


class ScopeRequired(Forbidden):
    """The token lacks the scope this call needs (``details.scope`` names it)."""

    code = "SCOPE_REQUIRED"
    default_hint = ("the person grants scopes: `browserd tokens create NAME --scope …` "
                    "(or a parent token with 'delegate' mints a child)")


class ScopeExceedsParent(Forbidden):
    """A child token may not have more scopes, profiles, sessions or time than its parent."""

    code = "SCOPE_EXCEEDS_PARENT"
    default_hint = "ask for a subset of your own token's scopes, profiles, sessions and expiry"


class NotAgentTab(Forbidden):
    """A tab the user offered: the agent may drive it and release it, never close it."""

    code = "NOT_AGENT_TAB"
    default_hint = "release it with POST /tabs/release; the page stays open for its user"


class EvalDisabled(Forbidden):
    code = "EVAL_DISABLED"
    default_hint = "set evaluate_enabled = true in config.toml to allow JavaScript evaluation"


class UrlBlocked(Forbidden):
    code = "URL_BLOCKED"
    default_hint = "add the scheme or host to url_allow in config.toml if this is intended"


class UploadBlocked(Forbidden):
    """A file named for an upload resolves (after symlinks) outside every upload root."""

    code = "UPLOAD_BLOCKED"
    default_hint = "only files under upload_roots (default <data>/uploads/) can be uploaded"


class PairingFailed(Forbidden):
    """``POST /relay/pair``: the one-time code is wrong, already used or expired."""

    code = "PAIRING_FAILED"
    default_hint = "run `browserd extension pair` for a new code"


class NotFound(BrowserdError):
    status, code = 404, "NOT_FOUND"


class TabNotFound(NotFound):
    code = "TAB_NOT_FOUND"
    default_hint = "list tabs with GET /tabs"


class RefNotFound(NotFound):
    code = "REF_NOT_FOUND"
    default_hint = "take a new snapshot and use one of its refs"


class NoMatch(NotFound):
    code = "NO_MATCH"


class RequestNotFound(NotFound):
    code = "REQUEST_NOT_FOUND"
    default_hint = "ids come from GET /network; the ring keeps the tab's last 1000 requests"


class ProfileNotFound(NotFound):
    code = "PROFILE_NOT_FOUND"
    default_hint = "GET /profiles lists the profiles"


class SessionNotFound(NotFound):
    code = "SESSION_NOT_FOUND"
    default_hint = ("GET /sessions lists the live sessions; sessions end when idle past "
                    "their ttlS, when deleted, and when the browser restarts")


class TokenNotFound(NotFound):
    code = "TOKEN_NOT_FOUND"
    default_hint = "GET /tokens lists the tokens you can see"


class MethodNotAllowed(BrowserdError):
    status, code = 405, "METHOD_NOT_ALLOWED"


class Conflict(BrowserdError):
    status, code = 409, "CONFLICT"


class AmbiguousTarget(Conflict):
    code = "AMBIGUOUS_TARGET"
    default_hint = "use more characters of the targetId"


class StaleRef(Conflict):
    code = "STALE_REF"
    default_hint = "take a new snapshot"


class DialogOpen(Conflict):
    code = "DIALOG_OPEN"
    default_hint = "resolve it with POST /dialog {accept: true|false}"


class NoDialog(Conflict):
    code = "NO_DIALOG"


class NoFileChooser(Conflict):
    """``/upload`` without a target, or ``/click {files}``, found no file chooser to answer."""

    code = "NO_FILE_CHOOSER"
    default_hint = "name the file input with ref or selector, or click the upload button first"


class NoFrame(Conflict):
    """The tab has no frame of the origin whose per-tab state was asked for."""

    code = "NO_FRAME"


class NoHistory(Conflict):
    """No history entry in that direction (``/back`` on the first, ``/forward`` on the last)."""

    code = "NO_HISTORY"
    default_hint = "GET /tabs shows the tab's URL; /navigate goes somewhere new"


class HandoffActive(Conflict):
    """The tab is handed to a person (``POST /handoff``); agent input waits for Done."""

    code = "HANDOFF_ACTIVE"
    default_hint = ("a person has this tab: wait with POST /wait {handoff: true}, "
                    "or cancel your request with DELETE /handoff")


class AttachOnly(Conflict):
    code = "ATTACH_ONLY"
    default_hint = "browserd is in attach-only mode; start the browser yourself"


class ProfileRunning(Conflict):
    code = "PROFILE_RUNNING"
    default_hint = "POST /stop with this profile first"


class ProfileExists(Conflict):
    code = "PROFILE_EXISTS"


class ProfileProtected(Conflict):
    code = "PROFILE_PROTECTED"


class RelayBusy(Conflict):
    """A second extension connected to the relay of a profile that already has one."""

    code = "RELAY_BUSY"
    default_hint = "one browser (one extension) per profile; close the other one first"


class TabRestored(Conflict):
    """The browser crashed and this tab was reopened under a new id (``details.targetId``)."""

    code = "TAB_RESTORED"
    default_hint = "use the new targetId; take a new snapshot (refs of the old page are gone)"


class TabLost(BrowserdError):
    """The browser crashed and this tab could not be reopened (``details.url``, ``reason``)."""

    status, code = 410, "TAB_LOST"
    default_hint = "open it again with POST /tabs/open if it is still wanted"


class BodyTooLarge(BrowserdError):
    status, code = 413, "BODY_TOO_LARGE"


class ResultTooLarge(BrowserdError):
    """A page result above a size limit (``eval_max_bytes``); it never left the page."""

    status, code = 422, "RESULT_TOO_LARGE"
    default_hint = "return less (a slice, a count, a summary) or raise eval_max_bytes"


class UnsupportedMediaType(BrowserdError):
    status, code = 415, "UNSUPPORTED_MEDIA_TYPE"
    default_hint = "send a JSON body with Content-Type: application/json"


class MisdirectedHost(BrowserdError):
    status, code = 421, "MISDIRECTED_HOST"


class TabBusy(BrowserdError):
    status, code = 429, "TAB_BUSY"
    default_hint = "the tab's queue is full; retry shortly"


class TooManySessions(BrowserdError):
    status, code = 429, "TOO_MANY_SESSIONS"
    default_hint = "DELETE /sessions/{id} an unused session, or raise max_sessions"


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


def unwrap_group(exc: BaseException) -> BaseException:
    """Collapse an exception group to the one error that matters (:func:`.groups.collapse_group`:
    a lone member is itself; else the first BrowserdError, by :attr:`BrowserdError.rank`)."""
    return collapse_group(exc, domain=BrowserdError,
                          rank=lambda e: getattr(e, "rank", 50))
