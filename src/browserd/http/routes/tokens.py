"""Token routes: ``GET /tokens``, ``POST /tokens``, ``DELETE /tokens/<name>``.

The person (the owner token) sees, mints and revokes every token; an agent
sees itself and its descendants, mints a child only with ``delegate`` and
within its own grant (403 SCOPE_EXCEEDS_PARENT), and revokes only its
descendants (:class:`browserd.principals.TokenStore`). ``newSession: true``
makes a session in the request's profile and binds the new token to it, so a
sub-agent (``browserd mcp --isolated``) gets a browser context of its own.
A token's secret is in the answer of ``POST /tokens`` only.
"""

from __future__ import annotations

from typing import Any

import trio

from ...errors import BadRequest
from ...principals import check_scopes
from ...system import System
from ..answers import returns
from ..facts import LOCAL_ACTS, LOCAL_ADDS, LOCAL_READS, NO_TOOL, NOTHING, Render, by_hand
from ..schema import Field, Route

__all__ = ["MAX_EXPIRES_S", "token_routes"]

MAX_EXPIRES_S = 366 * 24 * 3600.0
SESSION_DEADLINE_S = 15.0


def _you(system: System) -> dict[str, Any]:
    who = system.principal
    return {"name": who.name, "kind": "person" if who.is_owner else "agent",
            "scopes": sorted(who.scopes), "parent": who.parent,
            "profiles": None if who.profiles is None else sorted(who.profiles),
            "sessions": None if who.sessions is None else sorted(who.sessions),
            "expiresAt": who.expires_at}


async def list_tokens(system: System, args: dict[str, Any]) -> dict[str, Any]:
    records = system.tokens.visible_to(system.principal)
    return {"you": _you(system), "tokens": [r.to_json() for r in records]}


async def create_token(system: System, args: dict[str, Any]) -> dict[str, Any]:
    scopes = None if args["scopes"] is None else check_scopes(args["scopes"])
    profiles = None if args["profiles"] is None else frozenset(args["profiles"])
    sessions = None if args["sessions"] is None else frozenset(args["sessions"])
    if args["newSession"]:
        if sessions is not None:
            raise BadRequest("give sessions or newSession, not both", field="newSession")
        bound = system.bind(None, None)
        runtime = bound.require_runtime()
        with trio.fail_after(SESSION_DEADLINE_S):
            session = await bound.profile.sessions.create(
                runtime, name=f"token:{args['name']}"[:64],
                ttl_s=float(bound.settings.session_ttl_s))
        sessions = frozenset({session.session_id})
        profiles = profiles if profiles is not None else frozenset({bound.profile.name})
    minted = system.tokens.create(system.principal, name=args["name"], scopes=scopes,
                                  profiles=profiles, sessions=sessions,
                                  expires_in_s=args["expiresInS"])
    return {**minted.record.to_json(), "token": minted.secret}


async def revoke_token(system: System, args: dict[str, Any]) -> dict[str, Any]:
    revoked = system.tokens.revoke(system.principal, args["name"])
    return {"ok": True, "name": args["name"], "revoked": revoked}


def token_routes() -> list[Route]:
    names = Field(name="name", type="string", required=True, max_length=64,
                  description="[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
    return [
        Route(path="/tokens", methods=("GET",), handler=list_tokens, tag="tokens", scope="none",
              summary="The tokens you can see (the person: all; an agent: itself and its "
                      "children), never their secrets",
              name="tokens_get", group="service", hints=LOCAL_READS, needs="any",
              render=Render.FIELDS,
              answer=returns("TokenList"), blocked_by=NOTHING, cli=by_hand("tokens")),
        Route(path="/tokens", methods=("POST",), handler=create_token, tag="tokens",
              scope="none",
              fields=(names,
                      Field(name="scopes", type="array", items="string", max_length=16,
                            description="read, act, eval, files, state, "
                            "network, cdp, profiles, delegate (default: all / the parent's)"),
                      Field(name="profiles", type="array", items="string", max_length=64,
                            description="the profiles it sees (default: all)"),
                      Field(name="sessions", type="array", items="string", max_length=64,
                            description="the sessions it works in"),
                      Field(name="newSession", type="boolean", default=False,
                            description="make a session of its own and bind the token to it"),
                      Field(name="expiresInS", type="number", minimum=1,
                            maximum=MAX_EXPIRES_S,
                            description="seconds until it expires (default: never / the "
                                        "parent's expiry)")),
              summary="Mint a token (the person; or an agent with 'delegate': a child "
                      "within its own grant); its secret is shown once",
              name="tokens_set", group="service", hints=LOCAL_ADDS, needs="any",
              render=Render.FIELDS,
              answer=returns("MintedToken"), blocked_by=NOTHING, cli=by_hand("tokens")),
        Route(path="/tokens/<name>", methods=("DELETE",), handler=revoke_token, tag="tokens",
              scope="none", path_params=("name",), fields=(names,),
              summary="Revoke a token and its descendants; their connections close at once",
              name="tokens_delete", group=NO_TOOL, hints=LOCAL_ACTS, needs="any",
              answer=returns("TokenRevoked"), blocked_by=NOTHING, cli=by_hand("tokens")),
    ]
