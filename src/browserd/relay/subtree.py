"""The browser subtree of an ``extension`` profile: serve each extension connection in turn.

:func:`extension_subtree` gives the ``subtree`` a
:class:`~browserd.supervisor.BrowserSupervisor` runs for each attempt in
place of launching or attaching to a browser. It loops, inside one attempt:

1. wait (no bound: the user opens the browser whenever they like) for the
   profile's extension to connect to the relay (:meth:`RelayHub.wait_transport`);
2. run browserd's CDP connection over the :class:`RelayTransport` and the tab
   registry over that (:func:`~browserd.supervisor.serve.open_runtime`, as for
   every driver, with no navigation guard, no download follower: see
   :mod:`browserd.relay.transport` for why), then serve it
   (``BrowserSupervisor.serve_runtime``, unwatched: no liveness probe, no
   restore), state ``running``;
3. when the connection ends (the extension went, or browserd closed it),
   clear the runtime and go back to 1. Nothing of the old connection is kept:
   the extension dropped its pins, and the user pins again.

So an extension that comes and goes never uses up the supervisor's restart
budget. Errors other than the connection ending (the relay answering
``Browser.getVersion`` late, a registry failure) end the attempt as usual.
Cancellation (``/stop``, service shutdown) closes the connection: the
extension then drops its pins; the user's tabs stay open.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ..cdp import open_cdp_over
from ..errors import BrowserdError
from ..supervisor.serve import open_runtime
from .hub import RelayHub

if TYPE_CHECKING:
    from ..supervisor import BrowserSupervisor

__all__ = ["extension_subtree"]

log = logging.getLogger(__name__)


def extension_subtree(hub: RelayHub) -> Callable[[BrowserSupervisor], Awaitable[None]]:
    """The ``subtree`` for ``BrowserSupervisor(…, subtree=…)`` of an extension profile."""

    async def serve(supervisor: BrowserSupervisor) -> None:
        settings = supervisor.settings
        while True:
            if hub.transport(settings.profile) is None:
                supervisor.mark_awaiting_extension()  # /start answers; requests are 503
            transport = await hub.wait_transport(settings.profile)
            # No page guards, no commit log, no liveness probe over the relay.
            async with open_runtime(open_cdp_over(transport, transport.description),
                                    settings=settings, events=supervisor.events) as runtime:
                await supervisor.serve_runtime(runtime, watched=False)
            supervisor.mark_awaiting_extension()
            reason = runtime.connection.close_reason
            log.info("profile %s: the extension connection ended (%s); waiting for it again",
                     settings.profile, reason.message if isinstance(reason, BrowserdError)
                     else "closed")

    return serve
