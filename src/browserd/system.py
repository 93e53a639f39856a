"""The System record: the handles a request handler may use.

Built once in :mod:`browserd.service` (the only place things are wired) and
passed to :func:`browserd.http.app.create_app`. No module-level state.
"""

from __future__ import annotations

import time

import attrs

from .config import Settings
from .downloads import DownloadStore
from .events import EventHub
from .media import MediaStore
from .paths import Paths
from .supervisor import BrowserSupervisor
from .urlpolicy import UrlPolicy

__all__ = ["System"]


@attrs.frozen(kw_only=True)
class System:
    """The service-wide handles: settings, paths, the supervisor, media, URL policy, token,
    and the event hub (``GET /events``, ``/ws`` subscriptions)."""

    settings: Settings
    paths: Paths
    supervisor: BrowserSupervisor
    media: MediaStore
    url_policy: UrlPolicy
    downloads: DownloadStore
    token: str = attrs.field(repr=False)
    started_at: float = attrs.field(factory=time.time)
    events: EventHub = attrs.field(factory=EventHub)
