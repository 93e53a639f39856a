"""Egress containment rules: which origins a page's requests may reach.

With ``allowed_origins`` set (a profile's, or a session's narrower list),
every request a page makes (documents, frames, subresources, fetch/XHR,
EventSource, beacons, WebSocket handshakes, forms) to an origin that no
pattern allows is stopped before it leaves the browser. This module is the
rule: plain functions and frozen records, no I/O (the CDP side is
:mod:`browserd.tabs.navguard`, which owns ``Fetch``, and
:mod:`browserd.tabs.contain`, handed to it as a :data:`ContainmentFactory`).

Patterns (:func:`parse_origin_pattern`) are ``scheme://host[:port]``:

- ``scheme`` is ``http`` or ``https``. A ``ws:`` URL is judged as ``http:``
  and ``wss:`` as ``https:`` (a WebSocket handshake is an HTTP request to
  that origin, as in CSP).
- ``host`` is a DNS name (ASCII; an internationalised name in its ``xn--``
  form), an IPv4 literal or a bracketed IPv6 literal, compared without
  case. ``*.example.com`` matches every name *under* example.com
  (``a.example.com``, ``a.b.example.com``), not ``example.com`` itself and
  never an IP literal. A bare ``*`` host is refused (that is no
  containment).
- ``port`` is a number or ``*`` (any port). Without one, the scheme's
  default (80 or 443) is meant; ``http://h:80`` and ``http://h`` are the
  same pattern.
- Nothing else: no userinfo, path (a lone ``/`` is accepted), query or
  fragment.

URLs of other schemes (``about:``, ``data:``, ``blob:``, ``javascript:``…)
never reach the network and are not judged here. A URL of a judged scheme
that cannot be read (no host, a bad port, an authority longer than
:data:`PARSED_CHARS`) is refused, never guessed at.

The ledger (:func:`note_blocked` / :func:`blocked_reason`) remembers the
Chromium request ids of the requests the guard stopped, so the tab's
network ring can say ``blockedReason: "egress"`` (Chromium itself reports
them as ``inspector`` blocks). It is process-wide and bounded: request ids
are unique in one browser (renderer pid + counter, or a random loader id).
"""

from __future__ import annotations

import collections
import ipaddress
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

import attrs

if TYPE_CHECKING:
    from .cdp import CdpConnection, CdpSession

__all__ = [
    "EGRESS", "FETCH_ALL", "INTERNAL", "LEDGER_KEPT", "MAX_PATTERNS", "PARSED_CHARS",
    "ContainmentFactory", "EgressPolicy", "EgressScopes", "FetchEnabler", "Judge",
    "OriginPattern", "PageContainment", "Recorder", "blocked_reason", "note_blocked",
    "parse_origin_pattern", "url_origin",
]

EGRESS = "egress"
"""The block reason of a request egress containment stopped."""
INTERNAL = "internal"
""":func:`url_origin`'s answer for a URL that never reaches the network."""
MAX_PATTERNS = 100
"""At most this many patterns in one list."""
PARSED_CHARS = 4096
"""A URL's scheme and authority must end within this many characters."""
LEDGER_KEPT = 5000
"""Request ids remembered by the ledger (the oldest go first)."""
FETCH_ALL: tuple[dict[str, str], ...] = ({"urlPattern": "*", "requestStage": "Request"},)
"""``Fetch.enable`` patterns of a contained session: every request, before it is sent."""

Judge = Callable[[str, str], "str | None"]
"""(url, Chromium resource type) → why the request must be stopped, or None."""
Recorder = Callable[[str, str, str, "str | None"], None]
"""(url, reason, resource type lower-cased, network id) → record one block."""
FetchEnabler = Callable[["CdpSession"], Awaitable[None]]
"""Switches Fetch on for every request of a session (the guard's, which owns Fetch)."""


class PageContainment(Protocol):
    """What the guard runs for one contained page (see :mod:`browserd.tabs.contain`)."""

    async def set_up(self) -> None: ...
    async def run(self) -> None: ...
    def close(self) -> None: ...


ContainmentFactory = Callable[
    ["CdpConnection", str, "EgressPolicy", Judge, Recorder, FetchEnabler], PageContainment]
"""(connection, page session id, policy, judge, record, enable_fetch) → its containment."""

_JUDGED = {"http": ("http", 80), "https": ("https", 443), "ws": ("http", 80),
           "wss": ("https", 443)}
_DEFAULT_PORT = {"http": 80, "https": 443}
_LABEL = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?"  # Chromium allows "_" in names
_DOMAIN_RE = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_PORT_RE = re.compile(r"[0-9]{1,5}")
_SCHEME_RE = re.compile(r"[a-zA-Z][a-zA-Z0-9+.\-]{0,31}")
_Ip = ipaddress.IPv4Address | ipaddress.IPv6Address


def _ip(host: str) -> _Ip | None:
    """``host`` as an IP address (IPv6 given without brackets), or None."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


@attrs.frozen(kw_only=True)
class OriginPattern:
    """One parsed pattern; ``port`` None is any port, ``wildcard`` a ``*.`` host."""

    scheme: str  # "http" | "https"
    host: str  # lower case; an IP literal in its canonical form, IPv6 without brackets
    wildcard: bool = False
    port: int | None = None
    ip: _Ip | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def text(self) -> str:
        """The canonical spelling (default ports left out)."""
        host = f"[{self.host}]" if isinstance(self.ip, ipaddress.IPv6Address) else self.host
        host = f"*.{host}" if self.wildcard else host
        if self.port is None:
            return f"{self.scheme}://{host}:*"
        if self.port == _DEFAULT_PORT[self.scheme]:
            return f"{self.scheme}://{host}"
        return f"{self.scheme}://{host}:{self.port}"

    def matches(self, scheme: str, host: str, port: int) -> bool:
        """Whether the origin ``scheme://host:port`` (as :func:`url_origin` gives it) is allowed."""
        if scheme != self.scheme or (self.port is not None and port != self.port):
            return False
        if self.wildcard:
            return _ip(host) is None and host.endswith("." + self.host)
        if self.ip is not None:
            return _ip(host) == self.ip
        return host == self.host

    def within(self, other: OriginPattern) -> bool:
        """Whether every origin this pattern allows is allowed by ``other`` too."""
        if self.scheme != other.scheme:
            return False
        if other.port is not None and self.port != other.port:
            return False
        if not other.wildcard:
            return not self.wildcard and self.host == other.host and self.ip == other.ip
        if self.ip is not None:
            return False
        return self.host.endswith("." + other.host) or (self.wildcard and self.host == other.host)

    def websocket_url_pattern(self) -> str:
        """This pattern's ``ws:``/``wss:`` form as a URLPattern string (for Chromium rules)."""
        scheme = "ws" if self.scheme == "http" else "wss"
        host = f"[{self.host}]" if isinstance(self.ip, ipaddress.IPv6Address) else self.host
        host = f"*.{host}" if self.wildcard else host
        if self.port is None:
            return f"{scheme}://{host}:*/*"
        if self.port == _DEFAULT_PORT[self.scheme]:
            return f"{scheme}://{host}/*"
        return f"{scheme}://{host}:{self.port}/*"


def parse_origin_pattern(text: object) -> OriginPattern:
    """``text`` as an :class:`OriginPattern`; ValueError saying what is wrong.

    See the module docstring for the grammar. Bounded work (at most 300
    characters are looked at).
    """
    if not isinstance(text, str) or not text or len(text) > 300:
        raise ValueError(f"{str(text)[:80]!r}: an origin pattern is a string like "
                         "https://*.example.com or http://127.0.0.1:8080")
    scheme, sep, rest = text.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in _DEFAULT_PORT:
        hint = " (ws: and wss: URLs are judged by the http: and https: patterns)" if (
            scheme in ("ws", "wss")) else ""
        raise ValueError(f"{text!r}: use an http:// or https:// origin{hint}")
    rest = rest.removesuffix("/")
    if not rest or any(c in rest for c in "/?#@\\") or any(c.isspace() for c in rest):
        raise ValueError(f"{text!r}: only scheme://host[:port]: no user, path, query or "
                         "fragment")
    host, port = _split_host_port(rest, text)
    wildcard = host.startswith("*.")
    if wildcard:
        host = host[2:]
    ip: _Ip | None = None
    if host.startswith("["):
        ip6 = _ip(host[1:-1]) if host.endswith("]") and "%" not in host else None
        if not isinstance(ip6, ipaddress.IPv6Address):
            raise ValueError(f"{text!r}: {host!r} is not an IPv6 address")
        ip, host = ip6, str(ip6)
    else:
        host = host.lower()
        ip = _ip(host) if ":" not in host else None
        if ip is not None:
            host = str(ip)
        elif not _DOMAIN_RE.fullmatch(host) or len(host) > 253:
            raise ValueError(f"{text!r}: {host or '(empty)'!r} is not a host name or IP "
                             "address (write an internationalised name in its xn-- form)")
        elif host.rsplit(".", 1)[-1].isdigit():
            raise ValueError(f"{text!r}: {host!r} looks like an IP address but is not one")
    if wildcard and ip is not None:
        raise ValueError(f"{text!r}: '*.' goes with a domain name, not an IP address")
    if port is None:
        port = _DEFAULT_PORT[scheme]
    elif port == -1:
        port = None
    return OriginPattern(scheme=scheme, host=host, wildcard=wildcard, port=port, ip=ip)


def _split_host_port(rest: str, text: str) -> tuple[str, int | None]:
    """``host[:port]`` → (host, port); port None when absent, -1 for ``*``."""
    port_text: str | None
    if rest.startswith("[") or rest.startswith("*.["):
        close = rest.find("]")
        host, tail = rest[:close + 1], rest[close + 1:]
        if close < 0 or (tail and not tail.startswith(":")):
            raise ValueError(f"{text!r}: bad IPv6 address")
        port_text = tail[1:] if tail else None
    else:
        host, colon, port_text_ = rest.rpartition(":")
        if not colon:
            return rest, None
        port_text = port_text_
    if port_text is None:
        return host, None
    if port_text == "*":
        return host, -1
    if not _PORT_RE.fullmatch(port_text) or not 1 <= int(port_text) <= 65535:
        raise ValueError(f"{text!r}: the port must be 1-65535 or *")
    return host, int(port_text)


def url_origin(url: str) -> tuple[str, str, int] | str | None:
    """``(scheme, host, port)`` to judge ``url`` by; :data:`INTERNAL`; or None (unreadable).

    ``ws``/``wss`` become ``http``/``https``; the host is lower-cased without
    a trailing dot (IPv6 without brackets); the port is explicit or the
    default. Schemes other than http(s)/ws(s) are :data:`INTERNAL`. Only
    the scheme and authority are read, within :data:`PARSED_CHARS`.
    """
    scheme, colon, rest = url[:40].partition(":")
    if not colon or not _SCHEME_RE.fullmatch(scheme):
        return None
    judged = _JUDGED.get(scheme.lower())
    if judged is None:
        return INTERNAL
    rest = url[len(scheme) + 1:PARSED_CHARS]
    if not rest.startswith("//"):
        return None
    end = next((i for i, c in enumerate(rest[2:], 2) if c in "/?#\\"), None)
    if end is None:
        if len(url) > PARSED_CHARS:
            return None
        end = len(rest)
    authority = rest[2:end].rpartition("@")[2]
    try:
        host, port = _split_host_port(authority, url[:80])
    except ValueError:
        return None
    if port == -1:
        return None
    if host.startswith("["):
        if not host.endswith("]") or not isinstance(_ip(host[1:-1]), ipaddress.IPv6Address):
            return None
        host = host[1:-1]
    host = host.lower().rstrip(".") if host != "." else ""
    if not host or not (_DOMAIN_RE.fullmatch(host) or _ip(host) is not None):
        return None
    return judged[0], host, judged[1] if port is None else port


@attrs.frozen(kw_only=True)
class EgressPolicy:
    """The origins one profile's or session's pages may reach (nothing else)."""

    patterns: tuple[OriginPattern, ...]

    @classmethod
    def parse(cls, entries: Iterable[object]) -> EgressPolicy:
        """A policy from pattern strings; ValueError naming the first bad one.

        At least one pattern, at most :data:`MAX_PATTERNS`; repeats are dropped.
        """
        items = list(entries)
        if not items:
            raise ValueError("the list of allowed origins is empty (leave it out to turn "
                             "containment off)")
        if len(items) > MAX_PATTERNS:
            raise ValueError(f"at most {MAX_PATTERNS} allowed origins")
        patterns: dict[OriginPattern, None] = {}
        for item in items:
            patterns.setdefault(parse_origin_pattern(item))
        return cls(patterns=tuple(patterns))

    def narrowed(self, entries: Iterable[object]) -> EgressPolicy:
        """A session's policy: ``entries``, each within one of this policy's patterns.

        Raises ValueError naming an entry that would widen the policy.
        """
        narrower = EgressPolicy.parse(entries)
        for pattern in narrower.patterns:
            if not any(pattern.within(mine) for mine in self.patterns):
                raise ValueError(
                    f"{pattern.text} is not within the profile's allowed origins "
                    f"({', '.join(p.text for p in self.patterns)}): a session can only narrow "
                    "them")
        return narrower

    def verdict(self, url: str) -> str | None:
        """:data:`EGRESS` when a request to ``url`` must be stopped, else None. Never raises."""
        origin = url_origin(url)
        if origin == INTERNAL:
            return None
        if not isinstance(origin, tuple):
            return EGRESS
        scheme, host, port = origin
        return None if any(p.matches(scheme, host, port) for p in self.patterns) else EGRESS

    def to_json(self) -> list[str]:
        return [p.text for p in self.patterns]

    def websocket_rules(self) -> dict[str, Any]:
        """``Network.emulateNetworkConditionsByRule`` parameters: ws(s) to others offline.

        Chromium's Fetch domain does not pause WebSocket handshakes (checked on
        Chromium 156), and ``Network.setBlockedURLs`` does not stop them either;
        an offline condition does. The first matching rule wins: the allowed
        origins come first, online.
        """
        def rule(pattern: str, offline: bool) -> dict[str, Any]:
            return {"urlPattern": pattern, "offline": offline, "latency": 0,
                    "downloadThroughput": -1, "uploadThroughput": -1}

        rules = [rule(p.websocket_url_pattern(), False) for p in self.patterns]
        rules += [rule("ws://*:*/*", True), rule("wss://*:*/*", True)]
        return {"matchedNetworkConditions": rules}


class EgressScopes:
    """Which policy each browser context of one browser has.

    ``default`` is the profile's (None: no containment); a session's context
    gets its own with :meth:`set_context` before any page of it exists.
    """

    def __init__(self, default: EgressPolicy | None = None) -> None:
        self.default = default
        self._contexts: dict[str, EgressPolicy] = {}

    def set_context(self, context_id: str, policy: EgressPolicy) -> None:
        self._contexts[context_id] = policy

    def drop_context(self, context_id: str) -> None:
        self._contexts.pop(context_id, None)

    def policy_for(self, context_id: str | None) -> EgressPolicy | None:
        """The policy of pages in ``context_id`` (the profile's unless the context has one)."""
        if context_id is not None and context_id in self._contexts:
            return self._contexts[context_id]
        return self.default


_LEDGER: collections.OrderedDict[str, str] = collections.OrderedDict()


def note_blocked(request_id: object, reason: str = EGRESS) -> None:
    """Remember that the request ``request_id`` (Chromium's network id) was stopped."""
    if isinstance(request_id, str) and request_id:
        _LEDGER[request_id] = reason
        _LEDGER.move_to_end(request_id)
        while len(_LEDGER) > LEDGER_KEPT:
            _LEDGER.popitem(last=False)


def blocked_reason(request_id: str) -> str | None:
    """Why the guard stopped ``request_id`` (:data:`EGRESS`), or None."""
    return _LEDGER.get(request_id)
