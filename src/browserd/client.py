"""A small synchronous client of a running browserd (used by the CLI and scripts).

It reads the same settings and token file as the service. Before the token
is ever sent, the listener must prove it holds the same token: ``GET
/healthz?challenge=<nonce>`` answers ``proof = HMAC-SHA256(token, nonce)``.
A program squatting on the control port cannot produce it, so it never
learns the token. A listener that answers with a proof of another token is
a browserd holding a different token (another ``BROWSERD_HOME``, a rotated
token), and the error (Unavailable) says so, naming the token this client
used (the file and the ``BROWSERD_HOME`` it came from, or ``BROWSERD_TOKEN``);
one that answers no proof is another program.

An ``https://`` control URL is reached over TLS. With a pin (``tls_fingerprint``
/ ``BROWSERD_TLS_FINGERPRINT``: the SHA-256 of the server's certificate, as
``browserd token --remote`` prints it) every connection checks the peer's
certificate against the pin right after the handshake and before any HTTP is
sent (the proof request included): a mismatch is TLS_PIN_MISMATCH. Without a
pin the certificate must verify against the system's trust store (a
self-signed one does not: the refusal says to pin). A plain ``http://`` URL
off loopback is refused (the token would cross the network in clear). The
token is ``BROWSERD_TOKEN`` when set, else the local token file. Nothing here
launches anything.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import os
import re
import secrets
import ssl
from typing import Any
from urllib.parse import urlencode, urlsplit

import orjson

from .config import Settings, is_loopback_host, load_settings
from .errors import BrowserdError, ConfigError, Unavailable
from .paths import Paths
from .tls import check_pin, normalize_fingerprint, pinned_context

__all__ = ["Client", "ClientError", "healthz_proof"]


def healthz_proof(token: str, challenge: str) -> str:
    """HMAC-SHA256(token, "browserd-healthz:" + challenge) in hex."""
    return hmac.new(token.encode(), b"browserd-healthz:" + challenge.encode(),
                    hashlib.sha256).hexdigest()


class ClientError(BrowserdError):
    """An error answered by the service (status and code as sent)."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(str(body.get("error", f"HTTP {status}")), hint=body.get("hint"))
        self.http_status = status
        self.error_code = str(body.get("code", "UNKNOWN"))
        self.body = body

    def to_dict(self) -> dict[str, Any]:
        """The service's own error body (its code, not ours)."""
        return {"error": self.message, "code": self.error_code, **(
            {"hint": self.hint} if self.hint else {})}


class Client:
    """Talks to one browserd. Each call is one HTTP request with a timeout."""

    def __init__(self, base_url: str, token: str, *, timeout: float = 60.0,
                 fingerprint: str | None = None, token_source: str = "the token given") -> None:
        """``fingerprint``: the pin of an https:// server's certificate (None: the system's
        trust store decides); ``token_source``: where ``token`` came from, for messages.
        Raises ConfigError for a bad pin or http:// off loopback."""
        parts = urlsplit(base_url)
        self.host = parts.hostname or "127.0.0.1"
        self.tls = parts.scheme == "https"
        self.port = parts.port or (443 if self.tls else 80)
        if not self.tls and not is_loopback_host(self.host):
            raise ConfigError(
                f"refusing to send the token to {base_url} over plain HTTP (not loopback)",
                hint="use an https:// URL and pin the certificate: BROWSERD_TLS_FINGERPRINT "
                     "from `browserd token --remote` on the server")
        try:
            self.fingerprint = None if fingerprint is None else normalize_fingerprint(fingerprint)
        except ValueError as exc:
            raise ConfigError(f"tls_fingerprint: {exc}") from None
        # (loading the system's CA bundle costs ~30 ms of CPU: only for an https:// URL)
        self._context = None if not self.tls else (
            pinned_context() if self.fingerprint is not None else ssl.create_default_context())
        self.base_url = base_url
        self._token = token
        self.token_source = token_source
        self.timeout = timeout
        self._verified = False
        #: Sent with every request (X-Browserd-Profile / X-Browserd-Session) when set.
        self.profile: str | None = None
        self.session: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings | None = None, paths: Paths | None = None,
                      *, timeout: float = 60.0) -> Client:
        paths = paths or Paths.resolve()
        settings = settings or load_settings(paths)
        token = os.environ.get("BROWSERD_TOKEN", "").strip()
        home = os.environ.get("BROWSERD_HOME")
        source = ("BROWSERD_TOKEN" if token else f"the token file {paths.token_file} "
                  + (f"(BROWSERD_HOME={home})" if home else "(BROWSERD_HOME not set)"))
        try:
            token = token or paths.token_file.read_text().strip()
        except OSError:
            raise Unavailable(
                f"no token at {paths.token_file}: is browserd installed and started?",
                hint="start it with `browserd serve` (or `browserd service install`); for a "
                     "remote browserd set BROWSERD_TOKEN",
            ) from None
        return cls(settings.control_url, token, timeout=timeout,
                   fingerprint=settings.tls_fingerprint, token_source=source)

    def _connect(self) -> http.client.HTTPConnection:
        """A connection; over TLS the certificate checked (pin or trust store) before use."""
        if not self.tls:
            return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        conn = http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout,
                                           context=self._context)
        try:
            conn.connect()
            if self.fingerprint is not None:
                check_pin(conn.sock, self.fingerprint, self.base_url)
        except ssl.SSLCertVerificationError as exc:
            conn.close()
            raise Unavailable(
                f"the certificate of {self.base_url} does not verify against the system's "
                f"trust store ({exc.verify_message}); the token was not sent",
                hint="pin it: set BROWSERD_TLS_FINGERPRINT (or tls_fingerprint) to the "
                     "fingerprint `browserd token --remote` prints on the server") from None
        except OSError as exc:
            conn.close()
            raise Unavailable(f"browserd does not answer at {self.base_url}: {exc}",
                              hint="start it with `browserd serve`") from None
        except BrowserdError:  # TLS_PIN_MISMATCH: closed with nothing sent
            conn.close()
            raise
        return conn

    def _raw(self, method: str, path: str, body: bytes | None, headers: dict[str, str]
             ) -> tuple[int, bytes, str]:
        conn = self._connect()
        try:
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.read(), resp.getheader("Content-Type", "")
        except (OSError, http.client.HTTPException) as exc:
            raise Unavailable(f"browserd does not answer at {self.base_url}: {exc}",
                              hint="start it with `browserd serve`") from None
        finally:
            conn.close()

    def as_owner(self, owner_token: str) -> Client:
        """A client for the owner's routes, sending ``owner_token`` instead.

        The listener is proven with this client's token first (the proof
        is of the agent's token), so the owner token too only ever reaches
        our browserd. Raises what :meth:`verify` raises.
        """
        return self.with_token(owner_token)

    def with_token(self, token: str) -> Client:
        """This client sending ``token`` instead (the owner's, or a minted one), after the
        listener was proven with this client's own token. Raises what :meth:`verify` raises."""
        self.verify()
        other = Client(self.base_url, token, timeout=self.timeout, fingerprint=self.fingerprint,
                       token_source="a token of the person's or minted")
        other._verified = True
        other.profile, other.session = self.profile, self.session
        return other

    def verify(self) -> None:
        """Prove the listener is our browserd before sending it the token."""
        if self._verified:
            return
        nonce = secrets.token_hex(16)
        status, data, _ = self._raw("GET", f"/healthz?challenge={nonce}", None,
                                    {"Host": f"{self.host}:{self.port}"})
        try:
            body = orjson.loads(data)
        except orjson.JSONDecodeError:
            body = {}
        proof = body.get("proof") if isinstance(body, dict) else None
        if status == 200 and isinstance(proof, str) and re.fullmatch(r"[0-9a-f]{64}", proof) \
                and not hmac.compare_digest(proof, healthz_proof(self._token, nonce)):
            raise Unavailable(
                f"the listener at {self.base_url} is not this browserd: it is a browserd "
                f"holding a different token than {self.token_source}; the token was not sent",
                hint="run the command with the service's BROWSERD_HOME (or its token in "
                     "BROWSERD_TOKEN); after `browserd token --rotate`, restart the service")
        if status != 200 or not isinstance(proof, str) or not hmac.compare_digest(
            proof, healthz_proof(self._token, nonce)
        ):
            raise Unavailable(
                f"the listener at {self.base_url} is not this browserd (it could not prove "
                "it holds our token); the token was not sent",
                hint="another program holds the control port; stop it or change control_url",
            )
        self._verified = True

    def request(self, method: str, path: str, payload: dict[str, Any] | None = None,
                *, query: dict[str, Any] | None = None, keep_nulls: bool = False) -> Any:
        """Send one request; returns the decoded JSON (or bytes), raises ClientError.

        None values are left out of ``payload`` unless ``keep_nulls`` (then they
        are sent as JSON null: "clear this" for the fields that take it).
        """
        self.verify()
        headers = {"Host": f"{self.host}:{self.port}",
                   "Authorization": f"Bearer {self._token}"}
        if self.profile:
            headers["X-Browserd-Profile"] = self.profile
        if self.session:
            headers["X-Browserd-Session"] = self.session
        body = None
        if payload is not None:
            body = orjson.dumps(payload if keep_nulls else
                                {k: v for k, v in payload.items() if v is not None})
            headers["Content-Type"] = "application/json"
        if query:
            clean = {k: (str(v).lower() if isinstance(v, bool) else v)
                     for k, v in query.items() if v is not None}
            path = f"{path}?{urlencode(clean)}"
        status, data, ctype = self._raw(method, path, body, headers)
        if not ctype.startswith("application/json"):
            if status >= 400:
                raise ClientError(status, {"error": data[:200].decode(errors="replace")})
            return data
        decoded = orjson.loads(data) if data else {}
        if status >= 400:
            error: dict[str, Any] = decoded if isinstance(decoded, dict) else {}
            if status == 401:  # which token was refused (never the token itself)
                error = {**error, "hint": f"{error.get('hint') or 'a token was refused'} "
                                          f"(the token sent: {self.token_source})"}
            raise ClientError(status, error)
        return decoded

    def get(self, path: str, **query: Any) -> Any:
        return self.request("GET", path, query=query)

    def post(self, path: str, **payload: Any) -> Any:
        return self.request("POST", path, payload)
