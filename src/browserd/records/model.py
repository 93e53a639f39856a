"""What a session record holds: its steps, each one call an agent made, as plain records.

A :class:`Step` is one recorded route call (``/click``, ``/navigate``,
``/act`` …): its :class:`Call` (the kind, the arguments with every vault value
replaced by its marker, and the elements it named as :class:`Target` s: role,
accessible name and ref as they were *before* the call ran), how it went
(start, duration, ok or the error's code), what it did (``effects``, the URL
and title after), two small screenshots (:class:`Shot`) and the console
errors and failed requests seen while it ran. An ``/act`` batch is one step
whose ``actions`` are its calls.

Plain code: JSON in and out (``to_json`` / ``from_json``), no I/O. Page
content (names, titles, console text) is untrusted data and is kept as data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

__all__ = ["Call", "RecordInfo", "Shot", "Step", "Target"]


@attrs.frozen(kw_only=True)
class Target:
    """An element a call named: how it was given, and its role and name when it ran.

    ``role``/``name`` come from the tab's ref map for a ref (what the page
    called it when the ref was listed), or are the locator the call gave.
    ``within``: the container a locator was looked for in, as a target too.
    """

    ref: str | None = None
    role: str | None = None
    name: str | None = None
    exact: bool = False
    nth: int | None = None
    selector: str | None = None
    text: str | None = None
    within: Target | None = None

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in attrs.asdict(self, recurse=False).items() if v is not None}
        if not self.exact:
            out.pop("exact")
        if self.within is not None:
            out["within"] = self.within.to_json()
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Target:
        within = data.get("within")
        return cls(ref=data.get("ref"), role=data.get("role"), name=data.get("name"),
                   exact=bool(data.get("exact")), nth=data.get("nth"),
                   selector=data.get("selector"), text=data.get("text"),
                   within=cls.from_json(within) if isinstance(within, Mapping) else None)


@attrs.frozen(kw_only=True)
class Call:
    """One action: ``kind`` (``click``, ``navigate`` …), its arguments (redacted) and the
    elements it named by field (``element``; a drag's ``from`` and ``to``)."""

    kind: str
    args: Mapping[str, Any]
    targets: Mapping[str, Target] = attrs.field(factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "args": dict(self.args),
                "targets": {k: t.to_json() for k, t in self.targets.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Call:
        targets = data.get("targets") or {}
        return cls(kind=str(data.get("kind") or ""), args=dict(data.get("args") or {}),
                   targets={str(k): Target.from_json(v) for k, v in targets.items()})


@attrs.frozen(kw_only=True)
class Shot:
    """A small JPEG of the viewport, stored beside the record under ``name``."""

    name: str
    width: int
    height: int
    bytes: int

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Shot:
        return cls(name=str(data["name"]), width=int(data.get("width") or 0),
                   height=int(data.get("height") or 0), bytes=int(data.get("bytes") or 0))


@attrs.frozen(kw_only=True)
class Step:
    """One recorded call and what came of it.

    ``started_at`` is wall-clock seconds; ``error`` is ``{code, message}``
    when the call failed (``ok`` false); ``actions`` lists an ``/act``
    batch's calls (``call.args`` then holds the batch's own fields).
    """

    index: int
    call: Call
    actions: tuple[Call, ...] = ()
    target_id: str | None = None
    started_at: float
    duration_ms: float
    ok: bool
    error: Mapping[str, Any] | None = None
    effects: Mapping[str, Any] | None = None
    url: str | None = None
    title: str | None = None
    before: Shot | None = None
    after: Shot | None = None
    console: tuple[Mapping[str, Any], ...] = ()
    failed_requests: tuple[Mapping[str, Any], ...] = ()

    def calls(self) -> tuple[Call, ...]:
        """The actions this step ran: an ``/act`` batch's, else its own call."""
        return self.actions if self.call.kind == "act" else (self.call,)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index, **self.call.to_json(), "targetId": self.target_id,
            "startedAt": self.started_at, "durationMs": self.duration_ms, "ok": self.ok,
            "error": None if self.error is None else dict(self.error),
            "effects": None if self.effects is None else dict(self.effects),
            "url": self.url, "title": self.title,
            "before": None if self.before is None else self.before.to_json(),
            "after": None if self.after is None else self.after.to_json(),
            "console": [dict(c) for c in self.console],
            "failedRequests": [dict(r) for r in self.failed_requests],
        }
        if self.call.kind == "act":
            out["actions"] = [a.to_json() for a in self.actions]
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Step:
        before, after = data.get("before"), data.get("after")
        return cls(
            index=int(data["index"]), call=Call.from_json(data),
            actions=tuple(Call.from_json(a) for a in data.get("actions") or ()),
            target_id=data.get("targetId"), started_at=float(data.get("startedAt") or 0),
            duration_ms=float(data.get("durationMs") or 0), ok=bool(data.get("ok")),
            error=data.get("error"), effects=data.get("effects"), url=data.get("url"),
            title=data.get("title"),
            before=None if before is None else Shot.from_json(before),
            after=None if after is None else Shot.from_json(after),
            console=tuple(data.get("console") or ()),
            failed_requests=tuple(data.get("failedRequests") or ()))


@attrs.frozen(kw_only=True)
class RecordInfo:
    """A record's header: whose it is (the principal that started it, its profile and
    session, maybe one tab), when, how big.

    ``principal`` is the token name whose calls it records (no other's).
    ``stopped_at`` is None while it records; ``truncated`` once it reached its
    step limit (later calls are not recorded). ``video`` is None for a record
    without one, else its state as JSON (``{state: "recording" | "done" |
    "failed", targetId, mime, url, reason?, frames?, durationS?, bytes?, …}``).
    """

    id: str
    principal: str
    profile: str
    session: str | None
    target_id: str | None
    started_at: float
    stopped_at: float | None = None
    steps: int = 0
    bytes: int = 0
    truncated: bool = False
    video: Mapping[str, Any] | None = None

    @property
    def recording(self) -> bool:
        return self.stopped_at is None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "principal": self.principal, "profile": self.profile,
                "session": self.session,
                "targetId": self.target_id, "startedAt": self.started_at,
                "stoppedAt": self.stopped_at, "recording": self.recording,
                "steps": self.steps, "bytes": self.bytes, "truncated": self.truncated,
                "video": None if self.video is None else dict(self.video)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RecordInfo:
        return cls(id=str(data["id"]), principal=str(data.get("principal") or ""),
                   profile=str(data["profile"]),
                   session=data.get("session"), target_id=data.get("targetId"),
                   started_at=float(data["startedAt"]), stopped_at=data.get("stoppedAt"),
                   steps=int(data.get("steps") or 0), bytes=int(data.get("bytes") or 0),
                   truncated=bool(data.get("truncated")),
                   video=dict(data["video"]) if isinstance(data.get("video"), dict) else None)
