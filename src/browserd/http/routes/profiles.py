"""Profile and session routes: /profiles, /sessions."""

from __future__ import annotations

from typing import Any

import trio

from ...errors import BrowserNotRunning, SessionNotFound
from ...system import System
from ..answers import returns
from ..facts import LOCAL_ACTS, LOCAL_ADDS, LOCAL_READS, NO_TOOL, NOTHING, Render, by_hand
from ..schema import Field, Route

__all__ = ["profile_routes"]

#: How long creating or closing a session may take (its CDP calls are bounded too).
SESSION_DEADLINE_S = 20.0


async def list_profiles(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return {"profiles": [p.summary() for p in system.profiles.all()]}


async def create_profile(system: System, args: dict[str, Any]) -> dict[str, Any]:
    values = {"driver": args["driver"], "color": args["color"], "headless": args["headless"],
              "cdp_url": args["cdpUrl"], "live_browser": args["liveBrowser"],
              "user_data_dir": args["userDataDir"],
              "approval_timeout_s": args["approvalTimeoutS"],
              "live_fallback": args["liveFallback"]}
    profile = await system.profiles.create(
        args["name"], {k: v for k, v in values.items() if v is not None})
    return profile.summary()


async def delete_profile(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return await system.profiles.delete(args["name"], keep_data=args["keepData"])


async def list_sessions(system: System, args: dict[str, Any]) -> dict[str, Any]:
    profile = system.profile
    runtime = profile.supervisor.runtime
    sessions = profile.sessions.live(runtime)
    return {"profile": profile.name, "sessions": [
        s.to_json(idle_s=profile.sessions.idle_s(s.session_id),
                  tabs=len(runtime.scope(s.context_id).target_ids()) if runtime else 0)
        for s in sessions]}


async def create_session(system: System, args: dict[str, Any]) -> dict[str, Any]:
    runtime = system.require_runtime()
    ttl_s = float(args["ttlS"] if args["ttlS"] is not None else system.settings.session_ttl_s)
    with trio.fail_after(SESSION_DEADLINE_S):
        session = await system.profile.sessions.create(
            runtime, name=args["name"], ttl_s=ttl_s, allowed_origins=args.get("allowedOrigins"))
    out: dict[str, Any] = {"sessionId": session.session_id, "name": session.name,
                           "ttlS": session.ttl_s, "profile": system.profile.name}
    if session.egress is not None:
        out["allowedOrigins"] = session.egress.to_json()
    return out


async def delete_session(system: System, args: dict[str, Any]) -> dict[str, Any]:
    profile = system.profile
    runtime = profile.supervisor.runtime
    profile.sessions.prune(runtime)
    with trio.fail_after(SESSION_DEADLINE_S):
        closed = await profile.sessions.close(args["sessionId"], runtime)
    if not closed:
        if runtime is None:
            raise BrowserNotRunning("the browser is not running; its sessions ended with it")
        raise SessionNotFound(f"no session {args['sessionId']!r}")
    return {"ok": True, "sessionId": args["sessionId"]}


def profile_routes() -> list[Route]:
    name = Field(name="name", type="string", required=True, max_length=64,
                 description="[a-z0-9][a-z0-9-]{0,31}")
    return [
        Route(path="/profiles", methods=("GET",), handler=list_profiles, tag="profiles",
              scope="none", summary="List the profiles",
              name="profiles_get", group="profiles", hints=LOCAL_READS, needs="profiles",
              render=Render.FIELDS,
              answer=returns("ProfileList"), blocked_by=NOTHING, cli=by_hand("profiles")),
        Route(path="/profiles", methods=("POST",), handler=create_profile, tag="profiles",
              scope="none",
              fields=(name,
                      Field(name="driver", type="string", enum=("launch", "cdp", "live",
                                                                "extension"),
                            description="launch: browserd starts Chromium; cdp: attach to one "
                                        "at a CDP URL; live: the person's running browser; "
                                        "extension: through browserd's browser extension"),
                      Field(name="color", type="string", max_length=7,
                            description="#RRGGBB"),
                      Field(name="headless", type="boolean",
                            description="run its browser without a window"),
                      Field(name="cdpUrl", type="string", max_length=2048,
                            description="driver cdp: the browser's DevTools URL"),
                      Field(name="liveBrowser", type="string",
                            enum=("chrome", "chrome-canary", "chromium", "edge", "brave"),
                            description="driver live: the user's browser (default chrome)"),
                      Field(name="userDataDir", type="string", max_length=4096,
                            description="driver live: its user data directory (wins)"),
                      Field(name="approvalTimeoutS", type="number", minimum=1, maximum=600,
                            description="driver live: wait for the user's approval"),
                      Field(name="liveFallback", type="string", max_length=64,
                            description="driver live: profile used while it is away")),
              summary="Create a profile (persisted; its browser starts on POST /start)",
              name="profiles_set", group="profiles", hints=LOCAL_ADDS, needs="profiles",
              render=Render.FIELDS,
              answer=returns("Profile"), blocked_by=NOTHING, cli=by_hand("profiles"),
              tool_text="Create a profile (persisted; its browser starts with the start tool)"),
        Route(path="/profiles/<name>", methods=("DELETE",), handler=delete_profile,
              tag="profiles", scope="none", path_params=("name",),
              fields=(name, Field(name="keepData", type="boolean", default=False,
                                  description="keep the profile's directory")),
              summary="Delete a stopped profile (and its marked directory)",
              name="profiles_delete", group=NO_TOOL, hints=LOCAL_ACTS, needs="profiles",
              answer=returns("ProfileDeleted"), blocked_by=NOTHING, cli=by_hand("profiles")),
        Route(path="/sessions", methods=("GET",), handler=list_sessions, tag="sessions",
              scope="profile", summary="List a profile's live sessions",
              name="sessions_get", group="profiles", hints=LOCAL_READS, needs="profiles",
              render=Render.FIELDS,
              answer=returns("SessionList"), blocked_by=NOTHING, cli=by_hand("sessions")),
        Route(path="/sessions", methods=("POST",), handler=create_session, tag="sessions",
              scope="profile",
              fields=(Field(name="name", type="string", max_length=64,
                            description="a name for the session (shown in listings)"),
                      Field(name="ttlS", type="number", minimum=1, maximum=7 * 86400,
                            description="close after this many idle seconds "
                            "(default session_ttl_s, 1800)"),
                      Field(name="allowedOrigins", type="array", items="string",
                            description="egress containment: the only origins its pages may "
                            "reach (scheme://host[:port], *.domain, port *); within the "
                            "profile's allowed_origins when it has them")),
              summary="Create a session: its own browser context (cookies, storage, tabs)",
              name="sessions_set", group="profiles", hints=LOCAL_ADDS, needs="profiles",
              render=Render.FIELDS,
              answer=returns("Session"), blocked_by=NOTHING, cli=by_hand("sessions")),
        Route(path="/sessions/<sessionId>", methods=("DELETE",), handler=delete_session,
              tag="sessions", scope="profile", path_params=("sessionId",),
              fields=(Field(name="sessionId", type="string", required=True, max_length=64),),
              summary="Close a session: its tabs and its browser context",
              name="sessions_delete", group=NO_TOOL, hints=LOCAL_ACTS, needs="profiles",
              answer=returns("SessionDeleted"), blocked_by=NOTHING, cli=by_hand("sessions")),
    ]
