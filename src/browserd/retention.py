"""Retention: which files of a store to remove (count, total bytes, age; oldest first).

Plain code shared by the media store (:mod:`browserd.media.store`) and the
download store (:mod:`browserd.downloads.store`): it decides and calls the
store's ``remove``; it never touches the filesystem itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

__all__ = ["RetainedFile", "Retention", "apply_retention"]

MiB = 1024 * 1024


def _non_negative(_inst: object, attribute: attrs.Attribute[Any], value: float) -> None:
    if value < 0:
        raise ValueError(f"{attribute.name} must be >= 0, got {value!r}")


@attrs.frozen(kw_only=True)
class Retention:
    """Limits applied after every save: at most ``max_files`` files, ``max_bytes`` in total,
    none older than ``max_age_s`` seconds (the file just saved is always kept)."""

    max_files: int = attrs.field(default=200, validator=_non_negative)
    max_bytes: int = attrs.field(default=500 * MiB, validator=_non_negative)
    max_age_s: float = attrs.field(default=86400.0, validator=_non_negative)


@attrs.frozen(kw_only=True)
class RetainedFile:
    """One file retention looks at: its name, mtime (wall clock) and size."""

    name: str
    mtime: float
    size: int


def apply_retention(
    entries: list[RetainedFile], limits: Retention, *, now: float, keep: frozenset[str],
    remove: Callable[[str], bool],
) -> tuple[int, list[RetainedFile]]:
    """Remove what ``limits`` do not allow, oldest first by (mtime, name).

    First every file older than ``max_age_s``, then the oldest until at most
    ``max_files`` files and ``max_bytes`` bytes remain. Names in ``keep`` are
    never removed. ``remove(name)`` deletes one file and says whether it is
    gone (a file it could not delete is kept and counted). Returns (how many
    were removed, the files kept). Shared by the media and download stores.
    """
    removed = 0
    survivors: list[RetainedFile] = []
    for entry in entries:
        expired = entry.name not in keep and now - entry.mtime > limits.max_age_s
        if expired and remove(entry.name):
            removed += 1
            continue
        survivors.append(entry)
    survivors.sort(key=lambda e: (e.mtime, e.name))
    count = len(survivors)
    total = sum(e.size for e in survivors)
    kept: list[RetainedFile] = []
    for entry in survivors:
        over = count > limits.max_files or total > limits.max_bytes
        if over and entry.name not in keep and remove(entry.name):
            removed += 1
            count -= 1
            total -= entry.size
            continue
        kept.append(entry)
    return removed, kept
