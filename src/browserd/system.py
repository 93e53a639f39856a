"""The System record: the handles a request handler may use.

Built once in :mod:`browserd.service` (the only place things are wired) and
passed to :func:`browserd.http.app.create_app`. No module-level state.

Each request works on one profile (and maybe one session):
:meth:`System.bind` gives the handler a System whose ``settings``,
``supervisor`` and ``url_policy`` are that profile's, and whose
:meth:`System.require_runtime` answers with the runtime that request works on
(the session's tab scope, a live profile's fallback, the person's tabs granted to
other tokens hidden: :mod:`browserd.profiles.binding`). That is the one place a
request's ``profile`` and ``session`` take effect.
"""

from __future__ import annotations

import time

import attrs

from .config import Settings
from .confirm import ConfirmationBoard
from .downloads import DownloadStore
from .errors import ProfileNotFound, SessionNotFound
from .events import EventHub
from .handoff import HandoffBoard
from .media import MediaStore
from .metrics import Metrics
from .paths import Paths
from .principals import OWNER, Principal, TokenStore
from .profiles.binding import RuntimeOf, grants_hidden, live_with_fallback, session_bound
from .profiles.manager import ProfileManager
from .profiles.profile import Profile
from .profilespec import Driver
from .records import RecordStore
from .supervisor import BrowserSupervisor
from .supervisor.runtime import BrowserRuntime
from .tabrequests import TabRequestBoard
from .ui import OpsUi
from .uploads import UploadPolicy
from .urlpolicy import UrlPolicy
from .vault import Vault

__all__ = ["System"]


@attrs.frozen(kw_only=True)
class System:
    """The service-wide handles, bound to one profile (and maybe one session).

    ``settings``/``supervisor``/``downloads`` are the bound profile's (the
    default profile's in the service-wide record): ``supervisor`` is always the
    profile's own (its state, start and stop, figures), and the runtime a request
    works on is :meth:`require_runtime`'s, never the supervisor's; ``profiles`` is every
    profile; ``media`` and ``uploads`` are the service's (every capture names its profile and
    session).

    ``handoffs`` (tabs handed to a person), ``metrics`` (``/metrics``) and
    ``ui`` (the ops page's sessions, audit tail, thumbnails, live views) are
    one per service too, as is ``events`` (the event hub: ``GET /events``, ``/ws``
    subscriptions); they have defaults, so a test can leave them out.
    """

    settings: Settings
    paths: Paths
    supervisor: BrowserSupervisor
    media: MediaStore
    url_policy: UrlPolicy
    downloads: DownloadStore
    uploads: UploadPolicy
    token: str = attrs.field(repr=False)
    profiles: ProfileManager
    profile: Profile
    session_id: str | None = None
    #: The runtime this request works on, as :meth:`bind` bound it (its session's scope,
    #: a live profile's fallback, the tabs granted to other tokens hidden); None: the
    #: supervisor's own (the service-wide record). Read through :meth:`require_runtime`.
    runtime_of: RuntimeOf | None = attrs.field(default=None, repr=False)
    #: The person's token for offering their own tabs (never the agent's).
    owner_token: str | None = attrs.field(default=None, repr=False)
    handoffs: HandoffBoard = attrs.field(factory=HandoffBoard)
    metrics: Metrics = attrs.field(factory=Metrics)
    ui: OpsUi = attrs.field(factory=OpsUi)
    started_at: float = attrs.field(factory=time.time)
    events: EventHub = attrs.field(factory=EventHub)
    #: Every credential of the service (the owner, the default agent, minted tokens).
    tokens: TokenStore = attrs.field(repr=False, default=attrs.Factory(
        lambda self: TokenStore(None, agent_token=self.token, owner_token=self.owner_token),
        takes_self=True))
    #: The person's secrets (agents type them by name; every answer is redacted of them).
    vault: Vault = attrs.field(factory=lambda: Vault(None, None), repr=False)
    #: Agent actions held for the person's confirmation (the ``confirm`` setting).
    confirmations: ConfirmationBoard = attrs.field(factory=ConfirmationBoard)
    #: Agents' requests for the person's tabs, and the grants their approvals made.
    tab_requests: TabRequestBoard = attrs.field(factory=TabRequestBoard)
    #: Session records (``/record/start``; kept under the data directory, bounded).
    records: RecordStore = attrs.field(repr=False, default=attrs.Factory(
        lambda self: RecordStore(self.paths.data_dir / "records"), takes_self=True))
    #: Who this request is (the service-wide record: the person, for wiring).
    principal: Principal = OWNER
    #: What refuses the running route's tab work (its declared ``blocked_by``: ``dialog``,
    #: ``handoff``); set by :meth:`running` for each call, None outside a route call
    #: (then tab work refuses to run: the route's declaration decides, never a default).
    blocked_by: frozenset[str] | None = None

    def require_runtime(self) -> BrowserRuntime:
        """The running browser as this request may use it (its session's tabs, …).

        Raises what the binding says (404 SESSION_NOT_FOUND for a session that
        is gone, ProfileNotFound for a deleted fallback) and the supervisor's own
        503 when no browser runs. Plain code: nothing to cancel.
        """
        return self.runtime_of() if self.runtime_of is not None else (
            self.supervisor.require_runtime())

    def running(self, blocked_by: frozenset[str] | None) -> System:
        """This System for one call of a route that declares ``blocked_by``."""
        return attrs.evolve(self, blocked_by=blocked_by)

    def acting_as(self, principal: Principal) -> System:
        """This System for a request of ``principal`` (what bind then lets it see)."""
        return attrs.evolve(self, principal=principal)

    def bind(self, profile: str | None, session: str | None) -> System:
        """This System for a request naming ``profile`` (None: the default) and ``session``.

        Raises ProfileNotFound. An unknown session is found out when the
        handler asks for the runtime (404 SESSION_NOT_FOUND). The principal's
        limits apply here: a profile or session outside its token is 404 as if
        it did not exist, and a token bound to one session works in it when
        the request names none.
        """
        who = self.principal
        if session is None:
            session = who.default_session()
        if not who.sees_session(session):
            raise SessionNotFound(
                f"no session {session!r}" if session is not None
                else f"token {who.name!r} works in its sessions only: name one",
                hint="the sessions of your token: GET /tokens")
        bound = self.profiles.get(profile)
        if not who.sees_profile(bound.name):
            raise ProfileNotFound(f"no profile {bound.name!r}", hint="GET /profiles lists them")
        fallback = bound.spec.live_fallback
        runtime_of: RuntimeOf
        if session is not None:
            runtime_of = session_bound(bound, session)
        elif fallback is not None:
            runtime_of = live_with_fallback(bound, lambda: self.profiles.get(fallback))
        else:
            runtime_of = bound.supervisor.require_runtime
        if not who.is_owner and bound.spec.driver in (Driver.LIVE, Driver.EXTENSION):
            board, name, token = self.tab_requests, bound.name, who.name
            runtime_of = grants_hidden(runtime_of, lambda: board.hidden_from(token, name))
        return attrs.evolve(self, settings=bound.settings, supervisor=bound.supervisor,
                            runtime_of=runtime_of, url_policy=self.profiles.url_policy,
                            downloads=bound.downloads, profile=bound, session_id=session)
