"""Held actions: what waits for the person's yes or no.

An action a ``confirm`` rule matches is not run: it is *held* as a
:class:`Held` record (its kind, a one-line summary, its target, the agent
that asked) with the means to run it later. The agent waits with ``POST /wait
{confirmation: id}``; when the person approves, that waiting request runs the
action and answers its result; when the person denies, 403 DENIED. The agent
never approves (the answering routes are the person's). A held action that
nobody waited on after its answer is forgotten after :data:`ANSWERED_KEPT_S`.

Plain state over trio events; the runner is the caller's coroutine function.
"""

from __future__ import annotations

import enum
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import trio

from ..errors import Conflict, Denied, RequestNotFound

__all__ = ["ANSWERED_KEPT_S", "MAX_HELD", "ConfirmationBoard", "Held", "HeldState"]

MAX_HELD = 64
ANSWERED_KEPT_S = 600.0
Runner = Callable[[], Awaitable[Any]]


class HeldState(enum.StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"
    RAN = "ran"


@attrs.frozen(kw_only=True)
class Held:
    """One held action, as the person sees it (the runner is not part of the record)."""

    confirmation_id: str
    kind: str
    summary: str
    target: dict[str, Any]
    token: str
    profile: str
    state: HeldState = HeldState.PENDING
    created_at: float
    answered_at: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.confirmation_id, "kind": self.kind, "summary": self.summary,
                "target": self.target, "token": self.token, "profile": self.profile,
                "state": self.state.value, "createdAt": self.created_at,
                "answeredAt": self.answered_at}


class ConfirmationBoard:
    """The held actions of one service."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._held: dict[str, Held] = {}
        self._runners: dict[str, Runner] = {}
        self._answered: dict[str, trio.Event] = {}
        #: (token, download id) the person let a token fetch.
        self._released: set[tuple[str, str]] = set()

    def release(self, download_id: str, *, token: str) -> dict[str, Any]:
        """The person approved a held download: ``token`` may now fetch its file."""
        self._released.add((token, download_id))
        return {"ok": True, "id": download_id, "released": True,
                "hint": f"GET /downloads/{download_id} now serves the file"}

    def released(self, download_id: str, *, token: str) -> bool:
        return (token, download_id) in self._released

    def hold(self, *, kind: str, summary: str, target: dict[str, Any], token: str,
             profile: str, runner: Runner) -> Held:
        """Hold an action; Conflict when :data:`MAX_HELD` are already waiting."""
        self._prune()
        if sum(h.state == HeldState.PENDING for h in self._held.values()) >= MAX_HELD:
            raise Conflict(f"{MAX_HELD} actions already wait for the person",
                           hint="wait for their answers first")
        held = Held(confirmation_id="cf_" + secrets.token_hex(6), kind=kind,
                    summary=summary[:300], target=target, token=token, profile=profile,
                    created_at=self._clock())
        self._held[held.confirmation_id] = held
        self._runners[held.confirmation_id] = runner
        self._answered[held.confirmation_id] = trio.Event()
        return held

    def listing(self, *, pending_only: bool = False) -> list[Held]:
        return [h for h in self._held.values()
                if not pending_only or h.state == HeldState.PENDING]

    def get(self, confirmation_id: str, *, token: str | None = None) -> Held:
        held = self._held.get(confirmation_id)
        if held is None or (token is not None and held.token != token):
            raise RequestNotFound(f"no held action {confirmation_id!r}")
        return held

    def answer(self, confirmation_id: str, *, approve: bool) -> Held:
        """The person's answer; Conflict when it was answered already."""
        held = self.get(confirmation_id)
        if held.state != HeldState.PENDING:
            raise Conflict(f"held action {confirmation_id} was already {held.state.value}")
        held = attrs.evolve(held, state=HeldState.APPROVED if approve else HeldState.DENIED,
                            answered_at=self._clock())
        self._held[confirmation_id] = held
        self._answered[confirmation_id].set()
        return held

    async def wait_answered(self, confirmation_id: str, *, token: str) -> Held:
        """Wait until the person answered ``token``'s held action; 403 DENIED when denied.

        Cancellation (a timeout) leaves it held. RequestNotFound for another
        token's (or an unknown) id.
        """
        self.get(confirmation_id, token=token)
        await self._answered[confirmation_id].wait()
        held = self._held[confirmation_id]
        if held.state == HeldState.DENIED:
            raise Denied(f"the person denied: {held.summary}", confirmation=held.to_json())
        return held

    async def run_approved(self, confirmation_id: str) -> Any:
        """Run an approved action, once; its result. Conflict when it already ran.

        Cancellation while it runs is the action's own (it may have had an effect).
        """
        runner = self._runners.pop(confirmation_id, None)
        if runner is None:
            raise Conflict(f"held action {confirmation_id} already ran")
        self._held[confirmation_id] = attrs.evolve(self._held[confirmation_id],
                                                   state=HeldState.RAN)
        return await runner()

    def _prune(self) -> None:
        now = self._clock()
        for key, held in list(self._held.items()):
            if held.answered_at is not None and now - held.answered_at > ANSWERED_KEPT_S:
                del self._held[key]
                self._runners.pop(key, None)
                self._answered.pop(key, None)
