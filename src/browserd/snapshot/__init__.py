"""Page snapshots: the in-page walker (walker.js) and the text formatting around it."""

from browserd.snapshot.script import (
    DESCRIBE_FUNCTION,
    WALKER_SOURCE,
    FindOptions,
    SnapshotOptions,
    cap_text,
    decode_reply,
    dom_snapshot_call,
    find_by_text_call,
    find_call,
    js_literal,
    read_view_call,
    resolve_call,
    snapshot_call,
    splice_frame_text,
)

__all__ = [
    "DESCRIBE_FUNCTION",
    "WALKER_SOURCE",
    "FindOptions",
    "SnapshotOptions",
    "cap_text",
    "decode_reply",
    "dom_snapshot_call",
    "find_by_text_call",
    "find_call",
    "js_literal",
    "read_view_call",
    "resolve_call",
    "snapshot_call",
    "splice_frame_text",
]
