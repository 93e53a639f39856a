"""The commit feed: a tab's frame commits as frozen, numbered records.

The tab's actor (:class:`~browserd.tabs.actor.TabActor`) is the only writer:
its event task turns the ``Page.*`` events of the tab's own session into
:class:`CommitRecord` s — a main frame or in-process child frame that
committed a document (a new one, an error page, one restored from the
back/forward cache) or a same-document entry (``pushState``, a ``#hash``),
a child frame that went away, and, for the main frame only, the navigation
that was asked for (``requested``) and the end of its loading (``stopped``).
Readers — the effects Observer, settling, ``/navigate`` and history moves —
take :attr:`CommitFeed.seq` as a mark before they act, then read
:meth:`CommitFeed.since` that mark (or wait with :meth:`CommitFeed.wait`)
instead of subscribing to the page's events a second time.

**Ordering guarantee.** Records carry sequence numbers 1, 2, 3, … with no gap
and appear in the order the browser sent the events on the tab's session.
The actor applies each event to the tab's state (URL, document, load state,
frame documents, refs and isolated worlds of documents that went away) and
publishes its record in the same step, with no checkpoint in between: a
reader that sees record *n* sees the tab's state after event *n* (and
perhaps later events), never before it. Events the actor applied before a
reader took its mark are never in that reader's :meth:`~CommitFeed.since`;
every event after it is, as long as the reader is fewer than
:data:`FEED_KEPT` records behind (the oldest records go first; a reader
further behind sees only the newest ones).

Plain state with one trio event (woken by :meth:`CommitFeed.publish`); no I/O.
"""

from __future__ import annotations

import collections
import enum

import attrs
import trio

__all__ = ["COMMITS", "FEED_KEPT", "CommitFeed", "CommitKind", "CommitRecord"]

FEED_KEPT = 256
"""Records a feed keeps (the oldest go first)."""


class CommitKind(enum.StrEnum):
    """What a :class:`CommitRecord` says happened to its frame."""

    NEW_DOCUMENT = "new-document"
    """A new document committed (``Page.frameNavigated``)."""
    ERROR_PAGE = "error-page"
    """An error page committed in place of a document that could not be loaded."""
    RESTORED = "restored"
    """A document came back from the back/forward cache (no lifecycle events follow)."""
    SAME_DOCUMENT = "same-document"
    """A ``pushState``/``replaceState`` or ``#hash`` entry: the document stays."""
    REQUESTED = "requested"
    """Main frame only, not a commit: a navigation of the tab itself was asked for."""
    STOPPED = "stopped"
    """Main frame only, not a commit: the frame stopped loading (a requested navigation
    that ends here without a commit became a download, or was stopped)."""
    DETACHED = "detached"
    """Child frames only, not a commit: the frame went away (its documents with it)."""

    @property
    def commits(self) -> bool:
        """True for the kinds that put a document (or an entry of one) in the frame."""
        return self in COMMITS


COMMITS = frozenset({CommitKind.NEW_DOCUMENT, CommitKind.ERROR_PAGE, CommitKind.RESTORED,
                     CommitKind.SAME_DOCUMENT})
"""The kinds that are commits."""


@attrs.frozen(kw_only=True)
class CommitRecord:
    """One entry of a tab's commit feed (see the module docstring)."""

    seq: int
    """1, 2, 3, … per tab, in the order the events arrived."""
    kind: CommitKind
    frame_id: str
    main_frame: bool
    """The tab's main frame (else an in-process child frame, or an out-of-process one
    that went away)."""
    url: str
    """The URL the frame shows after the commit (with its fragment); for ``requested``
    the URL asked for; for ``stopped`` and ``detached`` the frame's last URL, or ""."""
    loader_id: str | None = None
    """The committed document's loaderId (for a same-document entry the document's own,
    when known); None for the records that are not commits."""

    @property
    def same_document(self) -> bool:
        return self.kind is CommitKind.SAME_DOCUMENT

    @property
    def restored(self) -> bool:
        return self.kind is CommitKind.RESTORED


class CommitFeed:
    """A bounded, numbered log of one tab's commit records; written by its actor only."""

    def __init__(self, *, kept: int = FEED_KEPT) -> None:
        self._records: collections.deque[CommitRecord] = collections.deque(maxlen=kept)
        self._seq = 0
        self._published = trio.Event()

    @property
    def seq(self) -> int:
        """The newest record's number (0: none yet): a reader's mark."""
        return self._seq

    def publish(self, kind: CommitKind, *, frame_id: str, main_frame: bool, url: str,
                loader_id: str | None = None) -> CommitRecord:
        """Append the next record and wake :meth:`wait`-ers; the record."""
        self._seq += 1
        record = CommitRecord(seq=self._seq, kind=kind, frame_id=frame_id,
                              main_frame=main_frame, url=url, loader_id=loader_id)
        self._records.append(record)
        self._published.set()
        self._published = trio.Event()
        return record

    def since(self, seq: int) -> tuple[CommitRecord, ...]:
        """The records after number ``seq`` still kept, oldest first."""
        if seq >= self._seq:
            return ()
        return tuple(r for r in self._records if r.seq > seq)

    async def wait(self, *, after: int) -> CommitRecord:
        """The first kept record after number ``after``, once there is one.

        Unbounded: the caller's deadline (or cancellation) ends it; a feed
        whose tab has ended gets no more records.
        """
        while True:
            newer = self.since(after)
            if newer:
                return newer[0]
            await self._published.wait()
