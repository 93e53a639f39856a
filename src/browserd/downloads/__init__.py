"""Downloads kept inside browserd: the per-service store, the per-connection follower."""

from browserd.downloads.follower import DownloadFollower
from browserd.downloads.store import (
    CancelReason,
    DownloadRecord,
    DownloadState,
    DownloadStatistics,
    DownloadStore,
    download_url,
    remove_downloads,
)
from browserd.downloads.wait import wait_next_download

__all__ = [
    "CancelReason",
    "DownloadFollower",
    "DownloadRecord",
    "DownloadState",
    "DownloadStatistics",
    "DownloadStore",
    "download_url",
    "remove_downloads",
    "wait_next_download",
]
