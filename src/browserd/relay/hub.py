"""RelayHub: the extension connections of every profile, one at most each.

The hub is what a profile with ``driver = "extension"`` asks for its
transport (:meth:`RelayHub.wait_transport`), and what the ``/relay``
endpoint (:mod:`browserd.relay.door`) registers each authenticated
extension connection with. It owns the :class:`PairingStore` and knows each
profile's colour (badge and tab group) through ``colour_of``.

One connection per profile: a second one is refused with
:class:`~browserd.errors.RelayBusy` while the first is open (refuse, never
replace: a stray second browser must not take over tabs the user shared in
the first). The hub holds no tasks of its own; waits are bounded by the
caller.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import trio

from ..errors import ExtensionNotConnected, RelayBusy
from .pairing import PairingStore
from .transport import RelayTransport

__all__ = ["DEFAULT_COLOUR", "GROUP_COLOURS", "RelayHub", "group_colour"]

log = logging.getLogger(__name__)

DEFAULT_COLOUR = "#0066CC"
GROUP_COLOURS: dict[str, tuple[int, int, int]] = {
    "grey": (0x5F, 0x63, 0x68), "blue": (0x1A, 0x73, 0xE8), "red": (0xD9, 0x30, 0x25),
    "yellow": (0xF9, 0xAB, 0x00), "green": (0x1E, 0x8E, 0x3E), "pink": (0xD0, 0x18, 0x84),
    "purple": (0x93, 0x34, 0xE6), "cyan": (0x00, 0x7B, 0x83), "orange": (0xFA, 0x90, 0x3E),
}
"""Chrome's tab-group colours (``chrome.tabGroups.Color``) and their RGB."""


def group_colour(colour: str) -> str:
    """The tab-group colour nearest to ``colour`` (``#RRGGBB``; anything else: blue)."""
    try:
        rgb = tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
    except (ValueError, IndexError):
        return "blue"
    if len(colour) != 7 or not colour.startswith("#"):
        return "blue"
    return min(GROUP_COLOURS, key=lambda name: sum(
        (a - b) ** 2 for a, b in zip(rgb, GROUP_COLOURS[name], strict=True)))


class RelayHub:
    """The relay's registry of extension connections (module docstring).

    ``on_change(profile)`` is called (synchronously; it must not block)
    when a profile's extension connects or disconnects and when its set of
    pinned tabs changes: the consent scope re-reads
    ``transport(profile).pinned_targets()`` then.
    """

    def __init__(self, pairing: PairingStore, *,
                 colour_of: Callable[[str], str] | None = None,
                 on_change: Callable[[str], None] | None = None) -> None:
        self.pairing = pairing
        self._colour_of = colour_of
        self.on_change = on_change
        self._transports: dict[str, RelayTransport] = {}
        self._changed = trio.Event()

    def colour(self, profile: str) -> str:
        """The profile's ``#RRGGBB`` colour (badge and tab group)."""
        return self._colour_of(profile) if self._colour_of is not None else DEFAULT_COLOUR

    def transport(self, profile: str) -> RelayTransport | None:
        """The open transport of ``profile``'s extension, or None."""
        transport = self._transports.get(profile)
        return transport if transport is not None and not transport.is_closed else None

    def require_transport(self, profile: str) -> RelayTransport:
        """The open transport of ``profile``'s extension; 503 EXTENSION_NOT_CONNECTED if none."""
        transport = self.transport(profile)
        if transport is None:
            raise ExtensionNotConnected(
                f"the browserd extension of profile {profile!r} is not connected")
        return transport

    def connected_profiles(self) -> list[str]:
        return [p for p, t in self._transports.items() if not t.is_closed]

    async def wait_transport(self, profile: str) -> RelayTransport:
        """Wait (caller's deadline) until ``profile``'s extension is connected; its transport.

        Cancellation ends the wait and changes nothing.
        """
        while True:
            transport = self.transport(profile)
            if transport is not None:
                return transport
            await self._changed.wait()

    def register(self, profile: str, transport: RelayTransport) -> None:
        """Make ``transport`` the profile's connection; RelayBusy while another is open."""
        if self.transport(profile) is not None:
            raise RelayBusy(f"an extension is already connected for profile {profile!r}")
        self._transports[profile] = transport
        transport.on_change = lambda: self._notify(profile)
        log.info("relay: the extension of profile %s connected", profile)
        self._notify(profile)

    def unregister(self, profile: str, transport: RelayTransport) -> None:
        """Forget ``transport`` if it is still the profile's connection (idempotent)."""
        if self._transports.get(profile) is transport:
            del self._transports[profile]
            log.info("relay: the extension of profile %s disconnected", profile)
            self._notify(profile)

    def _notify(self, profile: str) -> None:
        self._changed.set()
        self._changed = trio.Event()
        if self.on_change is not None:
            try:
                self.on_change(profile)
            except Exception:
                log.exception("relay: on_change failed")
