"""Session records: what an agent did, step by step, to read, export and replay.

:mod:`.model` (steps, targets, shots as plain records), :mod:`.store` (on
disk, bounded by retention), :mod:`.recorder` (the hook every recorded
route call goes through), :mod:`.html` (a self-contained page), :mod:`.scripts`
(Playwright scripts), :mod:`.trace` (a Playwright trace zip), :mod:`.replay` (a
record as route calls again, by role and name) and :mod:`.video` (a tab's screencast
through ffmpeg into WebM, run in the store's nursery; not imported here: it needs tabs).
"""

from __future__ import annotations

from .model import Call, RecordInfo, Shot, Step, Target
from .store import DEFAULT_RETENTION, MAX_STEPS, ActiveRecord, RecordStore, ShotData

__all__ = ["DEFAULT_RETENTION", "MAX_STEPS", "ActiveRecord", "Call", "RecordInfo", "RecordStore",
           "Shot", "ShotData", "Step", "Target"]
