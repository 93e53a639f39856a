"""NavGuard: the URL policy on every document request a page makes, before it leaves.

The API checks the URLs an agent sends (:mod:`browserd.urlpolicy`); this
actor checks the ones pages send: server redirects, links, ``target=_blank``
and ``window.open`` popups, meta refresh, form posts, frame navigations.

How: browser-level ``Target.setAutoAttach {autoAttach, flatten,
waitForDebuggerOnStart: true, filter: pages}`` gives the guard its own
session on every page target, *paused before its first request*. On that
session it sends ``Fetch.enable {patterns: [{resourceType: "Document",
requestStage: "Request"}]}`` and only then ``Runtime.runIfWaitingForDebugger``,
so even a popup's first request is seen. (Chromium does not hold the first
navigation of ``Target.createTarget {url}``: browserd opens its own tabs
blank and the CDP gateway defers a client's URL until the guard holds the
page, :meth:`NavGuard.wait_guarded` / :meth:`NavGuard.start_navigation`.)
A page is guarded once, on that auto-attach session: browserd's own
``Target.attachToTarget`` calls (a tab actor's, a gateway page endpoint's)
are reported on the root session too and are left alone, so no other
session of a page gets the guard's ``Fetch``. Each ``Fetch.requestPaused`` (one
per redirect hop, with ``redirectedRequestId`` naming the hop before) is
checked with :func:`navigation_verdict` and answered with
``Fetch.continueRequest`` or ``Fetch.failRequest {errorReason:
"BlockedByClient"}``: a blocked request never reaches its server.

Every answer has a deadline (:data:`ANSWER_DEADLINE_S`); if judging or
answering fails, the request is continued (a request never stays paused),
except that a request judged blocked is never continued. A popup whose very
first navigation was blocked (it never showed anything) is closed.

Schemes that never reach the network (``file:``, ``chrome:``, ``data:``)
do not pause in Fetch; Chromium already refuses them as page-initiated
top-level navigations and redirects (checked on Chromium 156).

Blocks are kept per target in a bounded list (:class:`BlockRecord`, URLs
shown as ``scheme://host:port/path`` only) for ``/navigate``'s 403
``redirectedFrom`` and for input actions' ``effects.blocked``.

Egress containment: a page whose browser context has an egress policy
(:class:`~browserd.egress.EgressScopes`: the profile's ``allowed_origins``,
or its session's) gets ``Fetch`` for *every* request
(:data:`~browserd.egress.FETCH_ALL`) on this same session, and each paused
request to an origin the policy does not allow is failed the same way
(reason ``"egress"``, noted in the ledger the network ring reads). The
``contain`` factory (:class:`browserd.tabs.contain.Containment`) does the
rest before the page runs (WebSocket rules, APIs Fetch cannot hold, child
targets, whose Fetch it switches on through the guard). Judging a contained
page's request fails closed.

Cancellation: cancelling :meth:`NavGuard.run` stops guarding; requests
paused at that moment are released by Chromium when the session detaches.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

import attrs
import trio

from ..cdp import CdpConnection, CdpSession
from ..egress import (
    EGRESS,
    FETCH_ALL,
    ContainmentFactory,
    EgressPolicy,
    EgressScopes,
    PageContainment,
    note_blocked,
)
from ..errors import BadUrl, BrowserdError, BrowserGone, Timeout, UrlBlocked
from ..redact import loggable_url
from ..urlpolicy import UrlPolicy

__all__ = ["ANSWER_DEADLINE_S", "BLOCKS_KEPT", "CHAINS_KEPT", "SETUP_DEADLINE_S", "BlockRecord",
           "NavGuard", "navigation_verdict"]

log = logging.getLogger(__name__)

ANSWER_DEADLINE_S = 5.0
"""Bound on judging and answering one paused request."""
SETUP_DEADLINE_S = 5.0
"""Bound on enabling Fetch on a new page before it is resumed anyway."""
BLOCKS_KEPT = 500
"""Blocks remembered (all targets, newest last)."""
CHAINS_KEPT = 200
"""Requests per page whose redirect chain is remembered (for ``redirectedFrom``)."""
_DOCUMENT_PATTERNS = [{"resourceType": "Document", "requestStage": "Request"}]


def navigation_verdict(policy: UrlPolicy, url: str) -> str | None:
    """Why ``policy`` refuses a page's navigation to ``url``, or None if allowed.

    Only the scheme, host and port decide, so an http(s) URL is judged by
    ``scheme://authority/`` alone: bounded work whatever the page put in
    its path or query. Reasons: ``"scheme"`` (a refused scheme),
    ``"port"`` (browserd's own control or DevTools port), ``"invalid"``
    (a URL the policy cannot read: refused, never guessed at).
    """
    scheme = url.split(":", 1)[0].lower() if ":" in url[:40] else ""
    probe = url
    if scheme in ("http", "https"):
        try:
            parts = urlsplit(url[:4096])
            if len(url) > 4096 and not (parts.path or parts.query or parts.fragment):
                return "invalid"  # the authority itself was cut: its port is unknown
            probe = f"{scheme}://{parts.netloc}/"
        except ValueError:
            return "invalid"
    elif len(probe) > 4096:
        probe = probe[:4096]
    try:
        policy.check(probe)
    except UrlBlocked:
        return "port" if scheme in ("http", "https") else "scheme"
    except BadUrl:
        return "invalid"
    return None


@attrs.frozen(kw_only=True)
class BlockRecord:
    """One request the guard stopped."""

    seq: int
    target_id: str
    opener_id: str | None
    url: str  # display form
    reason: str
    main_frame: bool
    redirected_from: str | None  # display form of the first URL of the redirect chain
    resource_type: str | None = None  # not the page's own navigation: Chromium's type

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"url": self.url, "reason": self.reason}
        if self.resource_type is not None:
            out["resourceType"] = self.resource_type
        if self.redirected_from is not None:
            out["redirectedFrom"] = self.redirected_from
        if self.target_id and self.opener_id:
            out["targetId"] = self.target_id
        return out


@attrs.define
class _Guarded:
    """The guard's state for one page target (owned by the guard's tasks)."""

    target_id: str
    opener_id: str | None
    session_id: str
    scope: trio.CancelScope
    decided: trio.Event  # its first main-frame request was judged (or the guard ended)
    ready: trio.Event  # its set-up is done (or the guard ended): see ``guarding``
    guarding: bool = False  # Fetch is on: its document requests are judged
    # requestId -> first URL of its redirect chain (newest CHAINS_KEPT requests)
    chains: collections.OrderedDict[str, str] = attrs.field(factory=collections.OrderedDict)
    main_seen: bool = False  # a main-frame request was let through
    egress: EgressPolicy | None = None  # its context's policy (None: not contained)


class NavGuard:
    """Handle to the guard of one browser connection; run :meth:`run` in a nursery."""

    def __init__(
        self, connection: CdpConnection, policy: UrlPolicy, *,
        on_attach: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
        egress: EgressScopes | None = None, contain: ContainmentFactory | None = None,
    ) -> None:
        self.connection = connection
        self.policy = policy
        #: Egress policies by browser context (sessions add theirs before their pages exist).
        self.egress = egress if egress is not None else EgressScopes()
        self._contain = contain
        self._on_attach = on_attach
        self._targets: dict[str, _Guarded] = {}
        self._blocks: collections.deque[BlockRecord] = collections.deque(maxlen=BLOCKS_KEPT)
        self._seq = 0
        self.closed_popups: set[str] = set()
        self._decided: collections.OrderedDict[str, trio.Event] = collections.OrderedDict()
        self._ready: collections.OrderedDict[str, trio.Event] = collections.OrderedDict()

    # -- queries (for /navigate and the effects Observer) ----------------------------------

    def mark(self) -> int:
        """A position in the block history: later blocks have a larger ``seq``."""
        return self._seq

    def is_contained(self, target_id: str) -> bool:
        """Whether ``target_id``'s context has an egress policy (its requests are judged)."""
        guarded = self._targets.get(target_id)
        return guarded is not None and guarded.egress is not None

    def blocks_since(self, mark: int, *, target_id: str,
                     opened_by: Iterable[str] = ()) -> list[BlockRecord]:
        """Blocks after ``mark`` on ``target_id`` or on popups it opened."""
        popups = set(opened_by)
        return [b for b in self._blocks if b.seq > mark and (
            b.target_id == target_id or b.opener_id == target_id or b.target_id in popups)]

    async def wait_decided(self, target_ids: Iterable[str]) -> None:
        """Wait until each page's first main-frame request was judged (caller's deadline).

        Also waits for pages the guard has not attached to yet; a page that
        never makes a request (``window.open()``) waits out the deadline.
        """
        for tid in list(target_ids):
            await self._decision(tid).wait()

    def _decision(self, target_id: str) -> trio.Event:
        return _event_for(self._decided, target_id)

    async def wait_guarded(self, target_id: str) -> bool:
        """Wait (caller's deadline) until the guard judges ``target_id``'s document requests.

        Also waits for a page the guard has not attached to yet. True once
        it is guarded; False when its guard ended first (the page is gone,
        or could not be guarded and is being closed).
        """
        await _event_for(self._ready, target_id).wait()
        guarded = self._targets.get(target_id)
        return guarded is not None and guarded.guarding

    async def start_navigation(self, target_id: str, url: str) -> None:
        """Send ``Page.navigate {url}`` on the guard's own session of a guarded page.

        For a page created blank so that its first navigation is judged too
        (``Target.createTarget`` with a URL is not held by
        ``waitForDebuggerOnStart``: its request would leave unguarded). The
        command is written, its reply not awaited (it comes when the page
        commits). ``url`` must have passed the URL policy. Raises
        BrowserGone when the page is not guarded (any more).
        """
        guarded = self._targets.get(target_id)
        if guarded is None or not guarded.guarding:
            raise BrowserGone("the page is not guarded (it went away)")
        await self.connection.session(guarded.session_id).post("Page.navigate", {"url": url})

    # -- the actor -------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[NavGuard] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """Auto-attach to every page (paused at start) and guard it until cancelled.

        Ready once auto-attach is on. Raises BrowserdError if auto-attach
        cannot be set up (the browser subtree then restarts).
        """
        events = self.connection.subscribe(
            None, frozenset({"Target.attachedToTarget", "Target.detachedFromTarget"}),
            buffer=10000)
        try:
            async with trio.open_nursery() as nursery:
                with trio.fail_after(10):
                    await self.connection.send("Target.setAutoAttach", {
                        "autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True,
                        "filter": [{"type": "page", "exclude": False}],
                    })
                task_status.started(self)
                async for event in events:
                    p = event.params
                    if event.method == "Target.attachedToTarget":
                        guarded = self._adopt(p)
                        if guarded is not None:
                            nursery.start_soon(self._guard, guarded, p.get("targetInfo", {}),
                                               bool(p.get("waitingForDebugger")))
                    else:
                        for guarded in list(self._targets.values()):
                            if guarded.session_id == p.get("sessionId"):
                                guarded.scope.cancel()
        finally:
            self.connection.unsubscribe(events)

    def _adopt(self, p: dict[str, Any]) -> _Guarded | None:
        """The guard record for a page this root-session attach reports, or None.

        Runs in the event loop, so records are made in wire order. Every
        attach on the root session is reported there, browserd's own
        ``Target.attachToTarget`` calls too (a tab actor's, a gateway
        client's page endpoint); a page is guarded once, on the session
        auto-attach gave it (which comes first: at creation, or for pages
        that existed, before ``setAutoAttach`` answered). Other sessions of a
        guarded page are never touched, so a gateway client's page session
        never sees the guard's ``Fetch`` interception.
        """
        info = p.get("targetInfo", {})
        session_id = p.get("sessionId")
        target_id = str(info.get("targetId", ""))
        if info.get("type") != "page" or not session_id or not target_id:
            return None
        if target_id in self._targets:
            return None
        guarded = _Guarded(target_id=target_id, opener_id=info.get("openerId") or None,
                           session_id=str(session_id), scope=trio.CancelScope(),
                           decided=self._decision(target_id),
                           ready=_event_for(self._ready, target_id),
                           egress=self.egress.policy_for(info.get("browserContextId")))
        self._targets[target_id] = guarded
        return guarded

    async def _guard(self, guarded: _Guarded, info: dict[str, Any], waiting: bool) -> None:
        target_id = guarded.target_id
        session = self.connection.session(guarded.session_id)
        paused = session.subscribe(frozenset({"Fetch.requestPaused"}), buffer=10000)
        containment = None if guarded.egress is None or self._contain is None else (
            self._contain(
                self.connection, guarded.session_id, guarded.egress,
                lambda url, kind: self._judge(guarded.egress, url, kind),
                lambda url, reason, kind, _id: self._record(
                    guarded, url=url, reason=reason, main=False, first=None, kind=kind),
                _enable_fetch_all))
        try:
            with guarded.scope:
                try:
                    await self._set_up(session, info, waiting, guarded.egress is not None,
                                       containment)
                    guarded.guarding = True
                    guarded.ready.set()
                    async with trio.open_nursery() as nursery:
                        if containment is not None:
                            nursery.start_soon(containment.run)
                        async for event in paused:
                            nursery.start_soon(self._answer, session, guarded, event.params)
                except BrowserdError as exc:
                    # Unguarded, the page's requests would stay paused or go out
                    # unchecked: close it (fail closed; gone pages ignore this).
                    log.warning("navguard: cannot guard page %s (%s); closing it",
                                target_id, exc.message)
                    with trio.CancelScope(shield=True), trio.move_on_after(2):
                        try:
                            await self.connection.send("Target.closeTarget",
                                                       {"targetId": target_id})
                        except BrowserdError:
                            pass
        finally:
            self.connection.unsubscribe(paused)
            if containment is not None:
                containment.close()
            guarded.guarding = False
            guarded.decided.set()
            guarded.ready.set()
            if self._targets.get(target_id) is guarded:
                del self._targets[target_id]

    async def _set_up(self, session: CdpSession, info: dict[str, Any], waiting: bool,
                      contained: bool, containment: PageContainment | None) -> None:
        """Fetch on (every request when contained, and the containment set up), the
        attach hook run, then the page resumed (always, bounded).

        Raises BrowserdError (Timeout after 5 s) when the set-up failed; the
        page is resumed all the same and the caller closes it.
        """
        try:
            with trio.move_on_after(SETUP_DEADLINE_S) as scope:
                if contained:
                    await _enable_fetch_all(session)
                else:
                    await session.send("Fetch.enable", {"patterns": _DOCUMENT_PATTERNS})
                if containment is not None:
                    await containment.set_up()
                if self._on_attach is not None:
                    await self._on_attach(info)
            if scope.cancelled_caught:
                raise Timeout("setting up the navigation guard took too long")
        finally:
            if waiting:
                await session.run_if_waiting()

    async def _answer(self, session: CdpSession, guarded: _Guarded, p: dict[str, Any]) -> None:
        """Judge one paused request and continue or fail it (bounded; errors logged)."""
        request_id = str(p.get("requestId", ""))
        url = str((p.get("request") or {}).get("url", ""))
        kind = str(p.get("resourceType") or "Document")
        document = kind == "Document"
        main = document and p.get("frameId") == guarded.target_id
        first = guarded.chains.pop(str(p.get("redirectedRequestId") or ""), None)
        verdict: str | None = None
        try:
            verdict = self._judge(guarded.egress, url, kind)
        except Exception:  # never leave a request paused because judging broke
            log.exception("navguard: judging a request failed; %s",
                          "stopping it" if guarded.egress else "letting it through")
            verdict = EGRESS if guarded.egress is not None else None
        try:
            with trio.move_on_after(ANSWER_DEADLINE_S):
                if verdict is None:
                    if document:
                        guarded.chains[request_id] = first or url
                        while len(guarded.chains) > CHAINS_KEPT:
                            guarded.chains.popitem(last=False)
                    await session.send("Fetch.continueRequest", {"requestId": request_id})
                    if main:
                        guarded.main_seen = True
                        guarded.decided.set()
                    return
                if verdict == EGRESS:
                    note_blocked(p.get("networkId"))
                self._record(guarded, url=url, reason=verdict, main=main, first=first,
                             kind=None if main else kind.lower())
                await session.send("Fetch.failRequest", {"requestId": request_id,
                                                         "errorReason": "BlockedByClient"})
                if main and guarded.opener_id and not guarded.main_seen:
                    await self._close_popup(guarded)
                if main:
                    guarded.decided.set()
        except BrowserdError as exc:
            log.info("navguard: answering a paused request failed: %s", exc.message)

    def _judge(self, egress: EgressPolicy | None, url: str, kind: str) -> str | None:
        """Why a paused request must be stopped (URL policy for documents, then egress)."""
        verdict = navigation_verdict(self.policy, url) if kind == "Document" else None
        if verdict is None and egress is not None:
            verdict = egress.verdict(url)
        return verdict

    def _record(self, guarded: _Guarded, *, url: str, reason: str, main: bool,
                first: str | None, kind: str | None = None) -> None:
        """Keep one block; ``kind`` (the resource type) marks a block of anything but the
        page's own navigation, and a repeat of such a block replaces the older record."""
        self._seq += 1
        record = BlockRecord(
            seq=self._seq, target_id=guarded.target_id, opener_id=guarded.opener_id,
            url=loggable_url(url), reason=reason, main_frame=main,
            redirected_from=loggable_url(first) if first is not None else None,
            resource_type=kind,
        )
        if kind is not None:
            key = (record.target_id, record.url, reason, kind)
            for old in [b for b in self._blocks
                        if (b.target_id, b.url, b.reason, b.resource_type) == key]:
                self._blocks.remove(old)
        self._blocks.append(record)
        if kind is not None and kind != "document":
            log.info("navguard: blocked a %s request to %s (%s)", kind, record.url, reason)
            return
        log.warning("navguard: blocked %s request to %s (%s)%s",
                    "a main-frame" if main else "a subframe", record.url, reason,
                    f" redirected from {record.redirected_from}" if first else "")

    async def _close_popup(self, guarded: _Guarded) -> None:
        self.closed_popups.add(guarded.target_id)
        if len(self.closed_popups) > 1000:
            self.closed_popups.pop()
        await self.connection.send("Target.closeTarget", {"targetId": guarded.target_id})


async def _enable_fetch_all(session: CdpSession) -> None:
    """Fetch on for every request of ``session`` (a contained page's, or its child's)."""
    await session.send("Fetch.enable", {"patterns": list(FETCH_ALL)})


def _event_for(events: collections.OrderedDict[str, trio.Event], target_id: str) -> trio.Event:
    """The event kept for ``target_id`` (made on first use; the oldest of 1000 are set
    and dropped, so a waiter for a page never seen is woken, never left hanging)."""
    event = events.get(target_id)
    if event is None:
        event = events[target_id] = trio.Event()
        while len(events) > 1000:
            events.popitem(last=False)[1].set()
    return event
