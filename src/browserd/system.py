"""The System record: the handles a request handler may use.

Built once in :mod:`browserd.service` (the only place things are wired) and
passed to :func:`browserd.http.app.create_app`. No module-level state.
"""

from __future__ import annotations

import time

import attrs
import trio

from .browser.supervisor import BrowserSupervisor
from .config import Settings
from .downloads import DownloadStore
from .media import MediaStore
from .paths import Paths
from .urlpolicy import UrlPolicy


@attrs.frozen(kw_only=True)
class System:
    settings: Settings
    paths: Paths
    supervisor: BrowserSupervisor
    media: MediaStore
    url_policy: UrlPolicy
    capture_limiter: trio.CapacityLimiter
    downloads: DownloadStore  # navdl
    token: str = attrs.field(repr=False)
    started_at: float = attrs.field(factory=time.time)
