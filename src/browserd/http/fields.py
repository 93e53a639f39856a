"""Field definitions shared by several routes (one definition each)."""

from __future__ import annotations

import attrs

from ..tabs import settle
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
REF = Field(name="ref", type="string", max_length=32, description="a ref from GET /snapshot")
SELECTOR = Field(name="selector", type="string", max_length=4000, description="a CSS selector")
TEXT_TARGET = Field(name="text", type="string", max_length=2000,
                    description="visible text of the element (buttons and links first)")
#: A role/name locator, resolved when the action runs by /find's rules (instead of a ref).
LOCATOR = (
    Field(name="role", type="string", max_length=100,
          description="the element's role (button, link, textbox …), with or without name"),
    Field(name="name", type="string", max_length=2000,
          description="part of its accessible name (case-insensitive; whole with exact)"),
    Field(name="exact", type="boolean", default=False,
          description="name must match whole"),
    Field(name="nth", type="integer", minimum=0, maximum=1000,
          description="which match when several do (0-based; without it: 409 AMBIGUOUS)"),
)
MODIFIERS = Field(name="modifiers", type="array", items="string",
                  description="held modifiers: any of Alt, Control, Meta, Shift")
WAIT_UNTIL = Field(name="waitUntil", type="string", default="domcontentloaded",
                   enum=settle.WAIT_UNTIL,
                   description="if the action navigates: wait (within timeoutMs) until the new "
                   "document reaches this; effects.loadState says where it got to")


def timeout_field(default_ms: int, maximum_ms: int = 300_000) -> Field:
    """The ``timeoutMs`` field with a route's own default."""
    return Field(name="timeoutMs", type="integer", default=default_ms, minimum=1,
                 maximum=maximum_ms, description="deadline in milliseconds")


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
