"""The client proves the listener holds our token before sending it (``/healthz`` HMAC).

A local impostor answers ``/healthz`` with proofs of every wrong kind; the
client must refuse each one and never send the token. The honest listener
(the right HMAC of the client's own fresh nonce) is accepted, so the test can
tell the two apart.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson
import pytest

from browserd.client import Client, healthz_proof
from browserd.errors import Unavailable

TOKEN = "k" * 43

#: proof(challenge) -> the body an impostor answers /healthz with
Answer = Callable[[str], dict[str, Any]]


class Listener:
    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.seen: list[str] = []  # every Authorization header received
        self.challenges: list[str] = []
        listener = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                listener.seen.append(self.headers.get("Authorization", ""))
                parts = urlsplit(self.path)
                if parts.path == "/healthz":
                    challenge = parse_qs(parts.query).get("challenge", [""])[0]
                    listener.challenges.append(challenge)
                    body = orjson.dumps(listener.answer(challenge))
                else:
                    body = orjson.dumps({"state": "running"})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def listen() -> Iterator[Callable[[Answer], Listener]]:
    started: list[Listener] = []

    def start(answer: Answer) -> Listener:
        listener = Listener(answer)
        started.append(listener)
        return listener

    yield start
    for listener in started:
        listener.close()


WRONG_PROOFS: dict[str, Answer] = {
    "no proof": lambda c: {"ok": True, "browser": "running"},
    "another token's proof": lambda c: {"ok": True, "proof": healthz_proof("x" * 43, c)},
    "a proof of another challenge": lambda c: {"ok": True,
                                               "proof": healthz_proof(TOKEN, c + "0")},
    "an empty proof": lambda c: {"ok": True, "proof": ""},
    "the challenge echoed": lambda c: {"ok": True, "proof": c},
    "a truncated proof": lambda c: {"ok": True, "proof": healthz_proof(TOKEN, c)[:-1]},
    "a proof of the wrong type": lambda c: {"ok": True, "proof": 1},
}


@pytest.mark.parametrize("kind", list(WRONG_PROOFS))
def test_a_wrong_proof_is_refused_and_the_token_is_never_sent(
    kind: str, listen: Callable[[Answer], Listener]
) -> None:
    impostor = listen(WRONG_PROOFS[kind])
    client = Client(impostor.url, TOKEN, timeout=10)
    with pytest.raises(Unavailable, match="not this browserd"):
        client.get("/status")
    assert impostor.challenges, "the client never asked for a proof"
    assert all(TOKEN not in header for header in impostor.seen)


def test_the_right_proof_is_accepted_and_each_check_uses_a_fresh_challenge(
    listen: Callable[[Answer], Listener]
) -> None:
    honest = listen(lambda c: {"ok": True, "proof": healthz_proof(TOKEN, c)})
    assert Client(honest.url, TOKEN, timeout=10).get("/status") == {"state": "running"}
    assert Client(honest.url, TOKEN, timeout=10).get("/status") == {"state": "running"}
    assert f"Bearer {TOKEN}" in honest.seen
    first, second = honest.challenges
    assert first != second and len(first) >= 16


def test_the_proof_is_the_hmac_of_the_challenge_under_the_token() -> None:
    """The same function the service answers with: keyed by the token, bound to the nonce."""
    assert healthz_proof(TOKEN, "abc") == healthz_proof(TOKEN, "abc")
    assert healthz_proof(TOKEN, "abc") != healthz_proof(TOKEN, "abd")
    assert healthz_proof(TOKEN, "abc") != healthz_proof("j" * 43, "abc")
    assert len(healthz_proof(TOKEN, "abc")) == 64


def test_one_client_proves_the_listener_once(listen: Callable[[Answer], Listener]) -> None:
    honest = listen(lambda c: {"ok": True, "proof": healthz_proof(TOKEN, c)})
    client = Client(honest.url, TOKEN, timeout=10)
    client.get("/status")
    client.get("/status")
    assert len(honest.challenges) == 1
    assert honest.seen.count(f"Bearer {TOKEN}") == 2
