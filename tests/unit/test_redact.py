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
