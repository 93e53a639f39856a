"""TLS for the control API and the CDP gateway; certificate pins for the client.

Server side. TLS is on when ``tls = "self-signed"`` or ``tls_cert`` and
``tls_key`` are set; then ``control_url`` must be ``https://`` (and an
``https://`` control URL needs one of them): :func:`check_tls_settings`,
called by the bind policy at start. :func:`server_tls` gives the files
hypercorn loads (``certfile``/``keyfile``) for both listeners:

- ``self-signed``: ``<config>/tls/self-signed.pem`` holds the private key
  (EC P-256) and the certificate in one file, mode 0600 in a 0700 directory.
  It is made on first use (first start, or ``browserd token --remote``) and
  kept: the same certificate, so the same pin, on every later start. It
  appears atomically (written to a temporary file, hard-linked into place: a
  process that loses the race uses the winner's). Its names (SAN): the
  control host, ``localhost``, ``127.0.0.1`` and ``::1``. To make a new one,
  delete the file (every client then needs the new pin).
- ``tls_cert``/``tls_key``: files of the operator's (a chain may follow the
  certificate). They must load together; a key file any user may read is
  refused.

Client side. The pin is the SHA-256 of the served certificate's DER
encoding (:func:`fingerprint`: colon-separated upper-case hex, as ``openssl
x509 -noout -fingerprint -sha256`` prints it; :func:`normalize_fingerprint`
accepts it with or without colons, in either case). :func:`pinned_context`
turns certificate verification off and :func:`check_pin` compares the peer's
certificate to the pin right after the handshake, before a byte of HTTP is
sent; a mismatch is :class:`~browserd.errors.TlsPinMismatch`.

Errors are :class:`~browserd.errors.ConfigError` naming the file; nothing
here logs key material.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import hmac
import ipaddress
import logging
import os
import re
import secrets
import ssl
import stat
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import attrs

from .config import Settings
from .errors import ConfigError, TlsPinMismatch
from .paths import Paths, ensure_private_dir
from .privatefile import read_private

__all__ = [
    "SELF_SIGNED", "TlsFiles", "check_pin", "check_tls_settings", "fingerprint",
    "make_self_signed", "normalize_fingerprint", "pem_fingerprint", "pinned_context",
    "remote_credentials", "self_signed_path", "served_fingerprint", "server_tls", "tls_enabled",
]

log = logging.getLogger(__name__)

SELF_SIGNED = "self-signed"
SELF_SIGNED_DAYS = 3650  # pinned, so its expiry protects nothing; browsers ask anyway
_HEX64 = re.compile(r"[0-9a-f]{64}")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


@attrs.frozen
class TlsFiles:
    """What hypercorn loads: ``certfile``, ``keyfile`` (one file for a self-signed pair)."""

    cert: Path
    key: Path

    def apply(self, config: Any) -> None:
        """Set a hypercorn Config's ``certfile``/``keyfile`` (TLS on its binds)."""
        config.certfile, config.keyfile = str(self.cert), str(self.key)


# -- fingerprints ------------------------------------------------------------------


def fingerprint(der: bytes) -> str:
    """SHA-256 of a DER certificate: ``AB:CD:…`` (32 colon-separated upper-case bytes)."""
    return ":".join(f"{b:02X}" for b in hashlib.sha256(der).digest())


def normalize_fingerprint(text: str) -> str:
    """A pin as 64 lower-case hex digits; ValueError for anything but a SHA-256 fingerprint."""
    plain = text.strip().replace(":", "").lower()
    if not _HEX64.fullmatch(plain):
        raise ValueError("a TLS fingerprint is the SHA-256 of the certificate: 64 hex digits, "
                         "colons allowed (`browserd token --remote` prints it)")
    return plain


def pem_fingerprint(pem: bytes) -> str:
    """:func:`fingerprint` of the first certificate in PEM data (the served one)."""
    match = re.search(rb"-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----", pem)
    if match is None:
        raise ValueError("no PEM certificate found")
    return fingerprint(ssl.PEM_cert_to_DER_cert(match.group().decode("ascii")))


def pinned_context() -> ssl.SSLContext:
    """A client context that checks nothing itself: :func:`check_pin` decides, after it."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def check_pin(sock: Any, pin: str, where: str) -> None:
    """Raise TlsPinMismatch unless ``sock``'s peer certificate has fingerprint ``pin``."""
    der = sock.getpeercert(binary_form=True) if sock is not None else None
    seen = hashlib.sha256(der).hexdigest() if der else ""
    if not hmac.compare_digest(seen, normalize_fingerprint(pin)):
        raise TlsPinMismatch(
            f"the certificate at {where} is not the pinned one (its SHA-256 fingerprint is "
            f"{fingerprint(der) if der else 'absent'}); nothing was sent, not even the token's "
            "proof request")


# -- the server's files ------------------------------------------------------------


def tls_enabled(settings: Settings) -> bool:
    return settings.tls == SELF_SIGNED or settings.tls_cert is not None


def check_tls_settings(settings: Settings) -> None:
    """The serving rules: TLS material and an ``https://`` control URL go together."""
    https = urlsplit(settings.control_url).scheme == "https"
    if https and not tls_enabled(settings):
        raise ConfigError(
            f"control_url {settings.control_url} is https:// but no certificate is set",
            hint='set tls = "self-signed" (made and kept under <config>/tls/), or tls_cert '
                 "and tls_key")
    if tls_enabled(settings) and not https:
        raise ConfigError(
            f"TLS is set (tls / tls_cert) but control_url {settings.control_url} is http://",
            hint="give control_url the https:// scheme (clients read it to know the scheme)")


def server_tls(settings: Settings, paths: Paths) -> TlsFiles | None:
    """The files to serve TLS with (None: plain HTTP); the self-signed pair made if missing.

    Raises ConfigError for files that do not load, a key others may read, or a
    self-signed file that is not a private file of ours.
    """
    if settings.tls == SELF_SIGNED:
        path = ensure_self_signed(paths, settings.control_host)
        return TlsFiles(path, path)
    if settings.tls_cert is None or settings.tls_key is None:
        return None
    cert, key = Path(settings.tls_cert).expanduser(), Path(settings.tls_key).expanduser()
    try:
        mode = os.stat(key).st_mode
    except OSError as exc:
        raise ConfigError(f"cannot read tls_key {key}: {exc.strerror}") from None
    if mode & stat.S_IROTH:
        raise ConfigError(f"tls_key {key} is readable by every user; refusing to serve with it",
                          hint=f"chmod o-rwx {key} (0600, or 0640 for a group such as a "
                               "Kubernetes fsGroup)")
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(str(cert), str(key))
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"tls_cert {cert} and tls_key {key} do not load together: {exc}",
                          hint="PEM files: the certificate (then its chain) and its private "
                               "key, unencrypted") from None
    return TlsFiles(cert, key)


def served_fingerprint(files: TlsFiles) -> str:
    """The pin of the certificate in ``files`` (ConfigError if it cannot be read)."""
    try:
        return pem_fingerprint((read_private(files.cert) or b"") if files.cert == files.key
                               else files.cert.read_bytes())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the certificate {files.cert}: {exc}") from None


def self_signed_path(paths: Paths) -> Path:
    return paths.config_dir / "tls" / "self-signed.pem"


def ensure_self_signed(paths: Paths, host: str) -> Path:
    """``<config>/tls/self-signed.pem``, made now if missing; checked private (0600) if not."""
    path = self_signed_path(paths)
    ensure_private_dir(path.parent)
    if read_private(path) is None:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | _NOFOLLOW, 0o600)
            try:
                os.write(fd, make_self_signed(host))
                os.fsync(fd)
            finally:
                os.close(fd)
            with contextlib.suppress(FileExistsError):  # lost a race: the winner's is kept
                os.link(tmp, path)
        except OSError as exc:
            raise ConfigError(f"cannot create {path}: {exc.strerror}") from None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        log.info("made a self-signed TLS certificate at %s", path)
    data = read_private(path) or b""
    if host not in _pem_names(data):
        log.warning("the self-signed certificate %s does not name %s (made for another "
                    "control_url); pinned clients do not mind; delete it for a new one", path,
                    host)
    return path


def make_self_signed(host: str) -> bytes:
    """A new EC P-256 key and a self-signed certificate for ``host`` and loopback (PEM)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.DNSName("localhost")]
    for literal in dict.fromkeys(("127.0.0.1", "::1", host.strip("[]"))):
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(literal)))
        except ValueError:
            if literal != "localhost":
                names.append(x509.DNSName(literal))
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"browserd {host}"[:64])])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject).issuer_name(subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=SELF_SIGNED_DAYS))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()) + cert.public_bytes(
                                 serialization.Encoding.PEM)


def _pem_names(pem: bytes) -> set[str]:
    """The SAN entries (as text) of the first certificate in ``pem``; empty if unreadable."""
    from cryptography import x509

    try:
        cert = x509.load_pem_x509_certificate(pem)
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (ValueError, x509.ExtensionNotFound):
        return set()
    return {str(v) for v in san.get_values_for_type(x509.DNSName)} | {
        str(v) for v in san.get_values_for_type(x509.IPAddress)}


def remote_credentials(settings: Settings, paths: Paths, token: str) -> dict[str, str]:
    """``{controlUrl, token, fingerprint}``: what a remote client needs (``token --remote``).

    Raises ConfigError when this service does not serve TLS.
    """
    check_tls_settings(settings)
    files = server_tls(settings, paths)
    if files is None:
        raise ConfigError("browserd serves plain HTTP here: a remote client needs TLS",
                          hint='use an https:// control_url and tls = "self-signed" (or '
                               "tls_cert and tls_key), restart, then run this again")
    return {"controlUrl": settings.control_url, "token": token,
            "fingerprint": served_fingerprint(files)}
