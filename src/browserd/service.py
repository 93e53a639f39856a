"""``browserd serve``: the one place the tree is wired.

Service (one_for_one)
├── HttpFacade   hypercorn.trio.serve of the guarded quart-trio app, with the lanes
│                /events, /ws and /mcp (its MCP session managers run here)
├── EventHub     (a handle: the supervisor, tabs and downloads publish; lanes subscribe)
├── CdpGateway   hypercorn.trio.serve of the guarded CDP gateway (cdp_gateway)
├── MediaStore   (a handle; its pruning runs here)
├── DownloadStore (a handle: <data>/downloads/<profile>/; its pruning runs here)
└── BrowserSupervisor — restart loop over the browser subtree

SIGTERM/SIGINT: the browser is stopped through its ladder first, then the
event hub ends every /events stream and /ws connection, the HTTP server
drains (bounded), and the process exits 0. A refusal at start
(config, token file mode, control or gateway port taken, non-loopback without opt-in)
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
from .downloads import DownloadStore
from .errors import BrowserdError, ConfigError, PortInUse, unwrap_group
from .events import EventHub
from .gateway import check_gateway_port, serve_gateway
from .http.app import create_app, wrap
from .http.frontdoor import FrontDoor
from .mcp import open_mcp_endpoint
from .media import Retention, open_media_store
from .paths import Paths, ensure_private_dir
from .redact import RedactingFilter
from .supervisor import BrowserSupervisor
from .supervisor.budgets import HTTP_DRAIN_S, SUPERVISOR_STOP_S
from .system import System
from .token import load_or_create_token

__all__ = [
    "DRAIN_S", "PRUNE_EVERY_S", "check_bind_policy", "configure_logging", "run_service",
    "serve"
]

log = logging.getLogger("browserd")

DRAIN_S = HTTP_DRAIN_S
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


def check_bind_policy(settings: Settings) -> None:
    """Loopback by default; anything else needs ``allow_remote_control = true``."""
    if not is_loopback_host(settings.control_host) and not settings.allow_remote_control:
        raise ConfigError(
            f"refusing to listen on non-loopback {settings.control_host}",
            hint="set allow_remote_control = true in config.toml if you really mean it "
            "(the token is always required)",
        )


async def run_service(
    settings: Settings, paths: Paths, *,
    task_status: trio.TaskStatus[System] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run until SIGTERM/SIGINT or cancellation. Raises a BrowserdError on refusals."""
    check_bind_policy(settings)
    token = load_or_create_token(paths.token_file)
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
    events = EventHub()
    async with open_media_store(paths.media_dir, retention) as media:
        downloads = _download_store(settings, paths, events)
        url_policy = _url_policy(settings)
        supervisor = BrowserSupervisor(settings, paths, url_policy=url_policy,
                                       downloads=downloads,
                                       events=events.sink(settings.profile))
        system = System(
            settings=settings, paths=paths, supervisor=supervisor, media=media,
            url_policy=url_policy, downloads=downloads, token=token, events=events,
        )
        async with open_mcp_endpoint(system) as mcp:
            await _serve(system, FrontDoor(create_app(system), system, mcp=mcp),
                         task_status=task_status)


async def _serve(system: System, front: FrontDoor, *,
                 task_status: trio.TaskStatus[System] = trio.TASK_STATUS_IGNORED) -> None:
    """The tree under the app; returns after a signal (browser stopped, server drained)."""
    settings, token = system.settings, system.token
    host, port = settings.control_host, settings.control_port
    supervisor, media, downloads = system.supervisor, system.media, system.downloads
    app = wrap(front, system, token)
    config = HypercornConfig()
    bind_host = f"[{host}]" if ":" in host else host
    config.bind = [f"{bind_host}:{port}"]
    config.accesslog = None
    config.graceful_timeout = DRAIN_S
    config.keep_alive_timeout = 30
    shutdown = trio.Event()
    http_done = trio.Event()
    async with trio.open_nursery() as nursery:
        await nursery.start(supervisor.run)
        await nursery.start(_serve_http, app, config, shutdown, http_done)
        if settings.gateway_active:
            await nursery.start(serve_gateway, system, token, shutdown)
        log.info("browserd listening on http://%s:%d (cdp port %d: %s)", host, port,
                 settings.effective_cdp_port,
                 "CDP gateway" if settings.gateway_active else "no gateway")
        nursery.start_soon(_prune_media, media)
        nursery.start_soon(_prune_media, downloads)
        if settings.enabled and settings.auto_start:
            nursery.start_soon(_auto_start, supervisor)
        task_status.started(system)
        await _wait_for_signal()
        log.info("stopping: browser first, then the HTTP server")
        with trio.move_on_after(SUPERVISOR_STOP_S) as scope:
            scope.shield = True
            await supervisor.stop()
        system.events.close()  # ends /events streams and /ws connections: nothing to drain
        shutdown.set()
        with trio.move_on_after(DRAIN_S + 1):
            await http_done.wait()
        nursery.cancel_scope.cancel()


def _download_store(settings: Settings, paths: Paths, events: EventHub) -> DownloadStore:
    """The downloads of this service's profile: ``<data>/downloads/<profile>/``."""
    retention = Retention(max_files=settings.download_max_files,
                          max_bytes=settings.download_max_total_bytes,
                          max_age_s=settings.download_max_age_s)
    return DownloadStore(paths.downloads_dir(settings.profile), retention,
                         max_bytes=settings.download_max_bytes,
                         enabled=settings.downloads_enabled,
                         events=events.sink(settings.profile))


def _url_policy(settings: Settings) -> Any:
    from .urlpolicy import UrlPolicy

    return UrlPolicy.for_settings(settings)


async def _serve_http(app: Any, config: HypercornConfig, shutdown: trio.Event,
                      done: trio.Event, *,
                      task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED) -> None:
    try:
        await hypercorn_serve(app, config, shutdown_trigger=shutdown.wait, task_status=task_status)
    finally:
        done.set()


async def _auto_start(supervisor: BrowserSupervisor) -> None:
    try:
        await supervisor.start()
    except BrowserdError as exc:
        log.error("browser did not start: %s", exc.message)


async def _prune_media(media: Any) -> None:
    while True:
        await trio.sleep(PRUNE_EVERY_S)
        await media.prune()


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
