"""Media storage: screenshots and PDFs written atomically, pruned by retention."""

from browserd.media.store import (
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
    "MediaFile",
    "MediaStatistics",
    "MediaStore",
    "Retention",
    "media_token",
    "media_url",
    "mime_for_extension",
    "open_media_store",
]
