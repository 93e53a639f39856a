"""Cookies: validation, the Playwright cookie shape, filters, and the CDP calls.

Every call goes to the browser target (``Storage.getCookies`` /
``Storage.setCookies``), so cookies are read and written for a whole
browser context, HttpOnly ones included, without a tab and without the
page's help. ``context`` names the browser context (a session's); None is
the default context.
``Storage.setCookies`` silently drops a cookie Chromium refuses, so
:func:`set_cookies` validates first (clear 400s naming the field) and reads
back afterwards to report what did not stick.

Values are never logged. Errors: BadRequest for invalid input; CdpError /
BrowserGone from the connection; the caller owns the deadline
(cancellation abandons the call; a ``Storage.setCookies`` already written
may still apply).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

import attrs

from ..cdp import CdpConnection
from ..errors import BadRequest

__all__ = ["COOKIE_FIELDS", "IGNORED_FIELDS", "MAX_COOKIES", "SAME_SITE", "CookieSetResult",
           "all_cookies", "applies_to_url", "check_filter_url", "clear_cookies",
           "delete_cookies", "domain_matches", "is_partitioned", "select", "set_cookies",
           "to_json", "validate_cookie"]

SAME_SITE = {"strict": "Strict", "lax": "Lax", "none": "None"}
COOKIE_FIELDS = frozenset({"name", "value", "url", "domain", "path", "expires", "httpOnly",
                           "secure", "sameSite"})
#: Fields of a cookie as Chromium or Playwright report it that carry nothing to set.
IGNORED_FIELDS = frozenset({"session", "size", "priority", "sourceScheme", "sourcePort"})
MAX_COOKIES = 3000
_NAME_BAD = re.compile(r"[\x00-\x20\x7f;=,]")
_VALUE_BAD = re.compile(r"[\x00-\x1f\x7f;]")
_DOMAIN_RE = re.compile(r"\.?(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?\.)*"
                        r"[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?|\[[0-9A-Fa-f:.]+\]")
#: Hosts Chromium treats as secure over plain http (Secure cookies are sent there).
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})


@attrs.frozen(kw_only=True)
class CookieSetResult:
    """What :func:`set_cookies` did: how many stuck, which did not (by index)."""

    set: int
    not_set: tuple[dict[str, Any], ...]
    skipped_expired: int


def to_json(cookie: dict[str, Any]) -> dict[str, Any]:
    """A CDP ``Network.Cookie`` in Playwright's shape (session cookies: expires -1).

    A partitioned cookie also has ``partitionKey``: the top-level site.
    """
    expires = cookie.get("expires", -1)
    if cookie.get("session") or not isinstance(expires, (int, float)) or expires < 0:
        expires = -1
    out = {
        "name": cookie.get("name", ""), "value": cookie.get("value", ""),
        "domain": cookie.get("domain", ""), "path": cookie.get("path", "/"),
        "expires": expires, "httpOnly": bool(cookie.get("httpOnly")),
        "secure": bool(cookie.get("secure")),
        "sameSite": cookie.get("sameSite") or "Lax",
    }
    key = cookie.get("partitionKey")
    if key:  # a CHIPS cookie: the top-level site it is kept for
        out["partitionKey"] = key.get("topLevelSite") if isinstance(key, dict) else str(key)
    return out


def is_partitioned(cookie: Any) -> bool:
    """A partitioned (CHIPS) cookie, as Chromium or Playwright reports it."""
    return isinstance(cookie, dict) and bool(cookie.get("partitionKey"))


def _field(where: str, name: str) -> str:
    return f"{where}.{name}"


def validate_cookie(raw: Any, where: str, *, lenient: bool = False) -> dict[str, Any]:
    """One cookie from the API as a CDP ``CookieParam``; BadRequest naming ``where.field``.

    It needs ``url`` or ``domain`` (not both). ``lenient`` ignores the
    read-only fields Chromium and Playwright add (size, session, …), so an
    exported state imports as is.
    """
    if not isinstance(raw, dict):
        raise BadRequest(f"{where} must be an object", field=where)
    unknown = set(raw) - COOKIE_FIELDS - (IGNORED_FIELDS if lenient else frozenset())
    if "partitionKey" in raw and raw["partitionKey"] is not None:
        raise BadRequest(f"{where}: partitioned cookies are not supported",
                         field=_field(where, "partitionKey"))
    unknown.discard("partitionKey")
    if unknown:
        name = sorted(unknown)[0]
        raise BadRequest(f"{where}: unknown field {name!r}", field=_field(where, name),
                         hint="accepted: " + ", ".join(sorted(COOKIE_FIELDS)))
    name = raw.get("name")
    if not isinstance(name, str) or not name or len(name) > 4096 or _NAME_BAD.search(name):
        raise BadRequest(f"{where}.name must be a non-empty cookie name (no spaces, ';', "
                         "'=' or control characters)", field=_field(where, "name"))
    value = raw.get("value")
    if not isinstance(value, str) or len(value) > 4096 or _VALUE_BAD.search(value):
        raise BadRequest(f"{where}.value must be a string without ';' or control characters",
                         field=_field(where, "value"))
    out: dict[str, Any] = {"name": name, "value": value}
    url, domain = raw.get("url"), raw.get("domain")
    if (url is None) == (domain is None):
        raise BadRequest(f"{where} needs either url or domain", field=_field(where, "url"))
    host = ""
    if url is not None:
        host = _check_url(url, _field(where, "url"))
        out["url"] = url
    else:
        if not isinstance(domain, str) or len(domain) > 255 or not _DOMAIN_RE.fullmatch(domain):
            raise BadRequest(f"{where}.domain must be a host name", field=_field(where, "domain"))
        out["domain"] = domain
        host = domain.lstrip(".")
    path = raw.get("path")
    if path is not None:
        if not isinstance(path, str) or not path.startswith("/") or len(path) > 1024 or \
                _VALUE_BAD.search(path):
            raise BadRequest(f"{where}.path must start with '/'", field=_field(where, "path"))
        out["path"] = path
    elif domain is not None:
        out["path"] = "/"
    expires = raw.get("expires")
    if expires is not None:
        if isinstance(expires, bool) or not isinstance(expires, (int, float)) or \
                not math.isfinite(expires) or (expires < 0 and expires != -1):
            raise BadRequest(f"{where}.expires must be seconds since the epoch (-1: a session "
                             "cookie)", field=_field(where, "expires"))
        if expires != -1:
            out["expires"] = float(expires)
    for flag in ("httpOnly", "secure"):
        if flag in raw and raw[flag] is not None:
            if not isinstance(raw[flag], bool):
                raise BadRequest(f"{where}.{flag} must be a boolean", field=_field(where, flag))
            out[flag] = raw[flag]
    same_site = raw.get("sameSite")
    if same_site is not None:
        if not isinstance(same_site, str) or same_site.lower() not in SAME_SITE:
            raise BadRequest(f"{where}.sameSite must be Strict, Lax or None",
                             field=_field(where, "sameSite"))
        out["sameSite"] = SAME_SITE[same_site.lower()]
    _check_rules(out, where, url_scheme=urlsplit(url).scheme if url else None, host=host)
    return out


def _check_url(url: Any, field: str) -> str:
    if not isinstance(url, str) or len(url) > 8192:
        raise BadRequest(f"{field} must be an http(s) URL", field=field)
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        raise BadRequest(f"{field} is not a valid URL", field=field) from None
    if parts.scheme not in ("http", "https") or not host:
        raise BadRequest(f"{field} must be an http(s) URL with a host", field=field)
    return host


def _check_rules(cookie: dict[str, Any], where: str, *, url_scheme: str | None,
                 host: str) -> None:
    """Chromium's refusals, as 400s (it would drop such a cookie without a word)."""
    secure = cookie.get("secure", False)
    if cookie.get("sameSite") == "None" and not secure:
        raise BadRequest(f"{where}: sameSite None needs secure: true",
                         field=_field(where, "sameSite"))
    if secure and url_scheme == "http" and host.lower() not in _LOCAL_HOSTS:
        raise BadRequest(f"{where}: a Secure cookie needs an https url",
                         field=_field(where, "secure"))
    name = cookie["name"]
    if name.lower().startswith("__secure-") and not secure:
        raise BadRequest(f"{where}: a __Secure- cookie needs secure: true",
                         field=_field(where, "secure"))
    if name.lower().startswith("__host-") and (
            not secure or cookie.get("path", "/") != "/"
            or str(cookie.get("domain", "")).startswith(".")):
        raise BadRequest(f"{where}: a __Host- cookie needs secure: true, path '/' and no "
                         "leading-dot domain", field=_field(where, "name"))


# -- filters ------------------------------------------------------------------------


def domain_matches(cookie_domain: str, wanted: str) -> bool:
    """The cookie belongs to ``wanted`` or one of its subdomains."""
    have = cookie_domain.lstrip(".").lower()
    want = wanted.lstrip(".").lower()
    return have == want or have.endswith("." + want)


def applies_to_url(cookie: dict[str, Any], url: str) -> bool:
    """Would the browser send ``cookie`` with a request to ``url`` (RFC 6265 matching)?"""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    domain = str(cookie.get("domain", "")).lower()
    if domain.startswith("."):
        bare = domain[1:]
        if host != bare and not host.endswith("." + bare):
            return False
    elif host != domain:
        return False
    path = parts.path or "/"
    cookie_path = str(cookie.get("path") or "/")
    if not (path == cookie_path or (path.startswith(cookie_path) and (
            cookie_path.endswith("/") or path[len(cookie_path)] == "/"))):
        return False
    return not (bool(cookie.get("secure")) and parts.scheme != "https"
                and host not in _LOCAL_HOSTS)


def select(cookies: Iterable[dict[str, Any]], *, name: str | None = None,
           domain: str | None = None, url: str | None = None) -> list[dict[str, Any]]:
    """The cookies matching every filter given."""
    out = []
    for cookie in cookies:
        if name is not None and cookie.get("name") != name:
            continue
        if domain is not None and not domain_matches(str(cookie.get("domain", "")), domain):
            continue
        if url is not None and not applies_to_url(cookie, url):
            continue
        out.append(cookie)
    return out


def check_filter_url(url: str | None) -> None:
    if url is not None:
        _check_url(url, "url")


# -- the browser --------------------------------------------------------------------


def _in_context(params: dict[str, Any], context: str | None) -> dict[str, Any]:
    return params if context is None else {**params, "browserContextId": context}


async def all_cookies(connection: CdpConnection, context: str | None = None
                      ) -> list[dict[str, Any]]:
    """Every cookie of browser context ``context`` (None: the default context)."""
    result = await connection.send("Storage.getCookies", _in_context({}, context))
    return [c for c in result.get("cookies", []) if isinstance(c, dict)]


def _same(cookie: dict[str, Any], param: dict[str, Any]) -> bool:
    if cookie.get("name") != param["name"] or cookie.get("value") != param["value"]:
        return False
    if "path" in param and cookie.get("path") != param["path"]:
        return False
    if "domain" in param:
        return str(cookie.get("domain", "")).lstrip(".").lower() == \
            str(param["domain"]).lstrip(".").lower()
    host = (urlsplit(param["url"]).hostname or "").lower()
    return str(cookie.get("domain", "")).lstrip(".").lower() == host


async def set_cookies(connection: CdpConnection, params: list[dict[str, Any]],
                      context: str | None = None) -> CookieSetResult:
    """Set validated cookies (see :func:`validate_cookie`) and read back what stuck.

    Already-expired cookies are not sent (Chromium would only delete their
    namesakes) and are counted in ``skipped_expired``. Returns the count set
    and, for each cookie the browser dropped, ``{index, name, domain}``.
    """
    now = time.time()
    live = [(i, p) for i, p in enumerate(params) if not (0 <= p.get("expires", -1) <= now)]
    if live:
        await connection.send("Storage.setCookies",
                              _in_context({"cookies": [p for _, p in live]}, context))
    present = await all_cookies(connection, context) if live else []
    not_set = tuple(
        {"index": i, "name": p["name"], "domain": p.get("domain")
         or urlsplit(p["url"]).hostname}
        for i, p in live if not any(_same(c, p) for c in present))
    return CookieSetResult(set=len(live) - len(not_set), not_set=not_set,
                           skipped_expired=len(params) - len(live))


async def delete_cookies(connection: CdpConnection, victims: list[dict[str, Any]],
                         context: str | None = None) -> int:
    """Delete these cookies (as read from the browser); the number gone afterwards.

    A cookie is deleted by setting its exact namesake (name, domain, path,
    secure) already expired: ``Storage`` has no per-cookie delete.
    """
    if not victims:
        return 0
    tombstones = []
    for c in victims:
        stone: dict[str, Any] = {"name": c["name"], "value": "", "domain": c["domain"],
                                 "path": c.get("path", "/"), "expires": 1,
                                 "secure": bool(c.get("secure")),
                                 "httpOnly": bool(c.get("httpOnly"))}
        if c.get("sameSite"):
            stone["sameSite"] = c["sameSite"]
        if c.get("partitionKey"):
            stone["partitionKey"] = c["partitionKey"]
        tombstones.append(stone)
    await connection.send("Storage.setCookies", _in_context({"cookies": tombstones}, context))
    left = await all_cookies(connection, context)
    keys = {(c["name"], c["domain"], c.get("path")) for c in left}
    return sum(1 for c in victims if (c["name"], c["domain"], c.get("path")) not in keys)


async def clear_cookies(connection: CdpConnection, context: str | None = None) -> int:
    """Delete every cookie of ``context``; the number there were."""
    count = len(await all_cookies(connection, context))
    await connection.send("Storage.clearCookies", _in_context({}, context))
    return count
