"""TLS: the self-signed certificate, the settings, the bind policy, the Guard over TLS,
``token --remote``, and the client's pin (against fake TLS listeners that record what
reached them, so "nothing was sent" is observed, not assumed)."""

from __future__ import annotations

import hashlib
import http.server
import os
import socket
import ssl
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from browserd.cli import main as cli
from browserd.client import Client, healthz_proof
from browserd.config import Settings, load_settings
from browserd.errors import ConfigError, TlsPinMismatch, Unavailable
from browserd.http.guard import Guard, Message, Scope
from browserd.paths import Paths
from browserd.service import check_bind_policy
from browserd.tls import (
    ensure_self_signed,
    fingerprint,
    make_self_signed,
    normalize_fingerprint,
    pem_fingerprint,
    self_signed_path,
    served_fingerprint,
    server_tls,
)

TOKEN = "t" * 43


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    return Paths.resolve({"BROWSERD_HOME": str(tmp_path / "home")})


cert_of = x509.load_pem_x509_certificate


# -- the self-signed certificate ---------------------------------------------------


def test_self_signed_names_the_host_and_loopback_and_is_a_server_leaf() -> None:
    cert = cert_of(make_self_signed("browserd-0.browserd.ns.svc.cluster.local"))
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(san.get_values_for_type(x509.DNSName)) == {
        "localhost", "browserd-0.browserd.ns.svc.cluster.local"}
    assert {str(a) for a in san.get_values_for_type(x509.IPAddress)} == {"127.0.0.1", "::1"}
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert isinstance(cert.public_key(), ec.EllipticCurvePublicKey)
    ip_cert = cert_of(make_self_signed("10.1.2.3"))
    ips = ip_cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "10.1.2.3" in {str(a) for a in ips.get_values_for_type(x509.IPAddress)}


def test_self_signed_is_made_private_once_and_then_kept(paths: Paths) -> None:
    path = ensure_self_signed(paths, "127.0.0.1")
    assert path == self_signed_path(paths) == paths.config_dir / "tls" / "self-signed.pem"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    first = path.read_bytes()
    assert b"PRIVATE KEY" in first and b"CERTIFICATE" in first
    assert ensure_self_signed(paths, "127.0.0.1").read_bytes() == first  # reused, same pin
    # What hypercorn does with it: the one file is both certfile and keyfile.
    files = server_tls(Settings(control_url="https://127.0.0.1:18791", tls="self-signed"), paths)
    assert files is not None and files.cert == files.key == path
    ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(str(path), str(path))


def test_concurrent_first_starts_keep_one_certificate(paths: Paths) -> None:
    seen: list[bytes] = []

    def make() -> None:
        seen.append(ensure_self_signed(paths, "127.0.0.1").read_bytes())

    threads = [threading.Thread(target=make) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 6 and len(set(seen)) == 1
    assert [p.name for p in (paths.config_dir / "tls").iterdir()] == ["self-signed.pem"]


def test_a_self_signed_file_others_may_read_is_refused(paths: Paths) -> None:
    path = ensure_self_signed(paths, "127.0.0.1")
    path.chmod(0o644)
    with pytest.raises(ConfigError, match="0600"):
        ensure_self_signed(paths, "127.0.0.1")


# -- fingerprints --------------------------------------------------------------------


def test_fingerprint_is_the_sha256_of_the_der_colon_separated_upper_case() -> None:
    pem = make_self_signed("127.0.0.1")
    cert = cert_of(pem)
    want = cert.fingerprint(hashes.SHA256()).hex().upper()
    got = pem_fingerprint(pem)
    assert got.replace(":", "") == want and len(got) == 95 and got.count(":") == 31
    assert fingerprint(cert.public_bytes(serialization.Encoding.DER)) == got


@pytest.mark.parametrize("form", [str.upper, str.lower, lambda s: s.replace(":", "")])
def test_a_pin_is_accepted_with_or_without_colons_in_either_case(
        form: Callable[[str], str]) -> None:
    pin = pem_fingerprint(make_self_signed("127.0.0.1"))
    assert normalize_fingerprint(form(pin)) == pin.replace(":", "").lower()


@pytest.mark.parametrize("bad", ["", "ab" * 31, "zz" * 32, "ab" * 33, "sha256:" + "ab" * 32])
def test_a_pin_that_is_not_a_sha256_is_refused(bad: str, paths: Paths) -> None:
    with pytest.raises(ValueError):
        normalize_fingerprint(bad)
    with pytest.raises(ConfigError, match="tls_fingerprint"):
        Client("https://127.0.0.1:1", TOKEN, fingerprint=bad)
    if bad:
        with pytest.raises(ConfigError, match="tls_fingerprint"):
            load_settings(paths, environ={"BROWSERD_TLS_FINGERPRINT": bad})


# -- settings and the bind policy ----------------------------------------------------


def test_https_control_url_and_tls_settings_load(paths: Paths, tmp_path: Path) -> None:
    s = load_settings(paths, environ={"BROWSERD_CONTROL_URL": "https://127.0.0.1:18791",
                                      "BROWSERD_TLS": "self-signed"})
    assert (s.control_host, s.control_port, s.tls) == ("127.0.0.1", 18791, "self-signed")
    files = load_settings(paths, environ={
        "BROWSERD_CONTROL_URL": "https://127.0.0.1:18791",
        "BROWSERD_TLS_CERT": str(tmp_path / "c.pem"), "BROWSERD_TLS_KEY": str(tmp_path / "k")})
    assert files.tls_cert == str(tmp_path / "c.pem")


@pytest.mark.parametrize(("env", "key"), [
    ({"BROWSERD_TLS": "yes"}, "tls"),
    ({"BROWSERD_TLS_CERT": "/etc/c.pem"}, "tls_key"),
    ({"BROWSERD_TLS_KEY": "/etc/k.pem"}, "tls_cert"),
    ({"BROWSERD_TLS": "self-signed", "BROWSERD_TLS_CERT": "/c", "BROWSERD_TLS_KEY": "/k"}, "tls"),
    ({"BROWSERD_TLS_CERT": "c.pem", "BROWSERD_TLS_KEY": "/k.pem"}, "tls_cert"),
    ({"BROWSERD_CONTROL_URL": "ftp://127.0.0.1:1"}, "control_url"),
])
def test_bad_tls_settings_name_their_key(paths: Paths, env: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigError, match=f"setting '{key}'"):
        load_settings(paths, environ=env)


def settings(url: str, **kw: Any) -> Settings:
    return Settings(control_url=url, **kw)


@pytest.mark.parametrize("host", ["10.0.0.7", "0.0.0.0", "[::]", "browserd.example"])
def test_plain_http_off_loopback_refuses_to_start_even_with_the_opt_in(host: str) -> None:
    with pytest.raises(ConfigError, match="plain HTTP") as caught:
        check_bind_policy(settings(f"http://{host}:18791", allow_remote_control=True))
    assert caught.value.hint is not None and 'tls = "self-signed"' in caught.value.hint
    assert "https://" in caught.value.hint
    with pytest.raises(ConfigError, match="non-loopback") as no_opt_in:  # TLS or not
        check_bind_policy(settings(f"https://{host}:18791", tls="self-signed"))
    assert no_opt_in.value.hint is not None and "allow_remote_control" in no_opt_in.value.hint


@pytest.mark.parametrize("s", [
    settings("https://10.0.0.7:18791", allow_remote_control=True, tls="self-signed"),
    settings("https://10.0.0.7:18791", allow_remote_control=True, tls_cert="/c", tls_key="/k"),
    settings("https://127.0.0.1:18791", tls="self-signed"),
    settings("http://127.0.0.1:18791"),
])
def test_tls_off_loopback_with_the_opt_in_and_loopback_either_way_may_start(s: Settings) -> None:
    check_bind_policy(s)


@pytest.mark.parametrize(("s", "words"), [
    (settings("https://127.0.0.1:18791"), "no certificate"),
    (settings("http://127.0.0.1:18791", tls="self-signed"), "is http://"),
])
def test_tls_and_https_go_together(s: Settings, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        check_bind_policy(s)


# -- the operator's certificate files ------------------------------------------------


def write_pair(tmp_path: Path, host: str = "127.0.0.1") -> tuple[Path, Path]:
    pem = make_self_signed(host)
    cut = pem.index(b"-----BEGIN CERTIFICATE-----")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.write_bytes(pem[cut:])
    key.write_bytes(pem[:cut])
    key.chmod(0o640)
    return cert, key


def test_operator_files_are_served_and_pinned_by_their_certificate(
        paths: Paths, tmp_path: Path) -> None:
    cert, key = write_pair(tmp_path)
    files = server_tls(settings("https://127.0.0.1:1", tls_cert=str(cert), tls_key=str(key)),
                       paths)
    assert files is not None and (files.cert, files.key) == (cert, key)
    assert served_fingerprint(files) == pem_fingerprint(cert.read_bytes())
    assert not (paths.config_dir / "tls").exists()  # nothing self-signed was made


def test_operator_files_that_do_not_match_or_a_world_readable_key_are_refused(
        paths: Paths, tmp_path: Path) -> None:
    cert, key = write_pair(tmp_path)
    (tmp_path / "other").mkdir()
    _, other_key = write_pair(tmp_path / "other")
    with pytest.raises(ConfigError, match="do not load together"):
        server_tls(settings("https://127.0.0.1:1", tls_cert=str(cert), tls_key=str(other_key)),
                   paths)
    key.chmod(0o644)
    with pytest.raises(ConfigError, match="readable by every user"):
        server_tls(settings("https://127.0.0.1:1", tls_cert=str(cert), tls_key=str(key)), paths)
    assert server_tls(settings("http://127.0.0.1:1"), paths) is None


# -- the Guard over TLS --------------------------------------------------------------


async def guard_status(guard: Guard, scheme: str, headers: list[tuple[str, str]]) -> int:
    scope: Scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "scheme": scheme,
        "method": "POST", "path": "/tabs", "raw_path": b"/tabs", "query_string": b"",
        "root_path": "", "client": ("127.0.0.1", 5), "server": ("127.0.0.1", 1),
        "headers": [(n.encode(), v.encode()) for n, v in
                    [*headers, ("authorization", f"Bearer {TOKEN}")]],
    }
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    await guard(scope, receive, send)
    return int(sent[0]["status"])


async def app(scope: Scope, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b""})


@pytest.mark.parametrize(("scheme", "origin", "status"), [
    ("https", "https://127.0.0.1:18791", 200),
    ("https", "https://LOCALHOST:18791", 200),
    ("https", "https://[::1]:18791", 200),
    ("https", "http://127.0.0.1:18791", 403),  # not how a page reaches a TLS port
    ("https", "https://127.0.0.1:18792", 403),
    ("https", "https://evil.test", 403),
    ("http", "https://127.0.0.1:18791", 403),  # nor the other way round
    ("http", "http://127.0.0.1:18791", 200),
])
async def test_the_origin_must_have_the_scheme_of_the_connection(
        scheme: str, origin: str, status: int) -> None:
    guard = Guard(app, token=TOKEN, control_port=18791)
    assert await guard_status(guard, scheme, [("host", "127.0.0.1:18791"),
                                              ("origin", origin)]) == status


async def test_a_remote_tls_host_is_accepted_with_its_https_origin() -> None:
    guard = Guard(app, token=TOKEN, control_port=18791, extra_hosts=["10.0.0.7:18791"])
    host = [("host", "10.0.0.7:18791")]
    assert await guard_status(guard, "https", [*host, ("origin", "https://10.0.0.7:18791")]) == 200
    assert await guard_status(guard, "https", [*host, ("origin", "http://10.0.0.7:18791")]) == 403
    assert await guard_status(guard, "https", [("host", "10.0.0.8:18791")]) == 421


async def test_port_443_may_be_left_out_over_tls_only() -> None:
    guard = Guard(app, token=TOKEN, control_port=443)
    assert await guard_status(guard, "https", [("host", "127.0.0.1"),
                                               ("origin", "https://localhost")]) == 200
    assert await guard_status(guard, "https", [("host", "127.0.0.1:443")]) == 200
    assert await guard_status(guard, "http", [("host", "127.0.0.1")]) == 421


# -- browserd token --remote ---------------------------------------------------------


def test_token_remote_prints_url_token_and_the_served_fingerprint(
        paths: Paths, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = str(paths.config_dir.parent)
    for name in [n for n in os.environ if n.startswith("BROWSERD_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("BROWSERD_HOME", home)
    monkeypatch.setenv("BROWSERD_CONTROL_URL", "https://10.0.0.7:18791")
    monkeypatch.setenv("BROWSERD_TLS", "self-signed")
    assert cli.main(["token", "--remote"]) == 0
    out = orjson.loads(capsys.readouterr().out)
    assert set(out) == {"controlUrl", "token", "fingerprint"}
    assert out["controlUrl"] == "https://10.0.0.7:18791"
    assert out["token"] == paths.token_file.read_text().strip()
    pem = self_signed_path(paths).read_bytes()
    assert out["fingerprint"] == pem_fingerprint(pem)  # the file the service then serves
    assert "10.0.0.7" in {str(a) for a in cert_of(pem).extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value.get_values_for_type(x509.IPAddress)}
    monkeypatch.setenv("BROWSERD_CONTROL_URL", "http://127.0.0.1:18791")
    monkeypatch.delenv("BROWSERD_TLS")
    assert cli.main(["token", "--remote"]) == 1
    err = capsys.readouterr()
    assert "plain HTTP" in err.err and err.out == ""


# -- the client's pin, against fake TLS listeners ------------------------------------


class Recorder:
    """A TLS listener that completes handshakes and records every byte it is sent."""

    def __init__(self, pem_path: Path) -> None:
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(str(pem_path), str(pem_path))
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.received: list[bytes] = []
        self.handshakes = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while True:
            try:
                raw, _ = self.sock.accept()
            except OSError:
                return
            raw.settimeout(5)
            try:
                with self.context.wrap_socket(raw, server_side=True) as conn:
                    self.handshakes += 1
                    data = b""
                    while chunk := conn.recv(65536):
                        data += chunk
                    self.received.append(data)
            except (OSError, ssl.SSLError):
                self.received.append(b"")  # the client hung up (without close_notify)

    def close(self) -> None:
        self.sock.close()


class HonestTls:
    """An HTTPS server answering the proof like browserd, recording Authorization headers."""

    def __init__(self, pem_path: Path) -> None:
        self.seen: list[str] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.seen.append(self.headers.get("Authorization", ""))
                parts = urlsplit(self.path)
                challenge = parse_qs(parts.query).get("challenge", [""])[0]
                body = orjson.dumps({"ok": True, "proof": healthz_proof(TOKEN, challenge)}
                                    if parts.path == "/healthz" else {"state": "running"})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(pem_path), str(pem_path))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def pem(paths: Paths) -> Path:
    return ensure_self_signed(paths, "127.0.0.1")


@pytest.fixture
def recorder(pem: Path) -> Iterator[Recorder]:
    r = Recorder(pem)
    yield r
    r.close()


def wait_for_records(recorder: Recorder, count: int) -> None:
    deadline = time.monotonic() + 5
    while len(recorder.received) < count:
        assert time.monotonic() < deadline, f"the listener recorded {recorder.received!r}"
        time.sleep(0.02)


def test_a_wrong_pin_is_refused_before_anything_is_sent(recorder: Recorder) -> None:
    wrong = hashlib.sha256(b"another certificate").hexdigest()
    client = Client(recorder.url, TOKEN, timeout=10, fingerprint=wrong)
    with pytest.raises(TlsPinMismatch) as caught:
        client.get("/status")
    assert caught.value.code == "TLS_PIN_MISMATCH" and caught.value.status == 421
    wait_for_records(recorder, 1)
    assert recorder.handshakes == 1  # the handshake happened: the peer was seen, then refused
    assert recorder.received == [b""]  # no request, no proof request, no token


def test_the_right_pin_passes_the_same_listener_and_then_http_is_sent(
        recorder: Recorder, pem: Path) -> None:
    """The control for the test above: with the pin that matches, bytes do arrive."""
    client = Client(recorder.url, TOKEN, timeout=2, fingerprint=pem_fingerprint(
        pem.read_bytes()))
    with pytest.raises(Unavailable):  # the recorder never answers
        client.get("/status")
    wait_for_records(recorder, 1)
    assert recorder.received[0].startswith(b"GET /healthz?challenge=")
    assert TOKEN.encode() not in recorder.received[0]  # the proof first, never the token


def test_no_pin_and_a_certificate_the_system_does_not_trust_is_refused_with_a_hint(
        recorder: Recorder) -> None:
    with pytest.raises(Unavailable, match="does not verify") as caught:
        Client(recorder.url, TOKEN, timeout=10).get("/status")
    assert caught.value.hint is not None and "BROWSERD_TLS_FINGERPRINT" in caught.value.hint
    wait_for_records(recorder, 1)
    assert recorder.received == [b""]


def test_a_pinned_client_proves_the_listener_then_sends_the_token_on_each_connection(
        pem: Path) -> None:
    honest = HonestTls(pem)
    try:
        pin = pem_fingerprint(pem.read_bytes())
        client = Client(honest.url, TOKEN, timeout=10, fingerprint=pin)
        assert client.get("/status") == {"state": "running"}
        assert honest.seen == ["", f"Bearer {TOKEN}"]
        other = client.with_token("o" * 43)
        assert other.fingerprint == client.fingerprint  # the pin goes with the new token
        assert other.get("/status") == {"state": "running"}
    finally:
        honest.close()


def test_without_a_pin_a_certificate_the_trust_store_holds_is_accepted(
        pem: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cert_only = tmp_path / "ca.pem"
    data = pem.read_bytes()
    cert_only.write_bytes(data[data.index(b"-----BEGIN CERTIFICATE-----"):])
    monkeypatch.setenv("SSL_CERT_FILE", str(cert_only))  # the "system" store of this test
    honest = HonestTls(pem)
    try:
        assert Client(honest.url, TOKEN, timeout=10).get("/status") == {"state": "running"}
    finally:
        honest.close()


def test_plain_http_off_loopback_is_refused_before_connecting() -> None:
    with pytest.raises(ConfigError, match="plain HTTP"):
        Client("http://10.0.0.7:18791", TOKEN)
    Client("http://127.0.0.1:18791", TOKEN)  # loopback stays plain


def test_from_settings_takes_the_token_from_the_environment_and_the_pin_from_settings(
        paths: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    pin = "AB:" * 31 + "CD"
    s = load_settings(paths, environ={"BROWSERD_CONTROL_URL": "https://10.0.0.7:18791",
                                      "BROWSERD_TLS_FINGERPRINT": pin})
    monkeypatch.setenv("BROWSERD_TOKEN", "e" * 43)
    client = Client.from_settings(s, paths)
    assert (client.host, client.port, client.tls) == ("10.0.0.7", 18791, True)
    assert client.fingerprint == normalize_fingerprint(pin)
    assert client._token == "e" * 43
    monkeypatch.delenv("BROWSERD_TOKEN")
    with pytest.raises(Unavailable, match="no token"):
        Client.from_settings(s, paths)
