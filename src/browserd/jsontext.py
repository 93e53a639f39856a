"""Decoding Chromium's JSON so that page data can never make a message vanish.

What Chromium 156 sends (measured, the same over the websocket and over
``--remote-debugging-pipe``): ASCII-only JSON, every non-ASCII character
escaped as ``\\uXXXX``. A lone UTF-16 surrogate from page text (a title,
an aria-label, a console argument, an eval result) arrives as a lone escape
such as ``"a\\ud800b"``: valid UTF-8 bytes, but JSON that orjson refuses (no
Unicode string may hold a lone surrogate). The page's own
``JSON.stringify`` (the snapshot walker's output) escapes them the same way.

:func:`loads` keeps orjson as the fast path. When it refuses, the text is
repaired in one linear pass (each lone surrogate escape becomes ``\\ufffd``,
a well-formed pair is kept; invalid UTF-8 bytes, should a transport ever
send raw ones, become U+FFFD) and parsed again. Only a message that is still
not JSON raises :class:`UndecodableMessage`; :func:`reply_id` then finds the
command id in the raw bytes so that the caller can fail that one command.

:func:`dumps` is the other side: JSON for an HTTP answer, with any lone
surrogate in a Python string replaced rather than failing the answer.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

REPLACEMENT = "\ufffd"

# The repair works on bytes with C-speed passes only (a hostile page can put a
# million lone surrogates in one title): escaped backslashes and well-formed
# pairs are first swapped for bytes that valid JSON never holds raw (NUL,
# SOH, STX), so that what is left of "\\uD800"-"\\uDFFF" is lone; then they are put back.
# (Literal replacements only: re.sub's C fast path. The "\\u" of a pair's
# high half becomes SOH, that of its low half STX.)
_PAIR_HIGH = re.compile(rb"\\u(?=[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})")
_PAIR_LOW = re.compile(rb"(?<=\x01[dD][89abAB][0-9a-fA-F]{2})\\u")
_LONE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_ESCAPED_BACKSLASH, _HIDDEN_BACKSLASH = b"\\\\", b"\x00"
_HIGH_MARK, _LOW_MARK = b"\x01", b"\x02"
_LEADING_ID = re.compile(rb'\A\s*\{\s*"id"\s*:\s*(\d{1,18})\s*[,}]')
_SURROGATES = re.compile("[\ud800-\udfff]")


class UndecodableMessage(ValueError):
    """The bytes are not JSON even after repairing surrogates and UTF-8."""


def repair_surrogate_escapes(data: bytes) -> bytes:
    """``data`` with every lone ``\\uD800``-``\\uDFFF`` escape replaced by ``\\ufffd``.

    Linear: a few C-level passes. Bytes that already hold raw NUL, SOH or STX are
    not JSON; they are returned unchanged (and fail to parse as before).
    """
    if b"\\u" not in data or any(m in data for m in (_HIDDEN_BACKSLASH, _HIGH_MARK, _LOW_MARK)):
        return data
    hidden = data.replace(_ESCAPED_BACKSLASH, _HIDDEN_BACKSLASH)
    hidden = _PAIR_HIGH.sub(_HIGH_MARK, hidden)
    hidden = _PAIR_LOW.sub(_LOW_MARK, hidden)
    hidden = _LONE.sub(rb"\\ufffd", hidden)
    return (hidden.replace(_HIGH_MARK, b"\\u").replace(_LOW_MARK, b"\\u")
            .replace(_HIDDEN_BACKSLASH, _ESCAPED_BACKSLASH))


def loads(data: bytes | str) -> Any:
    """Parse one JSON message; lone surrogates and bad UTF-8 become U+FFFD.

    Raises UndecodableMessage when the message is not JSON at all.
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    raw = raw.decode("utf-8", "replace").encode("utf-8")
    try:
        return orjson.loads(repair_surrogate_escapes(raw))
    except orjson.JSONDecodeError as exc:
        raise UndecodableMessage(str(exc)) from None


def reply_id(data: bytes | str) -> int | None:
    """The ``"id"`` of a command reply, read from the raw text (Chromium puts it first)."""
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    found = _LEADING_ID.match(raw[:64])
    return int(found.group(1)) if found else None


def scrub(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATES.sub(REPLACEMENT, value)
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub(v) for v in value]
    return value


def dumps(value: Any, option: int | None = None) -> bytes:
    """orjson.dumps, but a string holding a lone surrogate is repaired, not fatal."""
    try:
        return orjson.dumps(value, option=option)
    except orjson.JSONEncodeError:
        return orjson.dumps(scrub(value), option=option)


__all__ = ["REPLACEMENT", "UndecodableMessage", "dumps", "loads", "repair_surrogate_escapes",
           "reply_id", "scrub"]
