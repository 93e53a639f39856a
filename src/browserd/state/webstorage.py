"""Web storage (``localStorage`` / ``sessionStorage``) of one origin, through DOMStorage.

Chromium serves the DOMStorage domain from a renderer that has a frame of
the origin ("Frame not found for the given storage id" otherwise). So:

- an origin with a frame in the tab (its main frame, or a same-process
  frame of that origin) is read and written through the tab's session
  (:func:`in_tab`: the caller holds the tab's work slot, refused beside a
  JavaScript dialog);
- ``localStorage`` of any other origin goes through a scratch page
  (:func:`without_tab`, :mod:`.scratch`): first-party storage, no network,
  no page script;
- ``sessionStorage`` belongs to one tab's frames, so an origin that the
  tab has no frame of is 409 NO_FRAME.

Item values are never logged. Errors: BadRequest for a bad origin or an
item the browser refuses (quota); NoFrame; CdpError / BrowserGone from the
connection. The caller owns the deadline; cancellation abandons the call
(a write already sent may still apply).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

import attrs

from ..cdp import CdpConnection, CdpSession
from ..errors import BadRequest, CdpError, NoFrame
from ..tabs.actor import TabActor
from ..tabs.routing import session_by_id
from .scratch import open_scratch_page

__all__ = ["StorageArea", "check_items", "in_tab", "main_frame_origin", "normalize_origin",
           "origin_of_url", "read_items", "remove_items", "without_tab", "write_items"]

T = TypeVar("T")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_NO_FRAME = "Frame not found"


@attrs.frozen(kw_only=True)
class StorageArea:
    """One origin's local or session storage."""

    origin: str
    local: bool

    @property
    def storage_id(self) -> dict[str, Any]:
        return {"securityOrigin": self.origin, "isLocalStorage": self.local}

    @property
    def kind(self) -> str:
        return "local" if self.local else "session"


def normalize_origin(text: Any, field: str = "origin") -> str:
    """``scheme://host[:port]`` of an http(s) origin (default port dropped); else BadRequest."""
    if not isinstance(text, str) or not text or len(text) > 2048:
        raise BadRequest(f"{field} must be an origin like https://example.com", field=field)
    try:
        parts = urlsplit(text)
        host, port = parts.hostname, parts.port
    except ValueError:
        raise BadRequest(f"{field} is not a valid origin", field=field) from None
    if parts.scheme not in _DEFAULT_PORTS or not host or parts.username or parts.password \
            or parts.path not in ("", "/") or parts.query or parts.fragment:
        raise BadRequest(f"{field} must be an http(s) origin: scheme://host[:port], "
                         "nothing more", field=field)
    if ":" in host:
        host = f"[{host}]"
    if port is not None and port != _DEFAULT_PORTS[parts.scheme]:
        return f"{parts.scheme}://{host}:{port}"
    return f"{parts.scheme}://{host}"


def origin_of_url(url: str) -> str | None:
    """The http(s) origin of ``url``, or None (about:blank, data:, …)."""
    try:
        parts = urlsplit(url)
        if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
            return None
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        port = parts.port
    except ValueError:
        return None
    if port is not None and port != _DEFAULT_PORTS[parts.scheme]:
        return f"{parts.scheme}://{host}:{port}"
    return f"{parts.scheme}://{host}"


def check_items(items: Any, field: str = "items") -> dict[str, str]:
    """``{key: value}`` with string keys and values; BadRequest naming the field otherwise."""
    if not isinstance(items, dict):
        raise BadRequest(f"{field} must be an object of string keys and values", field=field)
    for key, value in items.items():
        if not isinstance(value, str):
            raise BadRequest(f"{field}[{key!r}] must be a string", field=field)
    return dict(items)


# -- DOMStorage on one session ------------------------------------------------------


async def read_items(session: CdpSession, area: StorageArea) -> dict[str, str]:
    result = await session.send("DOMStorage.getDOMStorageItems", {"storageId": area.storage_id})
    return {str(k): str(v) for k, v in result.get("entries", [])}


async def write_items(session: CdpSession, area: StorageArea, items: Mapping[str, str]) -> int:
    """Set each item; BadRequest (naming the key) if the browser refuses one (quota)."""
    for key, value in items.items():
        try:
            await session.send("DOMStorage.setDOMStorageItem",
                               {"storageId": area.storage_id, "key": key, "value": value})
        except CdpError as exc:
            if _NO_FRAME in exc.message:
                raise
            raise BadRequest(f"the browser refused the {area.kind} storage item {key[:100]!r} "
                             f"of {area.origin}: {exc.message[:200]}",
                             hint="the origin's storage quota is about 5 MB") from None
    return len(items)


async def remove_items(session: CdpSession, area: StorageArea, keys: list[str] | None) -> int:
    """Remove ``keys`` (None: every item); how many of them were there."""
    present = await read_items(session, area)
    if keys is None:
        await session.send("DOMStorage.clear", {"storageId": area.storage_id})
        return len(present)
    removed = 0
    for key in keys:
        if key in present:
            await session.send("DOMStorage.removeDOMStorageItem",
                               {"storageId": area.storage_id, "key": key})
            removed += 1
    return removed


# -- where to run it ----------------------------------------------------------------


async def main_frame_origin(tab: TabActor) -> str | None:
    """The security origin of the tab's main frame (None: not http(s), e.g. about:blank)."""
    tree = await tab.send("Page.getFrameTree")
    frame = tree.get("frameTree", {}).get("frame", {})
    return origin_of_url(str(frame.get("securityOrigin") or "")) or origin_of_url(
        str(frame.get("url") or ""))


async def in_tab(tab: TabActor, area: StorageArea,
                 op: Callable[[CdpSession], Awaitable[T]]) -> tuple[T] | None:
    """``(op's result,)`` where the tab has a frame of the origin, or None.

    The caller holds the tab's work slot. The tab's own renderer first; for
    sessionStorage also its out-of-process frames (not for localStorage: a
    cross-site frame's is partitioned, and "the origin's localStorage" means
    the first-party one).
    """
    sessions = [tab.session]
    if not area.local:
        sessions += [session_by_id(tab, sid) for sid in list(tab.child_sessions.values())]
    for session in sessions:
        try:
            return (await op(session),)
        except CdpError as exc:
            if _NO_FRAME not in exc.message:
                raise
    return None


async def without_tab(connection: CdpConnection, area: StorageArea,
                      op: Callable[[CdpSession], Awaitable[T]], *,
                      context: str | None = None) -> T:
    """Run ``op`` for an origin no frame of the tab has: a scratch page, or NoFrame.

    The scratch page is made in browser context ``context`` (the tab's: a
    session's, or None for the default context).

    ``localStorage`` goes through a scratch page (no tab's work slot is
    needed); ``sessionStorage`` belongs to one tab's frames, so NoFrame.
    """
    if not area.local:
        raise NoFrame(f"the tab has no frame of {area.origin}: sessionStorage belongs to a "
                      "tab's frames", hint="navigate the tab to the origin first, or pass "
                      "the targetId of a tab that has it open")
    async with open_scratch_page(connection, context) as page:
        await page.visit(area.origin)
        return await op(page.session)
