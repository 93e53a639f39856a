"""Login codes and sessions of the ops page (``/ui``).

A person logs in with a one-time code: ``browserd ui`` asks the service
(with the agent's token) for one and prints the URL ``/ui/login?code=…``.
A code is single use and valid for :data:`CODE_TTL_S`; redeeming it makes a
:class:`UiSession` with two secrets:

- ``session_id``: the value of the ``browserd_ui`` cookie (HttpOnly,
  SameSite=Strict, Path=/ui);
- ``key``: handed to the page once, in the fragment of the redirect after
  login (never sent to a server by the browser), kept by the page in its
  origin's ``localStorage`` and sent with every ``/ui`` request
  (``X-Browserd-UI-Key``, or the WebSocket subprotocol ``key.<key>``).

Both are required. The key is the CSRF token (a page elsewhere cannot set
the header without a refused CORS preflight) and it is what a cookie alone
lacks: cookies are not isolated by port, so another program on this host's
loopback could receive the cookie from the person's browser, but not the
key, which lives in storage only our origin (scheme, host *and port*) reads.

Only hashes of codes and session ids are kept; keys are compared in
constant time. Everything is plain state on the trio thread; the clock is
injectable (tests move it by hand).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable

import attrs

__all__ = ["CODE_TTL_S", "COOKIE_NAME", "MAX_CODES", "MAX_SESSIONS", "SESSION_TTL_S",
           "LoginCode", "UiSession", "UiSessions"]

CODE_TTL_S = 60.0
SESSION_TTL_S = 12 * 3600.0
MAX_CODES = 16
"""Unredeemed codes kept; the oldest goes first."""
MAX_SESSIONS = 32
"""Sessions kept; logging in beyond that ends the oldest."""
COOKIE_NAME = "browserd_ui"


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).digest()


@attrs.frozen(kw_only=True)
class LoginCode:
    """A fresh one-time code and how long it is valid."""

    code: str = attrs.field(repr=False)
    expires_in_s: float


@attrs.frozen(kw_only=True)
class UiSession:
    """One logged-in person. ``label`` is a non-secret id for logs (``ui:<label>``)."""

    session_id: str = attrs.field(repr=False)
    key: str = attrs.field(repr=False)
    label: str
    created: float
    expires: float

    @property
    def who(self) -> str:
        return f"ui:{self.label}"


class UiSessions:
    """The codes and sessions of one service."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic,
                 code_ttl_s: float = CODE_TTL_S, session_ttl_s: float = SESSION_TTL_S) -> None:
        self._clock = clock
        self._code_ttl = code_ttl_s
        self._session_ttl = session_ttl_s
        self._codes: OrderedDict[bytes, float] = OrderedDict()  # digest -> expiry
        self._sessions: OrderedDict[bytes, UiSession] = OrderedDict()  # digest(id) -> session

    def issue_code(self) -> LoginCode:
        """A new single-use login code, valid for ``code_ttl_s``."""
        self._expire()
        code = secrets.token_urlsafe(24)
        self._codes[_digest(code)] = self._clock() + self._code_ttl
        while len(self._codes) > MAX_CODES:
            self._codes.popitem(last=False)
        return LoginCode(code=code, expires_in_s=self._code_ttl)

    def redeem(self, code: str) -> UiSession | None:
        """A new session for a valid ``code`` (which is used up); None otherwise.

        None for an unknown, already used or expired code, alike.
        """
        self._expire()
        if not code or len(code) > 200:
            return None
        expiry = self._codes.pop(_digest(code), None)
        if expiry is None or expiry <= self._clock():
            return None
        now = self._clock()
        session_id = secrets.token_urlsafe(32)
        session = UiSession(session_id=session_id, key=secrets.token_urlsafe(32),
                            label=hashlib.sha256(session_id.encode()).hexdigest()[:8],
                            created=now, expires=now + self._session_ttl)
        self._sessions[_digest(session_id)] = session
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)
        return session

    def lookup(self, session_id: str, key: str) -> UiSession | None:
        """The live session whose cookie is ``session_id`` and key is ``key``; else None."""
        if not session_id or not key or len(session_id) > 200 or len(key) > 200:
            return None
        session = self._sessions.get(_digest(session_id))
        if session is None:
            return None
        if session.expires <= self._clock():
            self._sessions.pop(_digest(session_id), None)
            return None
        if not hmac.compare_digest(session.key.encode(), key.encode("utf-8", "surrogatepass")):
            return None
        return session

    def end(self, session: UiSession) -> None:
        """Log ``session`` out (its cookie and key stop working at once)."""
        self._sessions.pop(_digest(session.session_id), None)

    def count(self) -> int:
        """Live sessions."""
        self._expire()
        return len(self._sessions)

    def _expire(self) -> None:
        now = self._clock()
        for digest in [d for d, e in self._codes.items() if e <= now]:
            del self._codes[digest]
        for digest in [d for d, s in self._sessions.items() if s.expires <= now]:
            del self._sessions[digest]
