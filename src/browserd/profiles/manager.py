"""ProfileManager: one supervised subtree per profile, one_for_one between them.

::

    ProfileManager (one_for_one)
    └── Profile "NAME" x N          each: its own nursery, restarted alone if it breaks
        ├── BrowserSupervisor     restart loop → process, connection, tabs
        ├── SessionTable reaper   closes sessions idle past their TTL
        └── CdpGateway            launch profiles: the token-guarded CDP port

A crash loop in one profile's browser is that profile's supervisor's
business (backoff, budget, ``failed``); nothing here or in another profile
sees it. Should a profile's subtree itself fail (a bug), it is logged and
restarted alone after a backoff.

The manager owns the table of profiles: the default profile, the
``[profiles.NAME]`` tables, and those made by :meth:`ProfileManager.create`
(persisted by :class:`~browserd.profiles.store.ProfileStore` with their
gateway ports). Create and delete are serialised by one lock.
"""

from __future__ import annotations

import logging
import shutil
import zlib
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
import trio

from ..browser.live import LiveBrowser, user_data_dir
from ..browser.ports import port_is_free
from ..browser.profile import MARKER, claim_profile
from ..config import Settings
from ..downloads import DownloadStore, remove_downloads
from ..errors import (
    BadRequest,
    BrowserdError,
    ProfileExists,
    ProfileNotFound,
    ProfileProtected,
    ProfileRunning,
)
from ..events import EventHub, EventSink
from ..paths import Paths
from ..profilespec import (
    DEFAULT_APPROVAL_TIMEOUT_S,
    PROFILE_PALETTE,
    Driver,
    ProfileOrigin,
    ProfileSpec,
    build_spec,
    check_profile_name,
)
from ..relay import PairingStore, RelayHub, extension_subtree
from ..retention import Retention
from ..supervisor import BrowserSupervisor
from ..supervisor.budgets import SUPERVISOR_STOP_S
from ..supervisor.child import ChildSpec, RestartDecision, RestartType, run_child
from ..supervisor.policy import RestartPolicy
from ..supervisor.state import SupervisorState
from ..urlpolicy import UrlPolicy
from .profile import Profile
from .sessions import SessionTable
from .store import ProfileStore, allocate_port

__all__ = ["GatewayRunner", "ProfileManager", "download_store_for", "settings_for"]

log = logging.getLogger(__name__)

#: ``run_gateway(profile, shutdown, task_status=…)``: serves one profile's CDP gateway
#: until ``shutdown`` (wired by the service; the manager knows no HTTP).
GatewayRunner = Callable[..., Awaitable[None]]
_DOWN = frozenset({SupervisorState.STOPPED, SupervisorState.DISABLED, SupervisorState.FAILED})
#: A profile's subtree (its supervisor, reaper and gateway) failing is a bug: restarted
#: alone, 1 s doubling to 60 s, without a budget — giving up would leave the profile with
#: no supervisor to answer /start, and nothing above it may fail without taking the
#: other profiles down. (Its browser's crash loop is bounded by the browser's own budget.)
SUBTREE_POLICY = RestartPolicy(backoff_start_s=1.0, backoff_max_s=60.0, budget=None,
                               refusals=())
#: A profile's CDP gateway (its port may be taken for a while): 2 s doubling to 60 s,
#: retried until the profile goes; ``gatewayError`` in /profiles says why meanwhile.
GATEWAY_POLICY = RestartPolicy(backoff_start_s=2.0, backoff_max_s=60.0, budget=None,
                               refusals=())


def default_color(name: str) -> str:
    """A stable colour for a profile that names none."""
    return PROFILE_PALETTE[zlib.crc32(name.encode()) % len(PROFILE_PALETTE)]


def settings_for(base: Settings, spec: ProfileSpec, gateway_port: int | None) -> Settings:
    """The Settings a profile's supervisor runs with (the service's, with the profile's own)."""
    if spec.origin == ProfileOrigin.DEFAULT:
        return attrs.evolve(base, profiles=())
    return attrs.evolve(
        base, profiles=(), profile=spec.name, color=spec.color or default_color(spec.name),
        headless=base.headless if spec.headless is None else spec.headless,
        executable=spec.executable or base.executable,
        cdp_url=spec.cdp_url, cdp_port=gateway_port, attach_only=False,
        live_user_data_dir=_live_directory(spec),
        # An extension profile has no browser endpoint a gateway could serve.
        cdp_gateway=base.cdp_gateway and spec.driver != Driver.EXTENSION,
        approval_timeout_s=spec.approval_timeout_s or DEFAULT_APPROVAL_TIMEOUT_S,
        allowed_origins=(base.allowed_origins if spec.allowed_origins is None
                         else spec.allowed_origins),
    )


def _live_directory(spec: ProfileSpec) -> str | None:
    """A live profile's user data directory (``user_data_dir``, else its browser's default)."""
    if spec.driver != Driver.LIVE:
        return None
    if spec.user_data_dir is not None:
        return str(Path(spec.user_data_dir).expanduser())
    return str(user_data_dir(spec.live_browser or LiveBrowser.CHROME))


class ProfileManager:
    """The profiles of one service and their subtrees. Run :meth:`run` in the service nursery."""

    def __init__(self, settings: Settings, paths: Paths, *,
                 run_gateway: GatewayRunner | None = None,
                 is_port_free: Callable[[int], bool] = port_is_free,
                 events: EventHub | None = None, relay: RelayHub | None = None) -> None:
        self.settings = settings
        #: The extension driver's relay (extension profiles are served through it).
        self.relay = relay if relay is not None else RelayHub(PairingStore(paths.config_dir))
        self._events = events  # each profile publishes through a sink bound to its name
        self.paths = paths
        self.store = ProfileStore(paths.data_dir / "profiles.json")
        self._run_gateway = run_gateway
        self._is_port_free = is_port_free
        self._profiles: dict[str, Profile] = {}
        self._nursery: trio.Nursery | None = None
        self._lock = trio.Lock()
        self._base_policy = UrlPolicy.for_settings(settings)
        self.url_policy = self._base_policy

    # -- the table ---------------------------------------------------------------

    @property
    def default_name(self) -> str:
        return self.settings.profile

    def get(self, name: str | None = None) -> Profile:
        """The profile ``name`` (None: the default one); ProfileNotFound if there is none."""
        profile = self._profiles.get(self.default_name if name is None else name)
        if profile is None:
            raise ProfileNotFound(f"no profile {name!r}")
        return profile

    def all(self) -> list[Profile]:
        """Every profile, the default first, then by name."""
        return sorted(self._profiles.values(), key=lambda p: (not p.is_default, p.name))

    def gateway_ports(self) -> frozenset[int]:
        return frozenset(p.gateway_port for p in self._profiles.values()
                         if p.gateway_port is not None)

    def load(self) -> None:
        """Build the table from settings and the store (ports allocated and saved).

        Raises ConfigError for an unreadable store; PortInUse when no port is left.
        """
        self.store.load()
        base = self.settings
        default = ProfileSpec(name=base.profile, origin=ProfileOrigin.DEFAULT,
                              driver=Driver.CDP if base.is_attach else Driver.LAUNCH,
                              color=base.color)
        specs: dict[str, ProfileSpec] = {s.name: s for s in base.profiles}
        for name, spec in self.store.created.items():
            if name in specs or name == base.profile:
                log.warning("profile %r is in config.toml too; the config table wins", name)
                continue
            specs[name] = spec
        ports: dict[str, int | None] = {
            default.name: base.effective_cdp_port if base.gateway_active else None}
        changed = False
        for name in sorted(specs):
            port = self._port_for(specs[name], also_taken=ports.values())
            changed |= port is not None and self.store.ports.get(name) != port
            if port is not None:
                self.store.ports[name] = port
            ports[name] = port
        if changed:
            self.store.save()
        # Every port a profile's gateway has or may be given: fixed from here on.
        blocked = {*range(base.profile_port_start, base.profile_port_end + 1),
                   *(p for p in ports.values() if p is not None)}
        self.url_policy = attrs.evolve(
            self._base_policy, blocked_ports=self._base_policy.blocked_ports | blocked)
        self._add(default, ports[default.name])
        for name in sorted(specs):
            self._add(specs[name], ports[name])

    def _port_for(self, spec: ProfileSpec, *, also_taken: Iterable[int | None] = ()
                  ) -> int | None:
        if spec.driver != Driver.LAUNCH or not self.settings.cdp_gateway:
            return None
        if spec.cdp_port is not None:
            return spec.cdp_port
        stored = self.store.ports.get(spec.name)
        if stored is not None:
            return stored
        taken = {self.settings.control_port, self.settings.effective_cdp_port,
                 *self.gateway_ports(), *self.store.ports.values(),
                 *(p for p in also_taken if p is not None),
                 *(s.cdp_port for s in self.settings.profiles if s.cdp_port is not None)}
        return allocate_port(self.settings.profile_port_start, self.settings.profile_port_end,
                             taken=taken, is_free=self._is_port_free)

    def _add(self, spec: ProfileSpec, gateway_port: int | None) -> Profile:
        """Make a profile's handles: settings, download store, supervisor, sessions.

        Raises OSError when its downloads directory cannot be made.
        """
        settings = settings_for(self.settings, spec, gateway_port)
        events = self._events.sink(spec.name) if self._events is not None else None
        downloads = download_store_for(settings, self.paths, events=events)
        sessions = SessionTable(max_sessions=self.settings.max_sessions)
        if spec.driver == Driver.EXTENSION:
            # No page guards over the relay (see browserd.relay.subtree).
            supervisor = BrowserSupervisor(settings, self.paths, events=events,
                                           subtree=extension_subtree(self.relay))
        else:
            # A crash's restore carries the sessions over (supervisor/restore.py).
            supervisor = BrowserSupervisor(settings, self.paths, url_policy=self.url_policy,
                                           downloads=downloads, events=events,
                                           sessions=sessions)
        profile = Profile(spec=spec, settings=settings, supervisor=supervisor,
                          sessions=sessions, downloads=downloads, gateway_port=gateway_port,
                          is_default=spec.origin == ProfileOrigin.DEFAULT)
        self._profiles[spec.name] = profile
        return profile

    # -- the subtrees ------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[ProfileManager]
                  = trio.TASK_STATUS_IGNORED) -> None:
        """Run every profile's subtree until cancelled (started once all are up).

        A refusal of the default profile's gateway at start (port taken)
        propagates, as it did with one profile; other profiles' gateways
        retry on their own.
        """
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            for profile in self.all():
                await nursery.start(self._run_profile, profile)
            task_status.started(self)
            await trio.sleep_forever()

    async def _run_profile(self, profile: Profile, *,
                           task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """One profile's subtree, a permanent child; restarted alone (after a backoff) if it
        fails. A failure before it started propagates (the caller could not start it)."""

        async def subtree(*, task_status: trio.TaskStatus[None]) -> None:
            async with trio.open_nursery() as nursery:
                await nursery.start(profile.supervisor.run)
                await nursery.start(profile.sessions.run_reaper,
                                    lambda: profile.supervisor.runtime)
                if self._run_gateway is not None and profile.settings.gateway_active:
                    await nursery.start(self._gateway_loop, profile)
                task_status.started()

        with profile.scope:
            try:
                await run_child(ChildSpec(name=f"profile {profile.name}: its subtree",
                                          run=subtree, policy=SUBTREE_POLICY),
                                task_status=task_status)
            finally:
                profile.done.set()

    async def _gateway_loop(self, profile: Profile, *,
                            task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve the profile's gateway, a transient child: it ends with the profile's
        ``gateway_shutdown``; a failure (a BrowserdError) is retried with a backoff.

        The default profile's failure at start propagates (the service refuses to
        start, as with one profile); another profile reports started and retries.
        """
        runner = self._run_gateway
        assert runner is not None

        async def gateway(*, task_status: trio.TaskStatus[None]) -> None:
            await runner(profile, profile.gateway_shutdown, task_status=task_status)

        def failed(exc: Exception, _decision: RestartDecision) -> None:
            if isinstance(exc, BrowserdError):
                profile.gateway_error = exc

        await run_child(ChildSpec(
            name=f"profile {profile.name}: CDP gateway", run=gateway,
            restart=RestartType.TRANSIENT, policy=GATEWAY_POLICY, failures=(BrowserdError,),
            raise_before_started=profile.is_default, on_failure=failed,
            wanted=lambda: not profile.gateway_shutdown.is_set(),
        ), task_status=task_status)

    async def start_profiles(self, names: list[str]) -> None:
        """Start the named profiles concurrently; a failure is logged, not raised."""
        async def start(profile: Profile) -> None:
            try:
                await profile.supervisor.start()
            except BrowserdError as exc:
                log.error("profile %s: browser did not start: %s", profile.name, exc.message)

        async with trio.open_nursery() as nursery:
            for name in names:
                nursery.start_soon(start, self.get(name))

    async def stop_all(self) -> None:
        """Stop every profile's browser concurrently (shielded, within the supervisor budget)."""
        with trio.move_on_after(SUPERVISOR_STOP_S) as scope:
            scope.shield = True
            async with trio.open_nursery() as nursery:
                for profile in self.all():
                    nursery.start_soon(profile.supervisor.stop)
                    profile.gateway_shutdown.set()

    # -- create and delete -------------------------------------------------------

    async def create(self, name: str, values: Mapping[str, Any]) -> Profile:
        """Make, persist and start supervising a new profile (its browser is not started).

        Raises BadRequest (bad name or values), DriverNotAvailable,
        ProfileExists, PortInUse (no port left) or ProfileRefused (its
        directory holds something that is not browserd's).
        """
        check_profile_name(name, error=BadRequest)
        async with self._lock:
            if name in self._profiles:
                raise ProfileExists(f"profile {name!r} already exists")
            spec = build_spec(name, values, origin=ProfileOrigin.API, where=f"profile {name!r}")
            port = self._port_for(spec)
            if spec.driver == Driver.LAUNCH:
                claim_profile(self.paths.profile_dir(name))
            self.store.created[name] = spec
            if port is not None:
                self.store.ports[name] = port
            self.store.save()
            profile = self._add(spec, port)
            assert self._nursery is not None, "create() before run()"
            await self._nursery.start(self._run_profile, profile)
            log.info("profile %s created (driver %s, gateway port %s)", name, spec.driver, port)
            return profile

    async def delete(self, name: str, *, keep_data: bool) -> dict[str, Any]:
        """Forget a profile; remove its directory unless ``keep_data``.

        Refuses the default profile and config.toml's (ProfileProtected) and a
        profile whose browser is up (ProfileRunning). Only a directory that
        carries browserd's marker is ever removed.
        """
        async with self._lock:
            profile = self.get(name)
            if profile.is_default:
                raise ProfileProtected("the default profile cannot be deleted")
            if profile.spec.origin == ProfileOrigin.CONFIG:
                raise ProfileProtected(f"profile {name!r} is defined in config.toml",
                                       hint=f"remove its [profiles.{name}] table there")
            if profile.supervisor.state not in _DOWN:
                raise ProfileRunning(f"profile {name!r} is {profile.supervisor.state}")
            del self._profiles[name]
            profile.gateway_shutdown.set()
            profile.scope.cancel()
            with trio.move_on_after(SUPERVISOR_STOP_S):
                await profile.done.wait()
            self.store.created.pop(name, None)
            self.store.ports.pop(name, None)
            self.store.save()
            directory = self.paths.profile_dir(name)
            removed, reason, downloads = False, "keepData", 0
            if not keep_data:
                removed, reason = await trio.to_thread.run_sync(_remove_marked, directory)
                downloads = await trio.to_thread.run_sync(remove_downloads,
                                                          profile.downloads.directory)
            log.info("profile %s deleted (data %s, %d downloads removed)", name,
                     "removed" if removed else reason, downloads)
            out: dict[str, Any] = {"ok": True, "name": name, "dataRemoved": removed,
                                   "downloadsRemoved": downloads}
            if not removed:
                out["dataKept"] = reason
            if profile.spec.driver == Driver.LAUNCH:
                out["userDataDir"] = str(directory)
            return out


def download_store_for(settings: Settings, paths: Paths, *,
                       events: EventSink | None = None) -> DownloadStore:
    """A profile's download store: ``<data>/downloads/<profile>/`` with the retention limits.

    Raises OSError when the directory cannot be made.
    """
    retention = Retention(max_files=settings.download_max_files,
                          max_bytes=settings.download_max_total_bytes,
                          max_age_s=settings.download_max_age_s)
    return DownloadStore(paths.downloads_dir(settings.profile), retention,
                         max_bytes=settings.download_max_bytes,
                         enabled=settings.downloads_enabled, profile=settings.profile,
                         events=events)


def _remove_marked(directory: Path) -> tuple[bool, str]:
    """Remove ``directory`` only when it is a real directory with browserd's marker."""
    if not directory.exists():
        return False, "no directory"
    if directory.is_symlink() or not directory.is_dir() or not (directory / MARKER).is_file():
        return False, "not marked as browserd's; left alone"
    shutil.rmtree(directory)
    return True, ""
