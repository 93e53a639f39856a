"""Files answered as they are on disk: streamed a chunk at a time, with their length."""

from __future__ import annotations

from pathlib import Path

import pytest

from browserd.errors import NotFound
from browserd.http.files import CHUNK, file_response


async def test_a_file_is_streamed_in_chunks_with_its_length(tmp_path: Path) -> None:
    data = bytes(range(256)) * (CHUNK * 5 // 2 // 256)  # two and a half chunks
    path = tmp_path / "video.webm"
    path.write_bytes(data)
    response = await file_response(path, content_type="video/webm",
                                   headers={"Content-Disposition": "inline"},
                                   missing=lambda: NotFound("gone"))
    assert response.status_code == 200 and response.mimetype == "video/webm"
    assert response.headers["Content-Length"] == str(len(data))
    assert response.headers["Content-Disposition"] == "inline"
    pieces = [piece async for piece in response.response]  # type: ignore[attr-defined]
    assert [len(p) for p in pieces] == [CHUNK, CHUNK, len(data) - 2 * CHUNK]
    assert b"".join(pieces) == data


async def test_a_missing_file_is_the_routes_own_error(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="pruned"):
        await file_response(tmp_path / "nothing", content_type="image/png", headers={},
                            missing=lambda: NotFound("pruned"))
