"""``browserd serve``: the one place the tree is wired.

Service (one_for_one)
├── HttpFacade       hypercorn.trio.serve of the guarded quart-trio app, with the lanes
│                    /events, /ws and /mcp (its MCP session managers run here)
├── EventHub         (a handle: supervisors, tabs and downloads publish; lanes subscribe)
├── MediaStore       (a handle; its pruning runs here)
└── ProfileManager   one_for_one between profiles
    └── Profile x N  BrowserSupervisor (restart loop over the browser subtree:
                     page guards, tabs), session reaper, CdpGateway (launch
                     profiles, cdp_gateway), DownloadStore (a handle:
                     <data>/downloads/<profile>/; pruned from here)

SIGTERM/SIGINT: every profile's browser is stopped through its ladder first, then the
event hub ends every /events stream and /ws connection, the HTTP server drains
(bounded), and the process exits 0. A refusal at start
(config, token file mode, control or gateway port taken, non-loopback without opt-in or
without TLS, TLS files that do not load)
exits non-zero with the reason on stderr.
"""

from __future__ import annotations

import errno
import logging
import logging.handlers
import signal
import sys
from collections.abc import Mapping
from typing import Any

import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio import serve as hypercorn_serve

from .browser.ports import find_port_holder, port_is_free
from .config import Settings, is_loopback_host, load_settings
from .errors import BrowserdError, ConfigError, PortInUse, unwrap_group
from .events import EventHub
from .gateway import check_gateway_port, serve_gateway
from .http.app import create_app, wrap
from .http.frontdoor import FrontDoor
from .mcp import open_mcp_endpoint
from .media import Retention, open_media_store
from .paths import Paths, ensure_private_dir
from .principals import TokenStore
from .profiles.manager import ProfileManager
from .profiles.profile import Profile
from .profilespec import ProfileOrigin
from .redact import RedactingFilter
from .relay import PairingStore, RelayHub
from .relay.door import RelayDoor
from .supervisor.budgets import HTTP_DRAIN_S
from .system import System
from .tls import check_tls_settings, served_fingerprint, server_tls, tls_enabled
from .token import load_or_create_token
from .uploads import UploadPolicy
from .vault import Redactor, SecretFilter, Vault, load_vault_key

__all__ = [
    "DRAIN_S", "PRUNE_EVERY_S", "check_bind_policy", "configure_logging", "run_service",
    "serve"
]

log = logging.getLogger("browserd")

DRAIN_S = HTTP_DRAIN_S
RELAY_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
PRUNE_EVERY_S = 3600.0


def configure_logging(paths: Paths, *, verbose: bool = False) -> None:
    """stderr + a rotating ``browserd.log``; the audit trail to ``audit.log``."""
    ensure_private_dir(paths.log_dir)
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    root = logging.getLogger()
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    for handler in list(root.handlers):
        root.removeHandler(handler)
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setFormatter(fmt)
    root.addHandler(stderr)
    main_file = logging.handlers.RotatingFileHandler(
        paths.log_dir / "browserd.log", maxBytes=5_000_000, backupCount=3)
    main_file.setFormatter(fmt)
    root.addHandler(main_file)
    audit = logging.getLogger("browserd.audit")
    audit.propagate = False
    audit_file = logging.handlers.RotatingFileHandler(
        paths.log_dir / "audit.log", maxBytes=5_000_000, backupCount=5)
    audit_file.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    audit.addHandler(audit_file)
    for handler in (stderr, main_file, audit_file):
        handler.addFilter(RedactingFilter())  # no URL keeps userinfo, query or fragment
    for noisy in ("hypercorn.access", "trio-websocket", "hypercorn.error"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def _redact_logs(redactor: Redactor) -> None:
    """No log line (service or audit) keeps a vault value."""
    for logger in (logging.getLogger(), logging.getLogger("browserd.audit")):
        for handler in logger.handlers:
            if not any(isinstance(f, SecretFilter) for f in handler.filters):
                handler.addFilter(SecretFilter(redactor))


def check_bind_policy(settings: Settings) -> None:
    """Loopback by default; anything else needs ``allow_remote_control = true`` and TLS
    (the token never crosses a network in clear); TLS and https:// go together."""
    if not is_loopback_host(settings.control_host) and not settings.allow_remote_control:
        raise ConfigError(
            f"refusing to listen on non-loopback {settings.control_host}",
            hint="set allow_remote_control = true in config.toml if you really mean it "
            "(the token is always required, and so is TLS off loopback)",
        )
    if not is_loopback_host(settings.control_host) and not tls_enabled(settings):
        raise ConfigError(
            f"refusing to serve non-loopback {settings.control_host} over plain HTTP: the "
            "token would cross the network in clear (allow_remote_control does not change that)",
            hint='use an https:// control_url with tls = "self-signed" (or tls_cert and '
            "tls_key); clients pin the certificate: `browserd token --remote`",
        )
    check_tls_settings(settings)


async def run_service(
    settings: Settings, paths: Paths, *,
    task_status: trio.TaskStatus[System] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run until SIGTERM/SIGINT or cancellation. Raises a BrowserdError on refusals."""
    check_bind_policy(settings)
    token = load_or_create_token(paths.token_file)
    tls = server_tls(settings, paths)  # made (self-signed) or checked before anything binds
    if tls is not None:
        log.info("TLS: %s (SHA-256 fingerprint %s)", tls.cert, served_fingerprint(tls))
    log.info("paths: %s", paths.as_dict())
    host, port = settings.control_host, settings.control_port
    if not port_is_free(port, host if host != "localhost" else "127.0.0.1"):
        holder = find_port_holder(port)
        raise PortInUse(f"control port {port} is already held by {holder.describe()}",
                        hint="is another browserd running? `browserd status`, or set control_url")
    if settings.gateway_active:
        check_gateway_port(settings.effective_cdp_port)
    retention = Retention(max_files=settings.media_max_files, max_bytes=settings.media_max_bytes,
                          max_age_s=settings.media_max_age_s)
    uploads = UploadPolicy.from_settings(settings, paths)
    try:
        uploads.ensure_roots()
    except OSError as exc:
        raise ConfigError(f"cannot create the upload root: {exc}") from None
    log.info("upload roots: %s", ", ".join(uploads.describe()))
    vault = Vault(paths.config_dir / "secrets",
                  await load_vault_key(paths.config_dir,
                                       use_keyring=settings.vault_key == "auto"))
    _redact_logs(vault.redactor)
    events = EventHub(redact=vault.redactor.redact)
    async with open_media_store(paths.media_dir, retention) as media:

        async def run_gateway(profile: Profile, shutdown: trio.Event, *,
                              task_status: trio.TaskStatus[Any] = trio.TASK_STATUS_IGNORED
                              ) -> None:
            await serve_gateway(system.bind(profile.name, None), token, shutdown,
                                task_status=task_status)

        # The extension driver's relay: /relay/pair and /relay (see docs/extension.md);
        # an extension profile's subtree is extension_subtree(relay).
        relay = RelayHub(PairingStore(paths.config_dir),
                         colour_of=lambda name: _profile_colour(profiles, name))
        profiles = ProfileManager(settings, paths, run_gateway=run_gateway, events=events,
                                  relay=relay)
        profiles.load()
        default = profiles.get()
        owner_token = load_or_create_token(paths.owner_token_file)
        system = System(
            settings=settings, paths=paths, supervisor=default.supervisor, media=media,
            url_policy=profiles.url_policy, downloads=default.downloads, uploads=uploads,
            token=token, profiles=profiles, profile=default, events=events,
            owner_token=owner_token,
            tokens=TokenStore(paths.tokens_file, agent_token=token, owner_token=owner_token),
            vault=vault,
        )
        async with open_mcp_endpoint(system) as mcp:
            await _serve(system, FrontDoor(create_app(system), system, mcp=mcp), relay=relay,
                         task_status=task_status)


def _profile_colour(profiles: ProfileManager, name: str) -> str:
    """The colour of profile ``name`` (the relay's badge and tab group); a default if none."""
    try:
        return profiles.get(name).settings.color or "#0066CC"
    except BrowserdError:
        return "#0066CC"


async def _serve(system: System, front: FrontDoor, *, relay: RelayHub,
                 task_status: trio.TaskStatus[System] = trio.TASK_STATUS_IGNORED) -> None:
    """The tree under the app; returns after a signal (browsers stopped, server drained)."""
    settings, token, profiles = system.settings, system.token, system.profiles
    host, port = settings.control_host, settings.control_port
    app = RelayDoor(wrap(front, system, token), relay, control_port=port)
    config = HypercornConfig()
    # A relay message can carry a screenshot (base64); the /ws lane keeps its own 1 MiB cap.
    config.websocket_max_message_size = RELAY_MAX_MESSAGE_BYTES
    bind_host = f"[{host}]" if ":" in host else host
    config.bind = [f"{bind_host}:{port}"]
    config.accesslog = None
    config.graceful_timeout = DRAIN_S
    config.keep_alive_timeout = 30
    tls = server_tls(settings, system.paths)
    if tls is not None:
        tls.apply(config)  # the /ws, /events and /mcp lanes are then wss:// and https:// too
    shutdown = trio.Event()
    http_done = trio.Event()
    async with trio.open_nursery() as nursery:
        await nursery.start(system.records.run)  # the records' videos (ffmpeg children)
        await nursery.start(profiles.run)
        await nursery.start(_serve_http, app, config, shutdown, http_done)
        log.info("browserd listening on %s://%s:%d (cdp port %d: %s); profiles: %s",
                 "https" if tls else "http", host, port, settings.effective_cdp_port,
                 "CDP gateway" if settings.gateway_active else "no gateway",
                 ", ".join(f"{p.name}" + (f" (cdp port {p.gateway_port})"
                                          if p.gateway_port else "")
                           for p in profiles.all()))
        nursery.start_soon(_prune_media, system.media)
        nursery.start_soon(_prune_downloads, profiles)
        nursery.start_soon(_keep_audit_tail, system.ui.audit)
        if settings.enabled and settings.auto_start:
            nursery.start_soon(profiles.start_profiles, [
                p.name for p in profiles.all() if p.spec.origin != ProfileOrigin.API])
        task_status.started(system)
        await _wait_for_signal()
        log.info("stopping: browsers first, then the HTTP server")
        await profiles.stop_all()
        system.events.close()  # ends /events streams and /ws connections: nothing to drain
        shutdown.set()
        with trio.move_on_after(DRAIN_S + 1):
            await http_done.wait()
        nursery.cancel_scope.cancel()


async def _serve_http(app: Any, config: HypercornConfig, shutdown: trio.Event,
                      done: trio.Event, *,
                      task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED) -> None:
    try:
        await hypercorn_serve(app, config, shutdown_trigger=shutdown.wait, task_status=task_status)
    finally:
        done.set()


async def _prune_media(media: Any) -> None:
    while True:
        await trio.sleep(PRUNE_EVERY_S)
        await media.prune()


async def _prune_downloads(profiles: ProfileManager) -> None:
    """Apply download retention to every profile's downloads, every PRUNE_EVERY_S."""
    while True:
        await trio.sleep(PRUNE_EVERY_S)
        for profile in profiles.all():
            await profile.downloads.prune()


async def _keep_audit_tail(tail: logging.Handler) -> None:
    """The ops page's audit tail hears the audit log while the service runs."""
    audit = logging.getLogger("browserd.audit")
    audit.addHandler(tail)
    try:
        await trio.sleep_forever()
    finally:
        audit.removeHandler(tail)


async def _wait_for_signal() -> None:
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
        async for signum in signals:
            log.info("received signal %d", signum)
            return


def serve(overrides: Mapping[str, Any] | None = None, *, verbose: bool = False) -> int:
    """Entry point of ``browserd serve``: 0 after a signal, 1 on a refusal."""
    paths = Paths.resolve()
    try:
        settings = load_settings(paths, overrides=overrides)
    except BrowserdError as exc:
        print(f"browserd: {exc.message}", file=sys.stderr)
        return 2
    configure_logging(paths, verbose=verbose)
    try:
        trio.run(run_service, settings, paths)
    except KeyboardInterrupt:
        return 0
    except BaseException as exc:  # one clear line for a refusal, never a raw group
        inner = unwrap_group(exc)
        if isinstance(inner, OSError) and inner.errno == errno.EADDRINUSE:
            inner = PortInUse(f"control port {settings.control_port} is already in use",
                              hint="is another browserd running? `browserd status`")
        if not isinstance(inner, BrowserdError):
            raise
        log.error("%s%s", inner.message, f" ({inner.hint})" if inner.hint else "")
        return 1
    return 0
