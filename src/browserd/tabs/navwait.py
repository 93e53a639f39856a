"""The one navigation waiter: a main-frame commit, then a load state.

``/navigate``, history moves (:mod:`browserd.tabs.history`), input actions
that navigated (:func:`browserd.tabs.settle.settle_after_input`) and reads
that wait for a parsed document (:func:`browserd.tabs.settle.settle_document`)
all wait here, with the same ``waitUntil`` words (:data:`WAIT_UNTIL`):

- ``none`` — no wait at all;
- ``commit`` — the main frame committed (a new document, an error page, one
  restored from the back/forward cache, or a same-document entry); the load
  state is then what the document says;
- ``domcontentloaded`` / ``load`` — after the commit, the document got that far.

:func:`wait_navigation` reads the tab's commit feed (:mod:`browserd.tabs.feed`)
from a mark the caller took *before* it acted, so a fast commit is never
missed, and the tab's state already describes a commit it finds there (the
feed's ordering guarantee). The load state comes from the tab's lifecycle
events and, where the caller asks (``probe``), from ``document.readyState``
of the current document, read in the tab's ``browserd`` world so page scripts
cannot fake it. A slow page is never an error here: the deadline ends the wait
and the :class:`Arrival` says how far it got; the callers decide what that
means (``/navigate``: 504; a history move: the answer's ``loadState``).
Cancellation ends the wait; nothing is changed.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Iterable

import attrs
import trio

from ..errors import BrowserdError
from .actor import TabActor
from .feed import CommitRecord
from .pagejs import page_function
from .state import LoadState
from .tabview import Halt
from .worlds import world_evaluate

__all__ = ["WAIT_UNTIL", "Arrival", "Probe", "first_main_commit", "load_state_now",
           "wait_load_state", "wait_navigation"]

_READY_STATE = page_function("readyState").call()
"""The document's readyState, asked in browserd's world."""

WAIT_UNTIL = ("load", "domcontentloaded", "commit", "none")
"""What a navigation may wait for (``waitUntil``): every route that navigates takes these."""
_PROBE_S = 1.0
"""The longest one readyState probe may take (a busy renderer answers late)."""
_RECHECK_S = 0.1
"""How often the load state is re-read when no tab event arrives."""


class Probe(enum.StrEnum):
    """When a load-state wait asks the document its ``readyState`` besides the tab's events."""

    ALWAYS = "always"
    """Every time: right after a commit, when the tab's record may not be reported yet."""
    WHILE_LOADING = "while-loading"
    """Only while the tab's events say LOADING (they may have been missed)."""
    NEVER = "never"
    """Never: the tab's events alone (the page's worlds are not touched)."""


@attrs.frozen(kw_only=True)
class Arrival:
    """How far a navigation got when :func:`wait_navigation` returned."""

    commit: CommitRecord | None
    """The main-frame commit waited for; None when none came (or none was waited for)."""
    load_state: LoadState
    """The main document's load state then."""
    halted: Halt | None
    """What ended the wait short of its goal: the tab closed, crashed, or a dialog opened."""
    timed_out: bool = False
    """The deadline came before the commit."""

    def reached(self, wait_until: str) -> bool:
        """The wait got as far as ``wait_until`` asked."""
        if wait_until in ("domcontentloaded", "load"):
            return self.load_state.rank >= LoadState(wait_until).rank
        return not self.timed_out and self.halted is None


def first_main_commit(records: Iterable[CommitRecord], loader_id: str | None = None
                      ) -> CommitRecord | None:
    """The first main-frame commit among ``records`` (of document ``loader_id`` if given)."""
    for record in records:
        if (record.main_frame and record.kind.commits
                and (loader_id is None or record.loader_id == loader_id)):
            return record
    return None


async def wait_navigation(
    tab: TabActor, *, wait_until: str, until: float, after: int | None,
    loader_id: str | None = None, probe: Probe = Probe.ALWAYS, allow_crashed: bool = False,
    ended: Callable[[], bool] | None = None,
    changed: Callable[[], Awaitable[None]] | None = None,
) -> Arrival:
    """Wait for the main frame to commit after feed mark ``after``, then for ``wait_until``.

    ``after`` None: the caller saw the commit already; only the load state
    is waited for. ``loader_id``: only a commit of that document counts.
    ``probe``: when the document is asked its readyState too (:class:`Probe`).
    ``allow_crashed``: a tab crashed already (a reload revives it) does not
    end the commit wait. ``ended``: the caller's own reason to stop waiting
    for a commit (e.g. the navigation became a download), checked whenever
    ``changed`` returns (default: a change of the tab's state). Everything
    ends at trio time ``until``.
    Never raises for a slow page; cancellation ends the wait.
    """
    if wait_until not in WAIT_UNTIL:
        raise ValueError(f"wait_until must be one of {WAIT_UNTIL}")
    wake = changed or tab.wait_changed
    commit: CommitRecord | None = None
    if after is not None and wait_until != "none":
        with trio.move_on_at(until) as scope:
            while (commit := first_main_commit(tab.commits_since(after), loader_id)) is None:
                halt = tab.halted()
                if halt is Halt.CRASHED and allow_crashed:
                    halt = None
                if halt is not None or (ended is not None and ended()):
                    return Arrival(commit=None, load_state=tab.view().load_state, halted=halt)
                await wake()
        if scope.cancelled_caught:
            return Arrival(commit=None, load_state=tab.view().load_state, halted=None,
                           timed_out=True)
    if wait_until in ("domcontentloaded", "load"):
        want = LoadState(wait_until)
        state = await wait_load_state(tab, want, until=until, probe=probe)
        return Arrival(commit=commit, load_state=state,
                       halted=tab.halted() if state.rank < want.rank else None)
    if wait_until == "commit" and probe is not Probe.NEVER:
        return Arrival(commit=commit, load_state=await load_state_now(tab, probe=Probe.ALWAYS),
                       halted=None)
    return Arrival(commit=commit, load_state=tab.view().load_state, halted=None)


async def _ready_state(tab: TabActor) -> LoadState | None:
    """The current main document's readyState as a load state; None if unknown now."""
    with trio.move_on_after(_PROBE_S):
        try:
            remote = await world_evaluate(tab, tab.session, tab.main_frame_id, _READY_STATE)
        except BrowserdError:
            return None  # between documents, or the world went away: ask again later
        return LoadState.from_ready_state(remote.get("value"))
    return None


async def load_state_now(tab: TabActor, *, probe: Probe) -> LoadState:
    """The main document's load state: the tab's lifecycle record and, as ``probe`` says,
    what the document itself says (bounded by :data:`_PROBE_S`)."""
    state = tab.view().load_state
    if probe is Probe.ALWAYS or (probe is Probe.WHILE_LOADING and state == LoadState.LOADING):
        ready = await _ready_state(tab)
        if ready is not None:
            # The document itself is the authority right after a commit, when
            # the tab's lifecycle record may still describe the old one.
            state = ready if probe is Probe.ALWAYS else max(state, ready, key=lambda s: s.rank)
    return state


async def wait_load_state(tab: TabActor, want: LoadState, *, until: float,
                          probe: Probe = Probe.WHILE_LOADING) -> LoadState:
    """Wait until the main document reaches ``want`` or trio time ``until``; its state.

    ``want`` is DOMCONTENTLOADED or LOAD; ``probe`` says when the document's
    readyState is read besides the tab's events (:class:`Probe`). Returns the
    state reached, which is below ``want`` only when the time ran out or the
    tab halted (a dialog opened, it crashed or went away). Never raises for a
    slow page.
    """
    state = tab.view().load_state
    with trio.move_on_at(until):
        while True:
            state = await load_state_now(tab, probe=probe)
            if state.rank >= want.rank or tab.halted() is not None:
                break
            with trio.move_on_after(_RECHECK_S):
                await tab.wait_changed()
    return state
