"""Calling one route's handler, checked: the part of :mod:`browserd.http.dispatch` that
route handlers may use too (a replay repeats calls through it).

:func:`authorize` is the scope check every call passes; :func:`run_handler`
calls the handler and turns a deadline that expired inside it into 504
TIMEOUT (and has the browser probed); :func:`domain_error` is the one policy
for what else can come out of a handler (a BrowserdError as itself, a stray
TooSlowError as TIMEOUT, any other Exception as 500 INTERNAL, logged;
cancellation and other BaseExceptions are re-raised); :func:`audit` writes the
one audit-log line a call leaves.

This module imports no route table (:mod:`browserd.http.catalog`), so the
route modules may import it.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import trio

from ..errors import BrowserdError, Timeout, unwrap_group
from ..principals import Principal, require
from ..records.recorder import RECORDED_PATHS, record_call
from ..redact import loggable_url
from ..system import System
from .confirmations import hold_if_confirmed
from .schema import Route

__all__ = ["audit", "audit_field", "authorize", "domain_error", "redacted", "run_handler"]

log = logging.getLogger("browserd.http.app")
audit_log = logging.getLogger("browserd.audit")


def audit_field(value: str, token: str, limit: int = 200) -> str:
    """A client-supplied value made safe for one audit-log line.

    The token is redacted, whitespace and control characters are escaped
    (``\\x0a``), so a value cannot split the line or forge another entry, and
    the result is cut to ``limit`` characters.
    """
    text = value.replace(token, "[redacted]")[:limit]
    if text.isprintable() and " " not in text:  # the usual case: nothing to escape
        return text
    return "".join(
        c if c.isprintable() and not c.isspace()
        else (f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}")
        for c in text
    )


def authorize(principal: Principal, route: Route, args: dict[str, Any], *, what: str) -> None:
    """Raise OwnerOnly / ScopeRequired unless ``principal`` may make this call.

    The one check every lane makes (HTTP, ``/ws``, MCP) before a handler runs:
    the scope the route declares (:attr:`Route.needs`), and what the arguments
    add to it (:attr:`Route.extra_needs`: an ``/act`` batch that uploads needs
    ``files``).
    """
    require(principal, route.needs, what=what)
    for scope in route.more_needs(args):
        require(principal, scope, what=what)


async def run_handler(system: System, route: Route, args: dict[str, Any], *, path: str) -> Any:
    """``route.handler(system, args)``; a deadline expiring inside it is 504 TIMEOUT.

    A JSON answer comes back with every vault value replaced by its marker
    (``«secret:NAME»``): whatever the page echoed, no answer carries one. An
    action a ``confirm`` rule matches is held instead (202
    CONFIRMATION_REQUIRED; :mod:`browserd.http.confirmations`). A call of a principal
    recording its session is appended to its record (:mod:`browserd.records.recorder`),
    an approved held action too, when it runs.
    """
    async def call() -> Any:  # now, or once the person approved it (then its own step)
        recording = (system.records.active_for(system.profile.name, system.session_id,
                                               system.principal.name)
                     if route.path in RECORDED_PATHS else None)
        if recording is not None:  # this principal records its session (browserd.records)
            return await record_call(system, recording, route.path, args,
                                     lambda: _invoke(system, route, args, path=path))
        return await _invoke(system, route, args, path=path)

    if system.settings.confirm and not system.principal.is_owner:
        await hold_if_confirmed(system, route, args, call)
    return await call()


async def _invoke(system: System, route: Route, args: dict[str, Any], *, path: str) -> Any:
    try:
        result = await route.handler(system.running(route.blocked_by), args)
    except trio.TooSlowError:
        _nudge_liveness(system)
        raise Timeout(f"{path} did not finish within its deadline",
                      hint="raise timeoutMs, or check the page with GET /snapshot") from None
    except Timeout:
        _nudge_liveness(system)
        raise
    if route.raw_response:
        return result
    return route.mark_untrusted(system.vault.redactor.redact(result))


def _nudge_liveness(system: System) -> None:
    """A deadline expired: have the browser probed now (a hang shows within the probe's
    timeout, not after every request's own). Never blocks or raises."""
    runtime = system.supervisor.runtime
    if runtime is not None:
        runtime.nudge_liveness()


def redacted(system: System, error: BrowserdError) -> BrowserdError:
    """``error`` with no vault value in its message, hint or details (changed in place)."""
    redactor = system.vault.redactor
    if redactor.active:
        error.message = redactor.text(error.message)
        error.hint = redactor.text(error.hint)
        error.details = redactor.redact(error.details)
    return error


def domain_error(exc: BaseException, *, what: str) -> BrowserdError:
    """The BrowserdError that ``exc`` (raised by a handler) is answered with.

    Re-raises ``exc`` when it is not an Exception (cancellation, KeyboardInterrupt):
    those are not answers.
    """
    inner = unwrap_group(exc)
    if isinstance(inner, BrowserdError):
        return inner
    if isinstance(inner, trio.TooSlowError):
        return Timeout(f"{what} timed out")
    if not isinstance(inner, Exception):
        raise exc
    log.exception("internal error in %s", what, exc_info=inner)
    return BrowserdError(f"internal error: {type(inner).__name__}")


def audit(system: System, *, who: str, method: str, path: str, args: dict[str, Any],
          outcome: str, started: float, profile: str = "-", session: str = "-") -> None:
    """The audit line of one call (profile, session, tab, shortened URL, outcome,
    milliseconds; no secrets)."""
    url = args.get("url")
    tab = args.get("targetId")
    token = system.token
    audit_log.info(
        "who=%s profile=%s session=%s %s %s tab=%s url=%s outcome=%s ms=%.1f", who,
        audit_field(profile, token), audit_field(session, token), method,
        audit_field(path, token),
        audit_field(tab, token) if isinstance(tab, str) and tab else "-",
        audit_field(loggable_url(url), token) if isinstance(url, str) else "-", outcome,
        (time.perf_counter() - started) * 1000,
    )
