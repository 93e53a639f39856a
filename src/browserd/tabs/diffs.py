"""What changed on the page: a snapshot answered as its difference from an earlier one.

Refs are stable (the page side maps each element to one ref for the life of
its document), so a snapshot's lines can be compared by ref: a line whose ref
is new is *added*, a ref that is gone is *removed*, a ref whose line differs
is *changed*; lines without a ref (text) are compared as text. A tab keeps its
last :data:`KEPT` aria snapshots (:class:`SnapshotHistory`, owned by the
tab's ref state; plain code, no I/O). A diff that would not be smaller than
the snapshot itself is not worth it: the caller answers the whole snapshot.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any

import attrs

__all__ = ["KEPT", "SnapshotDiff", "SnapshotHistory", "diff_lines"]

KEPT = 8
_REF = re.compile(r"^ *\[(e\d+)\] ")


@attrs.frozen(kw_only=True)
class SnapshotDiff:
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]

    def chars(self) -> int:
        return sum(len(line) + 1 for line in (*self.added, *self.removed, *self.changed))

    def to_json(self) -> dict[str, list[str]]:
        return {"added": list(self.added), "removed": list(self.removed),
                "changed": list(self.changed)}


def _keyed(text: str) -> OrderedDict[str, str]:
    """Lines by key: the ref, or the line itself (with a count) for lines without one."""
    out: OrderedDict[str, str] = OrderedDict()
    seen: dict[str, int] = {}
    for line in text.splitlines():
        match = _REF.match(line)
        if match is not None:
            key = match.group(1)
        else:
            body = line.strip()
            seen[body] = seen.get(body, 0) + 1
            key = f"text:{body}#{seen[body]}"
        out[key] = line
    return out


def diff_lines(before: str, after: str) -> SnapshotDiff:
    """The difference between two snapshot texts, by ref (see the module docstring)."""
    old, new = _keyed(before), _keyed(after)
    added = tuple(line for key, line in new.items() if key not in old)
    removed = tuple(line for key, line in old.items() if key not in new)
    changed = tuple(line for key, line in new.items()
                    if key in old and old[key].strip() != line.strip())
    return SnapshotDiff(added=added, removed=removed, changed=changed)


class SnapshotHistory:
    """The last :data:`KEPT` snapshot texts of one tab, by snapshotId (with their options)."""

    def __init__(self, kept: int = KEPT) -> None:
        self._kept = kept
        self._texts: OrderedDict[str, tuple[Any, str]] = OrderedDict()

    def remember(self, snapshot_id: str, options: Any, text: str) -> None:
        self._texts[snapshot_id] = (options, text)
        while len(self._texts) > self._kept:
            self._texts.popitem(last=False)

    def get(self, snapshot_id: str) -> tuple[Any, str] | None:
        return self._texts.get(snapshot_id)

    def latest(self) -> tuple[str, Any, str] | None:
        if not self._texts:
            return None
        snapshot_id = next(reversed(self._texts))
        options, text = self._texts[snapshot_id]
        return snapshot_id, options, text
