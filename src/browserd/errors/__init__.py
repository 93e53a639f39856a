"""The one error hierarchy of browserd.

Every failure that can reach a caller is a :class:`BrowserdError`. Each class
carries the HTTP ``status`` it maps to and a stable ``code`` string; the HTTP
façade turns any of them into ``{"error", "code", "hint"}`` in one place, and
the CLI prints the message and exits non-zero.

Tree::

    BrowserdError                          500 INTERNAL
    ├── ConfirmationRequired               202 CONFIRMATION_REQUIRED (held, not failed)
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
    │   ├── SecretOrigin                   403 SECRET_ORIGIN
    │   ├── Denied                         403 DENIED
    │   ├── NotAgentTab                    403 NOT_AGENT_TAB
    │   └── PairingFailed                  403 PAIRING_FAILED
    ├── NotFound                           404 NOT_FOUND
    │   ├── TabNotFound                    404 TAB_NOT_FOUND
    │   ├── RefNotFound                    404 REF_NOT_FOUND
    │   ├── NoMatch                        404 NO_MATCH
    │   ├── ProfileNotFound                404 PROFILE_NOT_FOUND
    │   ├── RequestNotFound                404 REQUEST_NOT_FOUND
    │   ├── TokenNotFound                  404 TOKEN_NOT_FOUND
    │   ├── SecretNotFound                 404 SECRET_NOT_FOUND
    │   └── SessionNotFound                404 SESSION_NOT_FOUND
    ├── MethodNotAllowed                   405 METHOD_NOT_ALLOWED
    ├── Conflict                           409 CONFLICT
    │   ├── AmbiguousTarget                409 AMBIGUOUS_TARGET
    │   ├── Ambiguous                      409 AMBIGUOUS
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
    │   └── TlsPinMismatch                 421 TLS_PIN_MISMATCH
    ├── ResultTooLarge                     422 RESULT_TOO_LARGE
    ├── FfmpegMissing                      424 FFMPEG_MISSING
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

from .base import BrowserdError, unwrap_group
from .client import (
    Ambiguous,
    AmbiguousTarget,
    AttachOnly,
    BadRequest,
    BadUrl,
    BodyTooLarge,
    ConfirmationRequired,
    Conflict,
    Denied,
    DialogOpen,
    DriverNotAvailable,
    EvalDisabled,
    FfmpegMissing,
    Forbidden,
    HandoffActive,
    JsException,
    MethodNotAllowed,
    MisdirectedHost,
    NoDialog,
    NoFileChooser,
    NoFrame,
    NoHistory,
    NoMatch,
    NotAgentTab,
    NotFound,
    OwnerOnly,
    PairingFailed,
    ProfileExists,
    ProfileNotFound,
    ProfileProtected,
    ProfileRunning,
    RefNotFound,
    RelayBusy,
    RequestNotFound,
    ResultTooLarge,
    ScopeExceedsParent,
    ScopeRequired,
    SecretNotFound,
    SecretOrigin,
    SessionNotFound,
    StaleRef,
    TabBusy,
    TabLost,
    TabNotFound,
    TabRestored,
    TlsPinMismatch,
    TokenExpired,
    TokenNotFound,
    TokenRevoked,
    TooManySessions,
    Unauthorized,
    UnsupportedMediaType,
    UploadBlocked,
    UploadFileMissing,
    UrlBlocked,
)
from .server import (
    BrowserDisabled,
    BrowserGone,
    BrowserNotRunning,
    BrowserStarting,
    BrowserUnresponsive,
    CdpError,
    CdpUndecodable,
    ConfigError,
    ExecutableNotFound,
    ExtensionNotConnected,
    InsufficientStorage,
    LiveBrowserNotFound,
    Overloaded,
    PortInUse,
    ProfileInUse,
    ProfileRefused,
    StartupError,
    TabBroken,
    TargetCrashed,
    Timeout,
    Unavailable,
)

__all__ = [
    "Ambiguous", "AmbiguousTarget", "AttachOnly", "BadRequest", "BadUrl", "BodyTooLarge",
    "BrowserDisabled", "BrowserGone", "BrowserNotRunning", "BrowserStarting",
    "BrowserUnresponsive", "BrowserdError", "CdpError", "CdpUndecodable", "ConfigError",
    "ConfirmationRequired", "Conflict", "Denied", "DialogOpen", "DriverNotAvailable",
    "EvalDisabled", "ExecutableNotFound", "ExtensionNotConnected", "FfmpegMissing",
    "Forbidden", "HandoffActive",
    "InsufficientStorage", "JsException", "LiveBrowserNotFound", "MethodNotAllowed",
    "MisdirectedHost", "NoDialog", "NoFileChooser", "NoFrame", "NoHistory", "NoMatch",
    "NotAgentTab", "NotFound", "Overloaded", "OwnerOnly", "PairingFailed", "PortInUse",
    "ProfileExists", "ProfileInUse", "ProfileNotFound", "ProfileProtected", "ProfileRefused",
    "ProfileRunning", "RefNotFound", "RelayBusy", "RequestNotFound", "ResultTooLarge",
    "ScopeExceedsParent", "ScopeRequired", "SecretNotFound", "SecretOrigin", "SessionNotFound",
    "StaleRef", "StartupError", "TabBroken", "TabBusy", "TabLost", "TabNotFound", "TabRestored",
    "TargetCrashed", "Timeout", "TlsPinMismatch", "TokenExpired", "TokenNotFound",
    "TokenRevoked",
    "TooManySessions", "Unauthorized", "Unavailable", "UnsupportedMediaType", "UploadBlocked",
    "UploadFileMissing", "UrlBlocked", "unwrap_group"
]
