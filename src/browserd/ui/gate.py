"""The ops page's part of the Guard: who may use ``/ui``.

The Guard (:mod:`browserd.http.guard`) checks Host and Origin for every
request, then hands paths under ``/ui`` to :meth:`UiGate.check` instead of
checking the bearer token: the ops page is for a person, whose browser has
a session (:mod:`browserd.ui.sessions`), never the agent's token. So:

- the bearer token never opens ``/ui`` (an ``Authorization`` header is
  ignored here), and the UI cookie never opens an agent route (the Guard
  only looks at the bearer token there);
- the page shell, its script and style sheet and ``/ui/login`` are open
  (``GET``/``HEAD``: they hold no data; login needs its one-time code);
- everything else needs the session cookie *and* the page's key header
  (WebSocket: the ``key.<key>`` subprotocol); without either it is 401;
- a change (any method but GET/HEAD) and every WebSocket also need an
  ``Origin`` header, which the Guard has already checked is our own (403
  otherwise). Together with the key header that is the CSRF defence.

On success the session is put in the ASGI scope (``browserd.ui_session``)
for the handler. Nothing here does I/O; errors are returned, not raised.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping
from typing import Any

from ..errors import BrowserdError, Forbidden, Unauthorized
from .sessions import COOKIE_NAME, UiSession, UiSessions

__all__ = ["KEY_HEADER", "OPEN_PATHS", "SCOPE_KEY", "UI_PREFIX", "WS_KEY_PREFIX",
           "WS_PROTOCOL", "UiGate", "cookie_value", "session_of"]

UI_PREFIX = "/ui"
OPEN_PATHS = frozenset({"/ui", "/ui/", "/ui/app.js", "/ui/app.css", "/ui/login"})
KEY_HEADER = "x-browserd-ui-key"
WS_PROTOCOL = "browserd-ui"
WS_KEY_PREFIX = "key."
SCOPE_KEY = "browserd.ui_session"
_READS = frozenset({"GET", "HEAD"})
_LOGIN_HINT = "run `browserd ui` for a one-time login link"


def _headers(scope: MutableMapping[str, Any], name: bytes) -> list[str]:
    return [bytes(v).decode("latin-1") for n, v in scope.get("headers", ())
            if bytes(n).lower() == name]


def cookie_value(cookie_headers: Iterable[str], name: str) -> str | None:
    """The value of cookie ``name`` in ``Cookie`` headers (None when absent or repeated)."""
    found: list[str] = []
    for header in cookie_headers:
        for part in header.split(";"):
            key, sep, value = part.strip().partition("=")
            if sep and key == name:
                found.append(value.strip().strip('"'))
    return found[0] if len(found) == 1 else None


def session_of(scope: Mapping[str, object]) -> UiSession | None:
    """The session the gate let through for this request, if any."""
    session = scope.get(SCOPE_KEY)
    return session if isinstance(session, UiSession) else None


class UiGate:
    """Checks ``/ui`` requests against the service's :class:`UiSessions`."""

    def __init__(self, sessions: UiSessions) -> None:
        self._sessions = sessions

    @staticmethod
    def applies(path: str) -> bool:
        """True for ``/ui`` and everything under ``/ui/``."""
        return path == UI_PREFIX or path.startswith(UI_PREFIX + "/")

    def check(self, scope: MutableMapping[str, Any]) -> BrowserdError | None:
        """None to let the request through (module docstring), else the refusal."""
        websocket = scope.get("type") == "websocket"
        method = "WEBSOCKET" if websocket else str(scope.get("method", ""))
        path = str(scope.get("path", ""))
        if method in _READS and path in OPEN_PATHS:
            return None
        session_id = cookie_value(_headers(scope, b"cookie"), COOKIE_NAME)
        key = self._ws_key(scope) if websocket else self._header_key(scope)
        if session_id is None or key is None:
            return Unauthorized("the ops page needs a login", hint=_LOGIN_HINT)
        session = self._sessions.lookup(session_id, key)
        if session is None:
            return Unauthorized("this ops page session is not valid (expired or logged out)",
                                hint=_LOGIN_HINT)
        if method not in _READS and not _headers(scope, b"origin"):
            return Forbidden("changes on the ops page must come from the page itself",
                             hint="the browser sends Origin; a script must send ours too")
        scope[SCOPE_KEY] = session
        return None

    @staticmethod
    def _header_key(scope: MutableMapping[str, Any]) -> str | None:
        values = _headers(scope, KEY_HEADER.encode())
        return values[0].strip() if len(values) == 1 else None

    @staticmethod
    def _ws_key(scope: MutableMapping[str, Any]) -> str | None:
        protocols = [p.strip() for p in scope.get("subprotocols", ())]
        keys = [p[len(WS_KEY_PREFIX):] for p in protocols if p.startswith(WS_KEY_PREFIX)]
        return keys[0] if len(keys) == 1 and WS_PROTOCOL in protocols else None
