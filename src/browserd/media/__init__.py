"""Media storage: screenshots and PDFs written atomically, pruned by retention."""

from browserd.media.store import (
    CaptureOrigin,
    MediaFile,
    MediaStatistics,
    MediaStore,
    Retention,
    media_token,
    media_url,
    mime_for_extension,
    open_media_store,
)

__all__ = [
    "CaptureOrigin",
    "MediaFile",
    "MediaStatistics",
    "MediaStore",
    "Retention",
    "media_token",
    "media_url",
    "mime_for_extension",
    "open_media_store",
]
