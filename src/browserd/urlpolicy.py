"""Which URLs the API may send the managed browser to.

Every URL that reaches Chrome through the API (``/tabs/open``, ``/navigate``)
goes through :meth:`UrlPolicy.check` first. Allowed by default: ``http:``,
``https:`` and exactly ``about:blank``. Everything else is refused with
:class:`~browserd.errors.UrlBlocked` — notably ``file:``, ``chrome:``,
``chrome-untrusted:``, ``devtools:``, ``javascript:``, ``view-source:``,
``filesystem:``, ``blob:``, ``chrome-extension:`` and ``data:`` — and so is an
``http(s)`` URL that points at a loopback host on one of ``blocked_ports``
(browserd's own control and CDP ports), so a page cannot be opened on our own
API or DevTools endpoint through the API.

``allow`` lifts blocks: an entry ending in ``:`` is a scheme (``"file:"``,
``"data:"``), anything else is ``host[:port]`` (``"127.0.0.1:18791"``;
without a port, every port of that host).

Hosts are read the way Chromium reads them (WHATWG URL): percent-escapes in
the host are decoded, full-width forms folded, ``\\`` is a ``/`` before the
query, and numeric IPv4 forms such as ``127.1``, ``0x7f.0.0.1`` or
``2130706433`` are loopback like ``127.0.0.1``. A URL that Chromium would parse
differently from us, or not at all, is refused with
:class:`~browserd.errors.BadUrl` rather than guessed at. Names that merely
*resolve* to loopback through DNS (``127.0.0.1.nip.io``) are not detected
here; the control API's Host check and token refuse those requests.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import unquote_to_bytes, urlsplit, urlunsplit

import attrs

from .errors import BadUrl, ConfigError, UrlBlocked

if TYPE_CHECKING:
    from .config import Settings

__all__ = ["ALLOWED_SCHEMES", "BLOCKED_SCHEMES", "MAX_URL_CHARS", "UrlPolicy"]

MAX_URL_CHARS = 8192
ALLOWED_SCHEMES = frozenset({"http", "https", "about"})
BLOCKED_SCHEMES = frozenset({
    "file", "chrome", "chrome-untrusted", "devtools", "javascript", "view-source",
    "filesystem", "blob", "chrome-extension", "data",
})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_SCHEME_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_LOOKS_LIKE_PORT_RE = re.compile(r"\d{1,5}(?:[/?#].*)?", re.DOTALL)
_BARE_HOST_RE = re.compile(r"[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+(?::\d+)?(?:[/?#].*)?", re.DOTALL)
# IDNA label separators Chromium folds to "." besides the ASCII one.
_DOTS = {0x3002: ".", 0xFF0E: ".", 0xFF61: "."}
# WHATWG forbidden domain code points (besides controls and spaces).
_FORBIDDEN_HOST_CHARS = frozenset("#%/:<>?@[\\]^|")
_HINT_SCHEME = "include the scheme, e.g. https://example.com"

_IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _is_forbidden_char(ch: str) -> bool:
    """Whitespace, controls, format characters and surrogates."""
    return unicodedata.category(ch)[0] in "CZ"


def _parse_ipv4_number(part: str) -> int | None:
    """One WHATWG IPv4 part: decimal, 0x-hex or 0-octal; None if not a number."""
    if part[:2] in ("0x", "0X"):
        digits, base = part[2:], 16
        if digits == "":
            return 0
    elif len(part) > 1 and part.startswith("0"):
        digits, base = part[1:], 8
    else:
        digits, base = part, 10
    try:
        if not digits.isascii() or not digits.isalnum():
            return None
        return int(digits, base)
    except ValueError:
        return None


def _ends_in_number(host: str) -> bool:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    last = parts[-1]
    if last and last.isascii() and last.isdigit():
        return True
    return _parse_ipv4_number(last) is not None and last[:2] in ("0x", "0X")


def _parse_whatwg_ipv4(host: str, url: str) -> ipaddress.IPv4Address:
    """Parse ``host`` as Chromium does once it ends in a number; BadUrl if invalid."""
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    numbers = [_parse_ipv4_number(p) if p else None for p in parts]
    if len(parts) > 4 or any(n is None for n in numbers):
        raise BadUrl(f"invalid IPv4 address in URL: {_short(url)}")
    nums = [n for n in numbers if n is not None]
    if any(n > 255 for n in nums[:-1]) or nums[-1] >= 256 ** (5 - len(nums)):
        raise BadUrl(f"invalid IPv4 address in URL: {_short(url)}")
    value = nums[-1]
    for i, n in enumerate(nums[:-1]):
        value += n * 256 ** (3 - i)
    return ipaddress.IPv4Address(value)


def _short(url: str) -> str:
    return url if len(url) <= 200 else url[:200] + "…"


@attrs.frozen(kw_only=True)
class _Host:
    """A URL host in canonical form: an address, or a lower-case name."""

    ip: _IPAddress | None
    name: str

    @property
    def key(self) -> str:
        return str(self.ip) if self.ip is not None else self.name

    @property
    def display(self) -> str:
        """The host as written in a URL or a ``url_allow`` entry (IPv6 in brackets)."""
        return f"[{self.ip}]" if isinstance(self.ip, ipaddress.IPv6Address) else self.key

    @property
    def is_loopback(self) -> bool:
        ip = self.ip
        if isinstance(ip, ipaddress.IPv6Address):
            if ip.ipv4_mapped is not None:
                ip = ip.ipv4_mapped
            else:
                return ip.is_loopback or ip.is_unspecified
        if isinstance(ip, ipaddress.IPv4Address):
            # 0.0.0.0 reaches the local machine on Linux and macOS.
            return ip.is_loopback or ip in ipaddress.IPv4Network("0.0.0.0/8")
        return self.name == "localhost" or self.name.endswith(".localhost")


def _canonical_host(raw: str, url: str) -> _Host:
    """Canonicalise a URL's host (without brackets or port) as Chromium would."""
    if ":" in raw:  # an IPv6 literal (urlsplit has removed the brackets)
        try:
            ip6 = ipaddress.IPv6Address(raw.split("%", 1)[0])
        except ValueError:
            raise BadUrl(f"invalid IPv6 address in URL: {_short(url)}") from None
        if ip6.ipv4_mapped is not None:
            return _Host(ip=ip6.ipv4_mapped, name=str(ip6.ipv4_mapped))
        return _Host(ip=ip6, name=str(ip6))
    try:
        host = unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        raise BadUrl(f"the URL's host is not valid UTF-8: {_short(url)}") from None
    if any(_is_forbidden_char(c) for c in host):
        raise BadUrl(f"the URL's host contains control or space characters: {_short(url)}")
    host = unicodedata.normalize("NFKC", host.translate(_DOTS)).casefold()
    if not host or any(_is_forbidden_char(c) or c in _FORBIDDEN_HOST_CHARS for c in host):
        raise BadUrl(f"the URL has an empty or invalid host: {_short(url)}")
    if _ends_in_number(host):
        ip4 = _parse_whatwg_ipv4(host, url)
        return _Host(ip=ip4, name=str(ip4))
    return _Host(ip=None, name=host.rstrip(".") if host != "." else host)


@attrs.frozen(kw_only=True)
class _HostAllow:
    key: str
    port: int | None


def _parse_allow(entries: tuple[str, ...]) -> tuple[frozenset[str], tuple[_HostAllow, ...]]:
    """Split ``url_allow`` entries into schemes and hosts; ConfigError for a bad entry."""
    schemes: set[str] = set()
    hosts: list[_HostAllow] = []
    for entry in entries:
        text = entry.strip()
        scheme_text = text.removesuffix("//")
        if scheme_text.endswith(":") and _SCHEME_RE.fullmatch(scheme_text):
            schemes.add(scheme_text[:-1].lower())
            continue
        try:
            parts = urlsplit("//" + text)
            port = parts.port
            host = _canonical_host(parts.hostname or "", text)
        except (ValueError, BadUrl):
            raise ConfigError(
                f"url_allow entry {entry!r}: use a scheme like 'file:' or host[:port] like "
                f"'127.0.0.1:18791'"
            ) from None
        if not parts.hostname or parts.path or parts.query or parts.fragment or parts.username:
            raise ConfigError(
                f"url_allow entry {entry!r}: use a scheme like 'file:' or host[:port] like "
                f"'127.0.0.1:18791'"
            )
        hosts.append(_HostAllow(key=host.key, port=port))
    return frozenset(schemes), tuple(hosts)


def _to_tuple(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


def _to_ports(value: Iterable[int]) -> frozenset[int]:
    return frozenset(value)


def _validate_allow(_inst: object, _attr: object, value: tuple[str, ...]) -> None:
    _parse_allow(value)


@attrs.frozen(kw_only=True)
class UrlPolicy:
    """What URLs may reach the browser; see the module docstring for the rules.

    ``allow`` entries are validated on construction (ConfigError for a bad
    one). Checking is pure computation: no DNS, no I/O.
    """

    allow: tuple[str, ...] = attrs.field(default=(), converter=_to_tuple, validator=_validate_allow)
    blocked_ports: frozenset[int] = attrs.field(converter=_to_ports)

    @classmethod
    def for_settings(cls, settings: Settings) -> UrlPolicy:
        """The policy for a service: block its own control and CDP ports on loopback."""
        return cls(
            allow=settings.url_allow,
            blocked_ports=frozenset({settings.control_port, settings.effective_cdp_port}),
        )

    def check(self, url: str) -> str:
        """Return ``url`` normalised if the browser may open it.

        Normalising lower-cases the scheme and host, turns ``\\`` before the
        query into ``/`` (as Chromium does) and gives an empty path ``/``.
        Raises BadUrl for an empty, over-long (> 8192 chars), unparseable or
        scheme-less URL or one with whitespace/control characters; raises
        UrlBlocked for a refused scheme or a loopback URL on a blocked port.
        """
        if not url:
            raise BadUrl("the URL is empty", hint=_HINT_SCHEME)
        if len(url) > MAX_URL_CHARS:
            raise BadUrl(f"the URL is longer than {MAX_URL_CHARS} characters")
        if any(_is_forbidden_char(c) for c in url):
            raise BadUrl(
                f"the URL contains whitespace or control characters: {_short(url)!r}",
                hint="percent-encode spaces as %20",
            )
        m = _SCHEME_RE.match(url)
        if m is None:
            hint = _HINT_SCHEME
            if _BARE_HOST_RE.fullmatch(url) or url.startswith("//"):
                hint = f"include the scheme, e.g. https://{url.lstrip('/')}"
            raise BadUrl(f"the URL has no scheme: {_short(url)}", hint=hint)
        scheme = m.group(1).lower()
        rest = url[m.end() :]
        schemes, hosts = _parse_allow(self.allow)

        if scheme in ("http", "https"):
            return self._check_http(scheme, rest, url, hosts)
        if scheme == "about" and rest.lower() == "blank":
            return "about:blank"
        if scheme in schemes:
            return scheme + ":" + rest
        if scheme not in BLOCKED_SCHEMES and scheme not in ALLOWED_SCHEMES and (
            _LOOKS_LIKE_PORT_RE.fullmatch(rest)
        ):
            # "localhost:8080" or "example.com:443/x": a host and port, no scheme.
            raise BadUrl(
                f"the URL has no scheme: {_short(url)}",
                hint=f"include the scheme, e.g. http://{url}",
            )
        what = "about:blank is the only about: URL allowed" if scheme == "about" else (
            f"the {scheme}: scheme is not allowed"
        )
        raise UrlBlocked(
            f"{what}: {_short(url)}",
            hint=f"add '{scheme}:' to url_allow in config.toml if this is intended",
        )

    def _check_http(
        self, scheme: str, rest: str, url: str, hosts: tuple[_HostAllow, ...]
    ) -> str:
        # Chromium reads "\" as "/" in http(s) URLs up to the query.
        cut = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
        rest = rest[:cut].replace("\\", "/") + rest[cut:]
        if not rest.startswith("//"):
            raise BadUrl(f"the URL has no host: {_short(url)}", hint=_HINT_SCHEME)
        try:
            parts = urlsplit(scheme + ":" + rest)
            explicit_port = parts.port
        except ValueError as exc:
            raise BadUrl(f"cannot parse the URL ({exc}): {_short(url)}") from None
        if not parts.hostname:
            raise BadUrl(f"the URL has no host: {_short(url)}", hint=_HINT_SCHEME)
        host = _canonical_host(parts.hostname, url)
        port = explicit_port if explicit_port is not None else _DEFAULT_PORTS[scheme]
        if host.is_loopback and port in self.blocked_ports and not any(
            h.key == host.key and h.port in (None, port) for h in hosts
        ):
            raise UrlBlocked(
                f"{_short(url)} points at browserd's own control or DevTools port {port}",
                hint=f"add '{host.display}:{port}' to url_allow in config.toml if this is intended",
            )
        netloc = parts.netloc
        at = netloc.rfind("@") + 1
        netloc = netloc[:at] + netloc[at:].lower()
        return urlunsplit((scheme, netloc, parts.path or "/", parts.query, parts.fragment))
