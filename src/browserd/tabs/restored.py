"""The restore ledger: what became of the tabs of a browser that crashed.

After an unplanned restart the supervisor reopens the agent's tabs
(:mod:`browserd.supervisor.restore`); Chromium gives each a new targetId. The
ledger remembers, for ``restored_id_ttl_s``, every old id: **restored**
(its new id, URL and the crash) or **lost** (its URL and why it was not
reopened). :class:`~browserd.tabs.scope.TabScope` asks it about any id the
registry does not know, so every route that names a tab answers 409
TAB_RESTORED (``{oldTargetId, targetId, url, crash}``) or 410 TAB_LOST
(``{url, reason, crash}``) instead of 404; ``GET /tabs`` items of restored
tabs carry ``restoredFrom``.

Scopes: each record belongs to the scope (browser context of a session, or
None: the default scope) its tab lives in *now*; only a request of that
scope is told about it (another session's old id stays 404 TAB_NOT_FOUND).
A later restore moves the records along (:meth:`RestoreLedger.rescope`) and
follows chains: an id restored twice points at the newest tab.

Plain bookkeeping over ``trio.current_time()`` (unit-tested with trio's
MockClock); owned by one supervisor, never shared. Nothing here blocks,
awaits or raises anything but the two answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

import attrs
import trio

from ..errors import TabLost, TabRestored
from .actor import TabInfo

__all__ = ["LEDGER_MAX", "LostReason", "RestoreLedger", "RestoredRecord", "RestoredTabInfo"]

#: Records kept at most (oldest dropped first): a bound whatever the TTL.
LEDGER_MAX = 2000
#: ``post``: its page was the result of a form POST (reopening would resubmit it);
#: ``blocked``: the URL policy refuses its URL now; ``local``: an ``about:``, ``data:``,
#: ``chrome:``… page that has no URL to load again; ``session``: its session could not be
#: carried over; ``failed``: reopening it failed (or ran out of time).
LostReason = Literal["post", "blocked", "local", "session", "failed"]
_MIN_PREFIX = 4  # as the registry's


@attrs.frozen(kw_only=True)
class RestoredRecord:
    """One tab of a crashed browser: reopened as ``target_id``, or lost (``reason``)."""

    old_target_id: str
    target_id: str | None
    """The new tab's id; None when the tab was lost."""
    url: str
    scope: str | None
    """The browser context the record is told in (None: the default scope)."""
    crash: Mapping[str, Any]
    """The ``lastCrash`` record of the crash that took the tab."""
    expires_at: float
    """trio time after which the old id is just unknown (404)."""
    reason: LostReason | None = None

    def error(self) -> TabRestored | TabLost:
        """The answer for a request on the old id."""
        crash = dict(self.crash)
        if self.target_id is None:
            return TabLost(f"tab {self.old_target_id} was lost when the browser crashed "
                           f"({self.reason})", url=self.url, reason=self.reason, crash=crash)
        return TabRestored(
            f"the browser crashed; tab {self.old_target_id} was reopened as {self.target_id}",
            oldTargetId=self.old_target_id, targetId=self.target_id, url=self.url, crash=crash)


@attrs.frozen(kw_only=True)
class RestoredTabInfo(TabInfo):
    """A ``GET /tabs`` item of a reopened tab: ``restoredFrom`` names its old id."""

    restored_from: str

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "restoredFrom": self.restored_from}


class RestoreLedger:
    """Old targetId → :class:`RestoredRecord`, each for ``ttl_s`` (see the module docstring)."""

    def __init__(self, *, ttl_s: float) -> None:
        self.ttl_s = ttl_s
        self._records: dict[str, RestoredRecord] = {}

    def __len__(self) -> int:
        self._expire()
        return len(self._records)

    # -- recording -------------------------------------------------------------------------

    def restored(self, old: str, new: str, *, url: str, scope: str | None,
                 crash: Mapping[str, Any]) -> None:
        """``old`` was reopened as ``new`` in ``scope``; ids that pointed at ``old`` follow."""
        self._add(RestoredRecord(old_target_id=old, target_id=new, url=url, scope=scope,
                                 crash=crash, expires_at=self._expiry()))

    def lost(self, old: str, *, url: str, reason: LostReason, scope: str | None,
             crash: Mapping[str, Any]) -> None:
        """``old`` could not be reopened; ids that pointed at ``old`` are lost with it."""
        self._add(RestoredRecord(old_target_id=old, target_id=None, url=url, scope=scope,
                                 crash=crash, expires_at=self._expiry(), reason=reason))

    def rescope(self, contexts: Mapping[str, str]) -> None:
        """Sessions moved to new browser contexts (old → new): their records move along."""
        for old, record in list(self._records.items()):
            if record.scope is not None and record.scope in contexts:
                self._records[old] = attrs.evolve(record, scope=contexts[record.scope])

    def clear(self) -> None:
        """Forget everything (the browser was stopped: no tab of it is left to point at)."""
        self._records.clear()

    def _expiry(self) -> float:
        return trio.current_time() + self.ttl_s

    def _add(self, record: RestoredRecord) -> None:
        self._expire()
        old = record.old_target_id
        for earlier, prior in list(self._records.items()):
            if prior.target_id == old:  # restored before, now restored (or lost) again
                self._records[earlier] = attrs.evolve(
                    record, old_target_id=earlier, scope=record.scope)
        self._records.pop(old, None)
        self._records[old] = record
        while len(self._records) > LEDGER_MAX:
            del self._records[next(iter(self._records))]

    def _expire(self) -> None:
        now = trio.current_time()
        for old in [o for o, r in self._records.items() if now >= r.expires_at]:
            del self._records[old]

    # -- questions -------------------------------------------------------------------------

    def find(self, target_id: str, scope: str | None) -> RestoredRecord | None:
        """The live record of ``scope`` whose old id is ``target_id`` (or its unique prefix)."""
        self._expire()
        record = self._records.get(target_id)
        if record is not None and record.scope == scope:
            return record
        needle = target_id.lower()
        if len(needle) < _MIN_PREFIX:
            return None
        hits = [r for o, r in self._records.items()
                if r.scope == scope and o.lower().startswith(needle)]
        return hits[0] if len(hits) == 1 else None

    def check(self, target_id: str, scope: str | None) -> None:
        """Raise TabRestored (409) or TabLost (410) for an old id of ``scope``; else return."""
        record = self.find(target_id, scope)
        if record is not None:
            raise record.error()

    def restored_from(self, target_id: str, scope: str | None) -> str | None:
        """The old id a live tab of ``scope`` was reopened from (the newest), or None."""
        self._expire()
        for old, record in reversed(self._records.items()):
            if record.target_id == target_id and record.scope == scope:
                return old
        return None

    def annotate(self, infos: Iterable[TabInfo], scope: str | None) -> list[TabInfo]:
        """``infos`` with ``restoredFrom`` on the tabs of ``scope`` that were reopened."""
        out: list[TabInfo] = []
        for info in infos:
            old = self.restored_from(info.target_id, scope)
            out.append(info if old is None else RestoredTabInfo(
                **attrs.asdict(info, recurse=False), restored_from=old))
        return out
