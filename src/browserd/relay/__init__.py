"""The extension driver's relay: pairing, the ``/relay`` endpoints, the CDP emulation.

- :mod:`.pairing` — one-time codes and relay tokens (files under ``<config>/relay``);
- :mod:`.hub` — the extension connection of each profile (one at most);
- :mod:`.door` — ``POST /relay/pair`` and the ``/relay`` WebSocket, in front of the Guard:
  a front door (it borrows the guard's ASGI types), so this ``__init__`` does not import
  it and the profile manager can import the rest without reaching the HTTP layer;
- :mod:`.records` — the records (a shared tab, a request in flight);
- :mod:`.transport` — :class:`RelayTransport`, a browser endpoint emulated over one
  extension connection, for :func:`browserd.cdp.open_cdp_over`;
- :mod:`.subtree` — :func:`extension_subtree`, an extension profile's browser subtree.

The extension itself is package data in ``browserd/extension/``.

Hooking it into the service (one hub per service; ``RelayDoor`` from :mod:`.door`)::

    hub = RelayHub(PairingStore(paths.config_dir), colour_of=<profile name -> "#RRGGBB">,
                   on_change=<profile name -> None: re-read its pinned tabs>)
    app = RelayDoor(wrap(front, system, token), hub, control_port=settings.control_port)
    BrowserSupervisor(settings, paths, subtree=extension_subtree(hub), events=...)

and ``hub.transport(profile).pinned_targets()`` lists what the user shared.
"""

from __future__ import annotations

from .hub import RelayHub, group_colour
from .pairing import PairedExtension, PairingCode, PairingStore
from .records import PinnedTarget
from .subtree import extension_subtree
from .transport import RelayTransport

__all__ = ["PairedExtension", "PairingCode", "PairingStore", "PinnedTarget", "RelayHub",
           "RelayTransport", "extension_subtree", "group_colour"]
