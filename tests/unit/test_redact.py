"""URLs in logs keep scheme://host:port/path only (RELIABILITY S15)."""

from __future__ import annotations

import io
import logging

import pytest

from browserd.redact import SHOWN_CHARS, RedactingFilter, loggable_url, redact_urls


@pytest.mark.parametrize(("url", "shown"), [
    ("https://user:pass@example.com:8443/a/b?token=T#access_token=F",
     "https://example.com:8443/a/b"),
    ("http://example.com", "http://example.com"),
    ("http://EXAMPLE.com/Path", "http://example.com/Path"),
    ("http://[::1]:9/x?q", "http://[::1]:9/x"),
    ("http://u@h/p#f", "http://h/p"),
    ("about:blank", "about:blank"),
    ("about:blank#frag", "about:blank"),
    ("data:text/html,<p>secret</p>", "data:[…]"),
    ("javascript:alert('secret')", "javascript:[…]"),
    ("blob:https://a.test/uuid?x", "blob:[…]"),
    ("**/done?token=T", "**/done"),
    ("http://h:99999/x", "[unparsable url]"),
    ("user:pass@host/x", "user:host/x"),
])
def test_loggable_url(url: str, shown: str) -> None:
    assert loggable_url(url) == shown


def test_a_huge_url_is_shortened_to_a_bounded_size() -> None:
    """A page controls its URLs (megabytes): the shown form is read and cut bounded."""
    huge = "http://u:p@a.test:81/" + "seg/" * 500_000 + "?token=T"
    shown = loggable_url(huge)
    assert shown.startswith("http://a.test:81/seg/seg/")
    assert len(shown) == SHOWN_CHARS and shown.endswith("…")
    assert "token" not in shown and "u:p" not in shown
    assert loggable_url("http://a.test/" + "b" * 10) == "http://a.test/bbbbbbbbbb"


def test_urls_inside_text_are_redacted() -> None:
    text = ("navigation to https://u:p@a.test/x?token=T#access_token=F failed; "
            "then 'ws://127.0.0.1:9/devtools/browser/1?k=v' and done")
    assert redact_urls(text) == ("navigation to https://a.test/x failed; "
                                 "then 'ws://127.0.0.1:9/devtools/browser/1' and done")
    assert redact_urls("no url here") == "no url here"


def test_the_filter_rewrites_messages_arguments_and_tracebacks() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("test_redact")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("went to %s", "http://user:SECRET1@h/p?token=SECRET2#SECRET3")
        try:
            raise ValueError("bad http://h/x?token=SECRET4")
        except ValueError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    out = stream.getvalue()
    assert "went to http://h/p" in out and "ValueError: bad http://h/x" in out
    assert "SECRET" not in out


def test_a_userinfo_longer_than_what_is_read_is_never_shown_as_the_host() -> None:
    """Only PARSED_CHARS are read: when that cuts the authority itself, what was read may
    be a secret userinfo, not a host (found by a mutant of the 4096-character cut)."""
    for length in (4097, 4105, 10_000):  # the "@" is beyond the first 4096 characters
        url = "http://" + "t" * (length - 7 - 2) + "@h"
        assert len(url) == length
        assert loggable_url(url) == "http://[…]"
        assert loggable_url(url + "/x?q") == "http://[…]"
    exactly = "http://" + "t" * (4096 - 7 - 2) + "@h"  # 4096 characters: read whole
    assert loggable_url(exactly) == "http://h"
    assert loggable_url("http://" + "t" * 4000 + "@a.test/" + "p" * 50) == (
        "http://a.test/" + "p" * 50)
    assert loggable_url("http://a.test/" + "p" * 5000).startswith("http://a.test/ppp")
    assert loggable_url("https://a.test?" + "q" * 5000) == "https://a.test"


def test_the_shown_form_is_at_most_300_characters() -> None:
    """docs/security.md: at most 300 characters of a URL are shown."""
    assert SHOWN_CHARS == 300
    fits = "http://a.test/" + "p" * (300 - 14)
    assert loggable_url(fits) == fits  # exactly 300: kept whole
    longer = fits + "p"
    assert loggable_url(longer) == fits[:299] + "…"


def test_an_empty_authority_keeps_the_authority_form() -> None:
    assert loggable_url("http://?token=T") == "http://"
    assert loggable_url("http://#access_token=T") == "http://"
    assert loggable_url("file:///etc/passwd?x") == "file:///etc/passwd"


def test_a_schemeless_userinfo_is_cut_at_its_last_at_sign() -> None:
    assert loggable_url("u@v@host/x?q") == "host/x"


def test_a_malformed_record_is_left_to_the_handler() -> None:
    record = logging.LogRecord("t", logging.INFO, __file__, 1, "%d", ("not a number",), None)
    assert RedactingFilter().filter(record) is True
    assert record.args == ("not a number",)
