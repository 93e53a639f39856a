"""Downloads kept inside browserd: the per-service store and the per-connection follower."""

from browserd.downloads.follower import DownloadFollower
from browserd.downloads.store import (
    CancelReason,
    DownloadRecord,
    DownloadState,
    DownloadStore,
    download_url,
)

__all__ = [
    "CancelReason",
    "DownloadFollower",
    "DownloadRecord",
    "DownloadState",
    "DownloadStore",
    "download_url",
]
