"""Tab requests: an agent asks for one of the person's tabs; the person answers once.

On a live or extension profile the agent sees only the tabs the person
offered. With ``POST /tabs/request {reason, url?}`` an agent *asks*; the
request is pending until the person approves it with one of their pages
(``POST /tabs/requests/<id> {approve: targetId}``, the ops page, ``browserd
offer --requests``) or denies it. An approved tab is *granted to the
requesting token only*: every other token (the default one too) is answered
404 for it as if it did not exist, and never sees it listed. The agent may
cancel its own pending request; it never approves one.

:class:`TabRequestBoard` is plain state over trio's clock and events (no
I/O): one per service, owned by the System. A request's ``reason`` and
``url`` are the agent's words, shown to the person as such.
"""

from __future__ import annotations

import enum
import secrets
import time
from collections.abc import Callable

import attrs
import trio

from .errors import Conflict, RequestNotFound

__all__ = ["MAX_PENDING", "TabRequest", "TabRequestBoard", "TabRequestState"]

MAX_PENDING = 64
#: Ended requests kept for ``/wait`` and listings (oldest dropped first).
ENDED_KEPT = 256


class TabRequestState(enum.StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"
    CANCELLED = "cancelled"


@attrs.frozen(kw_only=True)
class TabRequest:
    """One request, as it stands."""

    request_id: str
    profile: str
    token: str
    reason: str
    url: str | None = None
    state: TabRequestState = TabRequestState.PENDING
    target_id: str | None = None
    created_at: float
    ended_at: float | None = None

    def to_json(self) -> dict[str, object]:
        return {"requestId": self.request_id, "profile": self.profile, "token": self.token,
                "reason": self.reason, "url": self.url, "state": self.state.value,
                "targetId": self.target_id, "createdAt": self.created_at,
                "endedAt": self.ended_at}


class TabRequestBoard:
    """Every tab request of one service and the grants they made."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._requests: dict[str, TabRequest] = {}
        self._ended: dict[str, trio.Event] = {}
        #: (profile, targetId) → the token the tab was granted to.
        self._grants: dict[tuple[str, str], str] = {}

    def ask(self, *, profile: str, token: str, reason: str, url: str | None) -> TabRequest:
        """File a pending request; Conflict when too many are pending."""
        pending = [r for r in self._requests.values() if r.state == TabRequestState.PENDING]
        if len(pending) >= MAX_PENDING:
            raise Conflict(f"{MAX_PENDING} tab requests are already waiting for the person",
                           hint="wait for an answer, or cancel one")
        request = TabRequest(request_id="tr_" + secrets.token_hex(6), profile=profile,
                             token=token, reason=reason, url=url, created_at=self._clock())
        self._requests[request.request_id] = request
        self._ended[request.request_id] = trio.Event()
        return request

    def get(self, request_id: str, *, token: str | None = None) -> TabRequest:
        """The request; RequestNotFound when unknown (or, with ``token``, not that token's)."""
        request = self._requests.get(request_id)
        if request is None or (token is not None and request.token != token):
            raise RequestNotFound(f"no tab request {request_id!r}")
        return request

    def listing(self, *, pending_only: bool = False) -> list[TabRequest]:
        return [r for r in self._requests.values()
                if not pending_only or r.state == TabRequestState.PENDING]

    def end(self, request_id: str, state: TabRequestState, *,
            target_id: str | None = None) -> TabRequest:
        """Approve (granting ``target_id`` to the request's token), deny or cancel.

        Conflict when the request already ended. Wakes its waiters.
        """
        request = self.get(request_id)
        if request.state != TabRequestState.PENDING:
            raise Conflict(f"tab request {request_id} was already {request.state.value}")
        ended = attrs.evolve(request, state=state, target_id=target_id,
                             ended_at=self._clock())
        self._requests[request_id] = ended
        if state == TabRequestState.APPROVED and target_id is not None:
            self._grants[(request.profile, target_id)] = request.token
        self._ended[request_id].set()
        self._prune()
        return ended

    async def wait_ended(self, request_id: str, *, token: str) -> TabRequest:
        """Wait until the request ends; the ended request. Cancellation ends only the wait."""
        self.get(request_id, token=token)
        await self._ended[request_id].wait()
        return self._requests[request_id]

    def hidden_from(self, token: str, profile: str) -> frozenset[str]:
        """The tabs of ``profile`` granted to tokens other than ``token``."""
        return frozenset(t for (p, t), holder in self._grants.items()
                         if p == profile and holder != token)

    def forget_tab(self, profile: str, target_id: str) -> None:
        """The tab is gone (closed, released): its grant ends with it."""
        self._grants.pop((profile, target_id), None)

    def _prune(self) -> None:
        ended = [k for k, r in self._requests.items() if r.state != TabRequestState.PENDING]
        for key in ended[:max(0, len(ended) - ENDED_KEPT)]:
            del self._requests[key]
            del self._ended[key]
