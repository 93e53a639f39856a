"""The ops page (``/ui``): sessions, its gate, the audit tail, thumbnails and the live view.

:class:`OpsUi` bundles the service-wide state the page needs; one per
service, held by the ``System``. The HTTP side is
:mod:`browserd.http.routes.ui`; the page itself is ``static/``.
"""

from __future__ import annotations

import attrs

from .audit import AuditTail
from .live import LiveViews
from .sessions import UiSessions
from .thumbnails import ThumbnailCache

__all__ = ["AuditTail", "LiveViews", "OpsUi", "ThumbnailCache", "UiSessions"]


@attrs.frozen(kw_only=True)
class OpsUi:
    """The ops page's state of one service."""

    sessions: UiSessions = attrs.field(factory=UiSessions)
    audit: AuditTail = attrs.field(factory=AuditTail)
    thumbnails: ThumbnailCache = attrs.field(factory=ThumbnailCache)
    live: LiveViews = attrs.field(factory=LiveViews)
