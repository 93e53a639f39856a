"""The errors a caller caused or can fix: 4xx (see the tree in :mod:`browserd.errors`)."""

from __future__ import annotations

from .base import BrowserdError

__all__ = [
    "Ambiguous", "AmbiguousTarget", "AttachOnly", "BadRequest", "BadUrl", "BodyTooLarge",
    "ConfirmationRequired", "Conflict", "Denied", "DialogOpen", "DriverNotAvailable",
    "EvalDisabled", "FfmpegMissing", "Forbidden", "HandoffActive", "JsException",
    "MethodNotAllowed",
    "MisdirectedHost", "NoDialog", "NoFileChooser", "NoFrame", "NoHistory", "NoMatch",
    "NotAgentTab", "NotFound", "OwnerOnly", "PairingFailed", "ProfileExists", "ProfileNotFound",
    "ProfileProtected", "ProfileRunning", "RefNotFound", "RelayBusy", "RequestNotFound",
    "ResultTooLarge", "ScopeExceedsParent", "ScopeRequired", "SecretNotFound", "SecretOrigin",
    "SessionNotFound", "StaleRef", "TabBusy", "TabLost", "TabNotFound", "TabRestored",
    "TlsPinMismatch", "TokenExpired", "TokenNotFound", "TokenRevoked", "TooManySessions",
    "Unauthorized",
    "UnsupportedMediaType", "UploadBlocked", "UploadFileMissing", "UrlBlocked"
]



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
                    "their ttlS, when deleted, and when the browser is stopped")


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


class FfmpegMissing(BrowserdError):
    """A record's video needs ffmpeg, and there is none (``ffmpeg`` setting, else PATH)."""

    status, code = 424, "FFMPEG_MISSING"
    default_hint = ("install it (apt-get install ffmpeg), or set ffmpeg to its path; "
                    "records without video need nothing")


class UnsupportedMediaType(BrowserdError):
    status, code = 415, "UNSUPPORTED_MEDIA_TYPE"
    default_hint = "send a JSON body with Content-Type: application/json"


class MisdirectedHost(BrowserdError):
    status, code = 421, "MISDIRECTED_HOST"


class TlsPinMismatch(MisdirectedHost):
    """The listener's TLS certificate is not the pinned one (raised by the client, which
    then sends nothing: no request, no token)."""

    code = "TLS_PIN_MISMATCH"
    default_hint = ("compare BROWSERD_TLS_FINGERPRINT (or tls_fingerprint) with what "
                    "`browserd token --remote` prints on the server; a new certificate "
                    "needs the new pin")


class TabBusy(BrowserdError):
    status, code = 429, "TAB_BUSY"
    default_hint = "the tab's queue is full; retry shortly"


class TooManySessions(BrowserdError):
    status, code = 429, "TOO_MANY_SESSIONS"
    default_hint = "DELETE /sessions/{id} an unused session, or raise max_sessions"


class SecretOrigin(Forbidden):
    """A vault secret typed into a page of another origin than the secret's."""

    code = "SECRET_ORIGIN"
    default_hint = "secrets are typed only on pages of their origin (`browserd secrets list`)"


class SecretNotFound(NotFound):
    code = "SECRET_NOT_FOUND"
    default_hint = "the person stores secrets with `browserd secrets set NAME`"


class Denied(Forbidden):
    """The person denied what this call waited for (a held action)."""

    code = "DENIED"


class ConfirmationRequired(BrowserdError):
    """Not a failure: the action waits for the person (``details.confirmation``)."""

    status, code = 202, "CONFIRMATION_REQUIRED"
    default_hint = ("the person confirms it on the ops page or with `browserd confirm`; "
                    "POST /wait {confirmation: id} waits and then runs it")


class Ambiguous(Conflict):
    """A role/name locator matched several elements (``details.candidates``: refs)."""

    code = "AMBIGUOUS"
    default_hint = "give nth (0-based) or exact: true, or act on one of the candidates' refs"
