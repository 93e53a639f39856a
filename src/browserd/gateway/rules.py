"""What a CDP gateway client may send, and how browserd rewrites it on the way.

Every command, on any of the client's sessions (the browser or page session
it connected to, or a flat child session: the same rules), is judged here
before it is forwarded:

- it must be on the allowlist (:mod:`.allowlist`);
- sessions are flat only: ``Target.attachToTarget`` and
  ``Target.setAutoAttach`` need ``flatten: true`` (CDP's default is false:
  refused, not rewritten), and ``Target.sendMessageToTarget`` is not
  allowed at all, so no command travels inside another unjudged;
  ``Target.detachFromTarget`` must name a session of the client's own;
- browser contexts must be in the client's reach (:class:`~.targets.Reach`):
  ``browserContextId`` of ``Target.createTarget``, ``Browser.*Permissions``,
  ``Browser.setDownloadBehavior`` and ``Storage.*Cookies``; leaving it out
  means the default context, which a session-bound client does not reach
  (``Storage`` on a page session means that page's own context: fine).
  ``Target.disposeBrowserContext`` only for a context the client created;
  ``Target.createBrowserContext`` without ``originsWithUniversalNetworkAccess``;
- a session-bound client may not intercept (``Fetch.enable``) or trace
  (``Tracing.start``) on a browser session, which would reach every context;
- ``IO.read``/``IO.close`` only for streams the client was handed;
- ``Target.createTarget``, ``Page.navigate`` and ``Fetch.continueRequest``
  URLs pass the URL policy;
- file paths (``DOM.setFileInputFiles`` ``files``, ``Input.dispatchDragEvent``
  ``data.files``) pass browserd's upload check (``upload_roots``, never
  browserd's own files) and reach the browser resolved;
- ``Browser.setDownloadBehavior`` / ``Page.setDownloadBehavior`` may deny
  downloads or allow them into browserd's downloads directory only (any
  ``downloadPath`` is replaced by it, ``allow`` becomes ``allowAndName`` so
  files are named by their GUID as browserd's own are, and with
  ``downloads_enabled = false`` every behavior becomes ``deny``;
  ``default``, which means the user's ``~/Downloads``, is refused): a client
  must not turn the browser into a file writer anywhere its user can write.

Commands naming a ``targetId`` are judged by the client against the
target's info (:mod:`.targets`), which needs the browser.

Plain functions of the command and the client's state; no I/O, never raise.
"""

from __future__ import annotations

from collections.abc import Callable, Set
from pathlib import Path
from typing import Any

import attrs

from ..errors import BrowserdError
from ..uploads import MAX_UPLOAD_FILES
from ..urlpolicy import UrlPolicy
from .allowlist import not_allowed
from .targets import Reach

__all__ = ["DOWNLOAD_METHODS", "Limits", "defer_first_navigation", "refusal"]

#: Commands that set where downloads go (kept in browserd's downloads directory).
DOWNLOAD_METHODS = frozenset({"Browser.setDownloadBehavior", "Page.setDownloadBehavior"})
_URL_PARAM_METHODS = frozenset({"Target.createTarget", "Page.navigate", "Fetch.continueRequest"})
#: Commands whose ``browserContextId`` (absent: the default context) must be in reach.
_CONTEXT_METHODS = frozenset({
    "Target.createTarget", "Browser.setDownloadBehavior", "Browser.grantPermissions",
    "Browser.resetPermissions", "Storage.getCookies", "Storage.setCookies",
    "Storage.clearCookies",
})
#: Of those, the ones that mean the session's own page's context when sent on a page session.
_PAGE_CONTEXT_METHODS = frozenset({"Storage.getCookies", "Storage.setCookies",
                                   "Storage.clearCookies"})
#: Not on a browser session for a session-bound client: they would reach every context
#: (intercepting or tracing every page). As (domain, method): browserd itself never sends them.
_BROWSER_WIDE = frozenset({("Fetch", "enable"), ("Tracing", "start")})
_FLAT_METHODS = frozenset({"Target.attachToTarget", "Target.setAutoAttach"})

_ANY_CONTEXT = Reach(None)

#: Resolves one client-named file path (``UploadPolicy.resolve``); raises BrowserdError.
Resolve = Callable[[str], Path]


@attrs.frozen(kw_only=True)
class Limits:
    """The service's limits a client's commands are judged by (fixed for its life).

    ``uploads``: browserd's upload check (None: no file may be handed to a page).
    """

    policy: UrlPolicy
    downloads_dir: Path
    downloads_enabled: bool = True
    uploads: Resolve | None = None


def refusal(method: str, params: dict[str, Any], *, limits: Limits, sessions: Set[str],
            reach: Reach = _ANY_CONTEXT, on_browser: bool = False,
            streams: Set[str] = frozenset()) -> str | None:
    """Why browserd refuses this command (None: forward it). May rewrite ``params``.

    ``sessions``: the client's sessions; ``on_browser``: the command is for a
    browser session (not a page's); ``streams``: IO handles the client holds.
    """
    return (not_allowed(method)
            or _session_refusal(method, params, sessions)
            or _context_refusal(method, params, reach, on_browser)
            or _stream_refusal(method, params, streams)
            or _download_refusal(method, params, limits)
            or _files_refusal(method, params, limits.uploads)
            or _url_refusal(method, params, limits.policy))


def _session_refusal(method: str, params: dict[str, Any], sessions: Set[str]) -> str | None:
    if method in _FLAT_METHODS and params.get("flatten") is not True and not (
            method == "Target.setAutoAttach" and params.get("autoAttach") is False):
        return (f"{method} needs flatten: true through browserd's CDP gateway (flat sessions "
                "only: send commands with the session's sessionId, not sendMessageToTarget)")
    if method == "Target.detachFromTarget":
        target_session = params.get("sessionId")
        if not isinstance(target_session, str) or target_session not in sessions:
            return "Session with given id not found."
    return None


def _context_refusal(method: str, params: dict[str, Any], reach: Reach,
                     on_browser: bool) -> str | None:
    context = params.get("browserContextId")
    if method in _CONTEXT_METHODS and not reach.sees(context):
        if context is None:
            if method in _PAGE_CONTEXT_METHODS and not on_browser:
                return None  # the page session's own context
            return (f"{method}: this client works in its sessions' browser contexts only; "
                    "name one (browserContextId)")
        return f"{method}: no browser context {str(context)[:64]!r} in this client's scope"
    if method == "Target.disposeBrowserContext" and context not in reach.own:
        return (f"{method}: only a browser context this client created "
                "(Target.createBrowserContext) may be disposed through the gateway")
    if method == "Target.createBrowserContext" and params.get("originsWithUniversalNetworkAccess"):
        return f"{method}: originsWithUniversalNetworkAccess is not allowed through the gateway"
    if tuple(method.split(".", 1)) in _BROWSER_WIDE and on_browser and reach.bound:
        return (f"{method} on a browser session would reach every browser context; a "
                "session-bound client sends it on a page session")
    return None


def _stream_refusal(method: str, params: dict[str, Any], streams: Set[str]) -> str | None:
    if method in ("IO.read", "IO.close") and params.get("handle") not in streams:
        return f"{method}: no stream with given handle among this client's"
    return None


def _download_refusal(method: str, params: dict[str, Any], limits: Limits) -> str | None:
    if method not in DOWNLOAD_METHODS:
        return None
    behavior = params.get("behavior")
    if behavior not in ("deny", "allow", "allowAndName"):
        return (f"{method}: browserd allows 'deny', 'allow' or 'allowAndName' "
                "(downloads stay in browserd's downloads directory)")
    if not limits.downloads_enabled:
        params["behavior"] = "deny"  # browserd's downloads_enabled = false
        params.pop("downloadPath", None)
    elif behavior != "deny":
        params["behavior"] = "allowAndName"  # files named by GUID, as browserd's
        params["downloadPath"] = str(limits.downloads_dir)
    return None


def _files_refusal(method: str, params: dict[str, Any], uploads: Resolve | None) -> str | None:
    """Check and resolve the host paths a command hands to a page (rewritten in place)."""
    if method == "DOM.setFileInputFiles":
        holder, key = params, "files"
    elif method == "Input.dispatchDragEvent" and isinstance(params.get("data"), dict):
        holder, key = params["data"], "files"
        if key not in holder:
            return None
    else:
        return None
    files = holder.get(key)
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return f"Invalid parameters: {key} must be an array of strings"
    if len(files) > MAX_UPLOAD_FILES:
        return f"{method}: at most {MAX_UPLOAD_FILES} files"
    if files and uploads is None:
        return f"{method}: this gateway hands no host files to pages"
    resolved: list[str] = []
    for raw in files:
        try:
            assert uploads is not None
            resolved.append(str(uploads(raw)))
        except BrowserdError as exc:
            return f"{method}: file refused by browserd ({exc.code}): {exc.message}"
    holder[key] = resolved
    return None


def _url_refusal(method: str, params: dict[str, Any], policy: UrlPolicy) -> str | None:
    if method not in _URL_PARAM_METHODS or "url" not in params:
        return None
    url = params["url"]
    if not isinstance(url, str):
        return "Invalid parameters: url must be a string"
    try:
        params["url"] = policy.check(url)
    except BrowserdError as exc:
        return f"URL blocked by browserd ({exc.code}): {exc.message}"
    return None


def defer_first_navigation(method: str, params: dict[str, Any]) -> str | None:
    """For ``Target.createTarget {url}``: make the page blank; the URL to load later.

    (Chromium does not hold a new target's first navigation for a debugger, so
    the navigation guard could not judge it.)
    """
    if method != "Target.createTarget":
        return None
    url = params.get("url")
    if not isinstance(url, str) or url in ("", "about:blank"):
        return None
    params["url"] = "about:blank"
    return url
