"""The vault and its redactor as plain code (no browser, no keyring).

Written for the mutants of ``vault/redactor.py`` and ``vault/store.py``
(``python -m supervision.mutants --only vault-redactor,vault-store``): what
is redacted and how, which page may have a secret, what is stored on disk
(sealed, bound to its name) and what a broken store does.
"""

from __future__ import annotations

import base64
import logging
import os
import stat
from pathlib import Path

import orjson
import pytest

from browserd.errors import BadRequest, ConfigError, SecretNotFound, SecretOrigin
from browserd.vault import MIN_SECRET_CHARS, Redactor, SecretFilter, Vault, marker
from browserd.vault.store import MAX_SECRETS, MAX_VALUE_CHARS

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))

# -- the redactor -----------------------------------------------------------------------


def test_every_exact_occurrence_is_replaced_longest_value_first() -> None:
    redactor = Redactor()
    assert not redactor.active
    assert redactor.redact({"a": "hunter2!"}) == {"a": "hunter2!"}
    assert redactor.text("hunter2!") == "hunter2!"
    redactor.update({"pw": "hunter2!", "long": "hunter2!-and-more", "short": "abc"})
    assert redactor.active
    assert marker("pw") == "«secret:pw»"
    assert redactor.text("x hunter2! y hunter2!") == "x «secret:pw» y «secret:pw»"
    assert redactor.text("hunter2!-and-more") == "«secret:long»"  # the longer value wins
    assert redactor.text("abc stays") == "abc stays"  # shorter than MIN_SECRET_CHARS
    assert redactor.text("") == ""
    assert redactor.text("HUNTER2!") == "HUNTER2!"  # only exact occurrences
    value = {"hunter2!": ["a hunter2!", ("hunter2!", 3)], 7: None, "n": 1.5, "b": True}
    assert redactor.redact(value) == {"«secret:pw»": ["a «secret:pw»", ["«secret:pw»", 3]],
                                      7: None, "n": 1.5, "b": True}
    redactor.update({})
    assert not redactor.active and redactor.text("hunter2!") == "hunter2!"


def test_a_value_of_exactly_the_minimum_length_is_redacted() -> None:
    redactor = Redactor()
    value = "k" * MIN_SECRET_CHARS
    redactor.update({"min": value, "less": "z" * (MIN_SECRET_CHARS - 1)})
    assert redactor.text(f"<{value}>") == "<«secret:min»>"
    assert redactor.text("zzz") == "zzz"


def _record(msg: str, *args: object, exc_text: str | None = None) -> logging.LogRecord:
    record = logging.LogRecord("t", logging.INFO, __file__, 1, msg, args, None)
    record.exc_text = exc_text
    return record


def test_the_log_filter_removes_values_from_messages_and_tracebacks() -> None:
    redactor = Redactor()
    log_filter = SecretFilter(redactor)
    idle = _record("typed %s", "hunter2!")
    assert log_filter.filter(idle) and idle.getMessage() == "typed hunter2!"  # nothing known
    redactor.update({"pw": "hunter2!"})
    record = _record("typed %s", "hunter2!", exc_text="Traceback: hunter2!")
    assert log_filter.filter(record) is True
    assert record.getMessage() == "typed «secret:pw»" and record.args is None
    assert record.exc_text == "Traceback: «secret:pw»"
    plain = _record("nothing %s", "here")
    assert log_filter.filter(plain) and plain.args == ("here",)  # untouched
    broken = _record("%d", "not a number")
    assert log_filter.filter(broken) is True  # left to the handler's own error path


# -- the vault --------------------------------------------------------------------------


class Clock:
    now = 1234.5

    def __call__(self) -> float:
        return self.now


def test_a_secret_is_stored_sealed_and_reopens_with_the_key(tmp_path: Path) -> None:
    directory = tmp_path / "secrets"
    vault = Vault(directory, KEY, clock=Clock())
    record = vault.put("bank", "s3cret-value", origin="https://Bank.test/", username="me")
    assert record.to_json() == {"name": "bank", "origin": "https://bank.test",
                                "hasUsername": True, "createdAt": 1234.5}
    assert vault.put("other", "another-value").has_username is False
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE((directory / "vault.json").stat().st_mode) == 0o600
    raw = (directory / "vault.json").read_bytes()
    assert b"s3cret-value" not in raw
    stored = orjson.loads(raw)
    assert stored["version"] == 1 and [e["name"] for e in stored["entries"]] == ["bank",
                                                                                 "other"]
    assert vault.redactor.text("s3cret-value") == "«secret:bank»"
    again = Vault(directory, KEY)
    assert again.records() == vault.records()
    assert again.login("bank", page_url="https://bank.test/login") == ("me", "s3cret-value")
    assert again.username_of("other") is None
    assert again.redactor.text("another-value") == "«secret:other»"  # known after loading
    with pytest.raises(ConfigError, match="does not open"):
        Vault(directory, OTHER_KEY)
    with pytest.raises(ConfigError, match="key is missing"):
        Vault(directory, None)


def test_a_sealed_value_cannot_be_moved_to_another_name(tmp_path: Path) -> None:
    directory = tmp_path / "secrets"
    vault = Vault(directory, KEY)
    vault.put("a", "value-of-a")
    vault.put("b", "value-of-b")
    stored = orjson.loads((directory / "vault.json").read_bytes())
    stored["entries"][1]["data"] = stored["entries"][0]["data"]
    stored["entries"][1]["nonce"] = stored["entries"][0]["nonce"]
    (directory / "vault.json").write_bytes(orjson.dumps(stored))
    with pytest.raises(ConfigError, match="does not open"):
        Vault(directory, KEY)


@pytest.mark.parametrize("content", [b"not json", b'{"entries": [{"name": "a"}]}', b"{}",
                                     b'{"entries": [{"name": "a", "nonce": "AAAA", '
                                     b'"data": "!!", "createdAt": 1}]}'])
def test_an_unreadable_store_is_a_config_error(tmp_path: Path, content: bytes) -> None:
    directory = tmp_path / "secrets"
    directory.mkdir(mode=0o700)
    path = directory / "vault.json"
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
    os.write(fd, content)
    os.close(fd)
    with pytest.raises(ConfigError):
        Vault(directory, KEY)


def test_no_store_yet_is_an_empty_vault_and_a_keyless_one_cannot_store(tmp_path: Path) -> None:
    assert Vault(tmp_path / "secrets", KEY).records() == []
    keyless = Vault(tmp_path / "none", None)
    with pytest.raises(ConfigError):
        keyless.put("a", "value-of-a")
    assert keyless.records() == [] and not (tmp_path / "none").exists()
    memory = Vault(None, None)
    memory.put("a", "value-of-a")
    assert memory.use("a", page_url="https://any.test/") == "value-of-a"


def test_a_secret_is_given_only_to_a_page_of_its_origin() -> None:
    vault = Vault(None, None)
    vault.put("bank", "bank-value", origin="https://bank.test:8443", username="me")
    vault.put("free", "free-value")
    assert vault.use("bank", page_url="https://bank.test:8443/pay") == "bank-value"
    for url in ("https://bank.test/pay", "https://evil.test/", "http://bank.test:8443/",
                "about:blank"):
        with pytest.raises(SecretOrigin):
            vault.use("bank", page_url=url)
        with pytest.raises(SecretOrigin):
            vault.login("bank", page_url=url)
    assert vault.use("free", page_url="about:blank") == "free-value"
    assert vault.for_typing("bank") == ("bank-value", "https://bank.test:8443")
    assert vault.for_typing("free") == ("free-value", None)
    assert vault.require("bank").origin == "https://bank.test:8443"
    assert vault.username_of("bank") == "me"
    for call in (lambda: vault.use("nope", page_url="https://a.test/"),
                 lambda: vault.for_typing("nope"), lambda: vault.username_of("nope"),
                 lambda: vault.require("nope")):
        with pytest.raises(SecretNotFound):
            call()


def test_names_values_and_origins_are_checked() -> None:
    vault = Vault(None, None)
    for name in ("", "-a", "a b", "a/b", "x" * 65):
        with pytest.raises(BadRequest):
            vault.put(name, "good-value")
    vault.put("A1._-z", "good-value")
    vault.put("x" * 64, "good-value")
    for value in ("a" * (MIN_SECRET_CHARS - 1), "a" * (MAX_VALUE_CHARS + 1), "abc\x00def"):
        with pytest.raises(BadRequest):
            vault.put("v", value)
    vault.put("v", "a" * MIN_SECRET_CHARS)
    vault.put("w", "a" * MAX_VALUE_CHARS)
    for origin in ("bank.test", "https://bank.test/path", "ftp://bank.test", "https://"):
        with pytest.raises(BadRequest):
            vault.put("o", "good-value", origin=origin)
    assert vault.put("o", "good-value", origin="HTTPS://BANK.TEST").origin == "https://bank.test"
    assert vault.put("o", "good-value", username="").has_username is False
    assert vault.username_of("o") is None


def test_at_most_so_many_secrets_but_one_may_be_replaced() -> None:
    vault = Vault(None, None)
    for i in range(MAX_SECRETS):
        vault.put(f"s{i}", f"value-{i:04}")
    with pytest.raises(BadRequest):
        vault.put("one-more", "value-more")
    vault.put("s0", "replaced-value")  # replacing is fine
    assert vault.use("s0", page_url="https://a.test/") == "replaced-value"
    assert vault.redactor.text("value-0000") == "value-0000"  # the old value is no secret now
    assert vault.delete("s1") is True and vault.delete("s1") is False
    assert vault.redactor.text("value-0001") == "value-0001"
    vault.put("one-more", "value-more")
    assert len(vault.records()) == MAX_SECRETS


def test_deleting_rewrites_the_store(tmp_path: Path) -> None:
    directory = tmp_path / "secrets"
    vault = Vault(directory, KEY)
    vault.put("a", "value-of-a")
    vault.put("b", "value-of-b")
    assert vault.delete("a") is True
    reopened = Vault(directory, KEY)
    assert [r.name for r in reopened.records()] == ["b"]
    entry = orjson.loads((directory / "vault.json").read_bytes())["entries"][0]
    assert len(base64.b64decode(entry["nonce"])) == 12


def test_the_documented_limits() -> None:
    """docs/api.md: a value is 4-4096 characters; at most 256 secrets."""
    vault = Vault(None, None)
    vault.put("four", "abcd")
    assert vault.redactor.text("<abcd>") == "<«secret:four»>"
    with pytest.raises(BadRequest):
        vault.put("three", "abc")
    vault.put("long", "x" * 4096)
    with pytest.raises(BadRequest):
        vault.put("longer", "x" * 4097)
    for i in range(254):
        vault.put(f"n{i}", f"value-{i:04}")
    with pytest.raises(BadRequest):
        vault.put("one-too-many", "value-many")
    assert len(vault.records()) == 256
