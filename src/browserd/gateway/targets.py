"""Which targets a gateway client may see and attach: its scope.

A client sees ``page`` targets (and ``tab`` targets that hold them) and
their ``iframe``/``worker``/``service_worker``/``shared_worker`` children,
and only those of the browser contexts it may reach (:class:`Reach`):
every context (``contexts`` None: a client bound to no session), or the
contexts of its token's sessions, plus the contexts it created itself with
``Target.createBrowserContext``. Never the browser's own UI
(``browser_ui``, ``other``, ``webview``, anything at a ``chrome:``,
``chrome-untrusted:``, ``devtools:`` or ``chrome-extension:`` URL, such as
``chrome://omnibox-popup.top-chrome/``) nor an extension's targets.

:class:`TargetView` applies that to what reaches the client: the
``Target.getTargets`` and ``Target.getBrowserContexts`` results are
filtered, ``Target.targetCreated``/``targetInfoChanged`` events about
targets out of scope are not forwarded (nor ``targetDestroyed``/``Crashed``
of a target the client was never shown), and a session the browser
auto-attaches to a target out of scope is not the client's: the event is
withheld and the session is to be detached (:attr:`EventVerdict.detach`).
(A session on the browser target itself is only ever the client's own
``Target.attachToBrowserTarget``: its event is forwarded.)
Commands naming a ``targetId`` (:data:`TARGET_ID_METHODS`) are checked
against the target's own info first (by the client, which asks the browser);
out of scope, they get Chromium's own answer for an unknown id
(:data:`NO_TARGET`).

Plain bookkeeping: no I/O, never raises on malformed input (it is judged
out of scope, or left as it is).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

__all__ = ["NO_TARGET", "NO_TARGET_CODE", "SCOPED_TYPES", "TARGET_ID_METHODS", "EventVerdict",
           "Reach", "TargetView", "in_scope", "is_browser"]

#: Target types a client may see (when their context and URL are in scope too).
SCOPED_TYPES = frozenset({"page", "tab", "iframe", "worker", "service_worker", "shared_worker"})
#: URL schemes of the browser's own UI and of extensions: never in scope.
_UI_SCHEMES = frozenset({"chrome", "chrome-untrusted", "devtools", "chrome-extension",
                         "chrome-search", "chrome-native"})
#: Commands whose ``params.targetId`` must name a target in scope.
TARGET_ID_METHODS = frozenset({
    "Target.attachToTarget", "Target.activateTarget", "Target.closeTarget",
    "Target.getTargetInfo", "Target.getDevToolsTarget", "Browser.getWindowForTarget",
})
#: Chromium's answer for a target id it does not know (InvalidParams), given for one
#: out of scope as well, so the client cannot tell them apart.
NO_TARGET = "No target with given id found"
NO_TARGET_CODE = -32602
_INFO_EVENTS = frozenset({"Target.targetCreated", "Target.targetInfoChanged"})
_GONE_EVENTS = frozenset({"Target.targetDestroyed", "Target.targetCrashed"})


@attrs.frozen
class Reach:
    """The browser contexts a client may reach.

    ``contexts`` None: every context (the client is bound to no session);
    else those, plus ``own`` (the contexts the client created).
    """

    contexts: frozenset[str] | None
    own: frozenset[str] = frozenset()

    @property
    def bound(self) -> bool:
        return self.contexts is not None

    def sees(self, context: object) -> bool:
        """Whether a target of ``context`` is in reach (None: the default context)."""
        if self.contexts is None:
            return True
        return isinstance(context, str) and (context in self.contexts or context in self.own)


def in_scope(info: object, reach: Reach) -> bool:
    """Whether a ``TargetInfo`` is one the client may see (see the module docstring)."""
    if not isinstance(info, Mapping):
        return False
    url = info.get("url")
    scheme = url.partition(":")[0].lower() if isinstance(url, str) and ":" in url else ""
    return (info.get("type") in SCOPED_TYPES and scheme not in _UI_SCHEMES
            and reach.sees(info.get("browserContextId")))


def is_browser(info: object) -> bool:
    """Whether a ``TargetInfo`` is the browser's own (a browser session's target)."""
    return isinstance(info, Mapping) and info.get("type") == "browser"


@attrs.frozen
class EventVerdict:
    """What to do with one event: forward it or not; a session to detach (not the client's)."""

    forward: bool
    detach: str | None = None


_FORWARD = EventVerdict(forward=True)
_WITHHOLD = EventVerdict(forward=False)


class TargetView:
    """One client's view of the targets: its reach and the targets it was shown."""

    def __init__(self, contexts: frozenset[str] | None) -> None:
        self.reach = Reach(contexts)
        #: Targets the client was shown (so it may hear that they went).
        self.shown: set[str] = set()

    def add_own(self, context: object) -> None:
        """The client created browser context ``context``: it is in reach from now on."""
        if isinstance(context, str):
            self.reach = attrs.evolve(self.reach, own=self.reach.own | {context})

    def judge(self, info: object) -> bool:
        """Whether ``info`` is in scope; a target in scope is remembered as shown."""
        if not in_scope(info, self.reach):
            return False
        assert isinstance(info, Mapping)
        target = info.get("targetId")
        if isinstance(target, str):
            self.shown.add(target)
        return True

    def event(self, method: str, params: Mapping[str, Any]) -> EventVerdict:
        """The verdict on one event of the client's sessions (Target.* judged; others pass)."""
        if method in _INFO_EVENTS:
            return _FORWARD if self.judge(params.get("targetInfo")) else _WITHHOLD
        if method in _GONE_EVENTS:
            target = params.get("targetId")
            if target not in self.shown:
                return _WITHHOLD
            if method == "Target.targetDestroyed":
                self.shown.discard(str(target))
            return _FORWARD
        if method == "Target.attachedToTarget":
            if is_browser(params.get("targetInfo")) or self.judge(params.get("targetInfo")):
                return _FORWARD  # (a browser session: the client's Target.attachToBrowserTarget)
            child = params.get("sessionId")
            return EventVerdict(forward=False, detach=child if isinstance(child, str) else None)
        if method == "Target.receivedMessageFromTarget":
            return _WITHHOLD  # non-flat sessions are never the client's
        return _FORWARD

    def result(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        """A reply's result as the client may see it (filtered for scope)."""
        if method == "Target.getTargets":
            infos = result.get("targetInfos")
            if isinstance(infos, list):
                return {**result, "targetInfos": [i for i in infos if self.judge(i)]}
        elif method == "Target.getBrowserContexts" and self.reach.bound:
            ids = result.get("browserContextIds")
            if isinstance(ids, list):
                return {**result, "browserContextIds": [c for c in ids if self.reach.sees(c)]}
        elif method == "Target.createBrowserContext":
            self.add_own(result.get("browserContextId"))
        elif method in ("Target.createTarget", "Target.getTargetInfo"):
            target = result.get("targetId")
            info = result.get("targetInfo")
            if isinstance(target, str):
                self.shown.add(target)
            elif isinstance(info, Mapping) and isinstance(info.get("targetId"), str):
                self.shown.add(str(info["targetId"]))
        return result
