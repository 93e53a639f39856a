"""What the MediaStore tests share (test_media_store.py, test_media_store_retention.py).

Constants (:data:`NAME_RE`, a screenshot's file name; :data:`ROOMY`, a retention
nothing reaches) and small helpers: a directory's listing and its temp files,
setting a file's mtime, a deterministic payload, saving one PNG.
"""

from __future__ import annotations

import os
import random
import re
from pathlib import Path

from browserd.media import MediaFile, MediaStore, Retention

__all__ = ["NAME_RE", "ROOMY", "listing", "payload", "save_png", "set_mtime", "temps"]


NAME_RE = re.compile(r"screenshot-[0-9]{8}-[0-9]{6}-[0-9a-f]{24}\.png")
ROOMY = Retention(max_files=10_000, max_bytes=1 << 40, max_age_s=10 * 86400.0)


def listing(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


def temps(directory: Path) -> list[str]:
    return [n for n in os.listdir(directory) if n.endswith(".tmp")]


def set_mtime(path: Path, when: float) -> None:
    os.utime(path, (when, when))


def payload(n: int, seed: int = 0) -> bytes:
    return random.Random(seed).randbytes(n)


async def save_png(store: MediaStore, data: bytes) -> MediaFile:
    return await store.save(data, kind="screenshot", ext="png", mime="image/png")
