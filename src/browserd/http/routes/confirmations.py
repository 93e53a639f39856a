"""The person's answers to held actions: ``GET /confirmations``, ``POST /confirmations/<id>``.

Both are the person's (an agent's token is 403 OWNER_ONLY): an agent can
never approve its own action. The agent waits with ``POST /wait
{confirmation: id}`` (:mod:`browserd.http.confirmations`).
"""

from __future__ import annotations

from typing import Any

from ...confirm import HeldState
from ...errors import BadRequest
from ...events import EventType
from ...system import System
from ..answers import returns
from ..facts import LOCAL_ACTS, LOCAL_READS, NO_TOOL, NOTHING, by_hand
from ..schema import Field, Route

__all__ = ["confirmation_routes", "settle_confirmation"]


async def list_confirmations(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return {"rules": [r.to_json() for r in system.settings.confirm],
            "confirmations": [h.to_json() for h in system.confirmations.listing(
                pending_only=args["pending"])]}


async def answer_confirmation(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return settle_confirmation(system, args["id"], approve=args["approve"], deny=args["deny"])


def settle_confirmation(system: System, confirmation_id: str, *, approve: bool,
                        deny: bool) -> dict[str, Any]:
    """The person's answer (this route's and the ops page's): the held action's record."""
    if approve == deny:
        raise BadRequest("give approve: true or deny: true", field="approve")
    held = system.confirmations.answer(confirmation_id, approve=approve)
    if held.state == HeldState.DENIED:  # (an approval is told when the agent's wait runs it)
        system.events.publish(EventType.CONFIRMATION_ENDED, profile=held.profile,
                              confirmation=held.to_json())
    return held.to_json()


def confirmation_routes() -> list[Route]:
    return [
        Route(path="/confirmations", methods=("GET",), handler=list_confirmations,
              tag="owner", scope="none",
              fields=(Field(name="pending", type="boolean", default=False),),
              summary="Agent actions held for your confirmation, and the rules (owner token)",
              name="confirmations", group=NO_TOOL, hints=LOCAL_READS, needs="owner",
              answer=returns("ConfirmationList"), blocked_by=NOTHING, cli=by_hand("confirm")),
        Route(path="/confirmations/<id>", methods=("POST",), handler=answer_confirmation,
              tag="owner", scope="none", path_params=("id",),
              fields=(Field(name="id", type="string", required=True, max_length=64),
                      Field(name="approve", type="boolean", default=False),
                      Field(name="deny", type="boolean", default=False)),
              summary="Approve (the agent's wait then runs it) or deny a held action "
                      "(owner token)",
              name="confirmations_answer", group=NO_TOOL, hints=LOCAL_ACTS, needs="owner",
              answer=returns("Confirmation"), blocked_by=NOTHING, cli=by_hand("confirm")),
    ]
