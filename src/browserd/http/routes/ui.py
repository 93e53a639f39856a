"""The ops page's own routes, under ``/ui`` (a person's session; see :mod:`browserd.ui.gate`).

Open (no data in them): ``GET /ui`` (the page), ``/ui/app.js``,
``/ui/app.css`` and ``/ui/login?code=…`` (redeems a one-time code: sets
the session cookie and redirects to ``/ui#key=…``). With a session:

- ``GET /ui/api/state``: the service, its profile(s) with their tabs
  (handed-off tabs first), what waits for the person (agents' pending tab
  requests, with the pages of theirs each could be given; actions held for
  their confirmation), the audit tail, media and download usage;
- ``GET /ui/api/thumbnail?targetId=…``: a small JPEG of the tab (204 when
  it cannot be taken now);
- ``POST /ui/api/browser {action: start|stop|restart}``;
- ``POST /ui/api/handoff/done {targetId}``: the person is done;
- ``POST /ui/api/tab-request {requestId, approve: targetId | deny: true}`` and
  ``POST /ui/api/confirmation {id, approve: true | deny: true}``: the person's
  answers, as the owner token's ``POST /tabs/requests/<id>`` and ``POST
  /confirmations/<id>`` give them (the same functions, the same events);
- ``POST /ui/api/logout``;
- the Records panel's reads, ``GET /ui/api/records…``
  (:mod:`browserd.http.routes.ui_records`: the person reads every record);
- ``WEBSOCKET /ui/api/live?targetId=…``: the live view
  (:func:`browserd.ui.live.run_live_view`).

These routes are not in the agent's route table (nor ``/openapi.json``):
they answer the page. Errors are the usual ``{error, code, hint}`` bodies.
Every answer carries a strict Content-Security-Policy; changes are written
to the audit log as ``who=ui:<session label>``; every answer is counted in
``/metrics``. Cancellation (the page gone) abandons the work like any route.

The page itself is ``index.html``, ``app.css`` and one script, ``/ui/app.js``:
the static files :data:`_SCRIPT` names, joined in that order (the gate's open
paths stay the same however the script is split).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

import orjson
import trio
from quart import Response, g, request, websocket
from quart_trio import QuartTrio

from ... import __version__
from ...downloads import DownloadState
from ...errors import BadRequest, BrowserdError, NotFound, Timeout, unwrap_group
from ...handoff import HandoffOutcome
from ...profilespec import Driver
from ...supervisor.state import SupervisorState
from ...system import System
from ...tabs.actor import TabActor
from ...ui.gate import WS_PROTOCOL, session_of
from ...ui.live import run_live_view
from ...ui.sessions import COOKIE_NAME, UiSession
from ...ui.thumbnails import may_capture
from .confirmations import settle_confirmation
from .consent import settle_tab_request
from .ui_records import RECORD_UI_ROUTES

__all__ = ["CSP", "register_ui"]

log = logging.getLogger(__name__)
audit_log = logging.getLogger("browserd.audit")

CSP = ("default-src 'self'; img-src 'self' blob:; media-src 'self' blob:; base-uri 'none'; "
       "form-action 'none'; frame-ancestors 'none'; object-src 'none'")
AUDIT_LINES_SHOWN = 50
START_DEADLINE_S = 60.0
STOP_DEADLINE_S = 30.0
TABS_REFRESH_S = 1.0
_STATIC = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8",
           "index.html": "text/html; charset=utf-8"}
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
#: The static files served, joined, as ``/ui/app.js`` (helpers first: app.js starts the page).
_SCRIPT = ("waiting.js", "records.js", "app.js")
_LOGIN_FAILED = (b"<!doctype html><meta charset=utf-8><title>browserd: login failed</title>"
                 b"<p>This login link was already used or has expired (links are valid once, "
                 b"for 60 seconds).</p><p>Run <code>browserd ui</code> for a new one.</p>")

UiHandler = Callable[[System, UiSession | None], Awaitable[Response]]


def _static(name: str) -> bytes:
    return (resources.files("browserd.ui") / "static" / name).read_bytes()


def _page_response(body: bytes, content_type: str, status: int = 200) -> Response:
    response = Response(body, status=status, content_type=content_type)
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Frame-Options"] = "DENY"
    return response


def _secured(handler: UiHandler) -> UiHandler:
    """``handler`` whose answer carries the page's headers (a stricter CSP it set stays)."""
    async def answer(system: System, session: UiSession | None) -> Response:
        response = await handler(system, session)
        response.headers.setdefault("Content-Security-Policy", CSP)
        response.headers["X-Frame-Options"] = "DENY"
        return response
    return answer


def _json(data: Any, status: int = 200) -> Response:
    return _page_response(orjson.dumps(data), "application/json", status)


def _audit(session: UiSession | None, what: str, outcome: str, started: float) -> None:
    audit_log.info("who=%s %s outcome=%s ms=%.1f", session.who if session else "ui:-", what,
                   outcome, (time.perf_counter() - started) * 1000)


def _audit_detail(**values: str) -> None:
    """What this change was about, for its audit line (ids and verbs, never agent text)."""
    g.ui_audit_detail = " ".join(f"{k}={_UNSAFE.sub('?', v)[:80]}" for k, v in values.items())


def register_ui(app: QuartTrio, system: System) -> None:
    """Add the ops page's routes to ``app``."""
    pages = {name: _static(name) for name in _STATIC}
    pages["app.js"] = b"\n".join(_static(name) for name in _SCRIPT)

    def add(rule: str, handler: UiHandler, methods: tuple[str, ...] = ("GET",),
            audited: bool = False) -> None:
        async def view(**_path: str) -> Response:  # (path parts: request.view_args)
            started = time.perf_counter()
            session = session_of(request.scope)
            status, outcome = 200, "ok"
            try:
                response = await handler(system, session)
                status = response.status_code
                return response
            except BaseException as exc:
                inner = unwrap_group(exc)
                error = (inner if isinstance(inner, BrowserdError)
                         else Timeout(f"{rule} timed out")
                         if isinstance(inner, trio.TooSlowError) else None)
                if error is None:
                    if not isinstance(inner, Exception):
                        status, outcome = 499, "cancelled"
                        raise
                    log.exception("internal error in %s %s", request.method, rule)
                    error = BrowserdError(f"internal error: {type(inner).__name__}")
                status, outcome = error.status, error.code
                return _json(error.to_dict(), error.status)
            finally:
                system.metrics.observe_request(rule, request.method, status,
                                               time.perf_counter() - started, code=outcome)
                if audited:
                    detail = g.get("ui_audit_detail")
                    _audit(session, f"{request.method} {rule}" + (f" {detail}" if detail else ""),
                           outcome, started)

        app.add_url_rule(rule, endpoint="ui" + rule.replace("/", "_") + "_" + "_".join(methods),
                         view_func=view, methods=list(methods))

    async def page(system: System, session: UiSession | None) -> Response:
        return _page_response(pages["index.html"], _STATIC["index.html"])

    def asset(name: str) -> UiHandler:
        async def serve(system: System, session: UiSession | None) -> Response:
            return _page_response(pages[name], _STATIC[name])
        return serve

    add("/ui", page)
    add("/ui/", page)
    add("/ui/app.js", asset("app.js"))
    add("/ui/app.css", asset("app.css"))
    add("/ui/login", login)
    add("/ui/api/state", state)
    add("/ui/api/thumbnail", thumbnail)
    add("/ui/api/browser", browser_action, ("POST",), audited=True)
    add("/ui/api/handoff/done", handoff_done, ("POST",), audited=True)
    add("/ui/api/tab-request", tab_request_answer, ("POST",), audited=True)
    add("/ui/api/confirmation", confirmation_answer, ("POST",), audited=True)
    add("/ui/api/logout", logout, ("POST",), audited=True)
    for rule, handler in RECORD_UI_ROUTES:
        add(rule, _secured(handler))

    @app.websocket("/ui/api/live")
    async def live() -> None:
        await live_view(system)


# -- login ------------------------------------------------------------------------------------


async def login(system: System, session: UiSession | None) -> Response:
    """Redeem ``?code=``: the session cookie, then ``/ui#key=…`` (the page keeps the key)."""
    started = time.perf_counter()
    code = request.args.get("code", "")
    new = system.ui.sessions.redeem(code)
    _audit(new, "GET /ui/login", "ok" if new else "UNAUTHORIZED", started)
    if new is None:
        return _page_response(_LOGIN_FAILED, _STATIC["index.html"], 401)
    response = _page_response(b"", "text/plain", 303)
    response.headers["Location"] = f"/ui#key={new.key}"
    response.set_cookie(COOKIE_NAME, new.session_id, max_age=int(new.expires - new.created),
                        path="/ui", httponly=True, samesite="Strict")
    return response


async def logout(system: System, session: UiSession | None) -> Response:
    if session is not None:
        system.ui.sessions.end(session)
    response = _json({"ok": True})
    response.delete_cookie(COOKIE_NAME, path="/ui", httponly=True, samesite="Strict")
    return response


# -- state ------------------------------------------------------------------------------------


async def state(system: System, session: UiSession | None) -> Response:
    sup = system.supervisor
    stats = sup.statistics()
    runtime = sup.runtime if stats.state == SupervisorState.RUNNING else None
    tabs: list[dict[str, Any]] = []
    if runtime is None:
        system.handoffs.prune(())  # no browser, no tab: their handoffs are over
    else:
        with trio.move_on_after(TABS_REFRESH_S):
            await runtime.tabs.refresh_infos()
        infos = runtime.tabs.infos()
        system.handoffs.prune([t.target_id for t in infos])
        for info in infos:
            tab = info.to_json()
            handoff = system.handoffs.active(info.target_id)
            if handoff is not None:
                tab["handoff"] = handoff.to_json()
            tabs.append(tab)
        # Handed-off tabs first (oldest first), then the rest in the browser's order.
        tabs.sort(key=lambda t: (0, t["handoff"]["since"]) if "handoff" in t else (1, 0))
    media = system.media.statistics()
    downloads = system.downloads.statistics()
    settings = system.settings
    profile = {
        "name": settings.profile, "color": settings.color, "state": str(stats.state),
        "running": stats.state == SupervisorState.RUNNING, "headless": sup.headless,
        "pid": stats.pid, "version": stats.version, "restarts": stats.restarts,
        "spawns": stats.spawns, "uptimeS": stats.uptime_s, "lastError": stats.last_error,
        "lastCrash": stats.last_crash,
        "attach": settings.is_attach, "tabs": tabs,
    }
    return _json({
        "service": {"version": __version__, "controlUrl": settings.control_url,
                    "uptimeS": round(time.time() - system.started_at, 1)},
        "profiles": [profile],
        "media": {"files": media.files, "bytes": media.bytes},
        "downloads": {"enabled": system.downloads.enabled, "inProgress": downloads.in_progress,
                      "completed": downloads.completed, "canceled": downloads.canceled,
                      "bytes": sum(r.received_bytes for r in system.downloads.records()
                                   if r.state != DownloadState.CANCELED)},
        "tabRequests": _pending_tab_requests(system),
        "confirmations": [{"id": h.confirmation_id, "kind": h.kind, "summary": h.summary,
                           "target": h.target, "token": h.token, "profile": h.profile,
                           "createdAt": h.created_at}
                          for h in system.confirmations.listing(pending_only=True)],
        "audit": system.ui.audit.lines(AUDIT_LINES_SHOWN),
        "liveViews": system.ui.live.count(),
        "session": {"label": session.label if session else None},
    })


def _pending_tab_requests(system: System) -> list[dict[str, Any]]:
    """Pending tab requests, each with ``pages``: what the person may give (None: no browser)."""
    pages: dict[str, list[dict[str, str]] | None] = {}
    answer = []
    for r in system.tab_requests.listing(pending_only=True):
        if r.profile not in pages:
            pages[r.profile] = _offerable(system, r.profile)
        answer.append({"requestId": r.request_id, "profile": r.profile, "token": r.token,
                       "reason": r.reason, "url": r.url, "createdAt": r.created_at,
                       "pages": pages[r.profile]})
    return answer


def _offerable(system: System, name: str) -> list[dict[str, str]] | None:
    """The person's pages of profile ``name`` not offered yet; None when it is not connected."""
    try:
        profile = system.profiles.get(name)
    except BrowserdError:
        return None  # (deleted since)
    runtime = profile.supervisor.runtime
    if runtime is None or profile.spec.driver not in (Driver.LIVE, Driver.EXTENSION):
        return None
    return runtime.tabs.offerable()


async def thumbnail(system: System, session: UiSession | None) -> Response:
    runtime = system.require_runtime()
    tab = runtime.tabs.get(_target_arg(request.args.get("targetId")))
    shuffle = system.supervisor.headless and runtime.process is not None
    current = runtime.tabs.active_id()
    if not may_capture(tab, shuffle_front=shuffle, current=current):
        return _page_response(b"", "image/jpeg", 204)
    front_id = system.ui.live.front() or current
    front = _tab_or_none(runtime.tabs.get, front_id)
    thumb = await system.ui.thumbnails.get(runtime, tab, front=front, shuffle_front=shuffle)
    return _page_response(thumb.data, "image/jpeg")


def _tab_or_none(get: Callable[[str], TabActor], target_id: str | None) -> TabActor | None:
    if target_id is None:
        return None
    try:
        return get(target_id)
    except BrowserdError:
        return None


def _target_arg(value: Any, field: str = "targetId") -> str:
    if not isinstance(value, str) or not value or len(value) > 200:
        raise BadRequest(f"{field} is required (a string)", field=field)
    return value


def _flag_arg(body: dict[str, Any], field: str) -> bool:
    value = body.get(field, False)
    if not isinstance(value, bool):
        raise BadRequest(f"{field} must be true or false", field=field)
    return value


async def _body() -> dict[str, Any]:
    raw = await request.get_data()
    try:
        body = orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError:
        raise BadRequest("the body is not valid JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("the JSON body must be an object")
    return body


# -- changes ----------------------------------------------------------------------------------


async def browser_action(system: System, session: UiSession | None) -> Response:
    action = (await _body()).get("action")
    sup = system.supervisor
    if action in ("stop", "restart"):
        with trio.fail_after(STOP_DEADLINE_S):
            await sup.stop()
    if action in ("start", "restart"):
        with trio.fail_after(START_DEADLINE_S):
            await sup.start()
    elif action != "stop":
        raise BadRequest("action must be start, stop or restart", field="action")
    log.info("ops page (%s): browser %s", session.who if session else "ui:-", action)
    return _json({"ok": True, "action": action, "state": str(sup.state)})


async def handoff_done(system: System, session: UiSession | None) -> Response:
    target_id = _target_arg((await _body()).get("targetId"))
    ended = system.handoffs.end(target_id, HandoffOutcome.DONE,
                                by=session.who if session else "ui")
    if ended is None:
        raise NotFound(f"tab {target_id} has no active handoff")
    return _json({"ok": True, "targetId": target_id, "handoff": ended.to_json()})


async def tab_request_answer(system: System, session: UiSession | None) -> Response:
    """``{requestId, approve: targetId}`` (one of the person's pages) or ``{…, deny: true}``."""
    body = await _body()
    request_id = _target_arg(body.get("requestId"), "requestId")
    given = body.get("approve")
    approve = None if given is None else _target_arg(given, "approve")
    deny = _flag_arg(body, "deny")
    _audit_detail(request=request_id, answer="deny" if approve is None else "approve",
                  tab=approve or "-")
    ended = await settle_tab_request(system, request_id, approve=approve, deny=deny)
    return _json({"ok": True, "tabRequest": ended})


async def confirmation_answer(system: System, session: UiSession | None) -> Response:
    """``{id, approve: true}`` (the agent's wait then runs it) or ``{id, deny: true}``."""
    body = await _body()
    confirmation_id = _target_arg(body.get("id"), "id")
    approve, deny = _flag_arg(body, "approve"), _flag_arg(body, "deny")
    _audit_detail(confirmation=confirmation_id, answer="approve" if approve else "deny")
    held = settle_confirmation(system, confirmation_id, approve=approve, deny=deny)
    return _json({"ok": True, "confirmation": held})


# -- live view --------------------------------------------------------------------------------


class _Channel:
    """The live view's end of the quart WebSocket."""

    async def send_json(self, message: dict[str, Any]) -> None:
        await websocket.send(orjson.dumps(message).decode())

    async def send_bytes(self, data: bytes) -> None:
        await websocket.send(data)

    async def receive(self) -> str | bytes | None:
        data: str | bytes = await websocket.receive()
        return data


async def live_view(system: System) -> None:
    """The ``/ui/api/live`` WebSocket (accepted with our subprotocol, then served)."""
    started = time.perf_counter()
    session = session_of(websocket.scope)
    await websocket.accept(subprotocol=WS_PROTOCOL)
    outcome = "ok"
    target = "-"
    try:
        runtime = system.require_runtime()
        tab = runtime.tabs.get(_target_arg(websocket.args.get("targetId")))
        target = tab.target_id
        inputs = [0]

        def counted(method: str) -> None:
            inputs[0] += 1

        await run_live_view(runtime.connection, tab, _Channel(), front_lock=runtime.captures
                            .front_lock, views=system.ui.live, on_input=counted)
        outcome = f"ok inputs={inputs[0]}"
    except BrowserdError as exc:
        outcome = exc.code
        await websocket.send(orjson.dumps({"type": "error", **exc.to_dict()}).decode())
        await websocket.close(1011, exc.code)
    except trio.TooSlowError:
        outcome = "TIMEOUT"
        await websocket.close(1011, "TIMEOUT")
    finally:
        _audit(session, f"WEBSOCKET /ui/api/live tab={target}", outcome, started)
