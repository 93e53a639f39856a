"""URLs in logs keep ``scheme://host:port/path`` only.

A URL's userinfo (``user:pass@``), query (``?token=``) and fragment
(``#access_token=``) are where secrets travel, so no log line keeps them.
:func:`loggable_url` is the one function that shortens a URL for a log;
:class:`RedactingFilter`, installed on every handler of the service, applies
it to every URL-looking run of any record (message, arguments and traceback)
as a safety net for lines that were never meant to hold a URL.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import urlsplit

# A scheme, "://" and everything up to whitespace or a quote: linear (one
# character class, no nesting), so a hostile string cannot make it slow.
_URL_RUN = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]{0,31}://[^\s\"'<>`]*")
_OPAQUE_SCHEMES = ("data", "javascript", "vbscript", "blob", "filesystem")
#: Only this much of a URL is parsed (a page can make URLs of megabytes).
PARSED_CHARS = 4096
#: Longest shortened URL; a longer one is cut and ends with "…".
SHOWN_CHARS = 300


def loggable_url(url: str) -> str:
    """``url`` cut to ``scheme://host:port/path``: no userinfo, query or fragment.

    A URL without an authority keeps ``scheme:path`` (``about:blank``), but
    data-carrying schemes (``data:``, ``javascript:``, ``blob:``…) keep only
    their scheme. Bounded work and size whatever a page put in the URL: only
    the first :data:`PARSED_CHARS` characters are read and the result is at
    most :data:`SHOWN_CHARS` characters (then it ends with "…"). Used for
    logs and for the URLs in answers about what a page did (blocked
    navigations). Never raises: an unparsable value becomes a placeholder.
    """
    shown = _shorten(url[:PARSED_CHARS], cut=len(url) > PARSED_CHARS)
    return shown if len(shown) <= SHOWN_CHARS else shown[:SHOWN_CHARS - 1] + "…"


def _shorten(url: str, *, cut: bool = False) -> str:
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme in _OPAQUE_SCHEMES:
            return f"{scheme}:[…]"
        path = parts.path
        if parts.netloc or url[len(scheme) + 1:].startswith("//"):
            if cut and not (path or parts.query or parts.fragment):
                # The authority itself was cut: what was read may be userinfo, not a host.
                return f"{scheme}://[…]" if scheme else "//[…]"
            host = parts.hostname or ""
            if ":" in host:
                host = f"[{host}]"
            port = f":{parts.port}" if parts.port is not None else ""
            prefix = f"{scheme}://" if scheme else "//"
            return f"{prefix}{host}{port}{path}"
        if "@" in path:  # "user:pass@host/path" with no scheme: drop the userinfo
            path = path.rsplit("@", 1)[1]
        return f"{scheme}:{path}" if scheme else path
    except ValueError:
        return "[unparsable url]"


def redact_urls(text: str) -> str:
    """``text`` with every URL-looking run replaced by its :func:`loggable_url`."""
    if "://" not in text:
        return text
    return _URL_RUN.sub(lambda m: loggable_url(m.group(0)), text)


class RedactingFilter(logging.Filter):
    """Rewrites a record so that no URL in it keeps userinfo, query or fragment."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: leave it to the handler's own error path
            return True
        redacted = redact_urls(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact_urls(logging.Formatter().formatException(record.exc_info))
        elif record.exc_text:
            record.exc_text = redact_urls(record.exc_text)
        return True


__all__ = ["PARSED_CHARS", "SHOWN_CHARS", "RedactingFilter", "loggable_url", "redact_urls"]
