"""Page input: click, type, press, hover, select, wait, act and dialogs — like a person.

Every function here runs while the caller holds the tab's work slot
(``async with tab.work()``). Elements come from the ref engine
(:func:`browserd.tabs.refs.resolve_target`), so an action never lands on
another element than the one the ref, selector or text named.

**Clicks.** The element is scrolled into view (``DOM.scrollIntoViewIfNeeded``),
its boxes taken (``DOM.getContentQuads``) and the centre of the first box
that is visible in its frame's viewport chosen. That point is hit-tested in
the element's own document (``elementFromPoint``, descending into open
shadow roots): only when the topmost element there is the target or inside
it is a real mouse press and release sent (``method: "mouse"``). If another
element covers the point, or the element has no box (zero size,
``display: contents``, off-screen), the click falls back to
``element.click()`` and says so (``method: "dom"``, ``coveredBy``).

**Coordinates.** Content quads are CSS pixels relative to the viewport of
the element's *session root*: the tab's main frame for the tab's own
session (in-process iframes included), or the out-of-process iframe's own
viewport for an OOPIF session. Input events always go to the tab's
top-level session; Chromium routes them into OOPIFs by hit-testing. So for
an element in an OOPIF the offset of that iframe's content box in its
parent (``DOM.getFrameOwner`` + ``DOM.getBoxModel`` in the parent session,
walking up through nested OOPIFs) is added. The in-page hit test needs
coordinates local to the element's document: for elements of same-origin
subframes reached from the main world the frame offsets are subtracted in
page JavaScript (walking ``frameElement``), and for a world that lives in
a non-root in-process frame the owner's box is subtracted. CSS transforms on
iframes themselves are not accounted for.

**Effects.** Each action answers ``effects: {navigated?, newTabs?, dialog?,
downloads?, blocked?}``:
events are collected from just before the input until a short settle time
after it (150 ms, or longer while a main-frame navigation it requested has
not committed yet). New tabs are page targets created with this tab as
their opener. ``downloads`` are the tab's own ``Page.downloadWillBegin``
events; ``blocked`` the requests the navigation guard
(:mod:`browserd.tabs.navguard`) stopped on this tab or on a popup it opened
(a new popup's first request is waited for, ≤ 1 s). A JavaScript dialog
blocks the renderer, so every input runs under :meth:`TabActor.race_dialog`:
an action that opens ``alert()`` or ``confirm()`` answers at once with
``effects.dialog``.

**Deadlines.** The HTTP contract gives these routes a ``timeoutMs``;
:func:`perform` bounds one action by it. When it expires while the renderer
does not answer (a hung page), ``Runtime.terminateExecution`` recovers the
tab, and the 504 says whether the input had already been sent
(``uncertain: true``). Nothing is ever retried or replayed.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import attrs
import trio

from ..cdp import CdpSession
from ..errors import (
    BadRequest,
    BrowserdError,
    CdpError,
    DialogOpen,
    EvalDisabled,
    JsException,
    NoDialog,
    StaleRef,
    Timeout,
)
from . import page
from .actor import TabActor
from .refs import ElementHandle, resolve_target, world_evaluate

T = TypeVar("T")

SETTLE_S = 0.15
"""How long to watch for effects after an input."""
COMMIT_WAIT_S = 5.0
"""How long to wait, after the settle time, for a requested navigation to commit."""
POLL_S = 0.1
"""The polling interval of JS-based waits."""
DOWNLOAD_GRACE_S = 0.5
"""How long effects wait for a download after a navigation ended without committing."""
POPUP_DECIDE_S = 1.0
"""How long effects wait for the navigation guard to judge a new popup's first request."""
RESPONSIVE_PROBE_S = 0.3
"""How long a renderer may take to answer before a timed-out action counts as hung."""

BUTTONS = {"left": 1, "right": 2, "middle": 4}
MODIFIER_BITS = {"Alt": 1, "Control": 2, "Meta": 4, "Shift": 8}
ACTION_KINDS = ("click", "type", "press", "hover", "select", "wait", "navigate", "dialog")
LOAD_STATES = ("domcontentloaded", "load")


# -- records -------------------------------------------------------------------

@attrs.frozen(kw_only=True)
class Target:
    """What to act on: exactly one of a snapshot ref, a CSS selector or a visible text."""

    ref: str | None = None
    selector: str | None = None
    text: str | None = None

    def given(self) -> bool:
        return any(v is not None for v in (self.ref, self.selector, self.text))


@attrs.define
class Progress:
    """Whether the current action has sent input to the page yet (for ``uncertain``)."""

    sent: bool = False


@attrs.frozen(kw_only=True)
class KeySpec:
    """One key as CDP ``Input.dispatchKeyEvent`` spells it."""

    key: str
    code: str
    key_code: int
    text: str = ""
    shifted: str = ""  # the key/text with Shift held (printable keys)
    location: int = 0


@attrs.frozen(kw_only=True)
class Chord:
    """A parsed key press: modifiers held, then one key."""

    modifiers: tuple[str, ...]
    key: KeySpec


# -- keys ------------------------------------------------------------------------

def _build_keys() -> dict[str, KeySpec]:
    keys: dict[str, KeySpec] = {}
    named = [
        ("Enter", "Enter", 13, "\r"), ("Tab", "Tab", 9, ""), ("Escape", "Escape", 27, ""),
        ("Backspace", "Backspace", 8, ""), ("Delete", "Delete", 46, ""),
        ("Insert", "Insert", 45, ""), ("Home", "Home", 36, ""), ("End", "End", 35, ""),
        ("PageUp", "PageUp", 33, ""), ("PageDown", "PageDown", 34, ""),
        ("ArrowLeft", "ArrowLeft", 37, ""), ("ArrowUp", "ArrowUp", 38, ""),
        ("ArrowRight", "ArrowRight", 39, ""), ("ArrowDown", "ArrowDown", 40, ""),
        ("ContextMenu", "ContextMenu", 93, ""), ("CapsLock", "CapsLock", 20, ""),
    ]
    for key, code, vk, text in named:
        keys[key] = KeySpec(key=key, code=code, key_code=vk, text=text)
    for i in range(1, 13):
        keys[f"F{i}"] = KeySpec(key=f"F{i}", code=f"F{i}", key_code=111 + i)
    for name, code, vk in (("Shift", "ShiftLeft", 16), ("Control", "ControlLeft", 17),
                           ("Alt", "AltLeft", 18), ("Meta", "MetaLeft", 91)):
        keys[name] = KeySpec(key=name, code=code, key_code=vk, location=1)
    keys[" "] = KeySpec(key=" ", code="Space", key_code=32, text=" ", shifted=" ")
    for c in "abcdefghijklmnopqrstuvwxyz":
        spec = KeySpec(key=c, code=f"Key{c.upper()}", key_code=ord(c.upper()), text=c,
                       shifted=c.upper())
        keys[c] = spec
        keys[c.upper()] = attrs.evolve(spec, key=c.upper(), text=c.upper())
    for digit, shifted in zip("0123456789", ")!@#$%^&*(", strict=True):
        spec = KeySpec(key=digit, code=f"Digit{digit}", key_code=ord(digit), text=digit,
                       shifted=shifted)
        keys[digit] = spec
        keys[shifted] = attrs.evolve(spec, key=shifted, text=shifted)
    for plain, shifted, code, vk in (
        ("-", "_", "Minus", 189), ("=", "+", "Equal", 187), ("[", "{", "BracketLeft", 219),
        ("]", "}", "BracketRight", 221), ("\\", "|", "Backslash", 220),
        (";", ":", "Semicolon", 186), ("'", '"', "Quote", 222), (",", "<", "Comma", 188),
        (".", ">", "Period", 190), ("/", "?", "Slash", 191), ("`", "~", "Backquote", 192),
    ):
        spec = KeySpec(key=plain, code=code, key_code=vk, text=plain, shifted=shifted)
        keys[plain] = spec
        keys[shifted] = attrs.evolve(spec, key=shifted, text=shifted)
    return keys


KEYS = _build_keys()
_ALIASES = {
    "enter": "Enter", "return": "Enter", "tab": "Tab", "escape": "Escape", "esc": "Escape",
    "backspace": "Backspace", "delete": "Delete", "del": "Delete", "insert": "Insert",
    "home": "Home", "end": "End", "pageup": "PageUp", "pagedown": "PageDown",
    "arrowleft": "ArrowLeft", "left": "ArrowLeft", "arrowright": "ArrowRight",
    "right": "ArrowRight", "arrowup": "ArrowUp", "up": "ArrowUp", "arrowdown": "ArrowDown",
    "down": "ArrowDown", "space": " ", "spacebar": " ", "contextmenu": "ContextMenu",
    "capslock": "CapsLock", "shift": "Shift", "control": "Control", "ctrl": "Control",
    "alt": "Alt", "option": "Alt", "meta": "Meta", "cmd": "Meta", "command": "Meta",
    "super": "Meta", "win": "Meta", "plus": "+",
}
_MODIFIER_NAMES = {"shift": "Shift", "control": "Control", "ctrl": "Control", "alt": "Alt",
                   "option": "Alt", "meta": "Meta", "cmd": "Meta", "command": "Meta",
                   "super": "Meta", "win": "Meta"}


def key_spec(name: str) -> KeySpec:
    """The :class:`KeySpec` of a key name ("Enter", "a", "ArrowDown", "F5", "Esc", …).

    Single characters outside the table are typed as themselves. Raises
    BadRequest for an unknown multi-character name.
    """
    if name in KEYS:
        return KEYS[name]
    alias = _ALIASES.get(name.lower())
    if alias is not None:
        return KEYS[alias]
    if re.fullmatch(r"[fF]([1-9]|1[0-2])", name):
        return KEYS[name.upper()]
    if len(name) == 1:
        return KeySpec(key=name, code="", key_code=0, text=name, shifted=name)
    raise BadRequest(f"unknown key {name!r}", field="key",
                     hint="use a key name like Enter, Tab, Escape, ArrowDown, Backspace, F5, "
                          "a single character, or a chord like Control+a")


def modifier_mask(modifiers: Sequence[str]) -> int:
    """The CDP modifiers bitmask (Alt=1, Control=2, Meta=4, Shift=8); BadRequest if unknown."""
    mask = 0
    for name in modifiers:
        canonical = _MODIFIER_NAMES.get(name.lower()) if isinstance(name, str) else None
        if canonical is None:
            raise BadRequest(f"unknown modifier {name!r}", field="modifiers",
                             hint="modifiers are Alt, Control, Meta and Shift")
        mask |= MODIFIER_BITS[canonical]
    return mask


def parse_chord(key: str, modifiers: Sequence[str] = ()) -> Chord:
    """Parse ``"Control+a"`` / ``"Shift+Tab"`` / ``"Control++"`` plus extra modifiers.

    Every part before the last is a modifier; the last is the key (a
    trailing ``+`` is the plus key itself). Raises BadRequest for an empty
    key, an unknown key or an unknown modifier.
    """
    if not isinstance(key, str) or key == "":
        raise BadRequest("key must be a non-empty string", field="key")
    if key == "+" or "+" not in key:
        parts = [key]
    elif key.endswith("++"):
        parts = [*key[:-2].split("+"), "+"]
    else:
        parts = key.split("+")
    if any(p == "" for p in parts):
        raise BadRequest(f"cannot parse the key chord {key!r}", field="key",
                         hint="write chords like Control+a or Shift+Tab")
    mods: list[str] = []
    for name in [*modifiers, *parts[:-1]]:
        modifier_mask([name])
        canonical = _MODIFIER_NAMES[name.lower()]
        if canonical not in mods:
            mods.append(canonical)
    return Chord(modifiers=tuple(mods), key=key_spec(parts[-1]))


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A URL glob as a regex: ``**`` matches anything, ``*`` anything but ``/``."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("^" + "".join(out) + "$", re.DOTALL)


# -- effects ---------------------------------------------------------------------

_PAGE_EVENTS = frozenset({
    "Page.frameRequestedNavigation", "Page.frameStartedNavigating", "Page.frameNavigated",
    "Page.navigatedWithinDocument", "Page.frameStoppedLoading",
})


class Observer:
    """Collects what an action causes: navigation, new tabs, a dialog.

    Created (subscribed) before the input is sent, so nothing is missed;
    events wait in bounded buffers until :meth:`settle` reads them.
    """

    def __init__(self, tab: TabActor) -> None:
        self._tab = tab
        self._before_loader = tab.loader_id
        self._before_navigations = tab.navigations
        self.new_tabs: list[str] = []
        self.requested: str | None = None  # URL of a main-frame navigation not yet committed
        self.committed = False
        self._changed = trio.Event()
        self._targets = tab.connection.subscribe(None, frozenset({"Target.targetCreated"}),
                                                 buffer=256)
        self._page = tab.session.subscribe(_PAGE_EVENTS, buffer=256)
        # navdl: downloads that begin and requests the navigation guard stops.
        self.downloads: list[dict[str, Any]] = []
        self._download_events = tab.session.subscribe(frozenset({"Page.downloadWillBegin"}),
                                                      buffer=64)
        self._guard_mark = tab.navguard.mark() if tab.navguard is not None else 0
        self.uncommitted = False  # a requested navigation ended without committing

    def close(self) -> None:
        self._tab.connection.unsubscribe(self._targets)
        self._tab.connection.unsubscribe(self._page)
        self._tab.connection.unsubscribe(self._download_events)  # navdl

    async def _pump_downloads(self) -> None:
        """navdl: effects.downloads from the tab's own Page.downloadWillBegin events."""
        try:
            async for event in self._download_events:
                p = event.params
                if len(self.downloads) < 100:
                    self.downloads.append({"id": str(p.get("guid", "")),
                                           "url": str(p.get("url", "")),
                                           "suggestedFilename": str(p.get("suggestedFilename",
                                                                          ""))})
                self._poke()
        except CdpError:
            return

    def _poke(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def _pump_targets(self) -> None:
        try:
            async for event in self._targets:
                info = event.params.get("targetInfo", {})
                if (info.get("type") == "page" and info.get("openerId") == self._tab.target_id
                        and info.get("targetId") not in self.new_tabs):
                    self.new_tabs.append(str(info.get("targetId")))
                    self._poke()
        except CdpError:
            return  # fell behind: report what we saw

    async def _pump_page(self) -> None:
        main = self._tab.main_frame_id
        try:
            async for event in self._page:
                p = event.params
                frame_id = p.get("frameId") or p.get("frame", {}).get("id")
                if frame_id != main or p.get("frame", {}).get("parentId"):
                    continue
                if event.method in ("Page.frameRequestedNavigation",
                                    "Page.frameStartedNavigating"):
                    if p.get("disposition", "currentTab") == "currentTab":
                        self.requested = str(p.get("url", ""))
                elif event.method in ("Page.frameNavigated", "Page.navigatedWithinDocument"):
                    self.committed = True
                    self.requested = None
                elif event.method == "Page.frameStoppedLoading":
                    if self.requested is not None and not self.committed:
                        self.uncommitted = True  # navdl: maybe it became a download
                    self.requested = None
                self._poke()
        except CdpError:
            return

    async def _pump_tab(self) -> None:
        while True:
            await self._tab.wait_changed()
            self._poke()

    async def _until(self, done: Callable[[], bool]) -> None:
        while not done():
            await self._changed.wait()

    async def settle(self, quiet_s: float = SETTLE_S) -> dict[str, Any]:
        """Watch for ``quiet_s`` (or until a commit or dialog), then for a pending commit.

        Returns the effects dict. Bounded (``quiet_s`` + :data:`COMMIT_WAIT_S`);
        cancellation simply ends the watch.
        """
        tab = self._tab
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._pump_targets)
            nursery.start_soon(self._pump_page)
            nursery.start_soon(self._pump_tab)
            nursery.start_soon(self._pump_downloads)  # navdl
            with trio.move_on_after(quiet_s):
                await self._until(lambda: self.committed or tab.dialog is not None
                                  or tab.closed or tab.crashed)
            if self.requested is not None and tab.dialog is None:
                with trio.move_on_after(COMMIT_WAIT_S):
                    await self._until(lambda: self.requested is None or bool(self.downloads)
                                      or tab.dialog is not None or tab.closed or tab.crashed)
            if self.uncommitted and not self.downloads and tab.dialog is None:
                # navdl: an attachment response ends the navigation, and its
                # download may be reported just after.
                with trio.move_on_after(DOWNLOAD_GRACE_S):
                    await self._until(lambda: bool(self.downloads) or self.committed)
            if self.new_tabs and tab.navguard is not None:
                # navdl: a popup's first request is judged just after it opens.
                with trio.move_on_after(POPUP_DECIDE_S):
                    await tab.navguard.wait_decided(self.new_tabs)
            nursery.cancel_scope.cancel()
        return self.effects()

    def effects(self) -> dict[str, Any]:
        tab = self._tab
        out: dict[str, Any] = {}
        if (self.committed or tab.loader_id != self._before_loader
                or tab.navigations != self._before_navigations):
            out["navigated"] = tab.url
        elif self.requested is not None:
            out["navigationPending"] = self.requested
        guard = tab.navguard
        new_tabs = [t for t in self.new_tabs
                    if guard is None or t not in guard.closed_popups]  # navdl
        if new_tabs:
            out["newTabs"] = new_tabs
        if tab.dialog is not None:
            out["dialog"] = {"type": tab.dialog.type, "message": tab.dialog.message}
        if self.downloads:  # navdl
            out["downloads"] = list(self.downloads)
        if guard is not None:  # navdl
            blocked = guard.blocks_since(self._guard_mark, target_id=tab.target_id,
                                         opened_by=self.new_tabs)
            if blocked:
                out["blocked"] = [b.to_json() for b in blocked]
        return out


@contextlib.contextmanager
def observing(tab: TabActor) -> Iterator[Observer]:
    """An :class:`Observer` for the duration of the block (unsubscribed on exit)."""
    observer = Observer(tab)
    try:
        yield observer
    finally:
        observer.close()


async def _race(tab: TabActor, fn: Callable[[], Awaitable[T]]) -> tuple[T | None, bool]:
    """Run ``fn`` unless a dialog opens first: (result, False) or (None, True).

    Errors from ``fn`` come out as themselves (not in an exception group).
    """
    result, dialog = await tab.race_dialog(fn)
    return result, dialog is not None


# -- element helpers ---------------------------------------------------------------

async def _send(tab: TabActor, session: CdpSession, method: str,
                params: dict[str, Any] | None = None) -> dict[str, Any]:
    if session.session_id == tab.session.session_id:
        return await tab.send(method, params)
    tab.check_usable()
    return await session.send(method, params)


def _gone_error(exc: CdpError) -> BrowserdError | None:
    text = exc.message
    if "Cannot find context" in text or "Could not find object" in text:
        return StaleRef("the element's document went away before the action",
                        reason="navigated", hint="take a new snapshot")
    if "detached" in text.lower():
        return StaleRef("the element was removed from the page before the action",
                        reason="detached", hint="take a new snapshot")
    return None


async def _call(tab: TabActor, handle: ElementHandle, function: str, *args: Any,
                user_gesture: bool = False) -> Any:
    """Call ``function`` with ``this`` = the element in its world; the result by value."""
    params: dict[str, Any] = {
        "objectId": handle.object_id, "functionDeclaration": function,
        "arguments": [{"value": a} for a in args], "returnByValue": True,
        "awaitPromise": False, "userGesture": user_gesture,
    }
    try:
        result = await _send(tab, handle.session, "Runtime.callFunctionOn", params)
    except CdpError as exc:
        raise (_gone_error(exc) or exc) from None
    details = result.get("exceptionDetails")
    if details:
        exc_obj = details.get("exception") or {}
        text = exc_obj.get("description") or exc_obj.get("value") or details.get("text", "")
        raise JsException(f"the page threw while acting on the element: {str(text)[:500]}")
    return (result.get("result") or {}).get("value")


def _session_root_frame(tab: TabActor, session: CdpSession) -> str | None:
    if session.session_id == tab.session.session_id:
        return tab.main_frame_id
    for target_id, sid in tab.child_sessions.items():
        if sid == session.session_id:
            return target_id
    return None


async def _owner_content_origin(tab: TabActor, session: CdpSession, frame_id: str,
                                *, scroll: bool) -> tuple[float, float] | None:
    """Top-left of the content box of ``frame_id``'s owner iframe, in ``session``'s root."""
    try:
        owner = await _send(tab, session, "DOM.getFrameOwner", {"frameId": frame_id})
        node = {"backendNodeId": owner["backendNodeId"]}
        if scroll:
            with contextlib.suppress(CdpError):
                await _send(tab, session, "DOM.scrollIntoViewIfNeeded", node)
        box = await _send(tab, session, "DOM.getBoxModel", node)
    except (CdpError, KeyError):
        return None
    content = box.get("model", {}).get("content") or []
    if len(content) < 2:
        return None
    return float(content[0]), float(content[1])


async def _oopif_offset(tab: TabActor, session: CdpSession) -> tuple[float, float] | None:
    """Offset of an OOPIF session's viewport in the top-level viewport ((0, 0) at the top).

    Walks up through nested out-of-process iframes, scrolling each owner
    iframe into view. None when the chain cannot be followed.
    """
    x = y = 0.0
    current = session
    for _ in range(8):
        if current.session_id == tab.session.session_id:
            return x, y
        frame_id = _session_root_frame(tab, current)
        if frame_id is None:
            return None
        parents = [tab.session] + [tab.connection.session(s) for s in tab.child_sessions.values()
                                   if s != current.session_id]
        for parent in parents:
            origin = await _owner_content_origin(tab, parent, frame_id, scroll=True)
            if origin is not None:
                x, y = x + origin[0], y + origin[1]
                current = parent
                break
        else:
            return None
    return None


_PROBE_JS = r"""function (quads, baseX, baseY) {
  const el = this;
  if (!el.isConnected) return {detached: true};
  const doc = el.ownerDocument, view = doc.defaultView;
  let ox = baseX, oy = baseY;
  for (let w = view; w && w.document !== document;) {
    let fe = null;
    try { fe = w.frameElement; } catch (e) { fe = null; }
    if (!fe) return {noFrame: true};
    const r = fe.getBoundingClientRect();
    const cs = fe.ownerDocument.defaultView.getComputedStyle(fe);
    ox += r.left + fe.clientLeft + (parseFloat(cs.paddingLeft) || 0);
    oy += r.top + fe.clientTop + (parseFloat(cs.paddingTop) || 0);
    w = fe.ownerDocument.defaultView;
  }
  const vw = view.innerWidth, vh = view.innerHeight;
  let point = null, area = false;
  for (const q of quads) {
    const w = Math.max(q[0], q[2], q[4], q[6]) - Math.min(q[0], q[2], q[4], q[6]);
    const h = Math.max(q[1], q[3], q[5], q[7]) - Math.min(q[1], q[3], q[5], q[7]);
    if (w < 1 || h < 1) continue;
    area = true;
    const xs = [q[0], q[2], q[4], q[6]].map(v => v - ox);
    const ys = [q[1], q[3], q[5], q[7]].map(v => v - oy);
    const l = Math.max(0, Math.min(...xs)), r = Math.min(vw, Math.max(...xs));
    const t = Math.max(0, Math.min(...ys)), b = Math.min(vh, Math.max(...ys));
    if (r - l >= 1 && b - t >= 1) { point = [(l + r) / 2, (t + b) / 2]; break; }
  }
  if (!point) return area ? {offscreen: true} : {noBox: true};
  let hit = doc.elementFromPoint(point[0], point[1]);
  while (hit && hit.shadowRoot) {
    const inner = hit.shadowRoot.elementFromPoint(point[0], point[1]);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  const up = n => n.parentNode || n.host || null;
  let ok = false;
  for (let n = hit; n; n = up(n)) if (n === el) { ok = true; break; }
  if (!ok && hit && !hit.shadowRoot) {
    // A closed shadow root hides its inside from the hit test, which stops at
    // the host: a target inside that host's shadow tree counts as hit.
    for (let n = el; n; n = up(n)) if (n.nodeType === 11 && n.host === hit) { ok = true; break; }
  }
  const x = point[0] + ox, y = point[1] + oy;
  if (ok) return {x, y};
  if (!hit) return {offscreen: true};
  const B = globalThis.__browserd;
  let d = null;
  try { d = B && B.describe ? B.describe(hit) : null; } catch (e) { d = null; }
  const cls = typeof hit.className === 'string' ? hit.className : (hit.getAttribute('class') || '');
  const cap = s => String(s || '').replace(/\s+/g, ' ').trim().slice(0, 200);
  return {x, y, covered: {
    tag: hit.localName, id: cap(hit.id), className: cap(cls),
    role: cap(d ? d.role : hit.getAttribute('role')),
    name: cap(d ? d.name : (hit.getAttribute('aria-label') || hit.textContent)),
  }};
}"""


@attrs.frozen(kw_only=True)
class Spot:
    """Where to act: a top-level point, or why the DOM fallback is needed."""

    x: float | None = None
    y: float | None = None
    covered_by: dict[str, Any] | None = None
    reason: str | None = None  # "covered" | "noBox" | "offscreen" | "frame"

    @property
    def usable(self) -> bool:
        return self.reason is None and self.x is not None and self.y is not None


async def locate(tab: TabActor, handle: ElementHandle) -> Spot:
    """Scroll the element into view and find the point a mouse would use.

    Returns a :class:`Spot` with top-level CSS-pixel coordinates when the
    element's centre is visible and not covered, else the reason for the
    DOM fallback (and ``covered_by``). Raises StaleRef if the element went
    away, JsException / CdpError when the page or browser fails.
    """
    try:
        await _send(tab, handle.session, "DOM.scrollIntoViewIfNeeded",
                    {"objectId": handle.object_id})
    except CdpError as exc:  # no layout object: the quads below say "no box"
        gone = _gone_error(exc)
        if gone is not None:
            raise gone from None
    try:
        quads = (await _send(tab, handle.session, "DOM.getContentQuads",
                             {"objectId": handle.object_id})).get("quads") or []
    except CdpError as exc:
        gone = _gone_error(exc)
        if gone is not None:
            raise gone from None
        quads = []
    quads = [q for q in quads if isinstance(q, list) and len(q) == 8]
    if not quads:
        return Spot(reason="noBox")
    base = (0.0, 0.0)
    root = _session_root_frame(tab, handle.session)
    if handle.frame_id and root is not None and handle.frame_id != root:
        origin = await _owner_content_origin(tab, handle.session, handle.frame_id, scroll=False)
        if origin is None:
            return Spot(reason="frame")
        base = origin
    probe = await _call(tab, handle, _PROBE_JS, quads, base[0], base[1])
    if not isinstance(probe, dict):
        return Spot(reason="noBox")
    if probe.get("detached"):
        raise StaleRef("the element was removed from the page before the action",
                       reason="detached", hint="take a new snapshot")
    if probe.get("noFrame"):
        return Spot(reason="frame")
    if probe.get("noBox"):
        return Spot(reason="noBox")
    if probe.get("offscreen"):
        return Spot(reason="offscreen")
    offset = await _oopif_offset(tab, handle.session)
    if offset is None:
        return Spot(reason="frame")
    x, y = float(probe["x"]) + offset[0], float(probe["y"]) + offset[1]
    if probe.get("covered"):
        return Spot(x=x, y=y, covered_by=dict(probe["covered"]), reason="covered")
    return Spot(x=x, y=y)


def _fallback_fields(spot: Spot) -> dict[str, Any]:
    out: dict[str, Any] = {"fallbackReason": spot.reason}
    if spot.covered_by is not None:
        out["coveredBy"] = spot.covered_by
    return out


def _dialog_before_input(tab: TabActor, what: str) -> DialogOpen:
    info = tab.dialog
    kind = info.type if info is not None else "JavaScript"
    return DialogOpen(f"a {kind} dialog opened before the {what} was sent; nothing was sent",
                      dialog=info.to_json() if info is not None else None)


async def _element(tab: TabActor, target: Target) -> ElementHandle:
    """The element a :class:`Target` names (ref, selector or text); errors as resolve_target."""
    return await resolve_target(tab, ref=target.ref, selector=target.selector, text=target.text)


async def _send_input(tab: TabActor, what: str, progress: Progress,
                      fn: Callable[[], Awaitable[None]]) -> dict[str, Any]:
    """Run ``fn`` (which sends the input) while observing the tab; the effects.

    Raises DialogOpen when a dialog opened before ``fn`` sent anything
    (``progress.sent``), else whatever ``fn`` raises. Cancellation abandons
    ``fn``'s CDP call in flight.
    """
    with observing(tab) as observer:
        _, dialog = await _race(tab, fn)
        if dialog and not progress.sent:
            raise _dialog_before_input(tab, what)
        return await observer.settle()


async def _pointer(tab: TabActor, what: str, progress: Progress, handle: ElementHandle,
                   act: Callable[[Spot], Awaitable[None]]) -> dict[str, Any]:
    """Locate the element, then ``act`` on its :class:`Spot` (see :func:`_send_input`).

    Answers ``{ok, method: "mouse"|"dom", fallbackReason?, coveredBy?, effects}``.
    """
    spot_box: list[Spot] = []

    async def run() -> None:
        spot = await locate(tab, handle)
        spot_box.append(spot)
        await act(spot)

    effects = await _send_input(tab, what, progress, run)
    spot = spot_box[0] if spot_box else Spot(reason="noBox")
    out: dict[str, Any] = {"ok": True, "method": "mouse" if spot.usable else "dom"}
    if not spot.usable:
        out.update(_fallback_fields(spot))
    out["effects"] = effects
    return out


# -- actions -----------------------------------------------------------------------

async def click(tab: TabActor, target: Target, *, button: str = "left", click_count: int = 1,
                modifiers: Sequence[str] = (), progress: Progress | None = None
                ) -> dict[str, Any]:
    """Click the element like a person; fall back to ``element.click()`` when covered.

    Answers ``{ok, method: "mouse"|"dom", effects, coveredBy?, fallbackReason?}``.
    Raises BadRequest (bad button/modifier/target), RefNotFound / StaleRef /
    NoMatch from the ref engine, DialogOpen when a dialog opened before the
    press was sent. Cancellation abandons the CDP call in flight; a press
    already sent is not undone and never resent (see ``progress.sent``).
    """
    if button not in BUTTONS:
        raise BadRequest(f"unknown button {button!r}", field="button")
    if not 1 <= click_count <= 3:
        raise BadRequest("clickCount must be 1, 2 or 3", field="clickCount")
    mask = modifier_mask(modifiers)
    progress = progress if progress is not None else Progress()
    handle = await _element(tab, target)

    async def act(spot: Spot) -> None:
        if not spot.usable:
            progress.sent = True
            await _call(tab, handle, "function () { this.click(); }", user_gesture=True)
            return
        assert spot.x is not None and spot.y is not None
        base = {"x": spot.x, "y": spot.y, "modifiers": mask}
        await tab.send("Input.dispatchMouseEvent", {**base, "type": "mouseMoved"})
        for count in range(1, click_count + 1):
            press = {**base, "button": button, "clickCount": count}
            progress.sent = True
            await tab.send("Input.dispatchMouseEvent",
                           {**press, "type": "mousePressed", "buttons": BUTTONS[button]})
            await tab.send("Input.dispatchMouseEvent",
                           {**press, "type": "mouseReleased", "buttons": 0})

    return await _pointer(tab, "click", progress, handle, act)


_HOVER_DOM_JS = """function () {
  const o = {bubbles: true, cancelable: true, composed: true, view: this.ownerDocument.defaultView};
  this.dispatchEvent(new MouseEvent('mouseover', o));
  this.dispatchEvent(new MouseEvent('mouseenter', {...o, bubbles: false}));
  this.dispatchEvent(new MouseEvent('mousemove', o));
}"""


async def hover(tab: TabActor, target: Target, *, progress: Progress | None = None
                ) -> dict[str, Any]:
    """Move the mouse to the element's centre (real ``mouseMoved``: CSS ``:hover`` applies).

    When the centre is covered or the element has no box, mouseover /
    mouseenter / mousemove events are dispatched on the element instead
    (``method: "dom"``; CSS ``:hover`` does not apply then). Errors and
    cancellation as for :func:`click`.
    """
    progress = progress if progress is not None else Progress()
    handle = await _element(tab, target)

    async def act(spot: Spot) -> None:
        progress.sent = True
        if spot.usable:
            await tab.send("Input.dispatchMouseEvent",
                           {"type": "mouseMoved", "x": spot.x, "y": spot.y})
        else:
            await _call(tab, handle, _HOVER_DOM_JS)

    return await _pointer(tab, "hover", progress, handle, act)


async def _key_events(tab: TabActor, chord: Chord, progress: Progress) -> None:
    mask = 0
    for name in chord.modifiers:
        mask |= MODIFIER_BITS[name]
        spec = KEYS[name]
        progress.sent = True
        await tab.send("Input.dispatchKeyEvent", {
            "type": "rawKeyDown", "key": spec.key, "code": spec.code,
            "windowsVirtualKeyCode": spec.key_code, "nativeVirtualKeyCode": spec.key_code,
            "location": spec.location, "modifiers": mask})
    spec = chord.key
    key, text = spec.key, spec.text
    if mask & MODIFIER_BITS["Shift"] and spec.shifted:
        key, text = spec.shifted, spec.shifted
    commandish = mask & (MODIFIER_BITS["Control"] | MODIFIER_BITS["Alt"] | MODIFIER_BITS["Meta"])
    down: dict[str, Any] = {
        "type": "keyDown" if text and not commandish else "rawKeyDown",
        "key": key, "code": spec.code, "windowsVirtualKeyCode": spec.key_code,
        "nativeVirtualKeyCode": spec.key_code, "location": spec.location, "modifiers": mask}
    if text and not commandish:
        down["text"] = text
        down["unmodifiedText"] = spec.text
    progress.sent = True
    await tab.send("Input.dispatchKeyEvent", down)
    await tab.send("Input.dispatchKeyEvent", {
        "type": "keyUp", "key": key, "code": spec.code, "windowsVirtualKeyCode": spec.key_code,
        "nativeVirtualKeyCode": spec.key_code, "location": spec.location, "modifiers": mask})
    for name in reversed(chord.modifiers):
        mask &= ~MODIFIER_BITS[name]
        spec = KEYS[name]
        await tab.send("Input.dispatchKeyEvent", {
            "type": "keyUp", "key": spec.key, "code": spec.code,
            "windowsVirtualKeyCode": spec.key_code, "nativeVirtualKeyCode": spec.key_code,
            "location": spec.location, "modifiers": mask})


async def press(tab: TabActor, key: str, modifiers: Sequence[str] = (), *,
                progress: Progress | None = None) -> dict[str, Any]:
    """Press one key or chord ("Enter", "Shift+Tab", "Control+a") on the focused element.

    Answers ``{ok, effects}``. Raises BadRequest for an unknown key or
    modifier. Cancellation may leave a modifier logically held in the
    renderer until the next key event with other modifiers.
    """
    chord = parse_chord(key, modifiers)
    progress = progress if progress is not None else Progress()
    effects = await _send_input(tab, "key press", progress,
                                lambda: _key_events(tab, chord, progress))
    return {"ok": True, "effects": effects}


# After DOM.focus: does keyboard text land somewhere editable? (Focus may move
# into a widget's inner field, so the deep active element is what counts.)
_EDITABLE_JS = """function () {
  let a = this.ownerDocument.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  if (!a) return this.localName;
  if (a.isContentEditable) return 'ok';
  const tag = a.localName;
  if (tag === 'textarea') return (a.readOnly || a.disabled) ? 'readonly textarea' : 'ok';
  if (tag === 'input') {
    const nonText = ['button', 'submit', 'reset', 'checkbox', 'radio', 'file', 'image',
                     'range', 'color', 'hidden'];
    if (nonText.includes(a.type)) return 'input type=' + a.type;
    return (a.readOnly || a.disabled) ? 'readonly input' : 'ok';
  }
  return tag;
}"""

_CLEAR_JS = """function () {
  const el = this, tag = el.localName;
  if (tag === 'input' || tag === 'textarea') {
    const proto = tag === 'input' ? HTMLInputElement.prototype : HTMLTextAreaElement.prototype;
    const setter = Object.getOwnPropertyDescriptor(proto, 'value').set;
    setter.call(el, '');
    el.dispatchEvent(new InputEvent('input', {bubbles: true, composed: true,
                                              inputType: 'deleteContentBackward'}));
    return 'value';
  }
  if (el.isContentEditable) {
    const sel = el.ownerDocument.getSelection();
    const range = el.ownerDocument.createRange();
    range.selectNodeContents(el);
    sel.removeAllRanges();
    sel.addRange(range);
    return 'selection';
  }
  return 'none';
}"""


async def type_text(tab: TabActor, text: str, *, target: Target | None = None,
                    clear: bool = False, submit: bool = False, slowly: bool = False,
                    progress: Progress | None = None) -> dict[str, Any]:
    """Type ``text`` into the element (focused first) or into the focused element.

    ``clear`` empties it first (inputs and textareas: value set to '' with
    an ``input`` event; contenteditable or no target: select all + Delete).
    The text goes in with one ``Input.insertText`` unless ``slowly``, which
    sends a key down/up per character (for pages that listen to keys).
    ``submit`` presses Enter afterwards. Answers ``{ok, effects}``. Errors
    and cancellation as for :func:`click`; typed text is never retyped.
    """
    progress = progress if progress is not None else Progress()
    handle = None
    if target is not None and target.given():
        handle = await _element(tab, target)

    async def run() -> None:
        if handle is not None:
            with contextlib.suppress(CdpError):
                await _send(tab, handle.session, "DOM.scrollIntoViewIfNeeded",
                            {"objectId": handle.object_id})
            try:
                await _send(tab, handle.session, "DOM.focus", {"objectId": handle.object_id})
            except CdpError as exc:
                gone = _gone_error(exc)
                if gone is not None:
                    raise gone from None
                raise BadRequest(f"the element cannot take keyboard focus ({exc.message})",
                                 hint="target a text field, textarea or editable element"
                                 ) from None
            if text or clear:
                what = await _call(tab, handle, _EDITABLE_JS)
                if what != "ok":
                    raise BadRequest(
                        f"the element is not editable (a {what}); nothing was typed",
                        hint="target a text field, textarea or editable element")
        if clear:
            how = "none"
            if handle is not None:
                progress.sent = True
                how = str(await _call(tab, handle, _CLEAR_JS))
            if how != "value":
                if how == "none":
                    await _key_events(tab, parse_chord("Control+a"), progress)
                await _key_events(tab, parse_chord("Delete"), progress)
        if text:
            if slowly:
                for ch in text:
                    spec = KEYS.get(ch) or (KEYS["Enter"] if ch == "\n" else None)
                    chord = Chord(modifiers=(), key=spec or KeySpec(
                        key=ch, code="", key_code=0, text=ch, shifted=ch))
                    await _key_events(tab, chord, progress)
            else:
                progress.sent = True
                await tab.send("Input.insertText", {"text": text})
        if submit:
            await _key_events(tab, parse_chord("Enter"), progress)

    effects = await _send_input(tab, "text", progress, run)
    return {"ok": True, "effects": effects}


_SELECT_JS = """function (values) {
  const el = this;
  if (el.localName !== 'select') return {notSelect: el.localName};
  if (el.disabled) return {disabled: true};
  const opts = Array.from(el.options);
  const norm = s => String(s).replace(/\\s+/g, ' ').trim();
  const chosen = [], missing = [];
  for (const v of values) {
    const o = opts.find(o => o.value === v) || opts.find(o => norm(o.label) === norm(v))
      || opts.find(o => norm(o.text) === norm(v));
    if (!o) missing.push(v); else if (!chosen.includes(o)) chosen.push(o);
  }
  const available = opts.slice(0, 50).map(o => ({value: o.value, label: norm(o.label)}));
  if (missing.length) return {missing, available};
  if (!el.multiple && chosen.length > 1) return {notMultiple: chosen.length};
  const off = chosen.find(o => o.disabled);
  if (off) return {disabledOption: off.value};
  for (const o of opts) o.selected = chosen.includes(o);
  el.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
  el.dispatchEvent(new Event('change', {bubbles: true}));
  return {selected: chosen.map(o => o.value)};
}"""


async def select(tab: TabActor, target: Target, values: Sequence[str], *,
                 progress: Progress | None = None) -> dict[str, Any]:
    """Choose options of a ``<select>`` by value or visible label; fire input + change.

    Answers ``{ok, selected: [values], effects}``. Raises BadRequest when the
    element is not a select, is disabled, a value matches no option (the
    message names it and lists the options), or several values are given
    for a single select.
    """
    if not values or not all(isinstance(v, str) for v in values):
        raise BadRequest("values must be a non-empty list of strings", field="values")
    progress = progress if progress is not None else Progress()
    handle = await _element(tab, target)
    with observing(tab) as observer:
        result_box: list[Any] = []

        async def run() -> None:
            progress.sent = True
            result_box.append(await _call(tab, handle, _SELECT_JS, list(values)))

        _, dialog = await _race(tab, run)
        if dialog and not result_box:
            effects = await observer.settle()
            return {"ok": True, "selected": None, "effects": effects}
        result = result_box[0] if result_box else None
        if not isinstance(result, dict):
            raise JsException("selecting the options failed")
        if "notSelect" in result:
            raise BadRequest(f"the element is a <{result['notSelect']}>, not a <select>",
                             field="values", hint="target the <select> element itself")
        if result.get("disabled"):
            raise BadRequest("the <select> is disabled", field="values")
        if "missing" in result:
            missing = ", ".join(repr(v) for v in result["missing"])
            raise BadRequest(f"no option has the value or label {missing}", field="values",
                             missing=result["missing"], available=result.get("available", []))
        if "notMultiple" in result:
            raise BadRequest("the <select> takes one value, not several", field="values")
        if "disabledOption" in result:
            raise BadRequest(f"the option {result['disabledOption']!r} is disabled",
                             field="values")
        effects = await observer.settle()
    return {"ok": True, "selected": result.get("selected", []), "effects": effects}


_WAIT_JS = """((mode, arg) => {
  if (mode === 'selector') {
    let el;
    try { el = document.querySelector(arg); }
    catch (e) { return JSON.stringify({bad: String(e && e.message || e)}); }
    if (!el) return false;
    if (!el.checkVisibility) return true;
    return el.checkVisibility({visibilityProperty: true});
  }
  const body = document.body;
  const has = !!body && (body.innerText || '').includes(arg);
  return mode === 'text' ? has : !has;
})(%s, %s)"""


async def wait(tab: TabActor, *, selector: str | None = None, text: str | None = None,
               text_gone: str | None = None, url: str | None = None,
               load_state: str | None = None, timeout_ms: int = 15000,
               evaluate_enabled: bool = True) -> dict[str, Any]:
    """Wait until exactly one condition holds: answers ``{ok, waitedMs}``.

    ``selector`` (an element matching it is attached and visible), ``text``
    / ``text_gone`` (the page's visible text contains / no longer contains
    it) poll every ~100 ms in the ``browserd`` isolated world of the main
    frame, and need ``evaluate_enabled`` (else 403 EVAL_DISABLED). ``url``
    (a glob: ``*`` within a path segment, ``**`` across) and ``load_state``
    ("domcontentloaded" | "load") follow the tab's events without JS.

    Raises Timeout (504) after ``timeout_ms``, BadRequest for an invalid
    selector or not exactly one condition, DialogOpen when a dialog blocks
    the page. Cancellation stops the wait; nothing on the page changes.
    """
    conditions = {"selector": selector, "text": text, "textGone": text_gone, "url": url,
                  "loadState": load_state}
    given = [k for k, v in conditions.items() if v is not None]
    if len(given) != 1:
        raise BadRequest("give exactly one of selector, text, textGone, url or loadState"
                         + (f" (got {', '.join(given)})" if given else ""))
    what = given[0]
    if what in ("selector", "text", "textGone") and not evaluate_enabled:
        raise EvalDisabled("JavaScript evaluation is disabled in settings, "
                           "and selector/text waits run JavaScript too",
                           hint="wait for url or loadState, or enable evaluate_enabled")
    if load_state is not None and load_state not in LOAD_STATES:
        raise BadRequest(f"loadState must be one of {', '.join(LOAD_STATES)}",
                         field="loadState")
    started = trio.current_time()
    with trio.move_on_after(timeout_ms / 1000) as scope:
        if what == "url":
            assert url is not None
            pattern = glob_regex(url)
            while not pattern.match(tab.url):
                _check_waitable(tab)
                await tab.wait_changed()
        elif what == "loadState":
            assert load_state is not None
            await _wait_load_state(tab, load_state)
        else:
            arg = {"selector": selector, "text": text, "textGone": text_gone}[what]
            expression = _WAIT_JS % (page.js_literal(
                {"selector": "selector", "text": "text", "textGone": "gone"}[what]),
                page.js_literal(arg))
            while True:
                _check_waitable(tab)
                value, dialog = await _race(tab, lambda: _world_value(tab, expression))
                if dialog:
                    _check_waitable(tab)
                if isinstance(value, str) and value.startswith("{"):
                    raise BadRequest(f"invalid selector {selector!r}", field="selector")
                if value is True:
                    break
                await trio.sleep(POLL_S)
    waited = round((trio.current_time() - started) * 1000)
    if scope.cancelled_caught:
        shown = str(conditions[what])[:200]
        raise Timeout(f"waited {waited} ms for {what} {shown!r}",
                      hint="raise timeoutMs, or check the page with GET /snapshot",
                      waitedMs=waited)
    return {"ok": True, "waitedMs": waited}


def _check_waitable(tab: TabActor) -> None:
    tab.check_usable(allow_dialog=False)


async def _world_value(tab: TabActor, expression: str) -> Any:
    try:
        remote = await world_evaluate(tab, tab.session, tab.main_frame_id, expression)
    except CdpError as exc:
        # The frame is between documents: not yet there.
        if "context" in exc.message.lower() or "frame" in exc.message.lower():
            return False
        raise
    return remote.get("value")


async def _wait_load_state(tab: TabActor, state: str) -> None:
    want = 1 if state == "domcontentloaded" else 2
    rank = {"none": -1, "loading": 0, "domcontentloaded": 1, "load": 2}
    if tab.load_state == "none":
        # Attached after the page loaded: the lifecycle events were missed, so
        # ask the document itself (our own fixed expression, not caller JS).
        ready = await _world_value(tab, "document.readyState")
        if ready == "complete" or (ready == "interactive" and want == 1):
            return
    while rank[tab.load_state] < want:
        _check_waitable(tab)
        await tab.wait_changed()


async def handle_dialog(tab: TabActor, *, accept: bool, prompt_text: str | None = None
                        ) -> dict[str, Any]:
    """Accept or dismiss the open JavaScript dialog (``prompt_text`` for prompt()).

    Answers ``{ok, dialog: {type, message, defaultPrompt}, accepted, effects}``;
    ``effects`` may show a navigation or the next dialog the page opened.
    Raises NoDialog (409) when none is open.
    """
    info = tab.dialog
    if info is None:
        raise NoDialog("no JavaScript dialog is open on this tab",
                       hint="dialogs are reported in an action's effects.dialog")
    with observing(tab) as observer:
        params: dict[str, Any] = {"accept": accept}
        if prompt_text is not None:
            params["promptText"] = prompt_text
        try:
            await tab.send("Page.handleJavaScriptDialog", params)
        except CdpError as exc:
            if "no dialog" in exc.message.lower():
                raise NoDialog("the dialog was already closed") from None
            raise
        with trio.move_on_after(2):
            while tab.dialog is info:
                await tab.wait_changed()
        effects = await observer.settle()
    return {"ok": True, "dialog": info.to_json(), "accepted": accept, "effects": effects}


# -- bounded actions and batches ------------------------------------------------------

async def _responsive(tab: TabActor) -> bool:
    """Does the renderer answer a trivial evaluation quickly?"""
    with trio.move_on_after(RESPONSIVE_PROBE_S):
        try:
            await tab.send("Runtime.evaluate", {"expression": "0", "returnByValue": True})
        except BrowserdError:
            pass
        return True
    return False


async def _recover(tab: TabActor) -> bool:
    """After a timed-out action: end a hung script, if the page is hung. True if terminated.

    Never terminates while a dialog is open or when the page answers
    (``Runtime.terminateExecution`` on an idle page would kill the page's
    *next* script). Bounded (~2.5 s), shielded from the caller's cancel.
    """
    if tab.dialog is not None or tab.closed or tab.crashed:
        return False
    terminated = False
    with trio.CancelScope(shield=True):
        if not await _responsive(tab):
            await page.terminate(tab)
            terminated = True
    return terminated


def _target_of(args: Mapping[str, Any]) -> Target:
    return Target(ref=args.get("ref"), selector=args.get("selector"), text=args.get("text"))


async def _dispatch(tab: TabActor, kind: str, args: Mapping[str, Any], progress: Progress,
                    *, evaluate_enabled: bool, timeout_s: float) -> dict[str, Any]:
    if kind == "click":
        return await click(tab, _target_of(args), button=args.get("button") or "left",
                           click_count=args.get("clickCount") or 1,
                           modifiers=args.get("modifiers") or (), progress=progress)
    if kind == "hover":
        return await hover(tab, _target_of(args), progress=progress)
    if kind == "type":
        return await type_text(
            tab, args.get("text") or "",
            target=Target(ref=args.get("ref"), selector=args.get("selector")),
            clear=bool(args.get("clear")), submit=bool(args.get("submit")),
            slowly=bool(args.get("slowly")), progress=progress)
    if kind == "press":
        return await press(tab, args["key"], args.get("modifiers") or (), progress=progress)
    if kind == "select":
        return await select(tab, _target_of(args), args.get("values") or [], progress=progress)
    if kind == "wait":
        return await wait(tab, selector=args.get("selector"), text=args.get("text"),
                          text_gone=args.get("textGone"), url=args.get("url"),
                          load_state=args.get("loadState"),
                          timeout_ms=max(1, int(timeout_s * 1000)),
                          evaluate_enabled=evaluate_enabled)
    if kind == "navigate":
        progress.sent = True
        return await page.navigate(tab, args["url"], wait_until=args.get("waitUntil") or "load",
                                   timeout_s=timeout_s)
    if kind == "dialog":
        progress.sent = True
        return await handle_dialog(tab, accept=bool(args.get("accept")),
                                   prompt_text=args.get("promptText"))
    raise BadRequest(f"unknown action kind {kind!r}", field="kind",
                     hint="kinds: " + ", ".join(ACTION_KINDS))


async def perform(tab: TabActor, kind: str, args: Mapping[str, Any], *, timeout_s: float,
                  evaluate_enabled: bool = True) -> dict[str, Any]:
    """Run one action (``kind`` with API-shaped, already validated ``args``) within ``timeout_s``.

    A ``wait`` (or ``navigate``) uses ``timeout_s`` as its own timeout. When
    the time runs out, a hung renderer is recovered with
    ``Runtime.terminateExecution`` and Timeout (504) is raised with
    ``uncertain: true`` if input had already been sent — its effect is
    unknown and it is not replayed. Raises DialogOpen if a dialog is open
    (except for ``dialog``); other errors as the action raises them.
    """
    tab.check_usable(allow_dialog=kind == "dialog")
    progress = Progress()
    with trio.move_on_after(timeout_s + (0.5 if kind in ("wait", "navigate") else 0)) as scope:
        try:
            return await _dispatch(tab, kind, args, progress, evaluate_enabled=evaluate_enabled,
                                   timeout_s=timeout_s)
        except Timeout as exc:
            if kind in ("wait", "navigate"):
                raise
            raise Timeout(exc.message, hint=exc.hint, uncertain=progress.sent) from None
    assert scope.cancelled_caught
    terminated = await _recover(tab)
    if progress.sent:
        message = (f"the {kind} did not finish within {timeout_s * 1000:.0f} ms after its input "
                   "was sent; its effect is unknown and it was not retried")
    else:
        message = f"the {kind} did not finish within {timeout_s * 1000:.0f} ms; nothing was sent"
    hint = ("the page was busy and its script was stopped; the tab has recovered" if terminated
            else "check the page with GET /snapshot before acting again")
    raise Timeout(message, hint=hint, uncertain=progress.sent, terminated=terminated)


@attrs.frozen(kw_only=True)
class Step:
    """One action of a batch: its kind, its validated API-shaped args, its own timeout."""

    kind: str
    args: Mapping[str, Any]
    timeout_s: float


async def act(tab: TabActor, steps: Sequence[Step], *, timeout_s: float,
              evaluate_enabled: bool = True) -> dict[str, Any]:
    """Run ``steps`` in order on one tab; stop at the first failure.

    Answers ``{ok, steps: [{index, kind, ok, result | error}], failedAt?}``.
    Each step is bounded by its own timeout and by what is left of
    ``timeout_s``; a step that timed out after sending input carries
    ``uncertain: true`` and is never replayed. Steps after a failure are not
    run. Cancellation (the caller's deadline) ends the batch at once.
    """
    report: list[dict[str, Any]] = []
    deadline = trio.current_time() + timeout_s
    for index, step in enumerate(steps):
        remaining = deadline - trio.current_time()
        entry: dict[str, Any] = {"index": index, "kind": step.kind}
        try:
            if remaining <= 0:
                raise Timeout("the batch ran out of time before this step; it was not run",
                              uncertain=False)
            result = await perform(tab, step.kind, step.args,
                                   timeout_s=min(step.timeout_s, remaining),
                                   evaluate_enabled=evaluate_enabled)
        except BrowserdError as exc:
            entry.update(ok=False, error=exc.to_dict())
            if isinstance(exc, Timeout) and exc.details.get("uncertain"):
                entry["uncertain"] = True
            report.append(entry)
            return {"ok": False, "targetId": tab.target_id, "steps": report, "failedAt": index}
        entry.update(ok=True, result=result)
        report.append(entry)
    return {"ok": True, "targetId": tab.target_id, "steps": report}
