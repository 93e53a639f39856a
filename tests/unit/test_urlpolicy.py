"""S9: the URL policy keeps the API from opening dangerous schemes or our own ports."""

from __future__ import annotations

import pytest

from browserd.config import Settings
from browserd.errors import BadUrl, ConfigError, UrlBlocked
from browserd.urlpolicy import UrlPolicy

CONTROL, CDP = 18791, 18792


def _fullwidth(text: str) -> str:
    """ASCII letters and digits as their full-width forms (which fold back under NFKC)."""
    return "".join(chr(ord(c) + 0xFEE0) if c.isalnum() else c for c in text)


@pytest.fixture
def policy() -> UrlPolicy:
    return UrlPolicy(blocked_ports=frozenset({CONTROL, CDP}))


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com", "https://example.com/"),
        ("http://Example.COM/Path?Q=A#F", "http://example.com/Path?Q=A#F"),
        ("HTTPS://example.com:8443/x", "https://example.com:8443/x"),
        ("about:blank", "about:blank"),
        ("ABOUT:BLANK", "about:blank"),
        ("http://127.0.0.1:8080/app", "http://127.0.0.1:8080/app"),
        ("http://localhost/", "http://localhost/"),
        ("http://example.com:18791/", "http://example.com:18791/"),
        ("https://[2001:db8::1]:18791/", "https://[2001:db8::1]:18791/"),
        ("http://User:Pw@Example.com/", "http://User:Pw@example.com/"),
        # Chromium reads "\" as "/" before the query: the host is evil.test.
        ("http://evil.test\\@127.0.0.1:18791/", "http://evil.test/@127.0.0.1:18791/"),
        ("http://example.com/?q=a\\b", "http://example.com/?q=a\\b"),
    ],
)
def test_allowed(policy: UrlPolicy, url: str, expected: str) -> None:
    assert policy.check(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "FILE:///etc/passwd",
        "chrome://settings",
        "chrome-untrusted://terminal/",
        "devtools://devtools/bundled/inspector.html",
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        "view-source:https://example.com",
        "filesystem:https://example.com/temporary/x",
        "blob:https://example.com/uuid",
        "chrome-extension://abcdefghijklmnop/page.html",
        "data:text/html,<script>alert(1)</script>",
        "about:version",
        "about:blank#x",
        "mailto:a@example.com",
        "ws://example.com/",
    ],
)
def test_blocked_schemes(policy: UrlPolicy, url: str) -> None:
    with pytest.raises(UrlBlocked) as info:
        policy.check(url)
    assert info.value.status == 403
    assert "url_allow" in (info.value.hint or "")


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:18791/tabs",
        "http://127.0.0.1:18792/json/version",
        "https://127.0.0.1:18791",
        "http://127.5.6.7:18791/",
        "http://localhost:18791/",
        "http://LOCALHOST.:18791/",
        "http://api.localhost:18792/",
        "http://[::1]:18791/",
        "http://[0:0:0:0:0:0:0:1]:18792/",
        "http://[::ffff:127.0.0.1]:18791/",
        "http://[::]:18791/",
        "http://0.0.0.0:18791/",
        "http://0:18791/",
        "http://127.1:18791/",
        "http://0x7f.0.0.1:18791/",
        "http://0177.0.0.1:18791/",
        "http://2130706433:18791/",
        "http://0x7f000001:18791/",
        "http://127.0.0.%31:18791/",
        "http://%6c%6f%63%61%6c%68%6f%73%74:18791/",
        # Full-width digits and ideographic full stops, and full-width letters.
        "http://" + _fullwidth("127") + "\u3002" + _fullwidth("0.0.1") + ":18791/",
        "http://" + _fullwidth("localhost") + ":18791/",
        "http://127.0.0.1:018791/",
        "http://u:p@127.0.0.1:18791/",
        "http://127.0.0.1:18791\\@evil.test/",
    ],
)
def test_own_ports_on_loopback_blocked(policy: UrlPolicy, url: str) -> None:
    with pytest.raises(UrlBlocked, match="own control or DevTools port"):
        policy.check(url)


def test_default_ports_count(policy: UrlPolicy) -> None:
    p = UrlPolicy(blocked_ports=frozenset({80, 443}))
    with pytest.raises(UrlBlocked):
        p.check("http://localhost/")
    with pytest.raises(UrlBlocked):
        p.check("https://127.0.0.1/")
    assert p.check("http://127.0.0.1:8080/") == "http://127.0.0.1:8080/"
    assert p.check("https://example.com/") == "https://example.com/"


@pytest.mark.parametrize(
    ("url", "hint_part"),
    [
        ("", "include the scheme"),
        ("example.com", "https://example.com"),
        ("example.com/path", "https://example.com/path"),
        ("//example.com", "https://example.com"),
        ("localhost:18791", "http://localhost:18791"),
        ("example.com:8080/x", "http://example.com:8080/x"),
        ("127.0.0.1:18791", "https://127.0.0.1:18791"),
        ("http:example.com", "include the scheme"),
        ("http:///127.0.0.1:18791/", "include the scheme"),
    ],
)
def test_schemeless_is_bad_url_with_hint(policy: UrlPolicy, url: str, hint_part: str) -> None:
    with pytest.raises(BadUrl) as info:
        policy.check(url)
    assert info.value.status == 400
    assert hint_part in (info.value.hint or "")


@pytest.mark.parametrize(
    "url",
    [
        "http://exa mple.com/",
        " https://example.com",
        "https://example.com\n",
        "java\tscript:alert(1)",
        "https://example.com/\x00",
        "https://example.com/\u200b",
        "https://example.com/\u2028",
        "http://[::1/",
        "http://[zz]/",
        "http://example.com:99999/",
        "http://example.com:abc/",
        "http://256.0.0.1/",
        "http://1.2.3.4.5/",
        "http://127..1/",
        "http://0x7g.0.0.1/",
        "http://%zz/",
        "http://127.0.0.1%3A18791/",
        "http://ex%00ample.com/",
        "http://%ff%fe/",
        "https://" + "a" * 8200 + ".com/",
    ],
)
def test_bad_urls(policy: UrlPolicy, url: str) -> None:
    with pytest.raises(BadUrl):
        policy.check(url)


def test_length_limit_boundary(policy: UrlPolicy) -> None:
    base = "https://example.com/"
    ok = base + "a" * (8192 - len(base))
    assert policy.check(ok) == ok
    with pytest.raises(BadUrl, match="8192"):
        policy.check(ok + "a")


def test_allow_lifts_scheme_and_host_blocks() -> None:
    p = UrlPolicy(
        allow=("file:", "data://", "127.0.0.1:18791", "localhost", "[::1]:18792"),
        blocked_ports=frozenset({CONTROL, CDP}),
    )
    assert p.check("file:///tmp/x.html") == "file:///tmp/x.html"
    assert p.check("data:text/plain,hi") == "data:text/plain,hi"
    assert p.check("http://127.1:18791/") == "http://127.1:18791/"
    assert p.check("http://localhost:18792/") == "http://localhost:18792/"
    assert p.check("http://[::1]:18792/") == "http://[::1]:18792/"
    # Not lifted: other port of 127.0.0.1, other port of ::1, other schemes.
    with pytest.raises(UrlBlocked):
        p.check("http://127.0.0.1:18792/")
    with pytest.raises(UrlBlocked):
        p.check("http://[::1]:18791/")
    with pytest.raises(UrlBlocked):
        p.check("chrome://settings")
    with pytest.raises(UrlBlocked):
        p.check("http://api.localhost:18791/")


def test_blocked_hint_names_allow_entry(policy: UrlPolicy) -> None:
    with pytest.raises(UrlBlocked) as info:
        policy.check("http://[::1]:18792/")
    assert "'[::1]:18792'" in (info.value.hint or "")
    with pytest.raises(UrlBlocked) as info:
        policy.check("http://127.1:18791/")
    assert "'127.0.0.1:18791'" in (info.value.hint or "")


@pytest.mark.parametrize("entry", ["http://x", "a/b", "", "user@host", "host:notaport", "[::1"])
def test_bad_allow_entry_is_config_error(entry: str) -> None:
    with pytest.raises(ConfigError, match="url_allow"):
        UrlPolicy(allow=(entry,), blocked_ports=frozenset())


def test_for_settings_blocks_control_and_cdp_ports() -> None:
    s = Settings(control_url="http://127.0.0.1:28000", url_allow=("file:",))
    p = UrlPolicy.for_settings(s)
    assert p.blocked_ports == frozenset({28000, 28001})
    assert p.allow == ("file:",)
    with pytest.raises(UrlBlocked):
        p.check("http://localhost:28001/json")
    assert p.check("file:///x") == "file:///x"
    assert p.check("http://localhost:18791/") == "http://localhost:18791/"


def test_for_settings_explicit_cdp_port() -> None:
    p = UrlPolicy.for_settings(Settings(cdp_port=30000))
    assert p.blocked_ports == frozenset({18791, 30000})


# WHATWG IPv4 forms Chromium accepts: every spelling of loopback on our ports is
# blocked, out-of-range numbers are malformed, in-range ones are ordinary hosts.
@pytest.mark.parametrize("url", [
    f"http://0x7f.1:{CONTROL}/", f"http://0x7F.1:{CDP}/", f"http://0x.0x.0x.1:{CONTROL}/",
    f"http://0x7f.0.0.1.:{CONTROL}/", f"http://0177.0.0.1:{CDP}/", f"http://127.0.0.1.:{CONTROL}/",
    f"http://127.1.:{CDP}/", f"http://0x7f.0x0.0x0.0x1:{CDP}/", f"http://017700000001:{CONTROL}/",
    f"http://0x7f000001:{CDP}/", f"http://[::1%25eth0]:{CONTROL}/", f"http://0x:{CONTROL}/",
])
def test_every_spelling_of_loopback_on_our_ports_is_blocked(policy: UrlPolicy, url: str) -> None:
    with pytest.raises(UrlBlocked):
        policy.check(url)


@pytest.mark.parametrize("url", [
    "http://1.2.3.256/", "http://1.2.65536/", "http://1.16777216/", "http://4294967296/",
    "http://256.1.1.1/", "http://1.2.3.4.5/", "http://0x1g.1/", "http://1..2/",
])
def test_out_of_range_ipv4_is_malformed(policy: UrlPolicy, url: str) -> None:
    with pytest.raises(BadUrl, match="invalid IPv4"):
        policy.check(url)


@pytest.mark.parametrize("url", [
    "http://1.2.65535/", "http://1.16777215/", "http://4294967295/", "http://255.1.1.1/",
    "http://255.255.255.255/", f"http://0x7f.1:{CONTROL + 10}/",
])
def test_in_range_ipv4_forms_are_ordinary_hosts(policy: UrlPolicy, url: str) -> None:
    assert policy.check(url) == url


def test_a_long_refused_url_is_cut_in_the_message(policy: UrlPolicy) -> None:
    url = f"http://127.0.0.1:{CONTROL}/" + "a" * 500
    with pytest.raises(UrlBlocked) as raised:
        policy.check(url)
    assert url[:200] + "…" in raised.value.message
    assert url[:201] not in raised.value.message


@pytest.mark.parametrize("url", [
    f"http://2130706433.:{CONTROL}/", f"http://0x7f000001.:{CDP}/",
    f"http://127\uff0e0\uff0e0\uff0e1:{CONTROL}/", f"http://127\u30020\u30020\u30021:{CDP}/",
    f"http://127\uff610\uff610\uff611:{CONTROL}/",
])
def test_trailing_dots_and_unicode_dots_do_not_hide_loopback(policy: UrlPolicy, url: str) -> None:
    with pytest.raises(UrlBlocked):
        policy.check(url)


@pytest.mark.parametrize("url", [
    "http://a%20b.com/", "http://a%00b.com/", f"http://127.0.0.1%09:{CONTROL}/",
])
def test_percent_encoded_controls_in_the_host_are_malformed(policy: UrlPolicy, url: str) -> None:
    with pytest.raises(BadUrl, match="control or space"):
        policy.check(url)


@pytest.mark.parametrize("url", [
    "http://1.2.3.4.0/",  # five parts, even with a last part that would "fit"
    "http://1.2.300.4/",  # every part but the last is a byte
    "http://08.0.0.1/", "http://09/",  # a leading 0 is octal, and 8, 9 are not octal digits
])
def test_ipv4_forms_chromium_rejects_are_malformed(policy: UrlPolicy, url: str) -> None:
    with pytest.raises(BadUrl, match="invalid IPv4") as raised:
        policy.check(url)
    assert url in raised.value.message and "…" not in raised.value.message  # short: not cut


def test_an_empty_url_is_named_empty(policy: UrlPolicy) -> None:
    with pytest.raises(BadUrl, match="the URL is empty"):
        policy.check("")


def test_the_refusal_names_the_scheme_or_the_one_about_url(policy: UrlPolicy) -> None:
    with pytest.raises(UrlBlocked, match="about:blank is the only about: URL allowed"):
        policy.check("about:config")
    with pytest.raises(UrlBlocked, match="the file: scheme is not allowed"):
        policy.check("file:///etc/passwd")
