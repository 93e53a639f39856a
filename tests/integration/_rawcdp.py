"""A tiny raw CDP client for integration tests (a stand-in for browserd.cdp).

The client and the launcher are the drills' own (supervision/rawcdp.py and
supervision/chromium.py), re-exported here under the names the tests use.
:func:`launch_chromium`
starts a headless Chromium on an ephemeral DevTools port in a fresh profile
(synchronously, so one browser can serve a whole test module) and yields
its browser websocket URL. :func:`open_cdp` connects to it from trio and
yields a :class:`RawCdp` whose :meth:`RawCdp.send` issues one command and
waits for its reply. :func:`open_page` creates a tab, attaches to it with a
flattened session, and closes it again on exit.

Errors: a command answered with an error raises :class:`CdpCommandError`; a
dead connection fails every pending command with :class:`CdpClosed`.
Cancellation: cancelling :meth:`RawCdp.send` abandons the reply (it is dropped
when it arrives); leaving :func:`open_cdp` cancels the reader task and closes
the websocket.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import trio
from supervision import chromium as plain
from supervision.rawcdp import CdpClosed, CdpCommandError, RawCdp, open_cdp

__all__ = ["CdpClosed", "CdpCommandError", "RawCdp", "launch_chromium", "open_cdp", "open_page"]


@contextlib.contextmanager
def launch_chromium(
    startup_timeout: float = 20.0, extra_args: tuple[str, ...] = ()
) -> Iterator[str]:
    """Start headless Chromium on an ephemeral DevTools port; yield its ws URL.

    The process, its group and its profile directory are removed on exit.
    Raises RuntimeError if DevTools does not answer in time.
    """
    profile = Path(tempfile.mkdtemp(prefix="browserd-test-profile-"))
    try:
        chromium = plain.launch_chromium(
            profile, cdp_port=0, timeout=startup_timeout,
            extra_args=("--window-size=1280,720", *extra_args))
        try:
            assert chromium.ws_url is not None
            yield chromium.ws_url
        finally:
            chromium.stop()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


@contextlib.asynccontextmanager
async def open_page(cdp: RawCdp) -> AsyncIterator[str]:
    """Create a tab and a flattened session to it; yield the session id."""
    target = await cdp.send("Target.createTarget", {"url": "about:blank"})
    target_id = target["targetId"]
    try:
        attached = await cdp.send("Target.attachToTarget", {"targetId": target_id, "flatten": True})
        yield attached["sessionId"]
    finally:
        with (
            trio.CancelScope(shield=True),
            trio.move_on_after(5),
            contextlib.suppress(CdpClosed, CdpCommandError),
        ):
            await cdp.send("Target.closeTarget", {"targetId": target_id})
