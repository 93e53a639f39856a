"""Tab restore: after an unplanned restart, the agent's tabs come back, and say so.

When a running browser that browserd launched crashes (killed, exited, hung,
its pipe closed: whatever :mod:`.crash` calls a crash), :meth:`TabRestorer.crashed`
takes a :class:`RestorePlan` from the dead attempt: each listed tab (never the
spare) with its last committed URL (:class:`~browserd.tabs.commits.CommitLog`),
its scope and whether it was its scope's active tab, plus the ``lastCrash``
record; and it *holds* the profile's sessions (:class:`SessionCarrier`). When the
next attempt serves its browser, before it is ``running`` (requests meanwhile
answer 503 BROWSER_STARTING), :meth:`TabRestorer.restore`:

1. carries every session into the new browser (same ``sessionId``, new browser
   context with its download behavior) so requests naming it keep working;
2. reopens each tab in its own scope, blank, then navigates it to its URL
   through the navigation guard (as ``/tabs/open`` does; the commit is waited
   for at most :data:`COMMIT_WAIT_S`, the page loads on by itself), in the old
   order within each scope (the scopes side by side), and brings each scope's
   active tab to the front;
3. records every old id in the :class:`~browserd.tabs.restored.RestoreLedger`
   (409 TAB_RESTORED / 410 TAB_LOST for ``restored_id_ttl_s``) and publishes
   ``tab.restored {oldTargetId, url}`` (for the new tab) or ``tab.lost {url,
   reason}`` (for the old id).

A tab is lost instead (:func:`lost_reason`) when its page answered a form POST,
when the URL policy refuses its URL now, when it showed a local page (``about:``
other than ``about:blank``, ``data:``, ``chrome:``…), when its session could not
be carried over, or when reopening it failed.

Not restored: a planned restart (``/stop`` then ``/start``, a headless switch),
a service restart (the ledger lives in memory), attached browsers (``cdp_url``:
their tabs are the other browser's; ``live``: the person's own) and the
extension driver; ``restore_tabs = false`` turns it off (sessions then end with
the browser, as before). A stop or a failure drops the plan, the hold and the
ledger (:meth:`TabRestorer.abandon`).

Cancellation: :meth:`TabRestorer.restore` is cancelled with its attempt (a stop);
what it recorded so far stands. Errors: none escape it; a tab whose reopening
fails (a CDP error, a deadline) is lost with reason ``failed``, and the whole
restore is bounded by :data:`RESTORE_DEADLINE_S`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import attrs
import trio

from ..config import Settings
from ..errors import BadUrl, BrowserdError, UrlBlocked
from ..events import EventSink, EventType
from ..redact import loggable_url
from ..tabs.actor import TabActor
from ..tabs.commits import CommitLog
from ..tabs.navwait import Probe, wait_navigation
from ..tabs.restored import LostReason, RestoreLedger
from .crash import CrashAccount

if TYPE_CHECKING:
    from ..urlpolicy import UrlPolicy
    from .runtime import BrowserRuntime

__all__ = ["COMMIT_WAIT_S", "OPEN_DEADLINE_S", "RESTORE_DEADLINE_S", "RestorePlan",
           "SessionCarrier", "TabMemo", "TabRestorer", "lost_reason", "take_plan"]

log = logging.getLogger(__name__)

#: Bound on reopening one tab (``Target.createTarget`` and its actor attaching).
OPEN_DEADLINE_S = 10.0
#: How long a reopened tab's navigation is waited for (until it commits); it goes on after.
COMMIT_WAIT_S = 5.0
#: Bound on the whole restore (sessions and tabs); tabs not reopened by then are lost.
RESTORE_DEADLINE_S = 30.0
#: Schemes of pages that cannot be loaded again (their state was the page).
LOCAL_SCHEMES = frozenset({"about", "data", "blob", "chrome", "chrome-error", "chrome-untrusted",
                           "chrome-extension", "devtools", "javascript", "view-source",
                           "filesystem"})


class SessionCarrier(Protocol):
    """The profile's sessions, as the restore sees them
    (:class:`~browserd.profiles.sessions.SessionTable`)."""

    def hold(self) -> None: ...

    def release(self) -> None: ...

    async def carry(self, runtime: BrowserRuntime) -> Mapping[str, str]: ...


@attrs.frozen(kw_only=True)
class TabMemo:
    """One tab of a browser that crashed, as it is to be reopened."""

    target_id: str
    url: str
    """Its last committed URL (the actor's URL when no commit was seen)."""
    scope: str | None
    """Its session's browser context in the dead browser (None: the default scope)."""
    post: bool = False
    active: bool = False


@attrs.frozen(kw_only=True)
class RestorePlan:
    """What to reopen after a crash, and the crash (``lastCrash``) to tell with it."""

    tabs: tuple[TabMemo, ...]
    crash: Mapping[str, Any]


def take_plan(served: BrowserRuntime, commits: CommitLog, crash: CrashAccount) -> RestorePlan:
    """The listed tabs of every scope of a dead attempt's runtime (plain reads, no I/O).

    Default-scope tabs of a browser context a CDP gateway client made are
    left out (that context is gone; they belong to no scope browserd keeps).
    """
    scopes: list[str | None] = [None]
    for target_id in commits.targets():
        scope = served.scope_of(target_id)
        if scope not in scopes:
            scopes.append(scope)
    memos: list[TabMemo] = []
    for scope in scopes:
        tabs = served.scope(scope)
        active = tabs.active_id()
        for target_id in tabs.target_ids():
            if scope is None and not commits.in_default_context(target_id):
                continue
            commit = commits.commit_of(target_id)
            url = commit.url if commit is not None else tabs.get(target_id).view().url
            memos.append(TabMemo(target_id=target_id, url=url, scope=scope,
                                 post=commit is not None and commit.post,
                                 active=target_id == active))
    return RestorePlan(tabs=tuple(memos), crash=crash.to_json())


def lost_reason(memo: TabMemo, policy: UrlPolicy | None) -> LostReason | None:
    """Why ``memo`` cannot be reopened, or None (``about:blank`` and allowed URLs can)."""
    if memo.post:
        return "post"
    if memo.url in ("", "about:blank"):
        return None
    if memo.url.split(":", 1)[0].lower() in LOCAL_SCHEMES:
        return "local"
    if policy is not None:
        try:
            policy.check(memo.url)
        except (UrlBlocked, BadUrl):
            return "blocked"
    return None


class TabRestorer:
    """One supervisor's tab restore: its plan, its ledger (see the module docstring)."""

    def __init__(self, settings: Settings, *, url_policy: UrlPolicy | None = None,
                 sessions: SessionCarrier | None = None,
                 events: EventSink | None = None) -> None:
        self.enabled = settings.restore_tabs
        self.ledger = RestoreLedger(ttl_s=settings.restored_id_ttl_s)
        self._policy = url_policy
        self._sessions = sessions
        self._events = events
        self.plan: RestorePlan | None = None

    def crashed(self, served: BrowserRuntime | None, crash: CrashAccount | None) -> None:
        """An attempt's browser crashed: plan its restore and hold the sessions.

        Only for a browser browserd launched and sees every page of (not an
        attached or live one), with restore on. Plain reads; never raises.
        """
        if (crash is None or served is None or not self.enabled or served.process is None
                or served.commits is None or served.consent_scoped):
            return
        self.plan = take_plan(served, served.commits, crash)
        if self._sessions is not None:
            self._sessions.hold()
        log.info("%d tabs to restore after the crash", len(self.plan.tabs))

    def abandon(self) -> None:
        """No restore after all (stopped, failed): drop the plan, the hold and the ledger."""
        self.plan = None
        self.ledger.clear()
        if self._sessions is not None:
            self._sessions.release()

    async def restore(self, runtime: BrowserRuntime) -> None:
        """Prepare a new browser to be served: carry the sessions, reopen the tabs.

        Every runtime passes here before it is ``running``; without a plan it
        only learns the default context's id (bounded) for a later crash.
        The sessions' hold ends here (the caller marks the runtime running
        with no checkpoint in between). Never raises (module docstring);
        cancellation propagates.
        """
        if runtime.commits is not None and runtime.process is not None:
            await runtime.commits.learn_default_context(runtime.connection)
        plan, self.plan = self.plan, None
        if plan is None:
            return
        done: set[str] = set()
        contexts: dict[str, str] = {}
        with trio.move_on_after(RESTORE_DEADLINE_S):
            try:
                if self._sessions is not None:
                    contexts.update(await self._sessions.carry(runtime))
                self.ledger.rescope(contexts)
                await self._reopen(runtime, plan, contexts, done)
            finally:
                if self._sessions is not None:  # served right after: nothing to hold
                    self._sessions.release()
        for memo in plan.tabs:
            if memo.target_id not in done:  # out of time
                scope = None if memo.scope is None else contexts.get(memo.scope)
                self._lost(memo, "failed", scope, plan)
        log.info("after the crash: %d tabs to restore, %d sessions carried over",
                 len(plan.tabs), len(contexts))

    async def _reopen(self, runtime: BrowserRuntime, plan: RestorePlan,
                      contexts: Mapping[str, str], done: set[str]) -> None:
        """Reopen ``plan``'s tabs, then bring each scope's active one to the front.

        Each scope's tabs are opened one after the other (so ``GET /tabs`` lists
        them in their old order), the scopes side by side; every navigation runs
        on its own (:func:`_navigate`), all of them in parallel.
        """
        fronts: list[tuple[str | None, TabActor]] = []
        by_scope: dict[str | None, list[TabMemo]] = {}
        for memo in plan.tabs:
            by_scope.setdefault(memo.scope, []).append(memo)
        async with trio.open_nursery() as nursery:
            for memos in by_scope.values():
                nursery.start_soon(self._reopen_scope, runtime, plan, memos, contexts, done,
                                   fronts, nursery)
        for scope, tab in fronts:
            with trio.move_on_after(OPEN_DEADLINE_S):
                try:
                    await runtime.scope(scope).focus(tab)
                except BrowserdError as exc:
                    log.info("restored tab %s not focused: %s", tab.target_id, exc.message)

    async def _reopen_scope(self, runtime: BrowserRuntime, plan: RestorePlan,
                            memos: list[TabMemo], contexts: Mapping[str, str], done: set[str],
                            fronts: list[tuple[str | None, TabActor]],
                            navigations: trio.Nursery) -> None:
        """Reopen one scope's tabs in order; each is recorded (restored or lost) at once."""
        for memo in memos:
            scope = None if memo.scope is None else contexts.get(memo.scope)
            reason = (lost_reason(memo, self._policy)
                      if memo.scope is None or scope is not None else "session")
            done.add(memo.target_id)
            if reason is not None:
                self._lost(memo, reason, scope, plan)
                continue
            try:
                with trio.fail_after(OPEN_DEADLINE_S):
                    tab = await runtime.scope(scope).open("about:blank")
            except (BrowserdError, trio.TooSlowError) as exc:
                log.warning("tab %s could not be reopened: %s", memo.target_id, exc)
                self._lost(memo, "failed", scope, plan)
                continue
            self.ledger.restored(memo.target_id, tab.target_id, url=memo.url,
                                 scope=scope, crash=plan.crash)
            if self._events is not None:
                self._events.publish(EventType.TAB_RESTORED, target_id=tab.target_id,
                                     oldTargetId=memo.target_id, url=memo.url)
            if memo.url not in ("", "about:blank"):
                navigations.start_soon(_navigate, runtime, tab, memo.url)
            if memo.active:
                fronts.append((scope, tab))

    def _lost(self, memo: TabMemo, reason: LostReason, scope: str | None,
              plan: RestorePlan) -> None:
        log.info("tab %s (%s) not restored: %s", memo.target_id, loggable_url(memo.url), reason)
        self.ledger.lost(memo.target_id, url=memo.url, reason=reason,
                         scope=scope if scope is not None else memo.scope, crash=plan.crash)
        if self._events is not None:
            self._events.publish(EventType.TAB_LOST, target_id=memo.target_id, url=memo.url,
                                 reason=reason)


async def _navigate(runtime: BrowserRuntime, tab: TabActor, url: str) -> None:
    """Load ``url`` in a reopened blank tab, guarded; waits ≤ COMMIT_WAIT_S until its
    actor has seen the new document commit (so ``GET /tabs`` shows it at once).

    In the tab's work slot, as ``/tabs/open`` navigates: its domains are enabled
    first (a navigation sent before its actor's enables were answered crashed the
    renderer of 2 of 6 tabs under load). Errors are logged (the tab stays where it
    got: blank, or an error page); never raises but Cancelled.
    """
    with trio.move_on_after(COMMIT_WAIT_S):
        try:
            guard = runtime.navguard
            if guard is not None and not await guard.wait_guarded(tab.target_id):
                log.warning("restored tab %s is not guarded; left blank", tab.target_id)
                return
            async with tab.work():
                mark = tab.view().commit_seq
                result = await tab.send("Page.navigate", {"url": url})
            loader = result.get("loaderId")
            if loader:
                await wait_navigation(tab, wait_until="commit", after=mark, loader_id=loader,
                                      until=trio.current_effective_deadline(),
                                      probe=Probe.NEVER)
        except BrowserdError as exc:
            log.info("restored tab %s: navigating to %s: %s", tab.target_id,
                     loggable_url(url), exc.message)
