"""Files answered as they are on disk: a download, a capture, a record's video.

:func:`file_response` opens the file before the answer starts (a file pruned
in the meantime is the route's own 404, never a broken body) and streams it
in :data:`CHUNK` pieces read in a worker thread, so a 50 MiB video costs one
chunk of memory, not the whole file. The answer says its ``Content-Length``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path

import trio
from quart import Response

from ..errors import BrowserdError

__all__ = ["CHUNK", "file_response"]

CHUNK = 1024 * 1024
"""How much of a file is read (and held) at a time."""


async def file_response(path: Path, *, content_type: str, headers: Mapping[str, str],
                        missing: Callable[[], BrowserdError]) -> Response:
    """A 200 answer streaming the file at ``path`` with ``headers``.

    Raises ``missing()`` when the file cannot be opened (pruned, never written).
    The file is closed when its body has been sent, or when the client goes away
    (the body's generator is closed; closing is shielded from cancellation).
    """
    try:
        opened = await trio.open_file(path, "rb")
    except OSError:
        raise missing() from None
    try:
        size = os.fstat(opened.fileno()).st_size
    except OSError:
        await opened.aclose()
        raise missing() from None

    async def body() -> AsyncIterator[bytes]:
        try:
            while chunk := await opened.read(CHUNK):
                yield chunk
        finally:
            with trio.CancelScope(shield=True):
                await opened.aclose()

    return Response(body(), status=200, content_type=content_type,
                    headers={**headers, "Content-Length": str(size)})
