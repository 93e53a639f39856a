"""The System record: the handles a request handler may use.

Built once in :mod:`browserd.service` (the only place things are wired) and
passed to :func:`browserd.http.app.create_app`. No module-level state.
"""

from __future__ import annotations

import time

import attrs

from .config import Settings
from .downloads import DownloadStore
from .handoff import HandoffBoard
from .media import MediaStore
from .metrics import Metrics
from .paths import Paths
from .supervisor import BrowserSupervisor
from .ui import OpsUi
from .urlpolicy import UrlPolicy

__all__ = ["System"]


@attrs.frozen(kw_only=True)
class System:
    """The service-wide handles: settings, paths, the supervisor, media, URL policy, token.

    ``handoffs`` (tabs handed to a person), ``metrics`` (``/metrics``) and
    ``ui`` (the ops page's sessions, audit tail, thumbnails, live views) are
    one per service too; they have defaults, so a test can leave them out.
    """

    settings: Settings
    paths: Paths
    supervisor: BrowserSupervisor
    media: MediaStore
    url_policy: UrlPolicy
    downloads: DownloadStore
    token: str = attrs.field(repr=False)
    handoffs: HandoffBoard = attrs.field(factory=HandoffBoard)
    metrics: Metrics = attrs.field(factory=Metrics)
    ui: OpsUi = attrs.field(factory=OpsUi)
    started_at: float = attrs.field(factory=time.time)
