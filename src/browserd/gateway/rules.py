"""What a CDP gateway client may send, and how browserd rewrites it on the way.

``Target.createTarget`` and ``Page.navigate`` URLs pass the URL policy;
commands that would end the browser or hand CDP to a page
(``Browser.close``, ``Browser.crash``, ``Target.exposeDevToolsProtocol`` …)
are refused; ``Target.detachFromTarget`` / ``sendMessageToTarget`` must name
a session of the client's own. ``Browser.setDownloadBehavior`` /
``Page.setDownloadBehavior`` may deny downloads or allow them into browserd's
downloads directory only (any ``downloadPath`` is replaced by it, ``allow``
becomes ``allowAndName`` so files are named by their GUID as browserd's own
are, and with ``downloads_enabled = false`` every behavior becomes ``deny``;
``default``, which means the user's ``~/Downloads``, is refused): a client
must not turn the browser into a file writer anywhere its user can write.

Plain functions of the command and the client's state; no I/O, never raise.
"""

from __future__ import annotations

from collections.abc import Set
from pathlib import Path
from typing import Any

from ..errors import BrowserdError
from ..urlpolicy import UrlPolicy

__all__ = ["DOWNLOAD_METHODS", "REFUSED_METHODS", "defer_first_navigation", "refusal"]

#: Commands a gateway client may not send: browserd owns the browser's life,
#: and a page must never be handed a CDP binding.
REFUSED_METHODS = frozenset({
    "Browser.close",
    "Browser.crash",
    "Browser.crashGpuProcess",
    "Target.exposeDevToolsProtocol",
})
#: Commands that set where downloads go (kept in browserd's downloads directory).
DOWNLOAD_METHODS = frozenset({"Browser.setDownloadBehavior", "Page.setDownloadBehavior"})
#: Commands whose ``params.sessionId`` must be one of the client's sessions.
_SESSION_PARAM_METHODS = frozenset({"Target.detachFromTarget", "Target.sendMessageToTarget"})
_URL_PARAM_METHODS = frozenset({"Target.createTarget", "Page.navigate"})


def refusal(method: str, params: dict[str, Any], *, sessions: Set[str], policy: UrlPolicy,
            downloads_dir: Path, downloads_enabled: bool) -> str | None:
    """Why browserd refuses this command (None: forward it). May rewrite ``params``."""
    if method in REFUSED_METHODS:
        return (f"{method} is not allowed through browserd's CDP gateway "
                "(browserd owns the browser's lifetime; use its API)")
    if method in _SESSION_PARAM_METHODS:
        target_session = params.get("sessionId")
        if not isinstance(target_session, str) or target_session not in sessions:
            return "Session with given id not found."
    if method in DOWNLOAD_METHODS:
        behavior = params.get("behavior")
        if behavior not in ("deny", "allow", "allowAndName"):
            return (f"{method}: browserd allows 'deny', 'allow' or 'allowAndName' "
                    "(downloads stay in browserd's downloads directory)")
        if not downloads_enabled:
            params["behavior"] = "deny"  # browserd's downloads_enabled = false
            params.pop("downloadPath", None)
        elif behavior != "deny":
            params["behavior"] = "allowAndName"  # files named by GUID, as browserd's
            params["downloadPath"] = str(downloads_dir)
    if method in _URL_PARAM_METHODS and "url" in params:
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
