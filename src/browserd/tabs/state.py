"""Typed tab state, owned by the TabActor: load state, console log, ref map, emulation.

Each object is held by one :class:`browserd.tabs.actor.TabActor` and changed
only through its own methods: the actor's event task feeds
:class:`ConsoleLog` and prunes the refs and worlds of documents that went
away from :class:`RefMap`; the ref engine (running in the tab's work slot)
records refs and worlds there;
:mod:`browserd.tabs.emulation` replaces the tab's :class:`Emulation` record
(``TabActor.note_emulation``) once the browser took it.
Nothing here does I/O; all of it is unit-testable without a browser.
"""

from __future__ import annotations

import collections
import enum
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from .diffs import SnapshotHistory

__all__ = ["CONSOLE_BUFFER", "NO_EMULATION", "ConsoleEntry", "ConsoleLog", "DocumentAlive",
           "Emulation", "Geolocation", "LoadState", "NetworkConditions", "RefMap", "RefRecord",
           "Viewport", "World", "WorldKey"]

CONSOLE_BUFFER = 500
"""Console messages kept per tab (the oldest go first)."""


class LoadState(enum.StrEnum):
    """How far the main document has loaded; ordered by :attr:`rank`."""

    NONE = "none"
    LOADING = "loading"
    DOMCONTENTLOADED = "domcontentloaded"
    LOAD = "load"

    @property
    def rank(self) -> int:
        """-1 none, 0 loading, 1 DOMContentLoaded, 2 load: "at least X" is ``rank >= X.rank``."""
        return _RANK[self]

    @classmethod
    def from_ready_state(cls, ready: object) -> LoadState | None:
        """The state a ``document.readyState`` value means; None for anything else."""
        return _READY.get(ready) if isinstance(ready, str) else None

    def after(self, lifecycle_event: object) -> LoadState | None:
        """The state a document in this one moves to on a ``Page.lifecycleEvent`` of that name.

        ``init`` starts over, ``DOMContentLoaded`` never moves back from LOAD,
        ``load`` is LOAD; None when the event changes nothing.
        """
        if lifecycle_event == "init":
            return LoadState.LOADING
        if lifecycle_event == "DOMContentLoaded":
            return None if self is LoadState.LOAD else LoadState.DOMCONTENTLOADED
        return LoadState.LOAD if lifecycle_event == "load" else None


_RANK = {LoadState.NONE: -1, LoadState.LOADING: 0, LoadState.DOMCONTENTLOADED: 1,
         LoadState.LOAD: 2}
_READY = {"loading": LoadState.LOADING, "interactive": LoadState.DOMCONTENTLOADED,
          "complete": LoadState.LOAD}


# -- console -------------------------------------------------------------------

@attrs.frozen(kw_only=True)
class ConsoleEntry:
    """One console message or uncaught exception of the page (untrusted text, capped)."""

    level: str
    text: str
    url: str | None
    line: int | None
    timestamp: float
    source: str  # "console" | "exception" | "log"

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


class ConsoleLog:
    """A ring buffer of the tab's recent console messages.

    :attr:`dropped` counts the messages lost since the last :meth:`clear`:
    the oldest pushed out of the ring, plus those the tab's event stream
    dropped under a flood before they reached it (:meth:`note_lost`).
    """

    def __init__(self, capacity: int = CONSOLE_BUFFER) -> None:
        self._entries: collections.deque[ConsoleEntry] = collections.deque(maxlen=capacity)
        self.dropped = 0

    def append(self, entry: ConsoleEntry) -> None:
        if len(self._entries) == self._entries.maxlen:
            self.dropped += 1
        self._entries.append(entry)

    def note_lost(self, count: int) -> None:
        """Count ``count`` messages that never reached the ring (dropped on the way)."""
        self.dropped += max(0, count)

    def entries(self) -> list[ConsoleEntry]:
        """The messages, oldest first."""
        return list(self._entries)

    @property
    def full(self) -> bool:
        """True when the buffer is full: the next message pushes the oldest out."""
        return len(self._entries) >= (self._entries.maxlen or 0)

    def clear(self) -> None:
        """Forget every message; :attr:`dropped` starts again from 0."""
        self._entries.clear()
        self.dropped = 0

    def __len__(self) -> int:
        return len(self._entries)


# -- refs and worlds -----------------------------------------------------------

WorldKey = tuple[str | None, str]
"""(session id — None for the tab's own session —, frame id)."""

REFS_CAP = 200_000
"""Refs kept per tab; beyond it the least recently listed are forgotten."""
GONE_CAP = 100_000
"""Forgotten refs remembered (to say *why* a ref is stale)."""


@attrs.frozen(kw_only=True)
class RefRecord:
    """Where a ref lives: its frame, that frame's document, the CDP session.

    ``session_id`` None is the tab's own session; otherwise the session of an
    out-of-process iframe. ``role``/``name`` are those of the last snapshot
    that listed the ref.
    """

    ref: str
    frame_id: str
    loader_id: str
    session_id: str | None
    role: str
    name: str


@attrs.frozen(kw_only=True)
class World:
    """The ``browserd`` isolated world of one frame's document."""

    loader_id: str
    context_id: int


DocumentAlive = Callable[[str | None, str, str], bool]
"""(session id, frame id, loaderId) -> is that document still the frame's current one?"""


def _always_alive(session_id: str | None, frame_id: str, loader_id: str) -> bool:
    return True


class RefMap:
    """The Python side of a tab's refs: ref → record, forgotten refs, worlds, counters.

    Refs are recorded from complete walker replies only; the least recently
    listed are forgotten beyond :data:`REFS_CAP` (and remembered as
    ``detached``). Whether a document is still its frame's current one is
    the owner's to say (``alive``: the tab's actor knows its frames): refs
    and worlds of a document that is gone are never recorded, and
    :meth:`prune` — called by the actor when a frame navigates or goes away —
    moves its refs to the gone list as ``navigated`` and forgets its world.
    """

    def __init__(self, *, alive: DocumentAlive = _always_alive, refs_cap: int = REFS_CAP,
                 gone_cap: int = GONE_CAP) -> None:
        self._alive = alive
        self._refs: dict[str, RefRecord] = {}  # least recently listed first
        self._by_frame: dict[WorldKey, dict[str, None]] = {}  # each frame's refs, in order
        self._gone: OrderedDict[str, str] = OrderedDict()  # ref -> why it went
        self._worlds: dict[WorldKey, World] = {}
        self._refs_cap = refs_cap
        self._gone_cap = gone_cap
        self.next_ref = 1
        """The walker's ref counter: new refs are ``e<next_ref>`` onwards."""
        self._snapshot_seq = 0
        #: The tab's last aria snapshot texts (``/snapshot {since}`` diffs against them).
        self.snapshots = SnapshotHistory()

    # refs
    def get(self, ref: str) -> RefRecord | None:
        return self._refs.get(ref)

    def gone_reason(self, ref: str) -> str | None:
        """"navigated" or "detached" for a forgotten ref; None if never forgotten."""
        return self._gone.get(ref)

    def __len__(self) -> int:
        return len(self._refs)

    def record(self, nodes: Iterable[Mapping[str, Any]], *, frame_id: str, loader_id: str,
               session_id: str | None) -> None:
        """Record the refs a walker reply listed, against that world's document.

        A document that is no longer its frame's (it navigated meanwhile) gets
        none: its refs are remembered as ``navigated`` at once.
        """
        alive = self._alive(session_id, frame_id, loader_id)
        for node in nodes:
            ref = node.get("ref")
            if not isinstance(ref, str):
                continue
            self._forget(ref, None)  # re-insert: least recently listed stays first
            if not alive:
                self._gone[ref] = "navigated"
                continue
            self._refs[ref] = RefRecord(
                ref=ref, frame_id=frame_id, loader_id=loader_id, session_id=session_id,
                role=str(node.get("role") or "generic"), name=str(node.get("name") or ""))
            self._by_frame.setdefault((session_id, frame_id), {})[ref] = None
            self._gone.pop(ref, None)
        while len(self._refs) > self._refs_cap:
            # A document that keeps growing: forget the refs not listed for longest.
            self._forget(next(iter(self._refs)), "detached")
        self._trim_gone()

    def _forget(self, ref: str, why: str | None) -> None:
        """Drop ``ref``'s record (remembered as gone for ``why``, unless None)."""
        record = self._refs.pop(ref, None)
        if record is None:
            return
        key = (record.session_id, record.frame_id)
        held = self._by_frame.get(key)
        if held is not None:
            held.pop(ref, None)
            if not held:
                del self._by_frame[key]
        if why is not None:
            self._gone[ref] = why

    def advance(self, next_ref: int) -> None:
        """Move the ref counter forward (never back)."""
        self.next_ref = max(self.next_ref, next_ref)

    def next_snapshot_id(self) -> str:
        """The next ``snapshotId`` ("s1", "s2", …)."""
        self._snapshot_seq += 1
        return f"s{self._snapshot_seq}"

    def prune(self, frames: Iterable[WorldKey] | None = None) -> None:
        """Forget the refs and worlds of documents that are gone (``alive`` says no): of the
        frames ``frames`` names, or of every frame (None). The owner calls it."""
        keys = [*self._by_frame, *self._worlds] if frames is None else list(frames)
        for key in dict.fromkeys(keys):
            for ref in [r for r in self._by_frame.get(key, ())
                        if not self._alive(key[0], key[1], self._refs[r].loader_id)]:
                self._forget(ref, "navigated")
            world = self._worlds.get(key)
            if world is not None and not self._alive(key[0], key[1], world.loader_id):
                del self._worlds[key]
        self._trim_gone()

    def _trim_gone(self) -> None:
        while len(self._gone) > self._gone_cap:
            self._gone.popitem(last=False)

    # worlds
    def world(self, key: WorldKey) -> World | None:
        return self._worlds.get(key)

    def set_world(self, key: WorldKey, world: World) -> None:
        """Cache ``world`` for its frame, unless its document is gone already."""
        if self._alive(key[0], key[1], world.loader_id):
            self._worlds[key] = world

    def drop_world(self, key: WorldKey) -> None:
        self._worlds.pop(key, None)


# -- emulation -----------------------------------------------------------------

@attrs.frozen(kw_only=True)
class Viewport:
    width: int
    height: int
    device_scale_factor: float = 1.0
    mobile: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"width": self.width, "height": self.height,
                "deviceScaleFactor": self.device_scale_factor, "mobile": self.mobile}


@attrs.frozen(kw_only=True)
class Geolocation:
    latitude: float
    longitude: float
    accuracy: float = 1.0

    def to_json(self) -> dict[str, Any]:
        return {"latitude": self.latitude, "longitude": self.longitude,
                "accuracy": self.accuracy}


@attrs.frozen(kw_only=True)
class NetworkConditions:
    latency_ms: float
    download_kbps: float
    upload_kbps: float

    def to_json(self) -> dict[str, Any]:
        return {"latencyMs": self.latency_ms, "downloadKbps": self.download_kbps,
                "uploadKbps": self.upload_kbps}


@attrs.frozen(kw_only=True)
class Emulation:
    """A tab's emulation settings; the defaults mean "not emulated"."""

    viewport: Viewport | None = None
    user_agent: str | None = None
    locale: str | None = None
    timezone: str | None = None
    geolocation: Geolocation | None = None
    color_scheme: str | None = None
    reduced_motion: str | None = None
    offline: bool = False
    cpu_throttling: float = 1.0
    network: NetworkConditions | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "viewport": self.viewport.to_json() if self.viewport else None,
            "userAgent": self.user_agent, "locale": self.locale, "timezone": self.timezone,
            "geolocation": self.geolocation.to_json() if self.geolocation else None,
            "colorScheme": self.color_scheme, "reducedMotion": self.reduced_motion,
            "offline": self.offline, "cpuThrottling": self.cpu_throttling,
            "network": self.network.to_json() if self.network else None,
        }

    def device_metrics(self, headless_viewport: tuple[int, int] | None = None
                       ) -> dict[str, Any] | None:
        """The ``Emulation.setDeviceMetricsOverride`` params a tab with this emulation needs.

        The emulated viewport when ``/emulate`` set one, else browserd's own
        ``headless_viewport``; None (no override) for a headed tab without one.
        """
        if self.viewport is not None:
            return {"width": self.viewport.width, "height": self.viewport.height,
                    "deviceScaleFactor": self.viewport.device_scale_factor,
                    "mobile": self.viewport.mobile}
        if headless_viewport is not None:
            width, height = headless_viewport
            return {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
        return None


NO_EMULATION = Emulation()
"""A tab's emulation until ``POST /emulate``: nothing overridden."""
