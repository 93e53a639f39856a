"""Field definitions shared by several routes (one definition each).

The fields the action kinds share (an element's ``ref``, ``selector``,
``text``, role/name locator; ``modifiers``; ``waitUntil``) are the kinds' own
(:mod:`browserd.tabs.actions.kinds.spec`) and ``timeoutMs`` the call fields'
(:func:`browserd.argfields.timeout_field`); routes take them from here too.
"""

from __future__ import annotations

import attrs

from ..argfields import timeout_field
from ..tabs.actions.kinds.spec import (
    LOCATOR,
    MODIFIERS,
    REF,
    SELECTOR,
    TEXT_TARGET,
    WAIT_UNTIL,
)
from .schema import Field, Route

__all__ = ["LOCATOR", "MODIFIERS", "PROFILE", "PROFILE_HEADER", "REF", "REQUIRED_TARGET",
           "SELECTOR",
           "SESSION", "SESSION_HEADER", "TARGET", "TEXT_TARGET", "WAIT_UNTIL",
           "timeout_field", "with_scope_fields"]

#: The header that names a request's profile (the ``profile`` field wins).
PROFILE_HEADER = "X-Browserd-Profile"
#: The header that names a request's session (the ``session`` field wins).
SESSION_HEADER = "X-Browserd-Session"

TARGET = Field(name="targetId", type="string", max_length=200,
               description="a tab's targetId or a unique prefix (≥ 4 chars); "
               "default: the current tab")
REQUIRED_TARGET = Field(name="targetId", type="string", required=True, max_length=200,
                        description="a tab's targetId (from GET /tabs) or a unique prefix "
                        "(≥ 4 chars)")


PROFILE = Field(name="profile", type="string", max_length=64,
                description="the profile to act on (GET /profiles); default: the default profile")
SESSION = Field(name="session", type="string", max_length=64,
                description="a sessionId from POST /sessions: only that session's tabs are "
                "seen (also as the X-Browserd-Session header); default: no session")


def with_scope_fields(route: Route) -> Route:
    """``route`` with the ``profile`` (and ``session``) fields its scope takes: every lane
    (HTTP, /ws, MCP) accepts them the same way."""
    extra = {"session": (PROFILE, SESSION), "profile": (PROFILE,), "none": ()}[route.scope]
    return attrs.evolve(route, fields=(*route.fields, *extra))
