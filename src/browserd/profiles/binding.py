"""Which runtime one request works on: the profile's, as its session, fallback and grants say.

A request's :class:`~browserd.system.System` holds the profile's own
:class:`~browserd.supervisor.BrowserSupervisor` (its state, figures and
commands are the supervisor's) and, beside it, the one thing a binding
varies: a :data:`RuntimeOf`, the function that answers
:meth:`System.require_runtime <browserd.system.System.require_runtime>`.
Three bindings make one:

- :func:`session_bound` resolves the session first (404 SESSION_NOT_FOUND
  when it is unknown, idle-closed or ended with a browser restart; it counts
  as use of the session) and answers with the runtime whose ``tabs`` is that
  session's scope;
- :func:`live_with_fallback` (a live profile with ``live_fallback``) answers
  with the fallback profile's runtime while the user's browser is not
  reachable (any 503 of its own); start, stop and status stay the live
  profile's (they are its supervisor's);
- :func:`grants_hidden` wraps any binding for one agent token: the person's
  tabs granted to *other* tokens (approved tab requests) are not in its
  runtime's ``tabs``, as if they did not exist.

Plain code: nothing here does I/O or can be cancelled half-way; a
:data:`RuntimeOf` raises what the binding says (and the supervisor's own 503s).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from ..errors import Unavailable
from ..supervisor.runtime import BrowserRuntime
from .profile import Profile

__all__ = ["RuntimeOf", "grants_hidden", "live_with_fallback", "session_bound"]

RuntimeOf = Callable[[], BrowserRuntime]
"""The runtime one request works on, asked when it needs it (raises as its binding says)."""


def session_bound(profile: Profile, session_id: str) -> RuntimeOf:
    """``profile``'s runtime as its session ``session_id`` sees it (see the module)."""

    def runtime_of() -> BrowserRuntime:
        runtime = profile.supervisor.require_runtime()
        session = profile.sessions.resolve(session_id, runtime)
        return runtime.scoped(session.context_id)

    return runtime_of


def live_with_fallback(profile: Profile, fallback: Callable[[], Profile]) -> RuntimeOf:
    """A live ``profile``'s runtime, or ``fallback()``'s while its own browser is away.

    ``fallback`` looks the fallback profile up when needed (ProfileNotFound
    then, when it was deleted); that profile's own 503 is answered as is.
    """

    def runtime_of() -> BrowserRuntime:
        try:
            return profile.supervisor.require_runtime()
        except Unavailable:
            return fallback().supervisor.require_runtime()

    return runtime_of


def grants_hidden(inner: RuntimeOf, hidden: Callable[[], frozenset[str]]) -> RuntimeOf:
    """``inner``'s runtime without the tabs ``hidden()`` names."""

    def runtime_of() -> BrowserRuntime:
        runtime = inner()
        gone = hidden()
        return attrs.evolve(runtime, tabs=runtime.tabs.hiding(gone)) if gone else runtime

    return runtime_of
