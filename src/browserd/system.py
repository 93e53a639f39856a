"""The System record: the handles a request handler may use.

Built once in :mod:`browserd.service` (the only place things are wired) and
passed to :func:`browserd.http.app.create_app`. No module-level state.

Each request works on one profile (and maybe one session):
:meth:`System.bind` gives the handler a System whose ``settings``,
``supervisor`` and ``url_policy`` are that profile's, and whose supervisor
answers with the session's tab scope. That is the one place a request's
``profile`` and ``session`` take effect.
"""

from __future__ import annotations

import time

import attrs

from .config import Settings
from .downloads import DownloadStore
from .events import EventHub
from .handoff import HandoffBoard
from .media import MediaStore
from .metrics import Metrics
from .paths import Paths
from .profiles.binding import LiveWithFallback, SessionBoundSupervisor
from .profiles.manager import ProfileManager
from .profiles.profile import Profile
from .supervisor.handle import SupervisorHandle
from .ui import OpsUi
from .uploads import UploadPolicy
from .urlpolicy import UrlPolicy

__all__ = ["System"]


@attrs.frozen(kw_only=True)
class System:
    """The service-wide handles, bound to one profile (and maybe one session).

    ``settings``/``supervisor``/``downloads`` are the bound profile's (the
    default profile's in the service-wide record); ``profiles`` is every
    profile; ``media`` and ``uploads`` are the service's (every capture names its profile and
    session).

    ``handoffs`` (tabs handed to a person), ``metrics`` (``/metrics``) and
    ``ui`` (the ops page's sessions, audit tail, thumbnails, live views) are
    one per service too, as is ``events`` (the event hub: ``GET /events``, ``/ws``
    subscriptions); they have defaults, so a test can leave them out.
    """

    settings: Settings
    paths: Paths
    supervisor: SupervisorHandle
    media: MediaStore
    url_policy: UrlPolicy
    downloads: DownloadStore
    uploads: UploadPolicy
    token: str = attrs.field(repr=False)
    profiles: ProfileManager
    profile: Profile
    session_id: str | None = None
    #: The person's token for offering their own tabs (never the agent's).
    owner_token: str | None = attrs.field(default=None, repr=False)
    handoffs: HandoffBoard = attrs.field(factory=HandoffBoard)
    metrics: Metrics = attrs.field(factory=Metrics)
    ui: OpsUi = attrs.field(factory=OpsUi)
    started_at: float = attrs.field(factory=time.time)
    events: EventHub = attrs.field(factory=EventHub)

    def bind(self, profile: str | None, session: str | None) -> System:
        """This System for a request naming ``profile`` (None: the default) and ``session``.

        Raises ProfileNotFound. An unknown session is found out when the
        handler asks for the runtime (404 SESSION_NOT_FOUND).
        """
        bound = self.profiles.get(profile)
        fallback = bound.spec.live_fallback
        handle: SupervisorHandle
        if session is not None:
            handle = SessionBoundSupervisor(bound, session)
        elif fallback is not None:
            handle = LiveWithFallback(bound, lambda: self.profiles.get(fallback))
        else:
            handle = bound.supervisor
        return attrs.evolve(self, settings=bound.settings, supervisor=handle,
                            url_policy=self.profiles.url_policy, downloads=bound.downloads,
                            profile=bound, session_id=session)
